"""The knobs tab of the tuning pane: every knob of the configuration, grouped by stage and
editable, and the current query under the starting and the tuned configuration (and the
side-by-side choices), with each hit's move (`recall_tui.tuning.compare.rank_deltas`). The tab
owns the runs; the side-by-side tab draws them when the pane hands them over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static
from textual.worker import get_current_worker

from recall_tui.engine.config import Config, knobs, load_preset
from recall_tui.engine.trace import Trace
from recall_tui.tui.panes.tuning.common import (
    HIDDEN_KNOBS,
    START,
    TUNED,
    TunedRuns,
    knob_group,
    knob_text,
    movement_text,
    parse_knob,
)
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.compare import diff_rankings, rank_deltas

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.pane import TuningPane


class KnobTable(VimTable):
    """The knobs list. A narrow list shares its width fairly: a value (most are a few cells)
    shows whole, the stage, knob name and start value are cut with `…` only past an equal
    share (the edit field's title and the row in full, `f`, show them whole), and it never
    scrolls the values out of sight."""

    FLEX = ("knob", "value", "group", "start")
    FLEX_FAIR = True
    FLEX_TYPICAL = True
    FLEX_FLOOR = 3


class KnobsTab(Horizontal):
    """The knobs, the tuned hits and the worker that runs the query under each configuration
    (the runs are this tab's; the configurations are the pane's)."""

    def __init__(self, pane: TuningPane) -> None:
        super().__init__()
        self.pane = pane
        self.runs: TunedRuns | None = None
        """The current query under the starting, the tuned and the compared configurations."""
        self.run_key: tuple[Any, ...] | None = None
        self.busy = False
        """A query run is under way (tests wait for False)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="knob-side"):
            yield KnobTable(id="knob-table")
            yield Input(id="knob-input", placeholder="select a knob, enter to edit")
            yield Label("", id="knob-msg")
        with Vertical(id="tuned-side"):
            yield Static(id="tuned-head")
            yield VimTable(id="tuned-hits", flex=("title",))

    def on_mount(self) -> None:
        kt = self.query_one("#knob-table", VimTable)
        for label, key in (("stage", "group"), ("knob", "knob"), ("value", "value"),
                           ("start", "start")):
            kt.add_column(label, key=key)
        th = self.query_one("#tuned-hits", VimTable)
        for label, key in (("#", "rank"), ("Δ start", "delta"), ("score", "score"),
                           ("judged", "judged"), ("title", "title")):
            th.add_column(label, key=key)

    # --- knobs ---------------------------------------------------------------------------------

    def draw_knobs(self) -> None:
        config, base = self.pane.config, self.pane.base
        if config is None or base is None:
            return
        kt = self.query_one("#knob-table", VimTable)
        row = kt.cursor_row
        kt.clear()
        start = {p: v for p, _t, v, _d in knobs(base)}
        last_group = None
        for path, _type, value, _doc in knobs(config):
            if path in HIDDEN_KNOBS:
                continue
            group = knob_group(path)
            changed = start.get(path) != value
            kt.add_row(Text(group if group != last_group else "", style="bold"),
                       Text(path.rsplit(".", 1)[-1]),
                       Text(one_line(knob_text(value), 40), style="bold yellow" if changed else ""),
                       Text(one_line(knob_text(start.get(path)), 30), style="dim"),
                       key=path)
            last_group = group
        if kt.row_count:
            kt.move_cursor(row=min(row, kt.row_count - 1), animate=False)

    def knob_info(self, path: str) -> tuple[str, Any, str]:
        """(type name, current value, documentation) of a knob."""
        assert self.pane.config is not None
        for p, t, v, d in knobs(self.pane.config):
            if p == path:
                return t, v, d
        raise KeyError(path)

    def selected_knob(self) -> str | None:
        return self.query_one("#knob-table", VimTable).cursor_key()

    @on(VimTable.RowHighlighted, "#knob-table")
    def _knob_cursor(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        path = event.row_key.value
        if path is None or self.pane.config is None:
            return
        type_name, value, doc = self.knob_info(path)
        field = self.query_one("#knob-input", Input)
        field.value = knob_text(value)
        field.border_title = f"{path} ({type_name})"
        self.query_one("#knob-msg", Label).update(Text(one_line(doc, 200), style="dim"))

    @on(VimTable.RowSelected, "#knob-table")
    def _knob_enter(self, event: VimTable.RowSelected) -> None:
        """Enter on a switch flips it; on any other knob it moves to the edit field."""
        event.stop()
        path = event.row_key.value
        if path is None:
            return
        type_name, value, _doc = self.knob_info(path)
        if type_name == "bool":
            self.edit_knob(path, knob_text(not value))
        else:
            self.query_one("#knob-input", Input).focus()

    @on(Input.Submitted, "#knob-input")
    def _knob_submit(self, event: Input.Submitted) -> None:
        event.stop()
        path = self.selected_knob()
        if path is not None and self.edit_knob(path, event.value):
            self.query_one("#knob-table", VimTable).focus()

    def edit_knob(self, path: str, text: str) -> bool:
        """Set one knob from typed text; a bad value leaves the configuration as it was and
        says why under the field. True when the value was taken."""
        assert self.pane.config is not None
        msg = self.query_one("#knob-msg", Label)
        type_name, _value, _doc = self.knob_info(path)
        try:
            config = self.pane.config.with_value(path, parse_knob(type_name, text))
        except (ValueError, TypeError) as exc:
            msg.update(Text(f"{path}: {exc}", style="bold red"))
            return False
        msg.update(Text(f"{path} = {knob_text(config.get(path))}", style="green"))
        self.pane.set_config(config)
        return True

    # --- the query under both configurations -----------------------------------------------------

    def rerun(self, side_name: str | None, side_b_name: str, *, force: bool = False) -> None:
        """Run the current query under the starting, the tuned and the compared configurations
        `side_name` (None: the preset in the query bar) and `side_b_name` (skipped when
        nothing they depend on changed)."""
        app = self.pane.recall_app
        request = app.request
        config, base = self.pane.config, self.pane.base
        if config is None or base is None or not request.query.strip():
            self.runs = None
            self.draw_runs()
            return
        engine = app.recalls.engine_for(request.preset)
        key = (request, config.hash(), side_name, side_b_name, engine.fingerprint)
        if key == self.run_key and not force:
            return
        self.run_key = key
        self.busy = True
        self._run_query(engine, request, app.recalls.recall_filters(request), base, config,
                        side_name or request.preset, side_b_name)

    @work(thread=True, exclusive=True, group="tuning")
    def _run_query(self, engine: Any, request: Any, filters: Any, base: Config, config: Config,
                   side_name: str, side_b_name: str = TUNED) -> None:
        from recall_tui.engine import Cancelled

        worker = get_current_worker()

        def recall(cfg: Config, k: int | None = None) -> Trace:
            return engine.recall(request.query, k=k, now=request.now,
                                 as_of=request.as_of, verbosity=request.verbosity,
                                 filters=filters, config=cfg, cancel=lambda: worker.is_cancelled)

        # Both sides at one depth, the knobs' k (which starts from the bar's k): a preset's
        # own k (or the start's, when the k knob moved) would compare 5 hits with 10
        depth = config.k

        def under(choice: str) -> Trace:
            if choice == TUNED:
                return current
            if choice == START:
                return baseline if baseline.k == depth else recall(base, depth)
            return recall(load_preset(choice, self.pane.recall_app.vault_path), depth)

        try:
            baseline, current = recall(base), recall(config)
            side, side_b = under(side_name), under(side_b_name)
        except Cancelled:
            return
        except Exception as exc:  # shown, not raised: a bad knob value must not kill the app
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        runs = TunedRuns(baseline, current, rank_deltas(baseline, current), side_name, side,
                         diff_rankings(side, side_b, depth), side_b_name, side_b)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._done, runs)

    def _failed(self, error: str) -> None:
        self.busy = False
        self.query_one("#knob-msg", Label).update(Text(f"recall failed: {error}", style="bold red"))

    def _done(self, runs: TunedRuns) -> None:
        self.busy = False
        self.runs = runs
        self.draw_runs()

    def draw_runs(self) -> None:
        """The tuned hits (and, through the pane, the side-by-side view) from `runs`."""
        th = self.query_one("#tuned-hits", VimTable)
        row = th.cursor_row
        th.clear()
        head = self.query_one("#tuned-head", Static)
        runs = self.runs
        if runs is None:
            head.update(Text("type a query: its hits show here with their rank change against "
                             "the starting configuration", style="dim"))
            self.pane.runs_drawn(runs)
            return
        judged = self.pane.judgement_for(runs.current.query)
        dropped = [h for h in runs.baseline.hits if runs.current.hit(h.id) is None]
        t = Text()
        t.append(f"tuned from {self.pane.base_name}", style="bold")
        t.append(f"  {len(runs.current.hits)} hits")
        if dropped:
            t.append(f"  dropped since start: {', '.join(one_line(h.id, 30) for h in dropped)}",
                     style="red")
        if judged is None:
            t.append("  ")  # lit() strips the text's own leading spaces
            t.append_text(lit(f"(query not in {self.pane.queries_file().name})", "dim",
                              single_line=True))
        head.update(t)
        for h in runs.current.hits:
            if judged is None:
                j = Text("—", style="dim")
            elif h.id in judged:
                j = Text(f"grade {judged[h.id]}", style="green" if judged[h.id] else "red")
            else:
                j = Text("unjudged", style="yellow")
            th.add_row(Text(str(h.rank), justify="right"), movement_text(runs.deltas.get(h.id)),
                       Text(f"{h.score:.3f}", justify="right"), j,
                       lit(one_line(h.title, 60), single_line=True), key=h.id)
        if th.row_count:
            th.move_cursor(row=min(row, th.row_count - 1), animate=False)
        self.pane.runs_drawn(runs)

    def selected_hit(self) -> str | None:
        """The hit under the cursor of the tuned results list, if that list has one."""
        return self.query_one("#tuned-hits", VimTable).cursor_key()
