"""The results table: the trace's hits, and how each moved since the previous query."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets.data_table import CellDoesNotExist

from recall_tui.engine.trace import Hit, Trace
from recall_tui.tui.safe import lit
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

    FLEX = ("title", "summary")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.verbosity = "lean"
        self.with_mmr = False
        """The `mmr` column is shown (the trace's hits carry MMR steps)."""

    def on_mount(self) -> None:
        self.border_title = "hits"
        self._columns("lean", False)

    def _columns(self, verbosity: str, with_mmr: bool) -> None:
        self.clear(columns=True)
        cols = [("#", "rank"), ("Δ", "delta"), ("score", "score")]
        if with_mmr:  # after MMR the order follows the MMR score, not the relevance score
            cols.append(("mmr", "mmr"))
        cols += [("title", "title"), ("type", "type"), ("staleness", "staleness"),
                 ("hop", "hop"), ("channels", "channels")]
        for label, key in cols:
            self.add_column(label, key=key)
        if verbosity == "full":
            self.add_column("summary", key="summary")
        self.verbosity, self.with_mmr = verbosity, with_mmr

    def show(self, trace: Trace | None, previous: Trace | None, verbosity: str) -> None:
        """Replace the rows with `trace`'s hits. A cursor the user moved down stays on the same
        memory if it is still a hit; a cursor on the top row stays on the top row."""
        current = self.current_id() if self.cursor_row > 0 else None
        self.border_subtitle = None
        with_mmr = trace is not None and any(h.explain.mmr is not None for h in trace.hits)
        if verbosity != self.verbosity or with_mmr != self.with_mmr:
            self._columns(verbosity, with_mmr)
        else:
            self.clear()
        if trace is None:
            return
        if not trace.hits:
            self.border_subtitle = "no hits: see the stages for where the candidates went"
        for h in trace.hits:
            cells = [
                Text(str(h.rank), justify="right"),
                rank_change(h, previous),
                Text(f"{h.score:.3f}", justify="right"),
                *([Text("—" if h.explain.mmr is None else f"{h.explain.mmr.mmr:.3f}",
                        justify="right", style="magenta")] if with_mmr else []),
                lit(h.title, single_line=True),
                lit(h.type, single_line=True),
                lit(h.staleness, STALENESS_STYLE.get(h.staleness, ""), single_line=True),
                lit(h.hop or "", "magenta", single_line=True),
                lit(",".join(h.channels), "cyan", single_line=True),
            ]
            if verbosity == "full":
                cells.append(lit(h.summary, "dim", single_line=True))
            self.add_row(*cells, key=h.id)
        if current is not None and trace.hit(current) is not None:
            self.move_cursor(row=self.get_row_index(current), animate=False)

    def say(self, text: str) -> None:
        """What the empty table is waiting for (the vault opening, the index building, a
        query to be typed), in its bottom border."""
        if not self.row_count:
            self.border_subtitle = text

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
