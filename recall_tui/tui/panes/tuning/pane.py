"""The tuning pane: live knobs, the same query side by side under two configurations, and the
golden set scored under the tuned and the starting configuration.

Nothing here computes a score. Every figure comes from the headless modules: the engine runs
the query under each `Config` (`Engine.recall(config=...)`), `recall_tui.tuning.compare` says how each
hit moved (`rank_deltas`, `diff_rankings`), `recall_tui.tuning.golden` scores the judged queries
(`run_golden`, `compare_runs`: the figures `recall-tui eval` prints). The engine work runs in
exclusive thread workers that pass their cancel flag down, so moving a knob again drops the
run in flight.

The tune tab runs `recall-tui tune`'s cross-validated search (`recall_tui.tuning.tune`) in a
worker and draws its `TuneResult`; one of its configurations can be put on the knobs.

One module per tab (`knobs`, `side`, `golden`, `tune`), each tab a widget that owns its state.
The pane holds what they share, the starting and the tuned configuration, and is their only
go-between: a tab reads the configurations and calls the pane's methods (`set_config`,
`rerun`, `queries_file`, `judgement_for`, `runs_drawn`, `golden_loaded`, `tab_shown`), and
the pane calls the tabs'. No tab reaches into another.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import TabbedContent, TabPane

from recall_tui.engine.config import Config
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.tuning.common import TunedRuns
from recall_tui.tui.panes.tuning.golden import GoldenTab
from recall_tui.tui.panes.tuning.knobs import KnobsTab
from recall_tui.tui.panes.tuning.side import SideTab
from recall_tui.tui.panes.tuning.tune import TUNE_CSS, TuneTab
from recall_tui.tui.state import UIState


class TuningPane(StatePane):
    """Knobs (grouped by stage, editable), the hits with their rank change against the starting
    configuration, a side-by-side view, the golden figures and the knob search, in four tabs."""

    DEFAULT_CSS = TUNE_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_tune", "Cancel the tune", id="tuning.cancel_tune"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.base_name: str | None = None
        """The preset tuning started from (a new preset in the query bar starts over)."""
        self.base: Config | None = None
        self.base_k: int | None = None
        """The settings bar's k when tuning started (None: the preset's k)."""
        self.config: Config | None = None
        """The tuned configuration (the knobs on screen)."""
        self.knobs = KnobsTab(self)
        self.side = SideTab(self)
        self.golden = GoldenTab(self)
        self.tune = TuneTab(self, id="tune-view")

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tuning-tabs", initial="tune-knobs"):
            with TabPane("knobs", id="tune-knobs"):
                yield self.knobs
            with TabPane("side by side", id="tune-side"):
                yield self.side
            with TabPane("golden", id="tune-golden"):
                yield self.golden
            with TabPane("tune", id="tune-tune"):
                yield self.tune

    # --- state ---------------------------------------------------------------------------------

    def show_state(self, state: UIState) -> None:
        app = self.recall_app
        if app.engine is None:
            return
        preset, k = app.request.preset, app.request.k
        if self.base_name != preset or self.base_k != k:
            # One k rule: the preset's k, or the k typed in the settings bar, which then is the
            # starting value of the `k` knob (so the knob, the bar and the hits agree).
            self.base_name, self.base_k = preset, k
            config = app.recalls.engine_for(preset).config
            self.base = config if k is None or k == config.k else config.with_value("k", k)
            self.config = self.base
            self.knobs.draw_knobs()
        if self.side.side_name is None:
            self.side.side_name = preset
            self.side.fill_choices()
        self.rerun()
        self.schedule_golden()
        if self.tune.wanted:  # the tune key was pressed before the pane had its state
            self.start_tune()

    def set_config(self, config: Config) -> None:
        """Make `config` the tuned configuration and re-run the query and the golden set."""
        self.config = config
        self.knobs.draw_knobs()
        self.rerun(force=True)
        self.schedule_golden()

    def reset(self) -> None:
        """Back to the configuration tuning started from."""
        if self.base is not None:
            self.set_config(self.base)

    # --- what the tabs ask of each other, through the pane ------------------------------------

    def rerun(self, *, force: bool = False) -> None:
        """Run the query under the configurations on screen (the knobs tab's worker)."""
        self.knobs.rerun(self.side.side_name, self.side.side_b_name, force=force)

    def runs_drawn(self, runs: TunedRuns | None) -> None:
        """The knobs tab drew new runs: the side-by-side tab draws them too."""
        self.side.draw(runs)

    def schedule_golden(self, *, force: bool = False) -> None:
        """Re-score the golden set after a short pause (the golden tab)."""
        self.golden.schedule(force=force)

    def golden_loaded(self) -> None:
        """The golden tab read its queries: the knobs tab's judged column follows them (once
        that tab has its tables: the golden tab can finish reading first, and a tab mounted
        later draws no runs yet, so there is nothing to follow)."""
        if self.knobs.is_mounted:
            self.knobs.draw_runs()

    def queries_file(self) -> Path:
        """The judged queries the golden tab shows and the tune runs on."""
        return self.golden.queries_file()

    def judgement_for(self, query: str) -> dict[str, int] | None:
        """The golden set's judgements of `query` (None when it does not hold it)."""
        return self.golden.judgement_for(query)

    def tab_shown(self, tab: str) -> bool:
        """Tab `tab` (`tune-golden`, …) is the one on screen, on the Tuning pane shown."""
        main = self.recall_app.main()
        return (main is not None and main.active_pane() == "tuning"
                and self.query_one("#tuning-tabs", TabbedContent).active == tab)

    @on(TabbedContent.TabActivated, "#tuning-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if event.pane.id == "tune-side":  # a preset saved (S) since is a choice now
            self.side.fill_choices()
        elif event.pane.id == "tune-golden":
            self.schedule_golden()
        elif event.pane.id == "tune-tune":
            self.tune.shown()

    # --- for the app's keys -------------------------------------------------------------------

    def selected_hit(self) -> str | None:
        """The hit under the cursor of the tuned results list, if that list has one."""
        return self.knobs.selected_hit()

    def start_tune(self) -> None:
        """Start a tune with the tune tab's settings (says why when it cannot)."""
        self.tune.start()

    def action_cancel_tune(self) -> None:
        """Cancel the running tune (it stops before its next recall)."""
        self.tune.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape cancels only while a tune runs; otherwise it goes on to the app."""
        if action == "cancel_tune":
            return self.tune.busy
        return True
