"""`audiomind trace html`: a static, self-contained viewer page per trace (plus an index for a folder).

Everything the page needs sits next to it: the original and every derived audio file (copied, or
embedded as data URIs with `embed=True`), spectrogram PNGs (librosa + matplotlib, when installed),
the trace JSON itself; links are relative, so the output folder can be moved or zipped, and nothing is
fetched from the network at view time (no CDN scripts, fonts or styles; the favicon is a data URI).

Every node of the timeline is a `<section class="node">`; tool calls, observations, evidence items and
artifacts carry their ids as anchors, so evidence links to its source and the answer to its evidence.

A trace is untrusted input: its `artifacts[*].path` may name any file (`/etc/passwd`, a private file, a
FIFO). An artifact is copied or embedded when its file's sha256 matches the trace's record and either it
lies inside the trace's own run folder (see `timeline.run_folder`, plus folders the user allows explicitly)
or, for `trace html` only (a local user's own traces, never the server's viewer), it is an original clip (the
question's own audio, wherever `ask` read it from) in a regular file with an audio file name that decodes as
audio (a trace naming /etc/passwd does not get it opened): a trace cannot make the viewer publish a non-audio
file, nor one whose content it does not already know. A derived clip outside those folders is not read at all.
The rest are shown as "unavailable (reason)". The rule is `timeline.artifact_file`, shared with the audit and
replay. A long clip is decoded only for its first MAX_VIEW_S seconds (spectrogram, WAV for the player).
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from audiomind.audit.audit import Auditor, Severity, TraceAudit
from audiomind.audit.stats import is_correct
from audiomind.audit.timeline import (
    Step,
    build_timeline,
    describe_call,
    key_outputs,
    short,
    verified_artifact_file,
)
from audiomind.paths import clip_text, visible
from audiomind.state import Artifact, EvidenceItem, EvidenceState, ToolCall, ToolCallStatus

PLAYABLE = {".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg",
            ".opus": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4", ".webm": "audio/webm"}
MAX_VIEW_S = 600.0
"""The most seconds of a clip the viewer decodes (a spectrogram, a WAV made for a container browsers cannot play):
a 10-hour clip is shown by its first ten minutes, never decoded whole (issue 35: 15.9 GB)."""
MAX_EMBED_BYTES = 48 * 1024 * 1024
"""The largest audio file embedded in a page as a data URI (base64 in memory and in the page); a larger one is
shown as unavailable in an embedded page (a copied one is linked, whatever its size)."""
MAX_LANE_SPANS = 2000
"""Spans drawn per evidence lane (a trace may list any number)."""
_IDS = re.compile(r"\b((?:ev|call|obs)_[0-9a-f]{10})\b")

CSS = """
:root { --fg:#1d232a; --muted:#5f6b76; --line:#d9dee3; --bg:#f7f8fa; --ok:#1a7f37; --warn:#9a6700; --err:#cf222e;
        --acc:#0b5cad; --card:#fff; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg);
       background:var(--bg); }
header { background:#14202e; color:#fff; padding:16px 24px; }
header h1 { font-size:18px; margin:0 0 6px; }
header .meta { color:#b8c4d0; font-size:12px; }
nav { position:sticky; top:0; background:#fff; border-bottom:1px solid var(--line); padding:6px 24px; z-index:2; }
nav a { margin-right:14px; color:var(--acc); text-decoration:none; }
main { padding:16px 24px; max-width:1200px; }
section.card, section.node { background:var(--card); border:1px solid var(--line); border-radius:8px;
       padding:12px 16px; margin:12px 0; }
section.node { border-left:4px solid #8c959f; }
section.node[data-node=decide] { border-left-color:#0b5cad; }
section.node[data-node=execute_tools], section.node[data-node=perceive] { border-left-color:#1a7f37; }
section.node[data-node=relisten] { border-left-color:#8250df; }
section.node[data-node=final_answer], section.node[data-node=format_check] { border-left-color:#bf8700; }
section.node[data-node=unplaced] { border-left-color:var(--err); }
h2 { font-size:16px; margin:0 0 8px; }
h3 { font-size:14px; margin:0 0 6px; }
.muted { color:var(--muted); }
.pill { display:inline-block; padding:0 7px; border-radius:10px; font-size:12px; background:#eaeef2; }
.ok { color:var(--ok); } .warn { color:var(--warn); } .err { color:var(--err); }
.pill.ok { background:#dafbe1; } .pill.warn { background:#fff8c5; } .pill.err { background:#ffebe9; }
pre { background:#f6f8fa; border:1px solid var(--line); border-radius:6px; padding:8px; overflow:auto;
      max-height:360px; white-space:pre-wrap; word-break:break-word; font-size:12px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
details { margin:4px 0; } summary { cursor:pointer; }
ul.evidence { margin:6px 0; padding-left:18px; }
ul.evidence li { margin:3px 0; }
:target { outline:3px solid #ffd33d; outline-offset:2px; background:#fffbdd; }
.artifact { display:grid; grid-template-columns: 260px 1fr; gap:12px; align-items:start; }
.artifact img { width:100%; border:1px solid var(--line); border-radius:4px; }
audio { width:100%; }
.choices li.chosen { font-weight:600; }
"""


def h(x: Any) -> str:
    """Text for a page: HTML-escaped, and every control character written as a visible escape (paths.visible:
    a raw ESC or C1 byte from a trace never reaches the file, a terminal that prints it, or a browser)."""
    return html.escape(visible("" if x is None else str(x)), quote=True)


def linkify(text: str | None, known: set[str]) -> str:
    """Escape text and turn ids it mentions (ev_..., call_..., obs_...) into in-page links."""
    out = h(text or "")
    return _IDS.sub(lambda m: f'<a href="#{m.group(1)}">{m.group(1)}</a>' if m.group(1) in known else m.group(1), out)


def _json(value: Any) -> str:
    return h(json.dumps(value, indent=2, ensure_ascii=False, default=str))


Lane = tuple[str, list[tuple[float, float, str]]]


def evidence_lanes(st: EvidenceState, artifact_id: str, limit: int = 8) -> list[Lane]:
    """Time spans the tools reported for an artifact (VAD segments, counted events, speaker turns,
    tag events, ASR segments), one lane per tool output list, to draw under its spectrogram."""
    lanes: list[Lane] = []
    for c in st.tool_calls:
        if c.status not in (ToolCallStatus.ok, ToolCallStatus.cached) or not c.output:
            continue
        if (c.arguments or c.requested_arguments).get("artifact", "a0") != artifact_id:
            continue
        for key, items in c.output.items():
            if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
                continue
            spans = []
            for it in items:
                start = it.get("start_s", it.get("start"))
                end = it.get("end_s", it.get("end"))
                if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end >= start:
                    label = it.get("label") or it.get("speaker") or ""
                    spans.append((float(start), float(end), str(label)))
            if not spans:
                continue
            ordered = sorted(spans)
            overlapping = any(b[0] < a[1] - 1e-6 for a, b in itertools.pairwise(ordered))
            labels = {lab for _, _, lab in spans}
            if overlapping and len(labels) > 1:  # e.g. simultaneous tag events: one lane per label
                by_label: dict[str, list[tuple[float, float, str]]] = {}
                for sp in spans:
                    by_label.setdefault(sp[2], []).append(sp)
                top = sorted(by_label.items(), key=lambda kv: -sum(e - s for s, e, _ in kv[1]))[:4]
                lanes += [(f"{c.tool}: {lab[:22]}", [(s, e, "") for s, e, _ in sp]) for lab, sp in top]
            else:
                lanes.append((f"{c.tool} {key}", spans))
    return lanes[:limit]


def spectrogram_png(audio_path: Path, out: Path, title: str = "", lanes: list[Lane] | None = None) -> Path | None:
    """A mel spectrogram image with the tools' time spans underneath; None when matplotlib is not
    installed (the page says so)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    import librosa
    import librosa.display
    import numpy as np

    from audiomind.audio import iter_blocks

    sr = 16000
    blocks = list(iter_blocks(audio_path, sr=sr, mono=True, end_s=MAX_VIEW_S))  # never the whole of a long clip
    y = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    del blocks
    if y.size == 0:
        return None
    if len(y) >= round(MAX_VIEW_S * sr) - sr:
        title = f"{title} (the first {MAX_VIEW_S:.0f} s)"
    lanes = lanes or []
    duration = len(y) / sr
    mel = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=1024, hop_length=256, n_mels=96, fmax=sr / 2)
    db = librosa.power_to_db(mel, ref=np.max(mel) if np.max(mel) > 0 else 1.0)
    rows = 1 + (1 if lanes else 0)
    fig, axes = plt.subplots(rows, 1, figsize=(10, 2.6 + 0.32 * len(lanes)), dpi=100, sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2.2] + ([0.32 * len(lanes) + 0.1] if lanes else [])})
    ax = axes[0][0]
    librosa.display.specshow(db, sr=sr, hop_length=256, x_axis="time", y_axis="mel", fmax=sr / 2, ax=ax,
                             cmap="magma")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("")
    if lanes:
        lx = axes[1][0]
        colors = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf"]
        for row, (_name, spans) in enumerate(lanes):
            yb = len(lanes) - 1 - row
            spans = [sp for sp in spans if sp[0] < duration][:MAX_LANE_SPANS]
            lx.broken_barh([(s, max(e - s, duration / 400)) for s, e, _ in spans], (yb + 0.15, 0.7),
                           facecolors=colors[row % len(colors)], alpha=0.8)
            for s, e, label in spans[:40]:
                if label and e - s > duration / 30:
                    lx.text(s + 0.01 * duration / 10, yb + 0.5, label[:18], va="center", fontsize=6, color="white",
                            clip_on=True)
        lx.set_yticks([len(lanes) - 1 - i + 0.5 for i in range(len(lanes))], [n for n, _ in lanes], fontsize=7)
        lx.set_ylim(0, len(lanes))
        lx.set_xlim(0, duration)
        lx.grid(axis="x", alpha=0.3)
    axes[-1][0].set_xlabel("time (s)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def artifact_source(a: Artifact, st: EvidenceState, trace_file: Path | None,
                    allow: list[Path] | tuple[Path, ...] = (), *, originals_anywhere: bool = False
                    ) -> tuple[Path | None, bool, str]:
    """(the file to show for artifact `a`, whether it was found at a new place, "") or (None, False, why it is
    unavailable): `timeline.verified_artifact_file`, the confinement every trace command shares (the trace's
    run folder and the `allow`ed folders; with `originals_anywhere`, `trace html` on a local user's traces,
    the question's own clip elsewhere when it decodes as audio), then the sha256 the trace recorded."""
    return verified_artifact_file(a, st, trace_file, allow, outside="originals" if originals_anywhere else "none")


class TooLargeToEmbed(ValueError):
    """An audio file over MAX_EMBED_BYTES in a page that embeds its audio."""


class _Assets:
    """Copies (or embeds) the audio and images a page needs, under `<page stem>_files/`."""

    def __init__(self, out_dir: Path, stem: str, embed: bool):
        self.out_dir = out_dir
        self.rel = f"{stem}_files"
        self.dir = out_dir / self.rel
        self.embed = embed
        self.dir.mkdir(parents=True, exist_ok=True)

    def _uri(self, path: Path, mime: str) -> str:
        if self.embed:
            return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        return f"{self.rel}/{path.name}"

    def audio(self, a: Artifact, src: Path) -> tuple[str, str]:
        """(its URI, its MIME type); TooLargeToEmbed when a file to embed is over MAX_EMBED_BYTES."""
        mime = PLAYABLE.get(src.suffix.lower())
        dest = self.dir / f"{a.id}{src.suffix.lower() if mime else '.wav'}"
        if mime:
            size = src.stat().st_size
            if self.embed and size > MAX_EMBED_BYTES:
                raise TooLargeToEmbed(f"{size / 2**20:.0f} MB, too large to embed in the page (at most "
                                 f"{MAX_EMBED_BYTES / 2**20:.0f} MB; without --embed it is copied)")
            shutil.copyfile(src, dest)
        else:  # a container browsers cannot play: its first MAX_VIEW_S seconds decoded to a 16 kHz WAV, in blocks
            import soundfile as sf

            from audiomind.audio import iter_blocks

            blocks = iter_blocks(src, sr=16000, mono=True, end_s=MAX_VIEW_S)
            first = next(blocks)  # not audio: raises before anything is written
            try:
                with sf.SoundFile(str(dest), "w", samplerate=16000, channels=1, subtype="PCM_16") as f:
                    f.write(first)
                    for block in blocks:
                        f.write(block)
            except BaseException:
                dest.unlink(missing_ok=True)
                raise
            mime = "audio/wav"
        return self._uri(dest, mime), mime

    def spectrogram(self, a: Artifact, src: Path, lanes: list[Lane] | None = None) -> str | None:
        png = spectrogram_png(src, self.dir / f"{a.id}.png", title=f"{a.id} — mel spectrogram", lanes=lanes)
        return self._uri(png, "image/png") if png else None

    def trace_json(self, trace_file: Path | None, st: EvidenceState) -> str:
        dest = self.dir / "trace.json"
        if trace_file is not None and trace_file.is_file():
            shutil.copyfile(trace_file, dest)
        else:
            from audiomind.trace import dump_trace

            dest.write_text(dump_trace(st), encoding="utf-8")
        return self._uri(dest, "application/json")


def _status_class(c: ToolCall) -> str:
    return {ToolCallStatus.ok: "ok", ToolCallStatus.cached: "ok", ToolCallStatus.rejected: "warn"}.get(c.status, "err")


def _evidence_li(e: EvidenceItem, known: set[str]) -> str:
    src = f'<a href="#{h(e.source_id)}">{h(e.source_id)}</a>' if e.source_id in known else \
        f'<span class="err">{h(e.source_id)} (missing)</span>'
    art = f' on <a href="#art-{h(e.artifact_id)}">{h(e.artifact_id)}</a>' if e.artifact_id else ""
    conf = f" · conf {e.confidence:.2f}" if e.confidence is not None else ""
    cat = f' <span class="pill">{h(e.category.value)}</span>' if e.category else ""
    return (f'<li id="{h(e.id)}"><code>{h(e.id)}</code> {h(e.claim)} <span class="muted">— {h(e.tool or e.source_type)}'
            f"{cat} from {src}{art}{conf}</span></li>")


def _call_block(c: ToolCall, known: set[str]) -> str:
    derived = "".join(f' → <a href="#art-{h(a)}">{h(a)}</a>' for a in c.derived_artifact_ids)
    out = (f'<details id="{h(c.id)}" class="call"><summary><code>{h(c.id)}</code> <b>{h(describe_call(c))}</b> '
           f'<span class="pill {_status_class(c)}">{h(c.status.value)}</span> '
           f'<span class="muted">{h(c.issued_by)} · step {c.step} · {c.duration_s:.2f} s'
           f'{" · v" + h(c.tool_version) if c.tool_version else ""}'
           f'{" · " + h(c.category.value) if c.category else ""}</span>{derived}'
           f'<div class="muted">{h(c.error or short(key_outputs(c, 8), 300))}</div></summary>')
    out += f"<h3>arguments</h3><pre>{_json(c.arguments if c.arguments is not None else c.requested_arguments)}</pre>"
    if c.arguments is not None and c.arguments != c.requested_arguments:
        out += f"<h3>requested</h3><pre>{_json(c.requested_arguments)}</pre>"
    if c.output is not None:
        out += f"<h3>output</h3><pre>{_json(c.output)}</pre>"
    if c.error:
        out += f'<h3>error</h3><pre class="err">{h(c.error)}</pre>'
    return out + "</details>"


def _step_html(step: Step, st: EvidenceState, known: set[str]) -> str:
    n = step.node
    parts: list[str] = []
    if n == "ingest":
        for a in step.artifacts:
            parts.append(f'<p>original <a href="#art-{h(a.id)}">{h(a.id)}</a>: {h(a.path)} · {a.duration_s:.2f} s · '
                         f"{a.sample_rate} Hz · {a.channels} ch</p>")
    elif n == "perception_prompt" and st.perception_prompt:
        pp = st.perception_prompt
        parts.append(f"<p>prompt <code>{h(pp.prompt_id)}</code>; auditory targets: "
                     f"{h(', '.join(pp.auditory_targets) or '-')}</p><details><summary>prompt text</summary>"
                     f"<pre>{h(pp.text)}</pre></details>")
    elif n in ("perceive", "relisten") and step.observation:
        o = step.observation
        if n == "relisten" and step.decision and step.decision.relisten:
            parts.append(f"<p><b>re-listen</b> to {h(', '.join(step.decision.relisten.artifact_ids))}: "
                         f"{h(step.decision.relisten.prompt)}</p>")
        arts = ", ".join(f'<a href="#art-{h(a)}">{h(a)}</a>' for a in o.artifact_ids) or "(nothing)"
        parts.append(f'<div id="{h(o.id)}"><p><code>{h(o.id)}</code> {h(o.kind)} by <b>{h(o.frontend)}</b> on {arts}'
                     + (f" · provisional answer: <b>{h(o.provisional_answer)}</b>" if o.provisional_answer else "")
                     + (f" · windows: {h(', '.join(f'{w.artifact_id} {w.start_s:.1f}-{w.end_s:.1f} s' for w in o.windows))}"
                        if o.windows else "")
                     + f"</p><details><summary>what it reported</summary><pre>{linkify(o.text, known)}</pre></details>"
                     + (f'<p class="muted">uncertainty: {h(o.uncertainty)}</p>' if o.uncertainty else "")
                     + (f'<p class="warn">{h(o.rejected)}</p>' if o.rejected else "")
                     + "</div>")
    elif n == "plan" and st.plan:
        p = st.plan
        parts.append(f"<p><b>intent</b>: {h(p.intent)}<br><b>answer format</b>: {h(p.answer_format)}<br>"
                     f"<b>candidate operations</b>: {h(', '.join(p.candidate_operations) or '-')}<br>"
                     f"<b>to verify</b>: {h('; '.join(p.claims_to_verify) or '-')}</p>"
                     f'<p class="muted">why: {h(p.rationale)}</p>')
    elif n == "decide" and step.decision:
        d = step.decision
        calls = ", ".join(f"{r.tool}({', '.join(f'{k}={v!r}' for k, v in r.arguments.items())})" for r in d.tool_calls)
        parts.append(f'<p><span class="pill">{h(d.action.value)}</span> step {d.step}'
                     f'{" by " + h(d.planner) if d.planner else ""}{" → " + h(calls) if calls else ""}'
                     f'{" → re-listen " + h(", ".join(d.relisten.artifact_ids)) if d.relisten else ""}</p>'
                     f"<p><b>why</b>: {linkify(d.rationale, known)}</p>"
                     + (f'<p class="err">stop reason: {h(d.stop_reason)}</p>' if d.stop_reason else "")
                     + (f"<details><summary>raw model output</summary><pre>{h(d.raw_output)}</pre></details>"
                        if d.raw_output else ""))
    elif n == "summarize" and step.text is not None:
        parts.append(f"<details open><summary>evidence summary</summary><pre>{linkify(step.text, known)}</pre></details>")
    elif n == "final_answer" and step.answer:
        parts.append(f"<p>attempt {step.attempt}: <b>{h(step.answer.text)}</b></p>")
    elif n == "format_check" and step.feedback:
        fb = step.feedback
        parts.append(f'<p class="{"ok" if fb.ok else "err"}">attempt {fb.attempt}: {"ok" if fb.ok else h(fb.message)}</p>')
    elif n == "finish" and st.outcome:
        out = st.outcome
        parts.append(f'<p class="{"ok" if out.status == "answered" else "err"}">outcome <b>{h(out.status)}</b>'
                     f'{" — " + h(out.reason) if out.reason else ""}'
                     f'{" · bound hit: " + h(out.bound_hit) if out.bound_hit else ""}</p>')
    elif n == "unplaced":
        parts.append('<p class="err">items no node claims (a hand-edited or interrupted trace)</p>')
        if step.decision:
            parts.append(f"<p>decision step {step.decision.step}: {h(step.decision.action.value)} — "
                         f"{h(step.decision.rationale)}</p>")
    if step.tool_calls:
        parts.append("<h3>tool calls</h3>" + "".join(_call_block(c, known) for c in step.tool_calls))
    if step.artifacts and n != "ingest":
        parts.append("<p>derived: " + ", ".join(
            f'<a href="#art-{h(a.id)}">{h(a.id)}</a> ({h(a.operation)} of {h(a.derived_from)})' for a in step.artifacts)
                     + "</p>")
    if step.evidence:
        parts.append(f'<h3>evidence ({len(step.evidence)})</h3><ul class="evidence">'
                     + "".join(_evidence_li(e, known) for e in step.evidence) + "</ul>")
    timing = ""
    if step.timing:
        timing = f' <span class="muted">{h(step.timing.started_at[11:23])} · {step.timing.duration_s:.3f} s</span>'
    body = "".join(parts) or '<p class="muted">(nothing recorded)</p>'
    return (f'<section class="node" id="{step.anchor}" data-node="{h(n)}"><h2>{step.index}. {h(n)}{timing}</h2>'
            f"{body}</section>")


def render_page(st: EvidenceState, out_dir: Path, trace_file: Path | None = None, audit: TraceAudit | None = None,
                embed: bool = False, spectrograms: bool = True, index_href: str | None = "index.html",
                allow: list[Path] | tuple[Path, ...] = (), originals_anywhere: bool = False) -> Path:
    """Write `<out_dir>/<run_id>.html` (+ `<run_id>_files/`) and return its path. Audio is read only from the
    trace's run folder and the `allow`ed folders, and with `originals_anywhere` (`trace html`, a local user's
    own traces; never a server) the question's own clip elsewhere (see `artifact_source`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", st.run.run_id) or "trace"
    assets = _Assets(out_dir, stem, embed)
    known = {c.id for c in st.tool_calls} | {e.id for e in st.evidence} | {o.id for o in st.observations}
    q = st.question

    art_html = [_artifact_html(a, st, trace_file, allow, assets, spectrograms, originals_anywhere)
                for a in st.artifacts]
    answer_html = _answer_html(st, known)
    choices = _choices_html(st)
    findings = _findings_html(audit, st, known)
    steps = build_timeline(st)
    models = ", ".join(f"{m.role}: {m.spec}" for m in st.run.models) or "(not recorded)"
    json_uri = assets.trace_json(trace_file, st)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>audiomind trace {h(st.run.run_id)}</title><style>{CSS}</style></head>
<body>
<header><h1>{h(q.text)}</h1>
<div class="meta">run {h(st.run.run_id)} · {h(models)} · {len(st.decisions)} decision(s) · {len(st.tool_calls)} tool call(s) ·
{len(st.evidence)} evidence item(s) · wall {st.run.wall_time_s or 0:.2f} s · outcome {h(st.outcome.status if st.outcome else 'unfinished')}</div></header>
<nav>{f'<a href="{h(index_href)}">index</a>' if index_href else ''}<a href="#answer">answer</a><a href="#findings">audit</a>
<a href="#artifacts">audio</a><a href="#timeline">timeline</a><a href="{h(json_uri)}">trace JSON</a></nav>
<main>
<section class="card" id="question"><h2>Question</h2><p>{h(q.text)}</p>{choices}
<p class="muted">audio {h(q.audio_path)}{' · item ' + h(q.item_id) if q.item_id else ''}</p></section>
<section class="card" id="answer"><h2>Answer</h2>{answer_html}</section>
<section class="card" id="findings"><h2>Audit findings</h2>{findings}</section>
<section class="card" id="artifacts"><h2>Audio ({len(st.artifacts)} artifact(s))</h2>{''.join(art_html)}</section>
<div id="timeline"><h2>Timeline ({len(steps)} node step(s))</h2>
{''.join(_step_html(s, st, known) for s in steps)}
</div>
</main></body></html>
"""
    path = out_dir / f"{stem}.html"
    path.write_text(page, encoding="utf-8")
    return path


def _artifact_html(a: Artifact, st: EvidenceState, trace_file: Path | None, allow: list[Path] | tuple[Path, ...],
                   assets: _Assets, spectrograms: bool, originals_anywhere: bool = False) -> str:
    """One artifact's card: its provenance and format, a player and its spectrogram (or why there is none)."""
    src, moved, why = artifact_source(a, st, trace_file, allow, originals_anywhere=originals_anywhere)
    prov = "original" if a.derived_from is None else (
        f'{h(a.operation)} of <a href="#art-{h(a.derived_from)}">{h(a.derived_from)}</a> '
        f'{h(json.dumps(a.parameters))}'
        + (f' by <a href="#{h(a.created_by)}">{h(a.created_by)}</a>' if a.created_by else ""))
    played = None
    if src is not None:
        try:
            played = assets.audio(a, src)
        except TooLargeToEmbed as exc:
            why = clip_text(exc, 200)
        except Exception as exc:  # noqa: BLE001 - a file that will not decode is shown as unavailable
            why = f"not decodable audio ({type(exc).__name__}: {clip_text(exc, 120)})"
    if played is None or src is None:
        media = f'<p class="err">unavailable ({h(why)}): {h(clip_text(a.path, 200))}</p>'
    else:
        uri, _mime = played
        media = f'<audio controls preload="metadata" src="{h(uri)}" data-artifact="{h(a.id)}"></audio>'
        if spectrograms:
            img, img_err = None, ""
            try:
                img = assets.spectrogram(a, src, evidence_lanes(st, a.id))
            except Exception as exc:  # noqa: BLE001 - the player is there; the picture is optional
                img_err = f"{type(exc).__name__}: {clip_text(exc, 120)}"
            media += (f'<img src="{h(img)}" alt="mel spectrogram of {h(a.id)}">' if img else
                      f'<p class="muted">(no spectrogram: {h(img_err)})</p>' if img_err else
                      '<p class="muted">(spectrogram needs matplotlib: pip install matplotlib)</p>')
            if img:
                media += _long_clip_note(src)
        if moved:
            media += f'<p class="muted">found beside the trace at {h(src)}</p>'
    return (f'<div class="artifact" id="art-{h(a.id)}"><div><h3>{h(a.id)}</h3><p>{prov}<br>{a.duration_s:.2f} s · '
            f'{a.sample_rate} Hz · {a.channels} ch · {h(a.format)}<br><span class="muted">sha256 '
            f"{h(a.sha256[:16])}…</span></p></div><div>{media}</div></div>")


def _long_clip_note(src: Path) -> str:
    """A note under a spectrogram drawn from the first MAX_VIEW_S seconds of a longer clip ('' otherwise)."""
    from audiomind.audio import probe

    try:
        seconds = probe(src).duration_s
    except (ValueError, OSError):
        return ""
    if seconds <= MAX_VIEW_S:
        return ""
    return f'<p class="muted">spectrogram of the first {MAX_VIEW_S:.0f} s of {seconds:.0f} s</p>'


def _answer_html(st: EvidenceState, known: set[str]) -> str:
    """The answer, whether it is correct, its rationale and the evidence it cites (or why there is none)."""
    fa = st.final_answer
    if fa is None:
        return f'<p class="err">no answer: {h(st.outcome.reason if st.outcome else "the run did not finish")}</p>'
    correct = is_correct(st)
    cited = "".join(f'<li><a href="#{h(i)}">{h(i)}</a> ' + (
        h(short(next((e.claim for e in st.evidence if e.id == i), "(not in the trace)"), 200))) + "</li>"
        for i in fa.cited_evidence_ids)
    return (f'<p style="font-size:16px"><b>Answer:</b> {h(fa.choice or fa.text or "(empty)")}'
            + ({True: ' <span class="pill ok">correct</span>', False: ' <span class="pill err">wrong</span>',
                None: ""}[correct]) + "</p>"
            f"<p><b>Why:</b> {linkify(fa.rationale, known)}</p>"
            + (f'<p>cites:</p><ul class="evidence">{cited}</ul>' if cited else
               '<p class="warn">the answer cites no evidence</p>')
            + f'<p class="muted">answered by {h(fa.answered_by)}</p>')


def _choices_html(st: EvidenceState) -> str:
    """The choices, the chosen one and the ground truth marked."""
    q, fa = st.question, st.final_answer
    if not q.choices:
        return ""
    return '<ol type="A" class="choices">' + "".join(
        f'<li class="{"chosen" if fa is not None and fa.choice_index == i else ""}">{h(c)}'
        + (" ✓ chosen" if fa is not None and fa.choice_index == i else "")
        + (" ← ground truth" if q.ground_truth is not None and c == q.ground_truth else "") + "</li>"
        for i, c in enumerate(q.choices)) + "</ol>"


def _findings_html(audit: TraceAudit | None, st: EvidenceState, known: set[str]) -> str:
    """The audit's findings as a table linked to the trace items they are about."""
    if audit is not None and audit.findings:
        rows = "".join(
            f'<tr><td><span class="pill {"err" if f.severity.value == "error" else "warn" if f.severity.value == "warning" else ""}">'
            f"{h(f.severity.value)}</span></td><td><code>{h(f.rule)}</code></td><td>"
            + (f'<a href="#{h(_anchor_for(f.item_id, st))}">{h(f.path)}</a>' if f.item_id and _anchor_for(f.item_id, st)
               else h(f.path)) + f"</td><td>{linkify(f.message, known)}</td></tr>" for f in audit.findings)
        return f"<table><tr><th>severity</th><th>rule</th><th>where</th><th>finding</th></tr>{rows}</table>"
    if audit is not None:
        return '<p class="ok">no findings</p>'
    return '<p class="muted">not audited</p>'


def _anchor_for(item_id: str | None, st: EvidenceState) -> str | None:
    if not item_id:
        return None
    if any(a.id == item_id for a in st.artifacts):
        return f"art-{item_id}"
    ids = {c.id for c in st.tool_calls} | {e.id for e in st.evidence} | {o.id for o in st.observations}
    return item_id if item_id in ids else None


def render_index(entries: list[dict[str, Any]], out_dir: Path, unreadable: list[tuple[str, str]] | None = None) -> Path:
    rows = []
    graded = [e for e in entries if e["correct"] is not None]
    for e in entries:
        mark = {True: '<span class="pill ok">correct</span>', False: '<span class="pill err">wrong</span>',
                None: ""}[e["correct"]]
        errs, warns = e["errors"], e["warnings"]
        rows.append(
            f'<tr class="trace-row"><td><a href="{h(e["href"])}">{h(e["run_id"])}</a></td><td>{h(e["item_id"] or "")}</td>'
            f'<td>{h(short(e["question"], 90))}</td><td>{h(e["answer"])} {mark}</td><td>{h(e["outcome"])}</td>'
            f'<td>{e["planner_calls"]} / {e["frontend_calls"]}</td>'
            f'<td><span class="{"err" if errs else "muted"}">{errs}</span> / <span class="{"warn" if warns else "muted"}">'
            f'{warns}</span></td><td>{e["wall"]:.1f}</td></tr>')
    acc = (f"accuracy {sum(1 for e in graded if e['correct'])}/{len(graded)}" if graded else "no ground truth")
    bad = "".join(f"<li>{h(f)}: {h(why)}</li>" for f, why in (unreadable or []))
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>audiomind traces</title>
<style>{CSS}</style></head><body>
<header><h1>audiomind traces</h1><div class="meta">{len(entries)} trace(s) · {acc}</div></header>
<main><section class="card"><table>
<tr><th>run</th><th>item</th><th>question</th><th>answer</th><th>outcome</th><th>tool calls (planner / front end)</th>
<th>findings (errors / warnings)</th><th>wall s</th></tr>
{''.join(rows)}</table></section>
{f'<section class="card"><h2>Unreadable files</h2><ul>{bad}</ul></section>' if bad else ''}
</main></body></html>
"""
    path = out_dir / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def render_paths(paths: Sequence[str | Path], out_dir: str | Path, embed: bool = False, spectrograms: bool = True,
                 audit: bool = True, allow: list[str | Path] | tuple[str | Path, ...] = ()) -> tuple[list[Path], Path]:
    """Pages for every trace under `paths` and an index; returns (pages, index). Each page reads audio only
    from its trace's run folder and the `allow`ed folders."""
    from audiomind.audit.stats import load_traces

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    traces, unreadable = load_traces(list(paths))
    allowed = [Path(d) for d in allow]
    auditor = Auditor(allow=allowed, outside="originals") if audit else None  # the pages' own rule
    pages, entries = [], []
    for st, f in traces:
        report = auditor.audit_file(f) if auditor else None
        page = render_page(st, out, Path(f), report, embed=embed, spectrograms=spectrograms, allow=allowed,
                           originals_anywhere=True)
        pages.append(page)
        fa = st.final_answer
        entries.append({
            "href": page.name, "run_id": st.run.run_id, "item_id": st.question.item_id, "question": st.question.text,
            "answer": (fa.choice or fa.text) if fa else "", "correct": is_correct(st),
            "outcome": st.outcome.status if st.outcome else "unfinished",
            "planner_calls": sum(1 for c in st.tool_calls if c.issued_by == "planner"),
            "frontend_calls": sum(1 for c in st.tool_calls if c.issued_by == "frontend"),
            "errors": report.count(Severity.error) if report else 0,
            "warnings": report.count(Severity.warning) if report else 0,
            "wall": st.run.wall_time_s or 0.0,
        })
    index = render_index(entries, out, unreadable)
    return pages, index
