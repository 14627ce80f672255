"""Auditing traces: show (timeline), audit (rules with severities), stats (behaviour table), diff,
and a static HTML viewer. The CLI commands live in audiomind.audit.cli (`audiomind trace ...`)."""

from audiomind.audit.audit import Auditor, Finding, Severity, TraceAudit, audit_paths
from audiomind.audit.diff import DiffReport, diff_states
from audiomind.audit.timeline import Step, build_timeline

__all__ = [
    "Auditor", "DiffReport", "Finding", "Severity", "Step", "TraceAudit", "audit_paths", "build_timeline",
    "diff_states",
]
