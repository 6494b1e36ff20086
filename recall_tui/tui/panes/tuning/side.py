"""The side-by-side tab of the tuning pane: the query under two chosen configurations (the
tuned knobs, the starting configuration, any preset), with each hit's move
(`recall_tui.tuning.compare.diff_rankings`, run by the knobs tab's worker).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.widgets import Select, Static

from recall_tui.engine.config import list_presets
from recall_tui.tui.panes.tuning.base import TuningBase
from recall_tui.tui.panes.tuning.common import (
    START,
    TUNED,
    movement_text,
    preset_label,
    side_label,
)
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.vim import VimTable


class SideTab(TuningBase):
    """Both sides' choices and their rankings."""

    def _fill_side_select(self) -> None:
        """Both sides' choices: the tuned knobs, the starting configuration, and every preset
        the vault can see (presets saved since the app opened included, marked saved)."""
        root = self.recall_app.vault_path
        names = list_presets(root) or list(self.recall_app.presets)
        options = [("tuned (the knobs on screen)", TUNED),
                   (f"start ({self.base_name}, as tuning started)", START),
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
            self.rerun(force=True)

    @on(Select.Changed, "#side-b-preset")
    def _side_b_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.side_b_name:
            self.side_b_name = event.value
            self.rerun(force=True)

    def _draw_side(self) -> None:
        a, b = self.query_one("#side-a", VimTable), self.query_one("#side-b", VimTable)
        a.clear()
        b.clear()
        figures = self.query_one("#side-figures", Static)
        runs = self.runs
        if runs is None:
            figures.update("")
            return
        d = runs.side_diff
        name_a = side_label(runs.side_name, self.base_name)
        name_b = side_label(runs.side_b_name, self.base_name)
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
