"""Every binding of the UI, in one list: the help screen, the docs and the keymap check use it.

Bindings are declared where they act (the app, the main screen, list widgets, the vault tree,
the modal screens); this module only collects them. Every one has an `id`, so the user's
`[keymap]` table (`binding_id = "keys"`) can remap it through `App.set_keymap`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import format_key


@dataclass(frozen=True)
class BindingInfo:
    """One binding as the user sees it."""

    where: str
    """Where it applies (`global`, `main screen`, `lists`, `vault tree`, ...)."""
    id: str
    """The id to use in the keymap."""
    keys: str
    """The keys it has now (after the user's keymap)."""
    default: str
    """The keys it has by default."""
    description: str
    """What it does."""


def _owners() -> list[tuple[str, type]]:
    # Imported here: these modules import widgets that import this module's users.
    from recall_tui.tui.app import MainScreen, RecallApp
    from recall_tui.tui.replay import ReplayApp
    from recall_tui.tui.screens import HelpScreen, PinScreen
    from recall_tui.tui.screens_edit import (
        ConflictScreen,
        GradeScreen,
        RecallWhenScreen,
        SavePresetScreen,
    )
    from recall_tui.tui.widgets.query_bar import QueryBar
    from recall_tui.tui.widgets.vault_browser import VaultTree
    from recall_tui.tui.widgets.vim import VimTable, VimTree

    return [("global", RecallApp), ("main screen", MainScreen), ("query bar", QueryBar),
            ("replay", ReplayApp),
            ("lists", VimTable),
            ("trees", VimTree), ("vault tree", VaultTree), ("help", HelpScreen),
            ("pin dialog", PinScreen), ("judge dialog", GradeScreen),
            ("recall_when editor", RecallWhenScreen), ("save preset dialog", SavePresetScreen),
            ("conflict view", ConflictScreen)]


def all_bindings(keymap: Mapping[str, str] | None = None) -> list[BindingInfo]:
    """Every binding with an id, once per id, with its current keys under `keymap`."""
    keymap = keymap or {}
    out: list[BindingInfo] = []
    seen: set[str] = set()
    for where, cls in _owners():
        for b in cls.__dict__.get("BINDINGS", []):
            if not isinstance(b, Binding) or not b.id or b.id in seen:
                continue
            seen.add(b.id)
            out.append(BindingInfo(where, b.id, keymap.get(b.id, b.key), b.key,
                                   b.description or b.action))
    return out


def display_keys(keys: str) -> str:
    """Keys as the user types them (`?`, `/`, `ctrl+p`), not Textual's names
    (`question_mark`, `slash`); a comma-separated list stays a list."""
    return ", ".join(format_key(k.strip()) for k in keys.split(",") if k.strip())


def unknown_ids(keymap: Mapping[str, str]) -> list[str]:
    """Keymap entries that name no binding (most likely a typo in the config file)."""
    known = {b.id for b in all_bindings()}
    return sorted(k for k in keymap if k not in known)
