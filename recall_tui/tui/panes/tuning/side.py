"""The side-by-side tab of the tuning pane: the query under two chosen configurations (the
tuned knobs, the starting configuration, any preset), with each hit's move
(`recall_tui.tuning.compare.diff_rankings`, run by the knobs tab's worker and handed over by
the pane). The tab owns the two choices; changing one asks the pane to re-run.

`s` switches to the query-set view (`side_set.SetView`): the whole judged set (or a snapshot
file's, `L`) under A and B, a row per query as `recall_tui.tuning.snapshot.diff` compares them;
enter on a row shows that query here, escape goes back to the set (and cancels a set run);
`ctrl+e` exports the set's diff as `recall-tui diff --json` writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import ContentSwitcher, Input, Select, Static

from recall_tui.engine.config import Config, list_presets, load_preset
from recall_tui.tui.panes.tuning.common import (
    START,
    TUNED,
    TunedRuns,
    movement_text,
    preset_label,
    side_label,
)
from recall_tui.tui.panes.tuning.side_set import SUMMARY_KEY, SetView
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.compare import diff_ids
from recall_tui.tuning.snapshot import Entry, QueryDiff

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.pane import TuningPane


class SideTab(Vertical):
    """Both sides' choices and their rankings: of one query, or of a whole query set."""

    DEFAULT_CSS = """
    #side-views, #side-one { height: 1fr; }
    #side-snapshot-path { margin: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "toggle_set", "Query set / one query", id="side.set"),
        Binding("L", "load_snapshot", "Snapshot as A…", id="side.snapshot"),
        Binding("ctrl+e", "export_diff", "Export the set's diff", id="side.export"),
        Binding("escape", "back", "Back to the set / cancel its run", show=False,
                id="side.back"),
    ]

    def __init__(self, pane: TuningPane) -> None:
        super().__init__()
        self.pane = pane
        self.side_name: str | None = None
        """A: a preset name, TUNED or START (None until the pane has its state)."""
        self.side_b_name: str = TUNED
        """B: a preset name, TUNED (the default) or START."""
        self.set_view = SetView(self)
        self.from_set = False
        """The one-query view was opened from a row of the set (escape goes back there)."""
        self.frozen: tuple[str, str] | None = None
        """The one-query view shows a snapshot's frozen row (A's and B's labels), not `runs`."""
        self.runs: TunedRuns | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="side-choices"):
            yield Select([], id="side-preset", prompt="A: compare", allow_blank=True)
            yield Select([], id="side-b-preset", prompt="B: with", allow_blank=True)
        yield Input(id="side-snapshot-path", placeholder="a snapshot file as A (recall-tui "
                    "snapshot --out): its path, enter; empty + enter: the A choice again")
        with ContentSwitcher(id="side-views", initial="side-one"):
            with Vertical(id="side-one"):
                yield Static(id="side-figures")
                with Horizontal():
                    # fair: a long title no longer cuts the id short (issue 22)
                    yield VimTable(id="side-a", flex=("title", "id"), fair=True)
                    yield VimTable(id="side-b", flex=("title", "id"), fair=True)
            yield self.set_view

    def on_mount(self) -> None:
        self.query_one("#side-snapshot-path", Input).display = False
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
        """Both rankings of `runs` (None: nothing to compare yet); in the set view, the set
        under the choices on screen (re-run when a knob or a choice changed)."""
        self.runs = runs
        if self.set_shown():
            self.set_view.refresh_set()
        if self.frozen is not None:  # a snapshot's row is on screen: `runs` waits for escape
            return
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

    # --- the query-set view -------------------------------------------------------------------

    def set_shown(self) -> bool:
        """The set view is the one on screen, on the side-by-side tab shown."""
        return (self.query_one("#side-views", ContentSwitcher).current == "side-set"
                and self.pane.tab_shown("tune-side"))

    def config_for(self, choice: str | None) -> Config:
        """The configuration of a choice: the knobs on screen, the start, or a preset file
        (ValueError names a preset that cannot be read)."""
        if choice == TUNED or choice is None:
            assert self.pane.config is not None
            return self.pane.config
        if choice == START:
            assert self.pane.base is not None
            return self.pane.base
        return load_preset(choice, self.pane.recall_app.vault_path)

    def side_label(self, choice: str | None) -> str:
        """A choice's name in a snapshot (and so in the diff and its export)."""
        if choice == TUNED or choice is None:
            return "tuned"
        if choice == START:
            return f"start ({self.pane.base_name})"
        return choice

    def show_view(self, name: str) -> None:
        """Show `side-one` or `side-set` and focus its list."""
        self.query_one("#side-views", ContentSwitcher).current = name
        self.query_one("#side-set-table" if name == "side-set" else "#side-b", VimTable).focus()

    def action_toggle_set(self) -> None:
        """Between the one-query view and the query-set view (which runs the set if needed)."""
        if self.query_one("#side-views", ContentSwitcher).current == "side-set":
            self.show_view("side-one")
            return
        self._leave_row()
        self.show_view("side-set")
        self.set_view.refresh_set()

    def action_load_snapshot(self) -> None:
        """Ask for a snapshot file to be side A of the set view."""
        field = self.query_one("#side-snapshot-path", Input)
        field.display = True
        field.focus()

    @on(Input.Submitted, "#side-snapshot-path")
    def _snapshot_path(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.display = False
        self._leave_row()
        self.show_view("side-set")
        self.set_view.load_snapshot(event.value)

    def action_export_diff(self) -> None:
        """Write the set's diff as `recall-tui diff --json` does, and say where."""
        path = self.set_view.export()
        app = self.pane.recall_app
        if path is None:
            app.notify("nothing to export yet: s shows the query set, which runs it",
                       severity="warning", markup=False)
            return
        stem = path.name.removesuffix(".json")
        app.notify(f"wrote {path} (recall-tui diff --json prints the same for "
                   f"{stem}-a.snapshot.json {stem}-b.snapshot.json beside it)", markup=False)

    def action_back(self) -> None:
        """Escape: close the snapshot field, cancel the set's run, or go back to the set."""
        field = self.query_one("#side-snapshot-path", Input)
        if field.display:
            field.display = False
            self.show_view(self.query_one("#side-views", ContentSwitcher).current or "side-one")
        elif self.set_view.busy and self.set_shown():
            self.set_view.cancel()
        elif self.from_set:
            self._leave_row()
            self.show_view("side-set")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape is this tab's only while it has something to close or cancel; otherwise
        it goes on to the pane and the app."""
        if action == "back":
            return bool(self.query_one("#side-snapshot-path", Input).display
                        or (self.set_view.busy and self.set_shown()) or self.from_set)
        return True

    def _leave_row(self) -> None:
        """Leave a row opened from the set: the live runs are drawn again."""
        self.from_set = False
        if self.frozen is not None:
            self.frozen = None
            self.draw(self.runs)

    @on(VimTable.RowSelected, "#side-set-table")
    def _open_row(self, event: VimTable.RowSelected) -> None:
        """Enter on a query: that query side by side (live; a snapshot's row as frozen)."""
        event.stop()
        key = event.row_key.value
        found = self.set_view.query_diff(key)
        if key == SUMMARY_KEY or found is None:
            return
        q, ea, eb = found
        self.from_set = True
        if self.set_view.snapshot is not None:
            run = self.set_view.run
            assert run is not None
            self.draw_frozen(q, ea, eb, run.a.label(), run.b.label(), run.diff.k)
        else:
            main = self.pane.recall_app.main()
            if main is not None:
                main.query_one("#query", Input).value = q.query
        self.show_view("side-one")

    def draw_frozen(self, q: QueryDiff, ea: Entry, eb: Entry, name_a: str, name_b: str,
                    k: int) -> None:
        """A snapshot row's two frozen rankings in the one-query tables, with the set row's
        figures (`snapshot.diff`) and each hit's move (`compare.diff_ids`)."""
        self.frozen = (name_a, name_b)
        a, b = self.query_one("#side-a", VimTable), self.query_one("#side-b", VimTable)
        a.clear()
        b.clear()
        a.border_title, b.border_title = f"A: {name_a} (frozen)", f"B: {name_b}"
        t = Text()
        t.append(f"line {q.line}, A {name_a} vs B {name_b}, both at k {k}  ", style="bold")
        t.append(f"Jaccard {q.jaccard:.3f}  RBO {q.rbo:.3f}  {q.verdict}  (escape: the set)")
        self.query_one("#side-figures", Static).update(t)
        d = diff_ids(ea.ids[:k], eb.ids[:k], k)
        vault = self.pane.recall_app.engine.vault if self.pane.recall_app.engine else None
        for table, entry, is_a in ((a, ea, True), (b, eb, False)):
            for i, (mid, score) in enumerate(entry.hits[:k], start=1):
                m = d.by_id[mid]
                memory = vault.get(mid) if vault is not None else None
                table.add_row(
                    Text(str(i), justify="right"),
                    movement_text(m) if not is_a or m.kind == "dropped" else Text(""),
                    Text(f"{score:.3f}", justify="right"),
                    lit("" if memory is None else memory.title, single_line=True),
                    lit(mid, "dim", single_line=True), key=mid)
