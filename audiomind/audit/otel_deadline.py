"""A whole OTLP export under one deadline (issue 35). The OTLP exporter's own timeout is per read: a
collector that trickles its reply (or its headers, then a body that never ends), or retries with back-off,
held `trace export` and `ask --otlp`, after it had printed its answer, for ever."""

from __future__ import annotations

import os
import threading
from typing import Any


def total_timeout(default: float) -> float:
    """The whole export's deadline in seconds: the exporter's own timeout (as the SDK reads it: the traces
    variable, then the general one, else `default`)."""
    raw = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def export_within(exporter: Any, spans: Any, seconds: float) -> Any:
    """`exporter.export(spans)`, or None when it has not returned within `seconds` in all; the abandoned
    export's daemon thread is left to end with the process."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = exporter.export(spans)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="audiomind-otlp-export", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        return None
    if "error" in box:
        raise box["error"]
    return box.get("result")
