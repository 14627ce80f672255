"""What a model call cost, from the provider's own usage and a dated price table.

A call's cost is each token kind at its own rate: uncached text input, cached input, audio input, output
(reasoning and thinking included: they are billed as output), times the batch share for a batch call. A
call answered from audiomind's model-call cache sent nothing and costs nothing.

Prices: the table shipped in `data/prices.toml` (dated; it prices specs on the providers' own endpoints,
i.e. without @URL), overridden by `--price SPEC=IN,OUT[,CACHED[,AUDIO]]` / `--price-in/--price-out` (a key
matches a spec with or without its @URL; `*` prices everything else). Backends that run here (rules,
cascade, replay, llamacpp, ollama) cost nothing. Any other backend without a price is *unpriced*: its calls
cost `None` (unknown), and a run that used it prints a warning and `cost: unknown`, never $0.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.backends.policy import spec_names

LOCAL_KINDS = frozenset({"rules", "cascade", "replay", "llamacpp", "ollama"})
"""Spec kinds that run on this machine (or the user's own): no bill."""


class Price(BaseModel):
    """USD per one million tokens for one model backend."""

    input_per_m: float = Field(ge=0, description="USD per 1M text input (prompt) tokens")
    output_per_m: float = Field(ge=0, description="USD per 1M output tokens (reasoning / thinking included)")
    cached_per_m: float | None = Field(None, ge=0, description="USD per 1M cached input tokens (None: input rate)")
    audio_input_per_m: float | None = Field(None, ge=0, description="USD per 1M audio input tokens (None: input rate)")
    batch_share: float = Field(0.5, gt=0, le=1, description="the share of the price a batch call pays")
    source: str = Field("--price", description="where this price came from (the table and its date, or the CLI)")


PriceTable = Mapping[str, Price]
"""Backend spec (with or without @URL) or '*' -> Price."""


@functools.cache
def builtin_prices() -> tuple[str, dict[str, Price]]:
    """(as_of date, spec -> Price) from the shipped table."""
    data = tomllib.loads((Path(__file__).parent / "data" / "prices.toml").read_text(encoding="utf-8"))
    as_of = str(data.get("as_of", "?"))
    table = {}
    for spec, row in (data.get("models") or {}).items():
        table[spec] = Price(input_per_m=row["input"], output_per_m=row["output"], cached_per_m=row.get("cached"),
                            audio_input_per_m=row.get("audio_input"), batch_share=row.get("batch", 0.5),
                            source=f"price table of {as_of}")
    return as_of, table


def parse_price(entry: str) -> tuple[str, Price]:
    """'SPEC=IN,OUT[,CACHED[,AUDIO_IN]]' (USD per 1M tokens) -> (spec, Price)."""
    spec, sep, vals = entry.rpartition("=")
    parts = [p.strip() for p in vals.split(",")]
    if not sep or not spec.strip() or not 2 <= len(parts) <= 4:
        raise ValueError(f"--price {entry!r}: expected SPEC=IN,OUT[,CACHED[,AUDIO_IN]] (USD per 1M tokens), "
                         "e.g. openai:gpt-4o-mini=0.15,0.6")
    try:
        nums = [float(p) if p else None for p in parts]
        return spec.strip(), Price(input_per_m=nums[0], output_per_m=nums[1],
                                   cached_per_m=nums[2] if len(nums) > 2 else None,
                                   audio_input_per_m=nums[3] if len(nums) > 3 else None, source="--price")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--price {entry!r}: {exc}") from exc


def price_for(backend: str, prices: PriceTable | None) -> Price | None:
    """The price of a backend spec: the given table by the spec, the spec without @URL, then '*'; else the
    shipped table for a spec on a provider's own endpoint (no @URL)."""
    given = prices or {}
    for name in spec_names(backend):
        if name in given:
            return given[name]
    if "@" not in backend.partition(":")[2]:
        return builtin_prices()[1].get(backend)
    return None


def is_local(backend: str) -> bool:
    return backend.partition(":")[0] in LOCAL_KINDS or not backend


def _n(v: Any) -> int:
    return int(v or 0)


def call_cost(call: Mapping[str, Any], prices: PriceTable | None) -> float | None:
    """USD of one recorded call (a ModelCall as a dict); 0 for a cache hit or a local backend; None when
    its backend has no price (unknown)."""
    backend = str(call.get("backend") or "")
    if call.get("cache_hit") or is_local(backend):
        return 0.0
    if not _n(call.get("input_tokens")) and not _n(call.get("output_tokens")):
        return 0.0  # nothing billed (a request that failed before any reply)
    p = price_for(backend, prices)
    if p is None:
        return None
    total_in = _n(call.get("input_tokens"))
    cached = min(total_in, _n(call.get("cached_input_tokens")))
    audio = min(total_in - cached, _n(call.get("audio_input_tokens")))
    text = total_in - cached - audio
    usd = (text * p.input_per_m
           + cached * (p.cached_per_m if p.cached_per_m is not None else p.input_per_m)
           + audio * (p.audio_input_per_m if p.audio_input_per_m is not None else p.input_per_m)
           + _n(call.get("output_tokens")) * p.output_per_m) / 1e6
    return usd * (p.batch_share if call.get("batch") else 1.0)


class CostBreakdown(BaseModel):
    """The cost of a run's (or an item's) calls, by role, with what could not be priced."""

    cost_usd: float | None = Field(None, description="None when any billed call was unpriced")
    by_role: dict[str, float] = Field(default_factory=dict, description="USD per role (priced calls only)")
    unpriced: list[str] = Field(default_factory=list, description="backends with billed tokens and no price")
    cache_hits: int = 0
    cached_input_tokens: int = 0
    audio_input_tokens: int = 0
    reasoning_tokens: int = 0


def cost_of(calls: Iterable[Mapping[str, Any]], prices: PriceTable | None) -> CostBreakdown:
    out = CostBreakdown()
    total = 0.0
    for c in calls:
        usd = call_cost(c, prices)
        role = str(c.get("role") or "?")
        if usd is None:
            if str(c.get("backend")) not in out.unpriced:
                out.unpriced.append(str(c.get("backend")))
        else:
            total += usd
            out.by_role[role] = round(out.by_role.get(role, 0.0) + usd, 10)
        out.cache_hits += bool(c.get("cache_hit"))
        out.cached_input_tokens += _n(c.get("cached_input_tokens"))
        out.audio_input_tokens += _n(c.get("audio_input_tokens"))
        out.reasoning_tokens += _n(c.get("reasoning_tokens"))
    out.cost_usd = None if out.unpriced else round(total, 10)
    return out


class RunCost(BaseModel):
    """A run's cost from its committed result lines (what `bench report` shows)."""

    cost_usd: float | None = Field(None, description="None when any item had an unpriced billed call")
    per_item_usd: float | None = None
    by_role: dict[str, float] = Field(default_factory=dict)
    unpriced: list[str] = Field(default_factory=list)
    cache_hits: int = 0

    def line(self) -> str:
        """One Markdown-safe sentence (backend names are the caller's to escape)."""
        hits = f"; {self.cache_hits} model call(s) answered from the cache" if self.cache_hits else ""
        if self.unpriced:
            return f"cost: unknown (no price for {', '.join(self.unpriced)}){hits}"
        if self.cost_usd is None:
            return f"cost: not priced{hits}"
        roles = ", ".join(f"{r} ${v:.4f}" for r, v in sorted(self.by_role.items()))
        each = f", ${self.per_item_usd:.5f} per item" if self.per_item_usd is not None else ""
        return f"cost: ${self.cost_usd:.4f} ({roles}{each}){hits}"


def run_cost(rows: Iterable[Mapping[str, Any]]) -> RunCost:
    rows = list(rows)
    out = RunCost()
    for r in rows:
        for role, usd in (r.get("cost_by_role") or {}).items():
            out.by_role[role] = round(out.by_role.get(role, 0.0) + float(usd), 10)
        out.unpriced += [b for b in r.get("unpriced") or [] if b not in out.unpriced]
        out.cache_hits += int(r.get("cache_hits") or 0)
    legacy = [float(r["cost_usd"]) for r in rows if r.get("cost_usd") is not None and not r.get("cost_by_role")]
    if not out.unpriced and (out.by_role or legacy):
        out.cost_usd = round(sum(out.by_role.values()) + sum(legacy), 8)
        ran = [r for r in rows if r.get("status") != "missing_audio" and not r.get("input_error")]
        out.per_item_usd = round(out.cost_usd / len(ran), 8) if ran else None
    return out
