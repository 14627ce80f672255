"""`bench run --dry-run N`: the whole run's tokens and cost, estimated from N items answered for real.

The N items run into RUN_DIR/dry-run through the model-call cache, so the real run afterwards reuses their
replies and pays for them once. The estimate is linear: each role's mean tokens of every kind per item
(from the providers' own usage, as recorded in the traces; a call answered from the cache counts its
original usage) times the number of items, priced as if nothing were cached, with the smallest and largest
item as the range. It says so in `method`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.bench.prices import PriceTable, call_cost
from audiomind.bench.runner import load_results

KINDS = ("input_tokens", "output_tokens", "cached_input_tokens", "audio_input_tokens", "reasoning_tokens")


class RoleEstimate(BaseModel):
    role: str
    backends: list[str] = Field(default_factory=list)
    calls_per_item: float = 0.0
    tokens_per_item: dict[str, float] = Field(default_factory=dict, description="mean per item, by token kind")
    cost_per_item: float | None = None
    cost_run: float | None = None


class RunEstimate(BaseModel):
    sampled: int
    total_items: int
    roles: list[RoleEstimate] = Field(default_factory=list)
    cost_run: float | None = Field(None, description="None when a billed backend has no price")
    cost_run_range: tuple[float, float] | None = None
    unpriced: list[str] = Field(default_factory=list)
    method: str = ""

    def table(self) -> Any:
        from rich.table import Table

        t = Table(title=f"dry run: {self.sampled} item(s) answered, {self.total_items} in the run")
        for col in ("role", "backend", "calls / item", "input tok / item", "of it audio", "of it cached",
                    "output tok / item", "USD / item", f"USD for {self.total_items}"):
            t.add_column(col, justify="left" if col in ("role", "backend") else "right")
        for r in self.roles:
            tk = r.tokens_per_item
            t.add_row(r.role, ", ".join(r.backends), f"{r.calls_per_item:.1f}", f"{tk.get('input_tokens', 0):,.0f}",
                      f"{tk.get('audio_input_tokens', 0):,.0f}", f"{tk.get('cached_input_tokens', 0):,.0f}",
                      f"{tk.get('output_tokens', 0):,.0f}",
                      "unknown" if r.cost_per_item is None else f"{r.cost_per_item:.5f}",
                      "unknown" if r.cost_run is None else f"{r.cost_run:.2f}")
        lo_hi = f" (range {self.cost_run_range[0]:.2f}-{self.cost_run_range[1]:.2f})" if self.cost_run_range else ""
        t.caption = ("whole run: unknown cost" if self.cost_run is None
                     else f"whole run: about ${self.cost_run:.2f}{lo_hi}")
        return t


def _calls_of(run_dir: Path, row: dict[str, Any]) -> list[dict[str, Any]]:
    path = row.get("trace_path")
    if not path:
        return []
    try:
        from audiomind.fsutil import load_json_file

        trace = load_json_file(run_dir / path)  # bounded: a FIFO, device or huge file is refused (ValueError)
    except (OSError, ValueError):
        return []
    return [c for c in trace.get("model_calls") or [] if isinstance(c, dict)]


def estimate_run(probe_dir: str | Path, *, total_items: int, prices: PriceTable | None) -> RunEstimate:
    probe_dir = Path(probe_dir)
    rows = [r for r in load_results(probe_dir).values() if r.get("status") != "missing_audio"]
    n = len(rows)
    per_role: dict[str, RoleEstimate] = {}
    item_costs: list[float] = []
    unpriced: set[str] = set()
    for row in rows:
        item_cost = 0.0
        for c in _calls_of(probe_dir, row):
            est = per_role.setdefault(str(c.get("role")), RoleEstimate(role=str(c.get("role"))))
            backend = str(c.get("backend"))
            if backend not in est.backends:
                est.backends.append(backend)
            est.calls_per_item += 1
            for k in KINDS:
                est.tokens_per_item[k] = est.tokens_per_item.get(k, 0.0) + float(c.get(k) or 0)
            usd = call_cost({**c, "cache_hit": False}, prices)  # the real run pays for what the probe cached
            if usd is None:
                unpriced.add(backend)
                est.cost_per_item = None
                est.cost_run = -1.0  # marks unknown below
            else:
                item_cost += usd
                if est.cost_run != -1.0:
                    est.cost_per_item = (est.cost_per_item or 0.0) + usd
        item_costs.append(item_cost)
    for est in per_role.values():
        if n:
            est.calls_per_item /= n
            est.tokens_per_item = {k: v / n for k, v in est.tokens_per_item.items()}
        if est.cost_run == -1.0 or est.cost_per_item is None:
            est.cost_per_item, est.cost_run = (None, None) if est.cost_run == -1.0 else (0.0, 0.0)
        else:
            est.cost_per_item /= max(n, 1)
            est.cost_run = est.cost_per_item * total_items
    known = not unpriced and n > 0
    return RunEstimate(
        sampled=n, total_items=total_items, roles=sorted(per_role.values(), key=lambda r: r.role),
        cost_run=sum(item_costs) / n * total_items if known else None,
        cost_run_range=(min(item_costs) * total_items, max(item_costs) * total_items) if known else None,
        unpriced=sorted(unpriced),
        method=(f"estimated from {n} item(s) answered for real (traces in {probe_dir}): each role's mean tokens "
                f"per item, from the providers' own usage, times {total_items} items; priced as if no call "
                "were cached (the real run reuses these items' replies from the model-call cache); the range "
                "is the cheapest and the dearest sampled item times the item count"),
    )
