"""The side-by-side tab of the tuning pane: the query under two chosen configurations (the
tuned knobs, the starting configuration, any preset), with each hit's move
(`recall_tui.tuning.compare.diff_rankings`, run by the knobs tab's worker and handed over by
the pane). The tab owns the two choices; changing one asks the pane to re-run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Static

from recall_tui.engine.config import list_presets
from recall_tui.tui.panes.tuning.common import (
    START,
    TUNED,
    TunedRuns,
    movement_text,
    preset_label,
    side_label,
)
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import VimTable

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.pane import TuningPane


class SideTab(Vertical):
    """Both sides' choices and their rankings."""

    def __init__(self, pane: TuningPane) -> None:
        super().__init__()
        self.pane = pane
        self.side_name: str | None = None
        """A: a preset name, TUNED or START (None until the pane has its state)."""
        self.side_b_name: str = TUNED
        """B: a preset name, TUNED (the default) or START."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="side-choices"):
            yield Select([], id="side-preset", prompt="A: compare", allow_blank=True)
            yield Select([], id="side-b-preset", prompt="B: with", allow_blank=True)
        yield Static(id="side-figures")
        with Horizontal():
            # fair: a long title no longer cuts the id short (issue 22)
            yield VimTable(id="side-a", flex=("title", "id"), fair=True)
            yield VimTable(id="side-b", flex=("title", "id"), fair=True)

    def on_mount(self) -> None:
        for side in ("#side-a", "#side-b"):
            t = self.query_one(side, VimTable)
            for label, key in (("#", "rank"), ("move", "move"), ("score", "score"),
                               ("title", "title"), ("id", "id")):
                t.add_column(label, key=key)

    def fill_choices(self) -> None:
        """Both sides' choices: the tuned knobs, the starting configuration, and every preset
        the vault can see (presets saved since the app opened included, marked saved)."""
        app = self.pane.recall_app
        root = app.vault_path
        names = list_presets(root) or list(app.presets)
        options = [("tuned (the knobs on screen)", TUNED),
                   (f"start ({self.pane.base_name}, as tuning started)", START),
                   *((preset_label(n, root), n) for n in names)]
        for sel_id, value in (("#side-preset", self.side_name),
                              ("#side-b-preset", self.side_b_name)):
            sel = self.query_one(sel_id, Select)
            with sel.prevent(Select.Changed):
                sel.set_options(options)
                if value in {v for _label, v in options}:
                    sel.value = value

    # --- side by side ----------------------------------------------------------------------------

    @on(Select.Changed, "#side-preset")
    def _side_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.side_name:
            self.side_name = event.value
            self.pane.rerun(force=True)

    @on(Select.Changed, "#side-b-preset")
    def _side_b_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.side_b_name:
            self.side_b_name = event.value
            self.pane.rerun(force=True)

    def draw(self, runs: TunedRuns | None) -> None:
        """Both rankings of `runs` (None: nothing to compare yet)."""
        a, b = self.query_one("#side-a", VimTable), self.query_one("#side-b", VimTable)
        a.clear()
        b.clear()
        figures = self.query_one("#side-figures", Static)
        if runs is None:
            figures.update("")
            return
        d = runs.side_diff
        name_a = side_label(runs.side_name, self.pane.base_name)
        name_b = side_label(runs.side_b_name, self.pane.base_name)
        a.border_title, b.border_title = f"A: {name_a}", f"B: {name_b}"
        t = Text()
        t.append(f"A {name_a} vs B {name_b}, both at k {d.k}  ", style="bold")
        t.append(f"overlap@{d.k} {d.overlap:.2f}  RBO {d.rbo:.3f}  ")
        t.append(f"up {d.count('up')}  down {d.count('down')}  same {d.count('same')}  "
                 f"new {d.count('new')}  dropped {d.count('dropped')}")
        figures.update(t)
        trace_b = runs.side_b if runs.side_b is not None else runs.current
        for table, ids, trace, is_a in ((a, d.a, runs.side, True), (b, d.b, trace_b, False)):
            for i, mid in enumerate(ids, start=1):
                m, hit = d.by_id[mid], trace.hit(mid)
                table.add_row(
                    Text(str(i), justify="right"),
                    movement_text(m) if not is_a or m.kind == "dropped" else Text(""),
                    Text("—" if hit is None else f"{hit.score:.3f}", justify="right"),
                    lit("" if hit is None else hit.title, single_line=True),
                    lit(mid, "dim", single_line=True), key=mid)
