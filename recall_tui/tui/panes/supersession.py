"""The Supersession pane: a memory's chain of replacements, oldest to newest.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from recall_tui.tui.panes.base import StatePane, date_text
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable


class SupersessionPane(StatePane):
    """The current memory's supersession chain, oldest to newest, and the trace's warnings."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="chain-head")
            yield VimTable(id="chain-table", flex=("in this recall", "title"))
            yield Static(id="chain-warnings")

    def on_mount(self) -> None:
        t = self.query_one("#chain-table", VimTable)
        for label in ("#", "id", "title", "created", "updated", "status", "in this recall"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        head = self.query_one("#chain-head", Static)
        table = self.query_one("#chain-table", VimTable)
        warn = self.query_one("#chain-warnings", Static)
        table.clear()
        vault, mid, trace = state.vault, state.current_id, state.trace
        chain = vault.chain_of(mid) if (vault and mid) else None
        if chain is None:
            head.update(Text("no supersession chain for the current memory"
                             if mid else "no memory selected", style="dim"))
        else:
            h = Text("chain (oldest → newest), head: ", style="bold")
            h.append_text(lit(chain.head, single_line=True))
            head.update(h)
            for i, cid in enumerate(chain.ids, 1):
                m = vault.get(cid)
                status = m.status if m else "missing"
                where = Text("—", style="dim")
                if trace is not None:
                    hit = trace.hit(cid)
                    why = trace.why_of(cid)
                    if hit is not None:
                        where = Text(f"hit #{hit.rank}", style="green")
                    elif why is not None:
                        where = lit(f"out at {why.stage}: {why.reason}", "yellow", single_line=True)
                    elif (dropped := trace.dropped_at(cid)) is not None:
                        where = lit(f"dropped at {dropped[0]}: {dropped[1]}", "yellow",
                                    single_line=True)
                    else:
                        where = Text("not a candidate of this recall", style="dim")
                mark = "▶ " if cid == mid else ""
                table.add_row(Text(f"{mark}{i}"), lit(cid, single_line=True),
                              lit(one_line(m.title if m else "", 40), single_line=True),
                              date_text(m, "created"), date_text(m, "updated"),
                              Text(status, style="green" if status == "active" else "yellow"),
                              where)
        lines = Text()
        if trace is not None:
            for hit in trace.hits:
                for w in hit.warnings:
                    lines.append("⚠ ", style="bold red")
                    lines.append_text(lit(f"{hit.id}: {w}", single_line=True))
                    lines.append("\n")
        warn.update(lines if lines.plain else Text("no warnings in this recall", style="dim"))
