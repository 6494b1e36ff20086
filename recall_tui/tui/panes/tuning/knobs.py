"""The knobs tab of the tuning pane: every knob of the configuration, grouped by stage and
editable, and the current query under the starting and the tuned configuration (and the
side-by-side choices), with each hit's move (`recall_tui.tuning.compare.rank_deltas`).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.widgets import Input, Label, Static
from textual.worker import get_current_worker

from recall_tui.engine.config import Config, knobs, load_preset
from recall_tui.engine.trace import Trace
from recall_tui.tui.panes.tuning.base import TuningBase
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
from recall_tui.tui.widgets.vim import VimTable
from recall_tui.tuning.compare import diff_rankings, rank_deltas


class KnobsTab(TuningBase):
    """The knobs, the tuned hits and the worker that runs the query under each configuration."""

    # --- knobs ---------------------------------------------------------------------------------

    def _draw_knobs(self) -> None:
        if self.config is None or self.base is None:
            return
        kt = self.query_one("#knob-table", VimTable)
        row = kt.cursor_row
        kt.clear()
        start = {p: v for p, _t, v, _d in knobs(self.base)}
        last_group = None
        for path, _type, value, _doc in knobs(self.config):
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
        assert self.config is not None
        for p, t, v, d in knobs(self.config):
            if p == path:
                return t, v, d
        raise KeyError(path)

    def selected_knob(self) -> str | None:
        return self.query_one("#knob-table", VimTable).cursor_key()

    @on(VimTable.RowHighlighted, "#knob-table")
    def _knob_cursor(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        path = event.row_key.value
        if path is None or self.config is None:
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
        assert self.config is not None
        msg = self.query_one("#knob-msg", Label)
        type_name, _value, _doc = self.knob_info(path)
        try:
            config = self.config.with_value(path, parse_knob(type_name, text))
        except (ValueError, TypeError) as exc:
            msg.update(Text(f"{path}: {exc}", style="bold red"))
            return False
        msg.update(Text(f"{path} = {knob_text(config.get(path))}", style="green"))
        self.set_config(config)
        return True

    # --- the query under both configurations -----------------------------------------------------

    def rerun(self, *, force: bool = False) -> None:
        """Run the current query under the starting, the tuned and the compared configuration
        (skipped when nothing they depend on changed)."""
        app = self.recall_app
        request = app.request
        if self.config is None or self.base is None or not request.query.strip():
            self.runs = None
            self._draw_runs()
            return
        engine = app.recalls.engine_for(request.preset)
        key = (request, self.config.hash(), self.side_name, self.side_b_name, engine.fingerprint)
        if key == self.run_key and not force:
            return
        self.run_key = key
        self.busy = True
        self._run_query(engine, request, app.recalls.recall_filters(request), self.base, self.config,
                        self.side_name or request.preset, self.side_b_name)

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
            return recall(load_preset(choice, self.recall_app.vault_path), depth)

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
        self._draw_runs()

    def judgement_for(self, query: str) -> dict[str, int] | None:
        """The golden judgements of `query`, None when the golden set does not hold it."""
        for q in self.golden_queries:
            if q.query == query:
                return dict(q.relevant)
        return None

    def _draw_runs(self) -> None:
        th = self.query_one("#tuned-hits", VimTable)
        row = th.cursor_row
        th.clear()
        head = self.query_one("#tuned-head", Static)
        runs = self.runs
        if runs is None:
            head.update(Text("type a query: its hits show here with their rank change against "
                             "the starting configuration", style="dim"))
            self._draw_side()
            return
        judged = self.judgement_for(runs.current.query)
        dropped = [h for h in runs.baseline.hits if runs.current.hit(h.id) is None]
        t = Text()
        t.append(f"tuned from {self.base_name}", style="bold")
        t.append(f"  {len(runs.current.hits)} hits")
        if dropped:
            t.append(f"  dropped since start: {', '.join(one_line(h.id, 30) for h in dropped)}",
                     style="red")
        if judged is None:
            t.append_text(lit(f"  (query not in {self.queries_file().name})", "dim",
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
        self._draw_side()

    def selected_hit(self) -> str | None:
        """The hit under the cursor of the tuned results list, if that list has one."""
        return self.query_one("#tuned-hits", VimTable).cursor_key()
