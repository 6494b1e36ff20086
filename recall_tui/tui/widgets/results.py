"""The results table: the trace's hits, and how each moved since the previous query."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets.data_table import CellDoesNotExist

from recall_tui.engine.trace import Hit, Trace
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.vim import VimTable

STALENESS_STYLE = {"fresh": "green", "aging": "yellow", "stale": "dark_orange", "expired": "red"}


def rank_change(hit: Hit, previous: Trace | None) -> Text:
    """`↑2`, `↓1`, `new` or `=` against the previous trace's ranking (blank without one)."""
    if previous is None:
        return Text("")
    before = previous.hit(hit.id)
    if before is None:
        return Text("new", style="bold cyan")
    delta = before.rank - hit.rank
    if delta > 0:
        return Text(f"↑{delta}", style="green")
    if delta < 0:
        return Text(f"↓{-delta}", style="red")
    return Text("=", style="dim")


class ResultsTable(VimTable):
    """Renders a Trace's hits; highlighting a row posts `HitChosen`, enter posts `HitOpened`."""

    @dataclass
    class HitChosen(Message):
        """The cursor moved to a hit."""

        id: str

    @dataclass
    class HitOpened(Message):
        """The user pressed enter (or clicked) on a hit."""

        id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.verbosity = "lean"

    def on_mount(self) -> None:
        self.border_title = "hits"
        self._columns("lean")

    def _columns(self, verbosity: str) -> None:
        self.clear(columns=True)
        for label, key in (("#", "rank"), ("Δ", "delta"), ("score", "score"),
                           ("title", "title"), ("type", "type"), ("staleness", "staleness"),
                           ("hop", "hop"), ("channels", "channels")):
            self.add_column(label, key=key, width=24 if key == "title" else None)
        if verbosity == "full":
            self.add_column("summary", key="summary")
        self.verbosity = verbosity

    def show(self, trace: Trace | None, previous: Trace | None, verbosity: str) -> None:
        """Show `trace`'s hits. The same hits in the same order only have their changed cells
        redrawn (the cursor stays); otherwise the rows are rebuilt, and a cursor the user
        moved down stays on the same memory if it is still a hit; a cursor on the top row
        stays on the top row."""
        current = self.current_id() if self.cursor_row > 0 else None
        if verbosity != self.verbosity:
            self._columns(verbosity)
        if trace is None:
            if self.row_count:
                self.clear()
            return
        rows = []
        for h in trace.hits:
            cells = [
                Text(str(h.rank), justify="right"),
                rank_change(h, previous),
                Text(f"{h.score:.3f}", justify="right"),
                lit(one_line(h.title, 60), single_line=True),
                lit(h.type, single_line=True),
                lit(h.staleness, STALENESS_STYLE.get(h.staleness, ""), single_line=True),
                lit(h.hop or "", "magenta", single_line=True),
                lit(",".join(h.channels), "cyan", single_line=True),
            ]
            if verbosity == "full":
                cells.append(lit(h.summary, "dim", single_line=True))
            rows.append((h.id, cells))
        rebuilt = self.set_rows(rows)
        if rebuilt and current is not None and trace.hit(current) is not None:
            self.move_cursor(row=self.get_row_index(current), animate=False)

    def current_id(self) -> str | None:
        """Id of the hit under the cursor."""
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except CellDoesNotExist:  # the cursor can be out of range right after a clear
            return None
        return key.value

    def on_data_table_row_highlighted(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.HitChosen(event.row_key.value))

    def on_data_table_row_selected(self, event: VimTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.HitOpened(event.row_key.value))
