"""The static HTML viewer, loaded in headless Chromium (Debian's `chromium`) over the DevTools protocol:
no console errors or failed loads, every timeline node shown, every audio element loads and plays its
file, links resolve, nothing is fetched from outside the page's own folder; plus a screenshot."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind.audit.html import render_paths
from audiomind.audit.timeline import build_timeline
from audiomind.cli import app
from audiomind.resources import examples_dir

from .cdp import Browser, chromium_binary
from .util import copy_run

SCREENSHOT = Path("/tmp/audiomind-viewer.png")

AUDIO_STATE = """new Promise(resolve => {
  const t0 = Date.now();
  (function poll() {
    const els = [...document.querySelectorAll('audio')];
    if (els.every(a => a.readyState >= 1 || a.error) || Date.now() - t0 > 15000)
      resolve(els.map(a => ({id: a.dataset.artifact, src: a.currentSrc, ready: a.readyState, duration: a.duration,
                             error: a.error && a.error.code})));
    else setTimeout(poll, 50);
  })();
})"""

PLAY_ALL = """(async () => {
  const out = [];
  for (const a of document.querySelectorAll('audio')) {
    a.muted = true;
    await a.play();
    await new Promise(r => setTimeout(r, 300));
    out.push(a.currentTime);
    a.pause();
  }
  return out;
})()"""

PAGE_FACTS = """({
  nodes: [...document.querySelectorAll('section.node')].map(s => s.dataset.node),
  brokenAnchors: [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1))
                   .filter(id => !document.getElementById(id)),
  images: [...document.querySelectorAll('img')].map(i => i.complete && i.naturalWidth > 0),
  evidence: document.querySelectorAll('ul.evidence li[id^="ev_"]').length,
  calls: document.querySelectorAll('details.call').length,
  answer: document.querySelector('#answer').innerText,
})"""


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium chromium-driver; "
                    "scripts/install.sh --dev does it)")
    return binary


@pytest.fixture(scope="module")
def site(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("viewer")
    folder = tmp_path_factory.mktemp("traces")
    for run in runs.values():  # a folder of traces with their derived audio, as `ask` leaves them
        copy_run(run, folder)
    # the originals live in the examples folder, outside the traces' folder: trusted explicitly
    pages, index = render_paths([folder], out, allow=[examples_dir()])
    return out, pages, index


class Server:
    """A loopback HTTP server over one folder, in a thread; stopped by the test that started it."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


def test_pages_need_nothing_from_outside(site):
    _out, pages, index = site
    for page in [*pages, index]:
        text = page.read_text()
        refs = re.findall(r'(?:src|href)="([^"]*)"', text)
        assert refs, page
        for ref in refs:
            assert not re.match(r"^[a-z]+://", ref) and not ref.startswith("//"), (page.name, ref)
            if not ref.startswith(("#", "data:")):
                assert (page.parent / ref).is_file(), (page.name, ref)  # relative, and it is there
        assert "<script" not in text.lower() or "src=" not in text.lower().split("<script")[1].split(">")[0]


def test_viewer_in_headless_chromium(site, runs, chromium, tmp_path):
    out, pages, _index = site
    server = Server(out)
    browser = Browser(chromium)
    try:
        by_run = {r.state.run.run_id: r for r in runs.values()}
        browser.navigate(f"{server.base}/index.html")
        rows = browser.eval("document.querySelectorAll('tr.trace-row a').length")
        assert rows == len(runs)
        for page in pages:
            run = by_run[page.stem]
            st = run.state
            browser.events.clear()
            browser.navigate(f"{server.base}/{page.name}")
            audio = browser.eval(AUDIO_STATE)
            facts = browser.eval(PAGE_FACTS)
            played = browser.eval(PLAY_ALL)
            browser.drain(0.3)

            # every node of the run, in order
            assert facts["nodes"] == [s.node for s in build_timeline(st)]
            assert facts["evidence"] == len(st.evidence) and facts["calls"] == len(st.tool_calls)
            assert facts["brokenAnchors"] == [] and all(facts["images"]) and len(facts["images"]) == len(st.artifacts)
            assert (st.final_answer.choice or st.final_answer.text) in facts["answer"]
            # one player per artifact (original and derived), each loads and plays its own file
            assert [a["id"] for a in audio] == [a.id for a in st.artifacts]
            for a, art in zip(audio, st.artifacts):
                assert a["ready"] >= 1 and a["error"] is None, a
                assert abs(a["duration"] - art.duration_s) < 0.05, (a, art.duration_s)  # tolerance: 50 ms
                assert a["src"].startswith(server.base)
            assert all(t > 0 for t in played), played
            # no console errors / warnings / failed or outside requests
            assert browser.problems() == []
            assert all(u.startswith((server.base, "data:")) for u in browser.requested_urls())
            if run.name == "crop":  # the richest page: original + crop, re-listen, planner calls
                shot = browser.screenshot(tmp_path / "viewer.png")
                assert shot.stat().st_size > 50_000
                shutil.copyfile(shot, SCREENSHOT)
    finally:
        browser.close()
        server.close()
    assert browser.proc.poll() is not None  # the browser it started is gone


def test_moved_folder_and_embedded_pages(runs, chromium, tmp_path):
    """The output folder can be moved (relative links); --embed makes one file per page (data URIs)."""
    run = runs["crop"]
    r = CliRunner().invoke(app, ["trace", "html", str(run.path), "-o", str(tmp_path / "a"), "--embed",
                                 "--no-spectrograms", "--allow-dir", str(examples_dir())])
    assert r.exit_code == 0, r.output
    moved = tmp_path / "moved"
    shutil.move(str(tmp_path / "a"), moved)
    page = moved / f"{run.state.run.run_id}.html"
    assert 'src="data:audio/wav;base64,' in page.read_text()
    server = Server(moved)
    browser = Browser(chromium)
    try:
        browser.navigate(f"{server.base}/{page.name}")
        audio = browser.eval(AUDIO_STATE)
        assert len(audio) == len(run.state.artifacts) and all(a["ready"] >= 1 and a["duration"] > 0 for a in audio)
        browser.drain(0.2)
        assert browser.problems() == []
    finally:
        browser.close()
        server.close()


def test_page_for_a_trace_with_missing_audio(runs, edit, tmp_path):
    def gone(d):
        d["artifacts"][0]["path"] = str(tmp_path / "deleted.wav")

    pages, _ = render_paths([edit(runs["beeps"], gone)], tmp_path / "out", spectrograms=False)
    text = pages[0].read_text()
    assert "audio file missing" in text and "artifact-missing" in text
