"""The app's memory actions, kept out of `app.py`: pin and unpin (the why-not questions every
recall asks), copy, open a memory or run a query, and the command palette's list.

`RecallApp` mixes `MemoryActions` in; the bindings that call these actions are declared on
`RecallApp` (so the help screen, the palette and the keymap see them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.widgets import Input

from recall_tui.tui.commands import PaletteCommand
from recall_tui.tui.keymap import all_bindings, display_keys
from recall_tui.tui.safe import one_line
from recall_tui.tui.screens.dialogs import PinScreen
from recall_tui.tui.widgets.whynot import PinnedTable


class MemoryActions:
    """Pins, copies, opening and the palette, mixed into `RecallApp` (before `App`)."""

    def pin(self, memory_id: str) -> None:
        """Pin a memory: every recall from now on says where it fell out (or where it ranked)."""
        if memory_id in self.pinned:
            self.notify(f"already pinned: {memory_id}", markup=False)
            return
        self.pinned = (*self.pinned, memory_id)
        self.notify(f"pinned {memory_id}", markup=False)
        self.launch_recall()
        main = self.main()
        if main is not None:
            main.query_one(PinnedTable).show(self.pinned, self.trace, self.vault)
            self._set_status()

    def unpin(self, memory_id: str) -> None:
        self.pinned = tuple(p for p in self.pinned if p != memory_id)
        self.launch_recall()
        self.refresh_views()

    def action_pin(self) -> None:
        if self.current_id:
            self.pin(self.current_id)
        else:
            self.notify("nothing to pin: highlight a hit or a memory in the vault browser")

    def action_pin_by_id(self) -> None:
        ids = sorted(self.vault.memories) if self.vault else []
        titles = {i: m.title for i, m in self.vault.memories.items()} if self.vault else {}

        def done(result: str | None) -> None:
            if result:
                self.pin(result)

        self.push_screen(PinScreen(ids, titles), done)

    def action_unpin_all(self) -> None:
        self.pinned = ()
        self.launch_recall()
        self.refresh_views()

    def action_copy(self, what: str) -> None:
        """Copy the current memory's id, its file text, or the trace as JSON."""
        if what == "trace":
            if self.trace is None:
                self.notify("no trace to copy yet")
                return
            self.copy_to_clipboard(self.trace.to_json(indent=2))
            self.notify("copied the trace JSON")
            return
        memory = self.vault.get(self.current_id) if (self.vault and self.current_id) else None
        if memory is None:
            self.notify("no memory selected")
            return
        if what == "id":
            self.copy_to_clipboard(memory.id)
            self.notify(f"copied id {memory.id}", markup=False)
        else:
            self.copy_to_clipboard((Path(self.vault.root) / memory.path).read_text("utf-8"))
            self.notify(f"copied the text of {memory.id}", markup=False)

    def palette_commands(self) -> list[PaletteCommand]:
        """Everything the palette offers: every bound action, presets, per-memory pin/open."""
        out: list[PaletteCommand] = []
        main = self.main()
        for b in all_bindings(self.settings.keymap):
            if b.where in ("help", "pin dialog") or b.id == "app.palette":
                continue
            target = self if b.where == "global" else main
            if b.where in ("global", "main screen") and target is not None:
                action = next(x.action for x in type(target).BINDINGS
                              if isinstance(x, Binding) and x.id == b.id)
                out.append(PaletteCommand(f"{b.description} ({display_keys(b.keys)})", f"binding {b.id}",
                                          _runner(target, action)))
        for name in self.presets:
            out.append(PaletteCommand(f"Preset: {name}", "re-run the query with this preset",
                                      lambda n=name: self.set_preset(n)))
        out.append(PaletteCommand("Verbosity: lean/full", "toggle the results' payloads",
                                  self.action_toggle_verbosity))
        for mid in self.pinned:
            out.append(PaletteCommand(f"Unpin {one_line(mid, 60)}", "stop asking about it",
                                      lambda m=mid: self.unpin(m)))
        if self.vault is not None:
            for m in self.vault.memories.values():
                label = f"{one_line(m.id, 50)} — {one_line(m.title, 60)}"
                out.append(PaletteCommand(f"Pin {label}", "ask every recall why it is missing",
                                          lambda i=m.id: self.pin(i), discover=False))
                out.append(PaletteCommand(f"Open {label}", "show it in the memory pane",
                                          lambda i=m.id: self.open_memory(i), discover=False))
        return out

    def run_query(self, text: str) -> None:
        """Type `text` into the query bar (replacing what is there) and show the Recall pane."""
        main = self.main()
        if main is None:
            return
        main.query_one("#query", Input).value = text
        main.action_show_pane("recall")
        main.query_one("#results").focus()

    def open_memory(self, memory_id: str, *, follow_results: bool = False) -> None:
        """Show `memory_id` in the memory pane. Unless it came from the results table, the
        panes stay on it when a new recall redraws the table."""
        self.follow_results = follow_results
        self.set_current(memory_id)
        main = self.main()
        if main is not None:
            # focus goes with it (letters typed next are the Memory pane's keys, not a query)
            main.set_focus(None)
            main.action_show_pane("memory")
            main.focus_main_later("memory", None)


def _runner(target: Any, action: str) -> Callable[[], object]:
    """A callable running `action` (as written in a Binding) on `target`."""
    return lambda: target.run_action(action)
