"""The stage waterfall: one row per pipeline stage, its latency bar, ms, candidates, skip reason.

Bars are scaled to the slowest stage of the trace. In stable-timings mode (snapshots and
screenshots) live milliseconds would make every image differ, so the bar is scaled to the
candidate count instead and the ms column shows `—`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from recall_tui.engine.trace import STAGE_ORDER, StageRecord, Trace
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import SteadyBox, VimTable

BAR_WIDTH = 10


def bar(value: float, top: float, width: int = BAR_WIDTH) -> str:
    """A left-aligned bar of eighth blocks, `value / top` of `width` cells."""
    if top <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / top * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")


def ordered_stages(trace: Trace) -> list[StageRecord]:
    """The trace's stage records in STAGE_ORDER, then any stage the engine added beyond it."""
    by_name = {s.name: s for s in trace.stages}
    out = [by_name[n] for n in STAGE_ORDER if n in by_name]
    out += [s for s in trace.stages if s.name not in STAGE_ORDER]
    return out


class Waterfall(SteadyBox, VimTable):
    """Renders a Trace's stages; highlighting or selecting a row posts `StageChosen`."""

    FLEX = ("note",)
    #: A narrow stage list cuts its notes with `…` rather than scroll sideways: the full note
    #: is in the stage detail (enter).
    FLEX_FLOOR = 1

    @dataclass
    class StageChosen(Message):
        """The user moved to (or selected) a stage row."""

        name: str

    def __init__(self, *, stable_timings: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.stable_timings = stable_timings
        self.trace: Trace | None = None
        self.with_bar = True
        """The latency bar column is shown (left out when the box is narrow)."""

    #: Under this content width the latency bar is left out (the ms column stays).
    BAR_MIN_WIDTH = 46

    def on_mount(self) -> None:
        self._columns(True)
        self.border_title = "stages"

    def _columns(self, with_bar: bool) -> None:
        self.clear(columns=True)
        self.add_column("stage", key="stage")
        if with_bar:
            self.add_column("latency", width=BAR_WIDTH, key="bar")
        self.add_column("ms", key="ms")
        self.add_column("n", key="n")
        self.add_column("note", key="note")
        self.with_bar = with_bar

    def _wants_bar(self) -> bool:
        if not self.size.width:  # hidden: keep the columns as they are
            return self.with_bar
        return self.size.width >= self.BAR_MIN_WIDTH

    def on_resize(self) -> None:
        super().on_resize()
        if self._wants_bar() != self.with_bar:
            with self.prevent(VimTable.RowHighlighted):
                self.show(self.trace)

    def show(self, trace: Trace | None) -> None:
        """Show `trace`'s stages: the same stages only have their changed cells redrawn;
        otherwise the rows are rebuilt, keeping the cursor on the same row."""
        self.trace = trace
        row = self.cursor_row
        if self._wants_bar() != self.with_bar:
            self._columns(self._wants_bar())
        if trace is None:
            if self.row_count:
                self.clear()
            return
        stages = ordered_stages(trace)
        if self.stable_timings:
            top = max((len(s.candidates) for s in stages), default=0)
        else:
            top = max((s.ms for s in stages), default=0.0)
        rows = []
        for s in stages:
            value = len(s.candidates) if self.stable_timings else s.ms
            hit = s.name == "cache" and trace.cache_hit
            if s.skipped:
                style = "dim"
                ms = Text("skip", style="dim italic")
                note = lit(s.reason or "skipped", "dim italic", single_line=True)
            else:
                style = "bold green" if hit else ""
                ms = Text("—" if self.stable_timings else f"{s.ms:.1f}", justify="right")
                note = lit("cache hit" if hit else s.reason, "bold green" if hit else "dim",
                           single_line=True)
            if s.cached:  # the cached run's record: say so before its own note
                note = Text.assemble(("cached", "green"), (" · ", "dim"), note)
            rows.append((s.name, [
                Text(s.name, style=style),
                *([Text(bar(value, top), style="dim" if s.skipped else "cyan")]
                  if self.with_bar else []),
                ms,
                Text(str(len(s.candidates)), style=style or "", justify="right"),
                note,
            ]))
        if self.set_rows(rows) and self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1), animate=False)

    #: The note column's header, and the short one it takes when the column is narrower
    #: (at 80 columns it gets three cells: "note" would be cut to "not").
    NOTE_LABEL, NOTE_SHORT = "note", "why"

    def fit_columns(self) -> None:
        super().fit_columns()
        note = next((c for c in self.columns.values() if c.key.value == "note"), None)
        if note is None or note.auto_width:
            return
        label = self.NOTE_LABEL if note.width >= len(self.NOTE_LABEL) else self.NOTE_SHORT
        if note.label.plain != label:
            note.label = Text(label)
            self._clear_caches()
            self.refresh()

    def on_data_table_row_highlighted(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        if self.has_focus and event.row_key.value:
            self.post_message(self.StageChosen(event.row_key.value))

    def on_data_table_row_selected(self, event: VimTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.StageChosen(event.row_key.value))
