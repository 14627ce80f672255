"""The descriptors' outputs read as facts through the property vocabulary (`lexicon/properties.toml`).

A property row names the tool, the output key holding the measured value and how the tool's labels map onto
the vocabulary's values; a selector row names the list of items, which of them the output picks (an index key
or a boolean flag) and which keys a choice may match. Nothing here knows a descriptor by name: a new
descriptor is a tool plus vocabulary rows. The facts land in `Facts.values` as `property:NAME` (value: the
measured value) and `select:NAME` (value: the picked items, detail: every item, for ordinals)."""

from __future__ import annotations

import functools
import tomllib
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from audiomind.resources import data_dir


class PropertyRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    tool: str
    field: str
    reliability: float = Field(ge=0.0, le=1.0)
    map: dict[str, str] = Field(default_factory=dict)
    question: list[str] = Field(default_factory=list)
    values: dict[str, list[str]]
    describe: dict[str, list[str]] = Field(default_factory=dict, description="sentences describing each value")
    ordered: dict[str, list[str]] = Field(default_factory=dict, description="two words naming a value in order")
    defer: list[str] = Field(default_factory=list, description="question families MiniLM-mapped choices defer to")
    about: float | None = Field(None, ge=0.0, le=1.0, description="question similarity to the examples needed even "
                                "when every choice uses the vocabulary's words (values that are common words: numbers)")
    cues: list[str] = Field(default_factory=list, description="regexes that must all occur in the question")

    def value_of(self, raw: Any) -> str | None:
        """The vocabulary value of a tool's raw output value (None: the measurement names no value here)."""
        if raw is None:
            return None
        key = str(raw).lower() if isinstance(raw, bool) else str(raw)
        v = self.map.get(key, key)
        return v if v in self.values else None


class SelectorRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    tool: str
    items: str
    index: str | None = None
    flag: str | None = None
    text: str | None = None
    start: str | None = None
    end: str | None = None
    where: str | None = None
    labels: str | None = None
    reliability: float = Field(ge=0.0, le=1.0)
    question: list[str]
    cues: list[str] = Field(default_factory=list, description="regexes that must all occur in the question")


class Vocabulary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    defer_at: float = Field(0.9, ge=0.0, le=1.0, description="relevance at which a `defer` family is deferred to")
    property: list[PropertyRow] = Field(default_factory=list)
    selector: list[SelectorRow] = Field(default_factory=list)

    def tools(self) -> set[str]:
        return {r.tool for r in self.property} | {r.tool for r in self.selector}


@functools.lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The packaged property vocabulary, validated (a malformed file names itself), then the rows the tool
    manifests carry (a plugin's descriptor: `manifest_rows`)."""
    path = data_dir("lexicon") / "properties.toml"
    try:
        voc = Vocabulary.model_validate(tomllib.loads(path.read_text()))
    except Exception as exc:
        raise ValueError(f"lexicon/properties.toml: {exc}") from exc
    prop, sel = manifest_rows({r.name for r in voc.property}, {r.name for r in voc.selector})
    return voc.model_copy(update={"property": voc.property + prop, "selector": voc.selector + sel})


def manifest_rows(taken_props: set[str], taken_sels: set[str]) -> tuple[list[PropertyRow], list[SelectorRow]]:
    """The vocabulary rows tool manifests carry (`[vocabulary]`, audiomind.tools.manifest.ToolVocabulary). A row
    that does not validate, or takes a name already in the vocabulary, is left out and noted with the plugins'
    tool problems (`audiomind doctor`): a broken plugin never stops a question."""
    from audiomind.tools.manifest import ToolRegistry

    props: list[PropertyRow] = []
    sels: list[SelectorRow] = []
    for m in ToolRegistry.load().all():
        rows = m.vocabulary_rows()
        props += _valid(m.name, m.source_file, "property", PropertyRow, rows["property"], taken_props)
        sels += _valid(m.name, m.source_file, "selector", SelectorRow, rows["selector"], taken_sels)
    return props, sels


_Row = TypeVar("_Row", PropertyRow, SelectorRow)


def _valid(tool: str, where: str | None, group: str, model: type[_Row], rows: list[dict[str, Any]],
           taken: set[str]) -> list[_Row]:
    from audiomind.tools.manifest import PLUGIN_TOOL_PROBLEMS

    out: list[_Row] = []
    for row in rows:
        key = f"{tool}:vocabulary {group} {row.get('name')!r}"
        try:
            parsed = model.model_validate(row)
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            PLUGIN_TOOL_PROBLEMS[key] = f"{where}: {exc}"
            continue
        if parsed.name in taken:
            PLUGIN_TOOL_PROBLEMS[key] = f"{group} name {parsed.name!r} is taken: left out"
            continue
        taken.add(parsed.name)
        out.append(parsed)
    return out


class Item(BaseModel):
    """One item of a selector's list, with what a choice may match."""

    ordinal: int = Field(description="1-based position among the items")
    text: str | None = None
    start_s: float | None = None
    end_s: float | None = None
    where: str | None = None
    labels: list[tuple[str, float]] = Field(default_factory=list)
    chosen: bool = False


@functools.lru_cache(maxsize=64)
def _output_class(tool: str):
    from audiomind.tools.manifest import ToolRegistry

    reg = ToolRegistry.load()
    return reg.get(tool).output_class if tool in reg else None


def _typed(call_output: dict | None, tool: str) -> dict | None:
    """The output checked against its tool's output model, as a dict (None when it does not fit)."""
    if not call_output:
        return None
    model = _output_class(tool)
    try:
        return model.model_validate(call_output).model_dump(mode="python") if model is not None else dict(call_output)
    except Exception:  # noqa: BLE001 - an output that does not fit its model is no evidence
        return None


def read_property_facts(state, artifact: str, find, ids) -> dict[str, dict]:
    """{'property:NAME' | 'select:NAME': ValueFact fields} for every vocabulary row whose tool ran on `artifact`.
    `find(state, tool, artifact)` is the facts layer's choice of call (its latest whole-clip call) and
    `ids(state, call)` the evidence ids of a call, so every reader picks calls the same way."""
    voc = vocabulary()
    out: dict[str, dict] = {}
    for row in voc.property:
        call = find(state, row.tool, artifact)
        data = _typed(call.output if call else None, row.tool)
        if data is None or row.field not in data:
            continue
        out[f"property:{row.name}"] = {
            "name": row.name, "value": row.value_of(data[row.field]), "source": row.tool,
            "evidence_ids": ids(state, call),
            "detail": {"raw": data[row.field], **{k: v for k, v in data.items() if isinstance(v, (int, float, str))}}}
    for sel in voc.selector:
        call = find(state, sel.tool, artifact)
        data = _typed(call.output if call else None, sel.tool)
        if data is None or not isinstance(data.get(sel.items), list):
            continue
        chosen_idx = data.get(sel.index) if sel.index else None
        items = []
        for k, it in enumerate(data[sel.items]):
            chosen = (k == chosen_idx) if sel.index else bool(it.get(sel.flag)) if sel.flag else True
            items.append(Item(ordinal=k + 1, chosen=chosen,
                              text=str(it[sel.text]) if sel.text and it.get(sel.text) is not None else None,
                              start_s=it.get(sel.start) if sel.start else None,
                              end_s=it.get(sel.end) if sel.end else None,
                              where=it.get(sel.where) if sel.where else None,
                              labels=[(str(a), float(b)) for a, b in it.get(sel.labels) or []] if sel.labels else []))
        out[f"select:{sel.name}"] = {
            "name": sel.name, "value": [i.model_dump() for i in items if i.chosen], "source": sel.tool,
            "evidence_ids": ids(state, call), "detail": {"items": [i.model_dump() for i in items]}}
    return out
