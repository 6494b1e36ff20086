"""The Problems pane: everything the reader could not use, with file and line.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.safe import lit
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable


class ProblemsPane(StatePane):
    """Everything the reader reported about the vault: path, line, severity, reason."""

    def compose(self) -> ComposeResult:
        yield Static(id="problems-head")
        yield VimTable(id="problems-table", flex=("path", "reason"))

    def on_mount(self) -> None:
        t = self.query_one("#problems-table", VimTable)
        for label in ("severity", "path", "line", "reason"):
            t.add_column(label)
        self._count = -1

    def show_state(self, state: UIState) -> None:
        problems = state.vault.problems if state.vault is not None else ()
        if len(problems) == self._count:
            return
        self._count = len(problems)
        table = self.query_one("#problems-table", VimTable)
        table.clear()
        head = self.query_one("#problems-head", Static)
        head.update(Text(f"{len(problems)} problem(s) in the vault" if state.vault else
                         "vault not loaded", style="bold red" if problems else "bold green"))
        for p in problems:
            table.add_row(Text(p.severity, style="red" if p.severity == "error" else "yellow"),
                          lit(p.path, single_line=True), Text(str(p.line or "")),
                          lit(p.reason, single_line=True))
