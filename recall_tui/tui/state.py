"""What the panes draw from: one read-only view of the app's state, handed down on each change.

Panes never reach into the app; the app builds a `UIState` and calls `pane.show_state(state)`
for the panes that are mounted and visible (hidden ones catch up when they are shown).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall_tui.engine.trace import Trace
from recall_tui.vault.model import Vault

if TYPE_CHECKING:
    from recall_tui.index.stats import RecallStats


@dataclass(frozen=True)
class UIState:
    """A snapshot of what the UI shows."""

    vault: Vault | None
    """The vault as read (None until it has loaded)."""
    trace: Trace | None
    """The latest applied recall."""
    current_id: str | None
    """The memory the user is looking at (highlighted hit, or opened from the browser)."""
    pinned: tuple[str, ...]
    """Memories asked about in every recall (`why=`)."""
    timings: Mapping[str, Sequence[float]]
    """Stage name -> the ms it took in each recall of this session, oldest first."""
    stable_timings: bool
    """Hide live ms values (snapshots, screenshots) so images are reproducible."""
    load_memory: Callable[[str], dict[str, Any] | None]
    """The engine's `load_memory(id, "full")` (None when the engine is not open yet)."""
    recall_stats: Callable[[str], RecallStats | None]
    """The index's `recall_stats(id)` (None when no index is open)."""
