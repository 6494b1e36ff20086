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

One module per tab (`knobs`, `side`, `golden`, `tune`); this one lays the tabs out and holds
what they share: the starting and the tuned configuration.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Select, Static, TabbedContent, TabPane

from recall_tui.engine.config import Config
from recall_tui.tui.panes.tuning.evidence import EvidenceChart
from recall_tui.tui.panes.tuning.golden import GoldenTab
from recall_tui.tui.panes.tuning.knobs import KnobsTab
from recall_tui.tui.panes.tuning.side import SideTab
from recall_tui.tui.panes.tuning.tune import TUNE_CSS, TuneTab
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.vim import VimTable


class KnobTable(VimTable):
    """The knobs list. Every column gives way before the values do: a narrow list cuts the
    stage, knob name and start value with `…` (the edit field's title and the row in full,
    `f`, show them whole) and never scrolls the values out of sight."""

    FLEX = ("value", "knob", "start", "group")
    FLEX_FLOOR = 3


class TuningPane(KnobsTab, SideTab, GoldenTab, TuneTab):
    """Knobs (grouped by stage, editable), the hits with their rank change against the starting
    configuration, a side-by-side view, the golden figures and the knob search, in four tabs."""

    DEFAULT_CSS = TUNE_CSS

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tuning-tabs", initial="tune-knobs"):
            with TabPane("knobs", id="tune-knobs"), Horizontal():
                with Vertical(id="knob-side"):
                    yield KnobTable(id="knob-table")
                    yield Input(id="knob-input", placeholder="select a knob, enter to edit")
                    yield Label("", id="knob-msg")
                with Vertical(id="tuned-side"):
                    yield Static(id="tuned-head")
                    yield VimTable(id="tuned-hits", flex=("title",))
            with TabPane("side by side", id="tune-side"), Vertical():
                with Horizontal(id="side-choices"):
                    yield Select([], id="side-preset", prompt="A: compare", allow_blank=True)
                    yield Select([], id="side-b-preset", prompt="B: with", allow_blank=True)
                yield Static(id="side-figures")
                with Horizontal():
                    yield VimTable(id="side-a", flex=("title", "id"))
                    yield VimTable(id="side-b", flex=("title", "id"))
            with TabPane("golden", id="tune-golden"), Vertical():
                yield Input(id="golden-file", placeholder="another queries file (JSONL): type "
                            "its path, enter; empty + enter: the vault's golden.jsonl")
                yield Static(id="golden-summary")
                yield EvidenceChart(id="golden-evidence")  # issue 20: the floor on the evidence
                yield VimTable(id="golden-table", flex=("query",))
            with TabPane("tune", id="tune-tune"), Vertical(id="tune-view"):
                yield from self.compose_tune()

    def on_mount(self) -> None:
        super().on_mount()
        kt = self.query_one("#knob-table", VimTable)
        for label, key in (("stage", "group"), ("knob", "knob"), ("value", "value"),
                           ("start", "start")):
            kt.add_column(label, key=key)
        th = self.query_one("#tuned-hits", VimTable)
        for label, key in (("#", "rank"), ("Δ start", "delta"), ("score", "score"),
                           ("judged", "judged"), ("title", "title")):
            th.add_column(label, key=key)
        for side in ("#side-a", "#side-b"):
            t = self.query_one(side, VimTable)
            for label, key in (("#", "rank"), ("move", "move"), ("score", "score"),
                               ("title", "title"), ("id", "id")):
                t.add_column(label, key=key)
        gt = self.query_one("#golden-table", VimTable)
        for label in ("line", "badge", "nDCG start→now", "recall", "unjudged", "query"):
            gt.add_column(label)
        self.mount_tune()

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
            self._draw_knobs()
        if self.side_name is None:
            self.side_name = preset
            self._fill_side_select()
        self.rerun()
        self.schedule_golden()
        if self._tune_wanted:  # the tune key was pressed before the pane had its state
            self.start_tune()

    def set_config(self, config: Config) -> None:
        """Make `config` the tuned configuration and re-run the query and the golden set."""
        self.config = config
        self._draw_knobs()
        self.rerun(force=True)
        self.schedule_golden()

    def reset(self) -> None:
        """Back to the configuration tuning started from."""
        if self.base is not None:
            self.set_config(self.base)
