"""`audiomind serve` under hostile and careless requests (issue 25, points 3-8, 13, 14): real uvicorn servers on
127.0.0.1 driven with httpx (and the real command line where start-up is what is tested), the cooperative
loopback model server as planner and front end, so no embedded model loads. Every wait is bounded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from audiomind.config import AgentConfig
from audiomind.paths import MAX_PATH_CHARS, PathTooLongError, resolve_under
from audiomind.serve import DEFAULT_MAX_DURATION_S, ServeSettings, create_app

from .conftest import fill, running_app, start_cli, write_tone

QUESTION = {"question": "Is there a tone?", "choices": ["yes", "no"]}


def _settings(server, base: Path, **kw) -> ServeSettings:
    root = base / "root"
    root.mkdir(exist_ok=True)
    write_tone(root / "tone.wav")
    cfg = AgentConfig(planner=server.spec, frontend=server.spec, trace_dir=str(kw.pop("trace_dir", base / "traces")),
                      **kw.pop("agent", {}))
    return ServeSettings(agent=cfg, roots=[str(root)], warmup=False, **kw)


@pytest.fixture
def served(model_server, tmp_path):
    with running_app(create_app(_settings(model_server, tmp_path, max_upload_mb=4))) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield client, tmp_path


def _no_server_path(text: str, *folders: Path | str) -> None:
    for f in (os.getcwd(), sys.executable, tempfile.gettempdir(), *map(str, folders)):
        assert str(f) not in text, (f, text)


# ---------------------------------------------------------------- 3: over-long paths


def test_an_overlong_path_is_refused_before_resolving_and_the_event_loop_stays_free(served):
    client, base = served
    t0 = time.perf_counter()
    with pytest.raises(PathTooLongError, match=f"more than the {MAX_PATH_CHARS} allowed"):
        resolve_under("a/" + "../" * 3_000_000, [base / "root"])  # realpath would take minutes on this
    assert time.perf_counter() - t0 < 1.0
    ok = "/".join(["."] * ((MAX_PATH_CHARS - 8) // 2)) + "/tone.wav"  # at the limit: still resolved
    assert len(ok) <= MAX_PATH_CHARS and resolve_under(ok, [base / "root"], base=base / "root").name == "tone.wav"

    stalls: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=str(client.base_url), timeout=30) as c:
            while not stop.is_set():
                t = time.perf_counter()
                assert c.get("/healthz").status_code == 200
                stalls.append(time.perf_counter() - t)
                time.sleep(0.01)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    try:
        r = client.post("/v1/ask", data={**QUESTION, "path": "a/" + "../" * 110_000})  # 330 KB (1 MB form-encoded)
    finally:
        stop.set()
        prober.join(30)
    assert r.status_code == 400 and f"more than the {MAX_PATH_CHARS} allowed" in r.json()["detail"], r.text
    assert len(r.text) < 400  # the path is not echoed back, only named by its start as every refusal names it
    assert r.json()["detail"].startswith("path 'a/../../") and "/': the path is 330002 characters" in r.json()["detail"]
    assert stalls and max(stalls) < 1.0, f"/healthz stalled {max(stalls):.2f} s"


# ---------------------------------------------------------------- 4: the body limit, chunked and across fields


def _multipart(boundary: str, fields: dict[str, str], files: dict[str, int], chunk: int = 64 * 1024):
    """A multipart body as a generator (so httpx sends it chunked, with no Content-Length); `files`: field ->
    size of a file of zeros. `sent[0]` counts the bytes handed to the client."""
    sent = [0]

    def gen():
        for name, value in fields.items():
            part = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").encode()
            sent[0] += len(part)
            yield part
        for name, size in files.items():
            head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}.bin\"\r\n"
                    "Content-Type: application/octet-stream\r\n\r\n").encode()
            sent[0] += len(head)
            yield head
            for i in range(0, size, chunk):
                block = b"\0" * min(chunk, size - i)
                sent[0] += len(block)
                yield block
            yield b"\r\n"
        yield f"--{boundary}--\r\n".encode()

    return gen(), sent


def test_a_chunked_body_over_the_limit_gets_413_and_is_never_spooled_past_it(model_server, tmp_path, tmpfs,
                                                                            monkeypatch):
    """Three unused 8 MB file fields beside a valid `path`, sent chunked to a server whose limit is 1 MB: the
    body is refused at the limit, and the form parser's temporary folder (a tmpfs here, sampled every 5 ms)
    never holds more than the limit."""
    spool = tmpfs(64 * 1024)
    monkeypatch.setattr(tempfile, "tempdir", str(spool))

    def used() -> int:
        st = os.statvfs(spool)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    baseline, peak, stop = used(), [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], used() - baseline)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    settings = _settings(model_server, tmp_path, max_upload_mb=1)
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        body, sent = _multipart("b0undary", {"question": QUESTION["question"], "choices": "yes", "path": "tone.wav"},
                                {"junk1": 8 << 20, "junk2": 8 << 20, "junk3": 8 << 20})
        try:
            r = client.post("/v1/ask", content=body, headers={"content-type": "multipart/form-data; boundary=b0undary"})
            assert r.status_code == 413 and "larger than 1 MB" in r.json()["detail"], r.text
        except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError):
            pass  # the server answered 413 and closed while the client was still sending
        small, _ = _multipart("b0undary", {"question": QUESTION["question"]}, {"audio": 1_300_000})
        r = client.post("/v1/ask", content=small, headers={"content-type": "multipart/form-data; boundary=b0undary"})
        assert r.status_code == 413 and "larger than 1 MB" in r.json()["detail"], r.text
        assert "transfer-encoding" not in r.request.headers or r.request.headers["transfer-encoding"] == "chunked"
        # unused file fields under the limit are refused by name, not silently spooled and ignored
        r = client.post("/v1/ask", data={**QUESTION, "path": "tone.wav"},
                        files={"junk": ("j.bin", b"\0" * 1000, "application/octet-stream")})
        assert r.status_code == 400 and "unknown form field(s): 'junk'" in r.json()["detail"], r.text
        assert client.get("/healthz").status_code == 200
    stop.set()
    sampler.join(10)
    assert sent[0] < 24 << 20, f"the whole body was read: {sent[0]} bytes"
    assert peak[0] <= (1 << 20) + (1 << 20), f"{peak[0]} bytes spooled for a 1 MB limit"
    assert not list((tmp_path / "traces" / "uploads").glob("*.bin"))


# ---------------------------------------------------------------- 5: a duration cap by default; cancellation


def test_a_default_duration_cap_refuses_a_long_upload_at_once(served, tmp_path):
    client, base = served
    assert ServeSettings().agent.max_duration_s == DEFAULT_MAX_DURATION_S
    long = tmp_path / "two_hours.flac"
    subprocess.run(["sox", "-D", "-n", "-r", "8000", "-c", "1", "-b", "16", str(long), "trim", "0", "7200"], check=True,
                   timeout=120)
    t0 = time.perf_counter()
    r = client.post("/v1/ask", data=QUESTION, files={"audio": ("night.flac", long.read_bytes(), "audio/flac")})
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == ("the uploaded file 'night.flac' lasts 7200.0 s, more than this server's limit "
                                  f"of {DEFAULT_MAX_DURATION_S:g} s")
    assert time.perf_counter() - t0 < 30
    assert not list((base / "traces" / "uploads").glob("*.flac"))  # not kept


def test_a_max_duration_refusal_of_a_path_names_no_server_path(model_server, tmp_path):
    settings = _settings(model_server, tmp_path, agent={"max_duration_s": 0.5})
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        r = client.post("/v1/ask", data={**QUESTION, "path": "tone.wav"})
        assert r.status_code == 400 and "more than the --max-duration of 0.5 s: 'tone.wav'" in r.json()["detail"]
        _no_server_path(r.text, tmp_path)
        up = client.post("/v1/ask", data=QUESTION, files={"audio": ("t.wav", (tmp_path / "root" / "tone.wav")
                                                                    .read_bytes(), "audio/wav")})
        assert up.status_code == 400 and "limit of 0.5 s" in up.json()["detail"]
        _no_server_path(up.text, tmp_path)


def test_a_run_whose_client_disconnects_is_cancelled(model_server, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.backends.planners.rules import RulesPlanner
    from audiomind.tools.manifest import ToolRegistry

    progress = {"ticks": 0, "finished": False}

    class SpinningPlanner(RulesPlanner):  # a long run in Python code: up to 120 s of 20 ms steps
        def perception_prompt(self, state):
            for _ in range(6000):
                progress["ticks"] += 1
                time.sleep(0.02)
            progress["finished"] = True
            return super().perception_prompt(state)

    settings = _settings(model_server, tmp_path)
    agent = AudioMind(settings.agent, planner=SpinningPlanner(ToolRegistry.load()))
    with running_app(create_app(settings, agent=agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
        with pytest.raises(httpx.ReadTimeout), httpx.Client(base_url=url, timeout=1.5) as impatient:
            impatient.post("/v1/ask", data={**QUESTION, "path": "tone.wav"})
        left = time.monotonic()
        while client.get("/healthz").json()["in_flight"] != 0:
            assert time.monotonic() - left < 20, "the run went on after its client left"
            time.sleep(0.05)
        ticks = progress["ticks"]
        time.sleep(0.5)
        assert progress["ticks"] == ticks and not progress["finished"]
        assert 'audiomind_runs_total{kind="ask",outcome="cancelled"} 1.0' in client.get("/metrics").text
        traces = list((tmp_path / "traces").glob("*.json"))
        assert len(traces) == 1
        import json

        outcome = json.loads(traces[0].read_text())["outcome"]
        assert outcome["status"] == "stopped", outcome
        assert "cancelled" in outcome["reason"] or "interrupted" in outcome["reason"], outcome


# ---------------------------------------------------------------- 6: storage faults


def test_a_full_trace_dir_still_returns_the_answer_and_a_read_only_one_refuses_uploads(model_server, tmp_path,
                                                                                      tmpfs):
    disk = tmpfs(2048)
    settings = _settings(model_server, tmp_path, trace_dir=disk / "traces")
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        filler = fill(disk, leave_kb=4)
        r = client.post("/v1/ask", data={**QUESTION, "path": "tone.wav"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["answer"] == "yes" and body["trace_id"] is None
        assert any("no space left on the device (ENOSPC)" in w and "not on record" in w for w in body["warnings"])
        _no_server_path(r.text, disk, tmp_path)
        filler.unlink()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True, timeout=30)
        up = client.post("/v1/ask", data=QUESTION, files={"audio": ("t.wav", (tmp_path / "root" / "tone.wav")
                                                                    .read_bytes(), "audio/wav")})
        assert up.status_code == 507, up.text
        assert up.json()["detail"] == ("the server could not store the upload: the file system is read-only "
                                       "(EROFS)")
        assert client.get("/healthz").status_code == 200


def test_serve_on_a_read_only_trace_dir_is_one_clear_error(model_server, tmp_path, tmpfs):
    ro = tmpfs(64, ro=True)
    proc = start_cli("serve", "--port", "0", "--trace-dir", str(ro / "traces"), "--no-warmup", cwd=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, (out, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "read-only" in lines[0] and "EROFS" in lines[0]


def test_serve_with_an_unreachable_planner_at_warm_up_says_so_once(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # closed again: nothing listens there
    spec = f"openai:m@http://127.0.0.1:{dead}/v1"
    proc = start_cli("serve", "--port", "0", "--trace-dir", str(tmp_path / "traces"), "--planner", spec,
                     "--frontend", spec, "--retries", "1", "--timeout", "5", cwd=tmp_path)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 3, (out, err)
    assert "Traceback" not in out + err, err
    said = [ln for ln in err.splitlines() if "could not start" in ln]
    assert len(said) == 1 and "warm-up" in said[0], err


# ---------------------------------------------------------------- 7: no server path in an error


@pytest.mark.parametrize("path", ["/proc/self/cwd/x.wav", "/proc/self/exe", "/proc/self/environ",
                                  "/proc/self/root/etc/shadow", "/proc/self/root/etc/no-such-file",
                                  "../../../../../etc/passwd"])
def test_probes_of_proc_self_learn_nothing(served, path):
    client, base = served
    r = client.post("/v1/ask", data={**QUESTION, "path": path})
    assert r.status_code == 403, r.text
    assert r.json()["detail"] == f"path {path!r}: outside the allowed folders"
    _no_server_path(r.text, base)
    assert f"/proc/{os.getpid()}" not in r.text


# ---------------------------------------------------------------- 8: control characters in the question


@pytest.mark.parametrize("bad", ["\x1b]0;owned\x07", "\x1b[2J", "a\rb", "nul\x00", "\x9b31m", "line\u2028sep"])
def test_control_characters_in_the_question_are_refused(served, bad):
    client, _ = served
    r = client.post("/v1/ask", data={**QUESTION, "question": f"Is there a tone? {bad}", "path": "tone.wav"})
    assert r.status_code == 400 and "the question contains" in r.json()["detail"], r.text


def test_a_question_on_two_lines_is_still_asked(served):
    client, _ = served
    r = client.post("/v1/ask", data={**QUESTION, "question": "Listen closely.\nIs there a tone?", "path": "tone.wav"})
    assert r.status_code == 200 and r.json()["answer"] == "yes", r.text


# ---------------------------------------------------------------- 13: /docs with no network


def test_docs_reference_only_local_assets_and_render_in_headless_chromium(served):
    client, _ = served
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200
        refs = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html.text)
        assert refs and all(ref.startswith("/") and not ref.startswith("//") for ref in refs), refs
        for ref in refs:
            asset = client.get(ref)
            assert asset.status_code == 200 and len(asset.content) > 1000, ref
    assert len(client.get("/docs-assets/swagger-ui-bundle.js").content) > 1_000_000
    chromium = next((c for c in ("chromium", "chromium-browser", "google-chrome") if _which(c)), None)
    if chromium is None:
        pytest.skip("no headless Chromium here (the local assets were checked above)")
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                              "--virtual-time-budget=15000", "--dump-dom", f"{client.base_url}/docs"],
                             check=False, capture_output=True, text=True, timeout=120).stdout
    assert "opblock" in dom and "/v1/ask" in dom, dom[:2000]  # Swagger UI drew the operations


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


# ---------------------------------------------------------------- 14: one field name, strict fields, schemas


def test_judges_take_path_or_audio_path_and_refuse_unknown_fields(served):
    client, base = served
    aura = {"question": "What is heard?", "reference": "a tone", "response": "a steady tone"}
    for field in ("path", "audio_path"):
        r = client.post("/v1/judge/aura", data={**aura, field: "tone.wav"})
        assert r.status_code == 200, r.text
        assert r.json()["audio"] == "tone.wav" and r.json()["trace_path"] is None
        _no_server_path(r.text, base)
    both = client.post("/v1/judge/aura", data={**aura, "path": "tone.wav", "audio_path": "tone.wav"})
    assert both.status_code == 400 and "not both" in both.json()["detail"]
    typo = client.post("/v1/judge/aura", data={**aura, "pth": "tone.wav"})
    assert typo.status_code == 400 and "unknown form field(s): 'pth'" in typo.json()["detail"]
    wrong_judge_field = client.post("/v1/judge/aura", data={**aura, "original_path": "tone.wav"})
    assert wrong_judge_field.status_code == 400
    assert client.post("/v1/ask", data={**QUESTION, "question": "", "path": "tone.wav"}).status_code == 400
    bad = client.post("/v1/ask", data=QUESTION, files={"audio": ("notes.wav", b"plain text\n" * 50, "audio/wav")})
    assert bad.status_code == 400
    assert bad.json()["detail"] == ("the uploaded file 'notes.wav' is not usable audio: Invalid data found when "
                                    "processing input")


def test_the_openapi_documents_judges_traces_and_errors(served):
    client, _ = served
    spec = client.get("/openapi.json").json()
    results = {"edit": "EditJudgeResultResponse", "rubric": "RubricJudgeResultResponse", "aura": "AuraResultResponse"}
    for name, result in results.items():  # one route per judge, its result and error models documented
        judge = spec["paths"][f"/v1/judge/{name}"]["post"]
        ok = judge["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok["$ref"] == f"#/components/schemas/{result}", name
        for code in ("400", "403", "404", "413", "429", "502", "507"):
            err = judge["responses"][code]["content"]["application/json"]["schema"]
            assert err["$ref"] == "#/components/schemas/ErrorBody", (name, code)
    assert "/v1/judge/{kind}" not in spec["paths"]  # the 404 for an unknown judge is not an operation
    schemas = spec["components"]["schemas"]
    assert schemas["AuraResultResponse"]["properties"]["judge"].get("const") == "aura" or \
        schemas["AuraResultResponse"]["properties"]["judge"].get("enum") == ["aura"]
    trace = spec["paths"]["/v1/traces/{trace_id}"]["get"]["responses"]["200"]["content"]["application/json"]
    assert trace["schema"]["$ref"] == "#/components/schemas/EvidenceState" and "EvidenceState" in schemas
    for code in ("400", "403", "404", "413", "429", "502", "507"):
        err = spec["paths"]["/v1/ask"]["post"]["responses"][code]["content"]["application/json"]["schema"]
        assert err["$ref"] == "#/components/schemas/ErrorBody", code
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', str(spec).replace("'", '"')))
    assert refs <= set(schemas), refs - set(schemas)  # every reference resolves
