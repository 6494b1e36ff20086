"""What the tabs of the tuning pane share: the constants, how a knob is typed and shown, how
a hit's move is drawn, the names of the side-by-side choices, and the runs of one query.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

from recall_tui.engine.config import PRESET_DIR, find_preset
from recall_tui.engine.trace import Trace
from recall_tui.tuning.compare import Movement, RankingDiff

#: Cut-off of the golden figures: the same default as `recall-tui eval --k`.
GOLDEN_K = 10
#: Wait this long after the last knob change before re-scoring the whole golden set.
GOLDEN_DEBOUNCE_S = 0.4
#: Knobs not worth a row: free text that changes no ranking.
HIDDEN_KNOBS = frozenset({"description"})

#: Side-by-side choices that are not a preset file: the knobs on screen, and where they started.
TUNED, START = "@tuned", "@start"

MOVE_STYLE = {"up": "green", "down": "red", "same": "dim", "new": "bold cyan", "dropped": "red"}
BADGE_STYLE = {"better": "bold green", "worse": "bold red", "same": "dim", "unscored": "dim"}


def parse_knob(type_name: str, text: str) -> Any:
    """The value typed for a knob of `type_name`, or ValueError saying what is expected.
    `Config.with_value` checks the result again against the field's type."""
    s = text.strip()
    if type_name == "bool":
        if s.lower() in ("true", "on", "yes", "1"):
            return True
        if s.lower() in ("false", "off", "no", "0"):
            return False
        raise ValueError(f"expected on/off (true/false), got {s!r}")
    if type_name == "int":
        try:
            return int(s)
        except ValueError:
            raise ValueError(f"expected a whole number, got {s!r}") from None
    if type_name == "float":
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"expected a number, got {s!r}") from None
    if type_name.startswith("tuple[str"):
        return tuple(p.strip() for p in s.split(",") if p.strip())
    if type_name.startswith("dict["):
        try:
            return json.loads(s)
        except json.JSONDecodeError as exc:
            raise ValueError(f"expected JSON like {{\"task\": [7, 30, 90]}}: {exc.msg}") from None
    return s


def knob_text(value: Any) -> str:
    """A knob's value as the edit field shows it (and `parse_knob` reads it back)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def knob_group(path: str) -> str:
    """The stage a knob belongs to: its path without the last part (`general` at the top)."""
    return path.rsplit(".", 1)[0] if "." in path else "general"


def movement_text(m: Movement | None) -> Text:
    """`▲2` green, `▼1` red, `=`, `new`, `dropped` — the label `recall_tui.tuning.compare` gives."""
    if m is None:
        return Text("")
    return Text(m.label, style=MOVE_STYLE.get(m.kind, ""))


def preset_label(name: str, vault_root: Any) -> str:
    """A preset's name in the side-by-side choices; a saved one says where it was saved."""
    try:
        where = find_preset(name, vault_root).parent
    except ValueError:
        return name
    if where == PRESET_DIR:
        return name
    return f"{name} (saved in the vault)" if vault_root is not None and where == (
        Path(vault_root) / ".recall" / "presets") else f"{name} (saved, user config)"


def side_label(choice: str, base_name: str | None) -> str:
    """What a side of the comparison is, for its box title and the figures line."""
    if choice == TUNED:
        return "tuned configuration"
    if choice == START:
        return f"start ({base_name})"
    return f"preset {choice}"


@dataclass(frozen=True)
class TunedRuns:
    """One query under the starting and the tuned configuration (and the compared preset)."""

    baseline: Trace
    """The query under the configuration tuning started from."""
    current: Trace
    """The query under the tuned configuration."""
    deltas: dict[str, Movement]
    """`compare.rank_deltas(baseline, current)`: each current hit's movement."""
    side_name: str
    """What is shown on the left (A) of the side-by-side view: a preset name, TUNED or START."""
    side: Trace
    """The query under A."""
    side_diff: RankingDiff
    """`compare.diff_rankings(side, side_b)`."""
    side_b_name: str = TUNED
    """What is shown on the right (B): a preset name, TUNED (the default) or START."""
    side_b: Trace | None = None
    """The query under B (None: the tuned run, `current`)."""



def _fig(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"
