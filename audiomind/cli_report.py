"""How `audiomind ask` reports what went wrong around a run, each as one line: a model backend that failed
or a time budget that ran out (with where the trace is), a trace the file system would not take (the
answer is printed first and not lost), an interrupt, and the notes of a finished run that lower trust in
its answer (the confidence and why, tools that failed or timed out, what the input check found)."""

from __future__ import annotations

import signal
import threading
from typing import Any, Self

from audiomind.fsutil import storage_error

EXIT_STORAGE = 4
"""Exit code of a run whose trace (or other output) could not be written."""


def run_failure_line(exc: BaseException) -> str:
    """'time budget of 20 s spent: ...; trace: PATH', or 'model backend failed: ...; trace: PATH'."""
    from audiomind.backends.deadline import BudgetExhausted

    head = str(exc) if isinstance(exc, BudgetExhausted) else f"model backend failed: {exc}"
    trace = getattr(exc, "audiomind_trace_path", None)
    return head + (f"; trace: {trace}" if trace else "")


def storage_line(exc: OSError) -> str:
    """A write the file system refused, as one line ('cannot write PATH: no space left on the device
    (ENOSPC)'); another OSError as its own message."""
    from audiomind.fsutil import is_storage_error

    if is_storage_error(exc):
        return str(storage_error(exc))
    return f"{exc.strerror or exc}: {exc.filename or ''}".strip()


def storage_failure_line(exc: OSError) -> str:
    """`storage_line` for `ask`: for a run that also failed, both causes; for a finished run, that its
    answer (printed above) is not on record."""
    msg = storage_line(exc)
    run_error = getattr(exc, "audiomind_run_error", None)
    if run_error is not None:
        return f"{run_failure_line(run_error)}; the trace could not be written: {msg}"
    if getattr(exc, "audiomind_result", None) is not None:
        return f"the answer above is not on record: {msg}"
    return msg


def tool_problems(state: Any) -> list[str]:
    """'loudness timed out after 120.0 s', 'vad failed: ...' for every tool call that did not deliver."""
    out = []
    for c in getattr(state, "tool_calls", []) or []:
        status = getattr(c.status, "value", c.status)
        if status == "timeout":
            out.append(f"{c.tool} timed out ({(c.error or '').strip()[:120]})")
        elif status == "error":
            out.append(f"{c.tool} failed ({(c.error or '').strip()[:120]})")
    return out


def input_notes(state: Any) -> list[str]:
    """What the input check at ingest found and did (audiomind.audio.signal_check), per original clip."""
    notes = []
    for a in getattr(state, "artifacts", []) or []:
        if a.derived_from is None:
            notes += [f"{a.id}: {n}" for n in (a.parameters.get("signal_check") or {}).get("notes", [])]
    return notes


def run_notes(result: Any) -> list[tuple[str, str]]:
    """(label, text) lines printed under a finished run's answer."""
    lines: list[tuple[str, str]] = []
    if result.confidence is not None:
        lines.append(("Confidence", f"{result.confidence:.2f}"
                      + (f" ({result.confidence_reason})" if result.confidence_reason else "")))
    elif result.confidence_reason:
        lines.append(("Confidence", f"not estimated ({result.confidence_reason})"))
    problems = tool_problems(result.state)
    if problems:
        lines.append(("Tool problems", "; ".join(problems)))
    notes = input_notes(result.state)
    if notes:
        lines.append(("Input", "; ".join(notes)))
    return lines


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def terminate_as_interrupt() -> None:
    """SIGTERM (a `timeout`, a scheduler, `kill`) stops a run the way Ctrl-C does: its trace is written as
    stopped before the process exits. Only from the main thread (signals cannot be set elsewhere)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


def progress_line(values: Any) -> str:
    """One line on where a running question is, from the state after a graph node: the step, what has been
    heard and called so far, and whether it is answering ('step 2/6: 1 observation, 8 tool calls, ...')."""
    get = values.get if isinstance(values, dict) else (lambda k, d=None: getattr(values, k, d))
    run = get("run")
    max_steps = (run.get("max_steps") if isinstance(run, dict) else getattr(run, "max_steps", None)) if run else None
    bits = [f"{len(get('observations') or [])} observation(s)", f"{len(get('tool_calls') or [])} tool call(s)",
            f"{len(get('decisions') or [])} decision(s)"]
    if get("final_answer") is not None:
        stage = "answered, writing the trace"
    elif get("evidence_summary"):
        stage = "answering"
    elif not get("observations"):
        stage = "listening"
    else:
        stage = f"step {len(get('decisions') or []) + 1}" + (f"/{max_steps}" if max_steps else "")
    return f"{stage}: " + ", ".join(bits)


class TerminalProgress:
    """`ask`'s progress on stderr, only when stderr is a terminal (a spinner with the latest `progress_line`
    and the seconds so far); a pipe or a file gets nothing, so scripted output stays clean."""

    def __init__(self, console: Any, label: str = "audiomind") -> None:
        import time

        self._console, self._label, self._t0, self._status = console, label, time.monotonic(), None
        self.enabled = bool(getattr(console, "is_terminal", False))

    def __enter__(self) -> Self:
        if self.enabled:
            status = self._console.status(f"{self._label}: starting", spinner="dots")
            status.start()
            self._status = status
        return self

    def update(self, values: Any) -> None:
        if self._status is None:
            return
        import time

        from rich.markup import escape

        self._status.update(escape(f"{self._label}: {progress_line(values)} ({time.monotonic() - self._t0:.0f} s)"))

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
