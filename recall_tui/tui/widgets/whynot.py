"""Pinned memories and the trace's answer to "why not?" for each of them."""

from __future__ import annotations

from rich.text import Text

from recall_tui.engine.trace import Trace, WhyNot
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import SteadyBox, VimTable
from recall_tui.vault.model import Vault


def why_text(w: WhyNot) -> Text:
    """The WhyNot answer in one line: its rank when found, else the stage and the reason."""
    if w.found:
        t = Text(f"found at #{w.rank}", style="green")
    else:
        t = Text(f"out at {w.stage}: ", style="yellow")
        t.append_text(lit(w.reason, single_line=True))
    if w.channel_ranks:
        t.append("  (" + ", ".join(f"{c} #{r}" for c, r in w.channel_ranks) + ")", style="dim")
    for d in w.details:
        t.append("  · ", style="dim")
        t.append_text(lit(d, "dim", single_line=True))
    return t


def why_lines(w: WhyNot) -> Text:
    """The WhyNot answer a line per fact, as the CLI prints it: the verdict, the rank in each
    channel that saw it, then each detail (enter on a pinned row shows this)."""
    t = Text(f"found at #{w.rank}", style="green") if w.found else \
        Text(f"out at {w.stage}: ", style="yellow")
    if not w.found:
        t.append_text(lit(w.reason, single_line=True))
    if w.channel_ranks:
        t.append("\nchannel ranks: " + ", ".join(f"{c} #{r}" for c, r in w.channel_ranks),
                 style="dim")
    for d in w.details:
        t.append("\n  · ", style="dim")
        t.append_text(lit(d, single_line=True))
    return t


class PinnedTable(SteadyBox, VimTable):
    """One row per pinned memory: its title and the current trace's WhyNot for it."""

    FLEX = ("answer", "title")

    def on_mount(self) -> None:
        self.border_title = "pinned — why not?"
        self.add_column("id", key="id")
        self.add_column("title", key="title")
        self.add_column("answer", key="answer")

    _answers: dict[str, WhyNot]

    def on_data_table_row_selected(self, event: VimTable.RowSelected) -> None:
        """Enter on a pinned row shows its whole answer (nothing cut)."""
        event.stop()
        self.action_full_row()

    def action_full_row(self) -> None:
        """The row in full, its why-not answer a line per fact (not one run-on line)."""
        from recall_tui.tui.widgets.popups import RowScreen

        mid = self.cursor_key()
        w = self.__dict__.get("_answers", {}).get(mid) if mid else None
        if w is None:
            super().action_full_row()
            return
        title = self.get_row(mid)[1] if mid else Text("")
        self.app.push_screen(RowScreen(str(self.border_title or "pinned"), [
            ("id", lit(mid, single_line=True)),
            ("title", title if isinstance(title, Text) else Text(str(title))),
            ("answer", why_lines(w))]))

    def show(self, pinned: tuple[str, ...], trace: Trace | None, vault: Vault | None) -> None:
        """Show the pinned ids and their answers (only changed cells are redrawn)."""
        if not pinned:
            if self.row_count:
                self.clear()
            # in replay the pins are the recording's: no live-mode hint
            self.set_subtitle("the recording asked no why-not" if getattr(
                self.app, "replaying", False) else "p pins the highlighted memory, P pins by id")
            return
        self.set_subtitle(None)
        rows = []
        self._answers = {}
        for mid in pinned:
            m = vault.get(mid) if vault is not None else None
            w = trace.why_of(mid) if trace is not None else None
            if w is not None:
                self._answers[mid] = w
                answer = why_text(w)
            elif trace is not None and trace.hit(mid) is not None:
                answer = Text(f"found at #{trace.hit(mid).rank}", style="green")
            else:
                answer = Text("no answer in this trace" if trace is not None else "no recall yet",
                              style="dim")
            rows.append((mid, [lit(mid, single_line=True),
                               lit(m.title if m else "(not in vault)", single_line=True),
                               answer]))
        self.set_rows(rows)
