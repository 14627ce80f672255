"""Output fields that several tools declare with the same meaning, defined once so that their description
(which the inventory, the MCP output schemas and stored traces carry) cannot drift apart between tools.

Each is an `Annotated` type: `window_s: AnalysedWindow` gives the same field, and the same JSON schema, as
writing out its `Field(...)` in the model.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

AnalysedWindow = Annotated[tuple[float, float], Field(description="analysed window [start, end] (s)")]
"""The [start, end] stretch of the artifact a tool analysed, in seconds (named `window_s` or `analysed_s`,
by tool)."""
