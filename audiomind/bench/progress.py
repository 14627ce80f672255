"""The batch runner's progress bar on stderr: ETA, the last item's time, tokens, cost, items not answered."""

from __future__ import annotations

import statistics

from audiomind.bench.items import ItemResult


class Progress:
    """rich progress bar (to stderr) with ETA, the last item's time, tokens and cost; or nothing."""

    def __init__(self, enabled: bool, total: int, done: int, label: str, priced: bool):
        self.enabled = enabled and total > 0
        self.priced = priced
        self.times: list[float] = []
        self.tokens = 0
        self.cost = 0.0
        self.bad = 0
        self._p = None
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._p = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
            console=Console(stderr=True), transient=False,
        )
        self._p.start()
        self._task = self._p.add_task(label, total=total, completed=done, info="")

    def update(self, r: ItemResult) -> None:
        self.times.append(r.wall_time_s)
        self.tokens += r.input_tokens + r.output_tokens
        self.cost += r.cost_usd or 0.0
        if r.status in ("error", "missing_audio", "failed"):
            self.bad += 1
        if self._p is None:
            return
        info = f"last {r.wall_time_s:.1f}s, mean {statistics.fmean(self.times):.1f}s/item"
        if self.tokens:
            info += f", {self.tokens:,} tok"
        if self.priced:
            info += f", ${self.cost:.4f}"
        if self.bad:
            info += f", [red]{self.bad} not answered[/]"
        self._p.update(self._task, advance=1, info=info)

    def note(self, message: str, more: int = 0) -> None:
        """Say something above the bar (and make room for `more` items run again)."""
        if self._p is None:
            return
        self._p.console.print(message)
        if more:
            total = self._p.tasks[0].total or 0
            self._p.update(self._task, total=total + more)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()
