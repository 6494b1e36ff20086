"""The app's memory actions, kept out of `app.py`: pin and unpin (the why-not questions every
recall asks), copy, open a memory or run a query, and the command palette's list.

Plain functions of the app: `RecallApp`'s thin `pin`, `open_memory`, `action_copy`, … call
them (the bindings are declared on `RecallApp`, where Textual, the help screen, the palette
and the keymap find them; `ReplayApp` overrides the app's methods to make them read only).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.widgets import Input

from recall_tui.tui.commands import PaletteCommand
from recall_tui.tui.keymap import all_bindings, display_keys
from recall_tui.tui.safe import one_line
from recall_tui.tui.screens.dialogs import PinScreen
from recall_tui.tui.widgets.whynot import PinnedTable

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp
    from recall_tui.tui.screens.main import MainScreen


def pin(app: RecallApp, memory_id: str) -> None:
    """Pin a memory: every recall from now on says where it fell out (or where it ranked)."""
    if memory_id in app.pinned:
        app.notify(f"already pinned: {memory_id}", markup=False)
        return
    app.pinned = (*app.pinned, memory_id)
    app.notify(f"pinned {memory_id}", markup=False)
    app.launch_recall()
    main = app.main()
    if main is not None:
        main.query_one(PinnedTable).show(app.pinned, app.trace, app.vault)
        app.update_status()


def unpin(app: RecallApp, memory_id: str) -> None:
    app.pinned = tuple(p for p in app.pinned if p != memory_id)
    app.launch_recall()
    app.refresh_views()


def pin_current(app: RecallApp) -> None:
    if app.current_id:
        app.pin(app.current_id)
    else:
        app.notify("nothing to pin: highlight a hit or a memory in the vault browser")


def pin_by_id(app: RecallApp) -> None:
    ids = sorted(app.vault.memories) if app.vault else []
    titles = {i: m.title for i, m in app.vault.memories.items()} if app.vault else {}

    def done(result: str | None) -> None:
        if result:
            app.pin(result)

    app.push_screen(PinScreen(ids, titles), done)


def unpin_all(app: RecallApp) -> None:
    app.pinned = ()
    app.launch_recall()
    app.refresh_views()


def copy(app: RecallApp, what: str) -> None:
    """Copy the current memory's id, its file text, or the trace as JSON."""
    if what == "trace":
        if app.trace is None:
            app.notify("no trace to copy yet")
            return
        app.copy_to_clipboard(app.trace.to_json(indent=2))
        app.notify("copied the trace JSON")
        return
    vault = app.vault
    memory = vault.get(app.current_id) if (vault and app.current_id) else None
    if vault is None or memory is None:
        app.notify("no memory selected")
        return
    if what == "id":
        app.copy_to_clipboard(memory.id)
        app.notify(f"copied id {memory.id}", markup=False)
    else:
        app.copy_to_clipboard((Path(vault.root) / memory.path).read_text("utf-8"))
        app.notify(f"copied the text of {memory.id}", markup=False)


def palette_commands(app: RecallApp) -> list[PaletteCommand]:
    """Everything the palette offers: every bound action, presets, per-memory pin/open."""
    out: list[PaletteCommand] = []
    main = app.main()
    for b in all_bindings(app.settings.keymap):
        if b.where in ("help", "pin dialog") or b.id == "app.palette":
            continue
        target: RecallApp | MainScreen | None = app if b.where == "global" else main
        if b.where in ("global", "main screen") and target is not None:
            action = next(x.action for x in type(target).BINDINGS
                          if isinstance(x, Binding) and x.id == b.id)
            out.append(PaletteCommand(f"{b.description} ({display_keys(b.keys)})", f"binding {b.id}",
                                      _runner(target, action)))
    for name in app.presets:
        out.append(PaletteCommand(f"Preset: {name}", "re-run the query with this preset",
                                  partial(app.set_preset, name)))
    out.append(PaletteCommand("Verbosity: lean/full", "toggle the results' payloads",
                              app.action_toggle_verbosity))
    for mid in app.pinned:
        out.append(PaletteCommand(f"Unpin {one_line(mid, 60)}", "stop asking about it",
                                  partial(app.unpin, mid)))
    if app.vault is not None:
        for m in app.vault.memories.values():
            label = f"{one_line(m.id, 50)} — {one_line(m.title, 60)}"
            out.append(PaletteCommand(f"Pin {label}", "ask every recall why it is missing",
                                      partial(app.pin, m.id), discover=False))
            out.append(PaletteCommand(f"Open {label}", "show it in the memory pane",
                                      partial(app.open_memory, m.id), discover=False))
    return out


def run_query(app: RecallApp, text: str) -> None:
    """Type `text` into the query bar (replacing what is there) and show the Recall pane."""
    main = app.main()
    if main is None:
        return
    main.query_one("#query", Input).value = text
    main.action_show_pane("recall")
    main.query_one("#results").focus()


def open_memory(app: RecallApp, memory_id: str, *, follow_results: bool = False) -> None:
    """Show `memory_id` in the memory pane. Unless it came from the results table, the
    panes stay on it when a new recall redraws the table."""
    app.follow_results = follow_results
    app.set_current(memory_id)
    main = app.main()
    if main is not None:
        # focus goes with it (letters typed next are the Memory pane's keys, not a query)
        main.set_focus(None)
        main.action_show_pane("memory")
        main.focus_main_later("memory", None)


def _runner(target: RecallApp | MainScreen, action: str) -> Callable[[], object]:
    """A callable running `action` (as written in a Binding) on `target`."""
    return lambda: target.run_action(action)
