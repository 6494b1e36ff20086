"""Every binding of the UI, in one list: the help screen, the docs and the keymap check use it.

Bindings are declared where they act (the app, the main screen, list widgets, the vault tree,
the modal screens); this module only collects them. Every one has an `id`, so the user's
`[keymap]` table (`binding_id = "keys"`) can remap it through `App.set_keymap`.
"""

from __future__ import annotations

import importlib
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


#: Where each binding-carrying class lives, as "module:Class". Resolved by name when the list
#: is asked for, so this module stays a leaf: the app, the screens and the widgets import it,
#: it imports none of them.
OWNERS: tuple[tuple[str, str], ...] = (
    ("global", "recall_tui.tui.app:RecallApp"),
    ("main screen", "recall_tui.tui.screens.main:MainScreen"),
    ("query bar", "recall_tui.tui.widgets.query_bar:QueryBar"),
    ("replay", "recall_tui.tui.replay:ReplayApp"),
    ("agent pane", "recall_tui.tui.panes.agent:AgentPane"),
    ("tuning pane", "recall_tui.tui.panes.tuning.pane:TuningPane"),
    ("side by side", "recall_tui.tui.panes.tuning.side:SideTab"),
    ("lists", "recall_tui.tui.widgets.table:VimTable"),
    ("trees", "recall_tui.tui.widgets.table:VimTree"),
    ("vault tree", "recall_tui.tui.panes.vault:VaultTree"),
    ("vault filter", "recall_tui.tui.panes.vault:VaultPane"),
    ("search box", "recall_tui.tui.widgets.popups:FindScreen"),
    ("row in full", "recall_tui.tui.widgets.popups:RowScreen"),
    ("trace list", "recall_tui.tui.replay:TraceListScreen"),
    ("help", "recall_tui.tui.screens.dialogs:HelpScreen"),
    ("pin dialog", "recall_tui.tui.screens.dialogs:PinScreen"),
    ("confirm dialog", "recall_tui.tui.screens.dialogs:ConfirmScreen"),
    ("judge dialog", "recall_tui.tui.screens.edit:GradeScreen"),
    ("judge an agent recall", "recall_tui.tui.screens.judge_recall:JudgeRecallScreen"),
    ("query set dialog", "recall_tui.tui.screens.judge_recall:QuerySetScreen"),
    ("recall_when editor", "recall_tui.tui.screens.edit:RecallWhenScreen"),
    ("save preset dialog", "recall_tui.tui.screens.edit:SavePresetScreen"),
    ("gate", "recall_tui.tui.screens.gate:GateScreen"),
    ("conflict view", "recall_tui.tui.screens.edit:ConflictScreen"),
    ("error analysis", "recall_tui.tui.screens.errors:ErrorsScreen"),
    ("loss side by side", "recall_tui.tui.screens.errors:LossScreen"),
)


def _owners() -> list[tuple[str, type]]:
    out = []
    for where, ref in OWNERS:
        module, _, name = ref.partition(":")
        out.append((where, getattr(importlib.import_module(module), name)))
    return out


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
