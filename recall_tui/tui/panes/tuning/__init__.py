"""The tuning pane (`pane.TuningPane`), one module per tab: `knobs`, `side` (side by side),
`golden`, `tune`; `common` holds what they share. Importing from `recall_tui.tui.panes.tuning` keeps
working for every name the single module had.
"""

from recall_tui.tui.panes.tuning.common import (
    BADGE_STYLE,
    GOLDEN_DEBOUNCE_S,
    GOLDEN_K,
    HIDDEN_KNOBS,
    MOVE_STYLE,
    START,
    TUNED,
    TunedRuns,
    knob_group,
    knob_text,
    movement_text,
    parse_knob,
    preset_label,
    side_label,
)
from recall_tui.tui.panes.tuning.pane import TuningPane

__all__ = [
    "BADGE_STYLE", "GOLDEN_DEBOUNCE_S", "GOLDEN_K", "HIDDEN_KNOBS", "MOVE_STYLE", "START",
    "TUNED", "TunedRuns", "TuningPane", "knob_group", "knob_text", "movement_text",
    "parse_knob", "preset_label", "side_label",
]
