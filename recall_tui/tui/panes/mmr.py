"""The MMR pane: the diversity stage's choices, step by step, as the trace recorded them.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.safe import lit
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable


class MMRPane(StatePane):
    """The MMR stage's decision log, pick by pick, as the trace recorded it."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="mmr-head")
            yield VimTable(id="mmr-table", flex=("id", "closest", "runner-up"))

    def on_mount(self) -> None:
        t = self.query_one("#mmr-table", VimTable)
        for label in ("pick", "id", "relevance", "penalty", "λ", "mmr", "closest", "runner-up"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        head = self.query_one("#mmr-head", Static)
        table = self.query_one("#mmr-table", VimTable)
        table.clear()
        trace = state.trace
        stage = trace.stage("mmr") if trace is not None else None
        if trace is None or stage is None:
            head.update(Text("no recall yet", style="dim"))
            return
        if stage.skipped:
            head.update(lit(f"mmr skipped: {stage.reason}", "dim", single_line=True))
        else:
            info = "".join(f" · {k}={v}" for k, v in stage.info)
            head.update(lit(f"mmr: {len(stage.candidates)} candidates, "
                            f"{len(stage.dropped)} dropped{info}", single_line=True))
        steps = sorted((h.explain.mmr for h in trace.hits if h.explain.mmr is not None),
                       key=lambda s: s.step)
        for s in steps:
            table.add_row(Text(str(s.step), justify="right"), lit(s.id, single_line=True),
                          Text(f"{s.relevance:.4f}", justify="right"),
                          Text(f"{s.penalty:.4f}", justify="right",
                               style="yellow" if s.penalty > 0.5 else ""),
                          Text(f"{s.lam:g}"), Text(f"{s.mmr:.4f}", justify="right"),
                          lit(s.closest_id or "", single_line=True),
                          lit(s.runner_up or "", "dim", single_line=True))
        for d in stage.dropped:
            table.add_row(Text("✗", style="red"), lit(d.id, "red", single_line=True), "", "", "",
                          "", lit(d.reason, "red", single_line=True), "")
