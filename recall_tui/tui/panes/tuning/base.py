"""The state the tabs of the tuning pane share (the configurations, the runs, the golden set),
in one base class: each tab is a class of its own module (`knobs`, `side`, `golden`) and
`TuningPane` (`pane`) is all of them, so a tab reaches another's methods through `self`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.timer import Timer

from recall_tui.engine.config import Config
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.tuning.common import TUNED, TunedRuns


class TuningBase(StatePane):
    """The tuning pane's state; the tabs and `TuningPane` build on it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.base_name: str | None = None
        """The preset tuning started from (a new preset in the query bar starts over)."""
        self.base: Config | None = None
        self.base_k: int | None = None
        """The settings bar's k when tuning started (None: the preset's k)."""
        self.config: Config | None = None
        self.side_name: str | None = None
        self.side_b_name: str = TUNED
        self.runs: TunedRuns | None = None
        self.run_key: tuple[Any, ...] | None = None
        self.busy = False
        """A query run is under way (tests wait for False)."""
        self.golden_busy = False
        """A golden run is waiting for its debounce or under way."""
        self.golden_path: Path | None = None
        self.golden_source: Path | None = None
        """Another queries file loaded in the golden tab (None: the vault's golden.jsonl)."""
        self.golden_hash: str | None = None
        """sha256 of golden.jsonl as last read (the stamp `mark_relevant` checks)."""
        self.golden_queries: list[Any] = []
        self.golden_current: Any = None
        self.golden_baseline: Any = None
        self.golden_error: str | None = None
        self._baseline_cache: dict[tuple[str, str, str | None], Any] = {}
        self._golden_timer: Timer | None = None
        self._golden_key: tuple[Any, ...] | None = None

    @property
    def recall_app(self) -> Any:
        """The app (typed loosely: this pane only reads its engine, request and presets)."""
        return self.app
