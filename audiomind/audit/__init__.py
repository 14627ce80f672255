"""Auditing traces: show (timeline), audit (rules with severities), stats (behaviour table), diff,
and a static HTML viewer. The CLI commands live in audiomind.audit.cli (`audiomind trace ...`).

The names below are imported on first use, so `audiomind.audit.cli` (loaded by every CLI start) does not
pull in the auditor and its dependencies until a trace command runs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Auditor": "audit", "Finding": "audit", "Severity": "audit", "TraceAudit": "audit", "audit_paths": "audit",
    "DiffReport": "diff", "diff_states": "diff", "Step": "timeline", "build_timeline": "timeline",
}

__all__ = [
    "Auditor", "DiffReport", "Finding", "Severity", "Step", "TraceAudit", "audit_paths", "build_timeline",
    "diff_states",
]

if TYPE_CHECKING:  # pragma: no cover
    from audiomind.audit.audit import Auditor, Finding, Severity, TraceAudit, audit_paths
    from audiomind.audit.diff import DiffReport, diff_states
    from audiomind.audit.timeline import Step, build_timeline


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"audiomind.audit.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'audiomind.audit' has no attribute {name!r}")
