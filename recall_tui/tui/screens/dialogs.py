"""Modal screens: the help screen (every binding, with the key it has now) and the pin dialog."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Static

from recall_tui.tui.keymap import BindingInfo, display_keys
from recall_tui.tui.widgets.vim import VimTable


class HelpScreen(ModalScreen[None]):
    """Lists every binding of the app: where it applies, its id, its keys, what it does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close"),
    ]

    def __init__(self, bindings: list[BindingInfo], config_source: str) -> None:
        super().__init__()
        self.bindings_info = bindings
        self.config_source = config_source

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text("Keys — remap any of them by id in the [keymap] table of "
                              + (self.config_source or "the config file"), style="bold"),
                         id="help-title")
            yield VimTable(id="help-table")
            yield Label("esc closes", id="help-foot")

    def on_mount(self) -> None:
        t = self.query_one(VimTable)
        for label in ("where", "keys", "binding id", "does"):
            t.add_column(label)
        for b in self.bindings_info:
            t.add_row(Text(b.where, style="dim"), Text(display_keys(b.keys), style="bold cyan"),
                      Text(b.id), Text(b.description))
        t.focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


class PinScreen(ModalScreen[str | None]):
    """Asks for a memory id to pin (with completion from the vault's ids)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="pin.cancel"),
    ]

    def __init__(self, ids: list[str]) -> None:
        super().__init__()
        self.ids = ids

    def compose(self) -> ComposeResult:
        with Vertical(id="pin-box"):
            yield Label("Pin a memory by id — every recall will say where it fell out")
            yield Input(placeholder="memory id", id="pin-input",
                        suggester=SuggestFromList(self.ids, case_sensitive=False))
            yield Label("", id="pin-error")

    @on(Input.Submitted, "#pin-input")
    def _submit(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value in self.ids:
            self.dismiss(value)
        else:
            self.query_one("#pin-error", Label).update(
                Text(f"no memory with id {value!r} in this vault", style="red"))

    def action_cancel(self) -> None:
        self.dismiss(None)
