"""OTLP export to a collector that misbehaves in time (issue 35, point 3): one that accepts and never answers,
one that sends its reply a byte at a time, and one that sends its headers and then a body that never ends.
The exporter's own timeout is per read, so the trickling ones held `trace export` and `ask --otlp` (after it
had printed its answer) for ever; now the whole export has a deadline, and a late collector is one warning
line, as an unreachable one is (README). Loopback stand-in collectors; every wait is bounded."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from audiomind.audit.otel import ExportError, export_after_run, export_states
from audiomind.state import EvidenceState, Question

from .conftest import write_tone
from .slow_servers import SlowServer

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def slow():
    servers: list[SlowServer] = []

    def make(mode: str) -> SlowServer:
        s = SlowServer(mode, 0.3)  # type: ignore[arg-type]
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def _collector(server: SlowServer) -> str:
    return server.url.removesuffix("/v1")


@pytest.mark.parametrize("mode", ["hang", "drip", "drip_forever"])
def test_the_whole_export_has_a_deadline(slow, tmp_path, mode, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TIMEOUT", raising=False)
    server = slow(mode)
    state = EvidenceState(question=Question(text="Is there a tone?", audio_path=str(write_tone(tmp_path / "t.wav"))))
    t0 = time.monotonic()
    with pytest.raises(ExportError, match="could not export run"):
        export_states([(state, None)], _collector(server), timeout_s=1.5)
    assert time.monotonic() - t0 < 1.5 + 1.5
    t0 = time.monotonic()
    warning = export_after_run(state, _collector(server), timeout_s=1.0)
    assert warning is not None and warning.startswith("OpenTelemetry export skipped"), warning
    assert time.monotonic() - t0 < 1.0 + 1.5
    assert server.connections, "the collector was never reached"


def test_ask_with_a_trickling_collector_ends_after_its_answer_with_one_warning(slow, tmp_path, model_server,
                                                                             monkeypatch):
    from audiomind.cli import app

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1.5")
    server = slow("drip_forever")
    clip = write_tone(tmp_path / "tone.wav")
    t0 = time.monotonic()
    res = CliRunner().invoke(app, ["ask", str(clip), "Is there a tone?", "-c", "yes", "-c", "no", "--planner",
                                   model_server.spec, "--frontend", model_server.spec, "--trace-dir",
                                   str(tmp_path / "traces"), "--otlp", _collector(server)])
    took = time.monotonic() - t0
    assert res.exit_code == 0, res.output
    assert "yes" in res.stdout
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: OpenTelemetry export skipped"), lines
    assert "within 1.5 s" in lines[0], lines[0]
    assert took < 15, f"{took:.1f} s"
