"""The built-in judges, one file each: its inputs (an args model), its `JudgeSpec` with its agent tool (the
manifest's text, the output model and the claims). The judges' methods stay in their own modules
(judges/edit.py, judges/rubric/, judges/aura.py) and their short CLI verdicts in judges/cli.py, named by
"module:attr" strings (so listing the judges imports none of them).

A built-in judge is its file here and its name below (the order of `audiomind judge -h` and the HTTP routes).
"""

BUILTIN_JUDGES: tuple[str, ...] = ("edit", "rubric", "aura")
"""Registered lazily in `audiomind.judges.spec.JUDGES` as "audiomind.judges.specs.NAME:SPEC"."""
