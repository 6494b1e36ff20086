"""The Timings pane: recorded stage latencies (p50, p95, a sparkline of what the trace
reported; nothing is timed here).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from recall_tui.engine.trace import STAGE_ORDER
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tui.widgets.waterfall import ordered_stages

SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 24) -> str:
    """The last `width` values as block characters scaled to their own maximum."""
    vals = list(values)[-width:]
    top = max(vals, default=0.0)
    if top <= 0:
        return "▁" * len(vals)
    return "".join(SPARKS[min(7, int(v / top * 7.999))] for v in vals)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of recorded latencies (q in 0..100)."""
    ordered = sorted(values)
    idx = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[idx]


class TimingsPane(StatePane):
    """Per-stage latency over the session: runs, last, p50, p95, and a sparkline."""

    def compose(self) -> ComposeResult:
        yield Static(id="timings-head")
        yield VimTable(id="timings-table")

    def on_mount(self) -> None:
        t = self.query_one("#timings-table", VimTable)
        for label in ("stage", "runs", "last ms", "p50 ms", "p95 ms", "history"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        table = self.query_one("#timings-table", VimTable)
        table.clear()
        runs = max((len(v) for v in state.timings.values()), default=0)
        head = f"{runs} recalls this session"
        if state.stable_timings:
            head += " (stable-timings mode: live ms hidden)"
        self.query_one("#timings-head", Static).update(Text(head, style="bold"))
        names = [n for n in STAGE_ORDER if n in state.timings]
        names += [n for n in state.timings if n not in STAGE_ORDER]
        if state.trace is not None:
            names += [s.name for s in ordered_stages(state.trace) if s.name not in names]
        for name in names:
            ms = list(state.timings.get(name, ()))
            if state.stable_timings or not ms:
                cells = ["—", "—", "—", ""]
            else:
                cells = [f"{ms[-1]:.2f}", f"{statistics.median(ms):.2f}",
                         f"{percentile(ms, 95):.2f}", sparkline(ms)]
            table.add_row(Text(name), Text(str(len(ms)), justify="right"),
                          *(Text(c, justify="right") for c in cells[:3]),
                          Text(cells[3], style="cyan"))
