"""The golden tab's evidence chart: where the calibrated floor falls among the evidence of
relevant and other hits, and of on- and off-topic queries, over the judged set; it moves with
the knobs because the golden set is re-scored on every change. It draws
`recall_tui.tuning.distribution.spark_lines` of the run (the numbers `recall-tui eval --json`
reports under `evidence`) and computes nothing itself.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from recall_tui.tuning.distribution import spark_lines


class EvidenceChart(Static):
    """A few lines: the floor on the evidence scale and one bar line per group."""

    DEFAULT_CSS = """
    EvidenceChart { height: auto; color: $text-muted; }
    """

    def show(self, run: Any | None) -> None:
        """Draw a `GoldenRun`'s evidence (nothing without one or without a calibrated floor)."""
        if run is None or run.evidence is None:
            self.update("")
            return
        lines = spark_lines(dict(run.evidence))
        off = run.off_topic or {}
        if off.get("queries"):
            lines.append(f"off-topic: abstained on {off['abstained']}/{off['queries']}, "
                         f"mean injected {off['mean_injected']:.2f}")
        self.update(Text("\n".join(lines)))
