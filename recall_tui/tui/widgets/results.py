"""The results table: the trace's hits, and how each moved since the previous query.

Which hits the agent gets: the prompt hook recalls at the configuration's k (the trace's
`config["k"]`), so the first that many hits are marked `▶` and the rest, there because the
bar's k is larger, are dimmed; the bottom border says so, or that the floor abstained (the
agent then gets nothing). The hook's context limit can still leave some out: the Agent pane
shows what a logged recall actually injected. With the calibrated floor the box's title
carries the floor stage's decision (`hits · best evidence 0.93 >= calibrated floor 0.40: kept`).

For a "when…" question a `date` column shows each memory's event date (`valid_from`, else
`created`) as the vault file gives it. The `staleness` column is dimmed and titled `staleness
(off)` when the trace's configuration applies no staleness boost (the label then changes no
score), and it is the first column to go when the box is narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from recall_tui.engine.trace import Hit, Trace
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import SteadyBox, VimTable
from recall_tui.vault.model import Vault

STALENESS_STYLE = {"fresh": "green", "aging": "yellow", "stale": "dark_orange", "expired": "red"}
#: Openings of a question about a time: the hits then show their memory's date.
WHEN_OPENINGS = ("when", "since when", "what date", "which date", "what day", "which day",
                 "what year", "which year", "what month", "which month", "how long ago")


def asks_when(query: str) -> bool:
    """The query is a "when…" question (`when did the deploy fail`, `what date…`)."""
    words = " ".join(w.strip("?,.!:;\"'").casefold() for w in query.split())
    return any(words == o or words.startswith(o + " ") for o in WHEN_OPENINGS)


def staleness_applied(trace: Trace) -> bool:
    """The trace's configuration scores staleness (its boost is enabled). A trace without a
    recorded configuration is taken to apply it (shown as before)."""
    section = (trace.config.get("boosts") or {}).get("staleness") if trace.config else None
    return True if not isinstance(section, dict) else bool(section.get("enabled", True))


def memory_date(vault: Vault | None, memory_id: str) -> Text:
    """The memory's event date (`valid_from`), else when it was written (`created`), as the
    vault holds it; `—` when the vault is not here (a replay) or the memory is gone."""
    m = vault.memories.get(memory_id) if vault is not None else None
    if m is None:
        return Text("—", style="dim")
    if m.valid_from is not None:
        return Text(m.valid_from.date().isoformat())
    return Text(m.created.date().isoformat(), style="dim")


#: The mark before the rank of a hit the agent's prompt hook injects.
INJECTED = "▶"


def agent_cut(trace: Trace) -> int | None:
    """How many of the trace's first hits the agent's prompt hook injects: the hook recalls at
    the configuration's k (the preset's, `k` in the trace's config), so hits below it are shown
    only because the bar's k is larger. None when the trace records no configuration."""
    k = trace.config.get("k") if trace.config else None
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def floor_decision(trace: Trace) -> str:
    """The calibrated floor's decision as the floor stage wrote it (`best evidence 0.93 >=
    calibrated floor 0.40: kept`), "" when the trace's preset has no calibrated floor."""
    st = trace.stage("floor")
    return st.info_dict().get("decision", "") if st is not None else ""


def abstained(trace: Trace) -> str | None:
    """The floor stage's decision when it abstained (the agent gets nothing), else None."""
    text = floor_decision(trace)
    return text if "abstained" in text else None


def injection_legend(trace: Trace) -> str | None:
    """The hits box's bottom line: which rows the agent gets, as the trace says."""
    if not trace.hits:
        why = abstained(trace)
        return (f"abstained, the agent gets nothing: {why}" if why else
                "no hits: see the stages for where the candidates went")
    cut = agent_cut(trace)
    if cut is None:
        return None
    text = f"{INJECTED} the agent's hook injects (preset k {cut})"
    if cut < len(trace.hits):
        text += f"; #{cut + 1}-{len(trace.hits)} shown only (bar k {trace.k})"
    return text


def rank_cell(hit: Hit, cut: int | None) -> Text:
    """The rank, marked when the prompt hook injects the hit, dimmed when it is shown only."""
    if cut is None:
        return Text(str(hit.rank), justify="right")
    if hit.rank <= cut:
        return Text.assemble((INJECTED, "green"), str(hit.rank), justify="right")
    return Text(str(hit.rank), style="dim", justify="right")


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


class ResultsTable(SteadyBox, VimTable):
    """Renders a Trace's hits; highlighting a row posts `HitChosen`, enter posts `HitOpened`."""

    @dataclass
    class HitChosen(Message):
        """The cursor moved to a hit."""

        id: str

    @dataclass
    class HitOpened(Message):
        """The user pressed enter (or clicked) on a hit."""

        id: str

    FLEX = ("title", "channels", "summary")
    #: A fair share: the channels (short) are not cut for a long title, and `v`'s summary
    #: gets as much room as the title.
    FLEX_FAIR = True
    #: Columns dropped, in this order, when the box is narrow (content width under the
    #: threshold): the explanation below shows the same facts for the highlighted hit.
    DROPS: tuple[tuple[int, tuple[str, ...]], ...] = (
        (76, ("hop", "type")), (56, ("channels",)), (44, ("staleness",)))
    #: Staleness no score uses goes first; for a "when…" question the date takes its place
    #: before the channels go.
    DROPS_STALENESS_OFF = ((76, ("staleness", "hop", "type")), (56, ("channels",)))
    DROPS_WITH_DATE = ((76, ("hop", "type")), (56, ("staleness", "channels")))

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.verbosity = "lean"
        self.with_mmr = False
        """The `mmr` column is shown (the trace's hits carry MMR steps)."""
        self.dropped: tuple[str, ...] = ()
        """Columns left out for want of width."""
        self.with_date = False
        """The `date` column is shown (a "when…" question)."""
        self.stale_on = True
        """The trace's configuration applies the staleness boost."""
        self._shown: tuple[Trace | None, Trace | None, str, Vault | None] = (
            None, None, "lean", None)

    def on_mount(self) -> None:
        self.border_title = "hits"
        self._columns("lean", False, (), False, True)

    def _drops_for(self, width: int, with_date: bool | None = None,
                   stale_on: bool | None = None) -> tuple[str, ...]:
        with_date = self.with_date if with_date is None else with_date
        stale_on = self.stale_on if stale_on is None else stale_on
        drops = (self.DROPS if stale_on and not with_date else
                 self.DROPS_WITH_DATE if stale_on else self.DROPS_STALENESS_OFF)
        out: tuple[str, ...] = ()
        for threshold, keys in drops:
            if 0 < width < threshold:
                out += keys
        return out

    def on_resize(self) -> None:
        super().on_resize()
        # a hidden pane has no width: redrawing then would re-highlight the top row and move
        # the current memory
        if self.size.width and self._drops_for(self.size.width) != self.dropped:
            with self.prevent(VimTable.RowHighlighted):  # a redraw is not a user's move
                self.show(*self._shown)

    def _columns(self, verbosity: str, with_mmr: bool, dropped: tuple[str, ...],
                 with_date: bool, stale_on: bool) -> None:
        self.clear(columns=True)
        cols = [("#", "rank"), ("Δ", "delta"), ("score", "score")]
        if with_mmr:  # after MMR the order follows the MMR score, not the relevance score
            cols.append(("mmr", "mmr"))
        if with_date:
            cols.append(("date", "date"))
        cols += [("title", "title"), ("type", "type"),
                 ("staleness" if stale_on else "staleness (off)", "staleness"),
                 ("hop", "hop"), ("channels", "channels")]
        if verbosity == "full":
            cols.append(("summary", "summary"))
        for label, key in cols:
            if key not in dropped:
                self.add_column(label, key=key)
        self.verbosity, self.with_mmr, self.dropped = verbosity, with_mmr, dropped
        self.with_date, self.stale_on = with_date, stale_on

    def show(self, trace: Trace | None, previous: Trace | None, verbosity: str,
             vault: Vault | None = None) -> None:
        """Show `trace`'s hits (`vault` gives the dates of a "when…" question). The same hits
        in the same order only have their changed cells redrawn (the cursor stays); otherwise
        the rows are rebuilt, and a cursor the user moved down stays on the same memory if it
        is still a hit; a cursor on the top row stays on the top row."""
        self._shown = (trace, previous, verbosity, vault)
        current = self.current_id() if self.cursor_row > 0 else None
        with_mmr = trace is not None and any(h.explain.mmr is not None for h in trace.hits)
        with_date = trace is not None and asks_when(trace.query)
        stale_on = trace is None or staleness_applied(trace)
        # hidden (no width): keep the columns as they are
        dropped = (self._drops_for(self.size.width, with_date, stale_on) if self.size.width
                   else self.dropped)
        if ((verbosity, with_mmr, dropped, with_date, stale_on) !=
                (self.verbosity, self.with_mmr, self.dropped, self.with_date, self.stale_on)):
            self._columns(verbosity, with_mmr, dropped, with_date, stale_on)
        # the bottom line is set once, to its final text: setting it twice (cleared, then the
        # legend) repainted the whole box on every keystroke
        self.set_subtitle(None if trace is None else injection_legend(trace))
        if trace is None:
            if self.row_count:
                self.clear()
            return
        decided = floor_decision(trace)
        title = f"hits · {decided}" if decided and trace.hits else "hits"
        if self.border_title != title:
            self.border_title = title
        cut = agent_cut(trace)
        keys = [c.key.value for c in self.ordered_columns]
        rows = []
        for h in trace.hits:
            cells = {
                "rank": rank_cell(h, cut),
                "delta": rank_change(h, previous),
                "score": Text(f"{h.score:.3f}", justify="right"),
                "mmr": Text("—" if h.explain.mmr is None else f"{h.explain.mmr.mmr:.3f}",
                            justify="right", style="magenta"),
                "title": lit(h.title, single_line=True),
                "type": lit(h.type, single_line=True),
                "date": memory_date(vault, h.id) if with_date else Text(""),
                "staleness": lit(h.staleness, STALENESS_STYLE.get(h.staleness, "") if stale_on
                                 else "dim", single_line=True),
                "hop": lit(h.hop or "", "magenta", single_line=True),
                "channels": lit(",".join(h.channels), "cyan", single_line=True),
                "summary": lit(h.summary, "dim", single_line=True),
            }
            rows.append((h.id, [cells[k] for k in keys]))
        rebuilt = self.set_rows(rows)
        if rebuilt and current is not None and trace.hit(current) is not None:
            self.move_cursor(row=self.get_row_index(current), animate=False)

    def say(self, text: str) -> None:
        """What the empty table is waiting for (the vault opening, the index building, a
        query to be typed), in its bottom border."""
        if not self.row_count:
            self.set_subtitle(text)

    def current_id(self) -> str | None:
        """Id of the hit under the cursor."""
        return self.cursor_key()

    def on_data_table_row_highlighted(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.HitChosen(event.row_key.value))

    def on_data_table_row_selected(self, event: VimTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.HitOpened(event.row_key.value))
