"""Modal screens: the help screen (every binding, with the key it has now) and the pin dialog."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from recall_tui.tui.keymap import BindingInfo, display_keys
from recall_tui.tui.safe import one_line
from recall_tui.tui.widgets.table import VimTable


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
    """Asks for a memory to pin: the list under the field holds every memory whose id or
    title contains what is typed (as the palette matches); enter pins the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="pin.cancel"),
        Binding("down", "move(1)", "Next match", show=False, id="pin.next"),
        Binding("up", "move(-1)", "Previous match", show=False, id="pin.previous"),
    ]

    #: Matches listed at most (the field narrows them).
    LIMIT = 200

    def __init__(self, ids: list[str], titles: dict[str, str] | None = None,
                 prompt: str | None = None) -> None:
        super().__init__()
        self.ids = ids
        self.titles = titles or {}
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with Vertical(id="pin-box"):
            yield Label(self.prompt or "Pin a memory — every recall will say where it fell "
                        "out. Type part of its id or title.")
            yield Input(placeholder="id or title", id="pin-input")
            yield OptionList(id="pin-matches")
            yield Label("", id="pin-error")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#pin-input").focus()

    def matches(self, text: str) -> list[str]:
        """Ids whose id or title contains every word of `text` (case-insensitive); ids that
        start with the text first."""
        words = text.casefold().split()
        out = [i for i in self.ids
               if all(w in f"{i} {self.titles.get(i, '')}".casefold() for w in words)]
        lead = text.strip().casefold()
        return sorted(out, key=lambda i: (not i.casefold().startswith(lead), i))

    def _fill(self, text: str) -> None:
        found = self.matches(text)
        options = self.query_one("#pin-matches", OptionList)
        options.clear_options()
        for mid in found[: self.LIMIT]:
            label = Text(mid, style="bold")
            if self.titles.get(mid):
                label.append("  " + one_line(self.titles[mid], 70), style="dim")
            options.add_option(Option(label, id=mid))
        if found:
            options.highlighted = 0
        more = len(found) - self.LIMIT
        self.query_one("#pin-error", Label).update(
            Text(f"{len(found)} match{'es' if len(found) != 1 else ''}"
                 + (f" ({more} more: type more)" if more > 0 else ""), style="dim")
            if found else Text(f"no memory id or title contains {text!r}", style="red"))

    @on(Input.Changed, "#pin-input")
    def _changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        options = self.query_one("#pin-matches", OptionList)
        if options.option_count:
            now = options.highlighted or 0
            options.highlighted = max(0, min(now + step, options.option_count - 1))

    @on(Input.Submitted, "#pin-input")
    def _submit(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value in self.ids:
            self.dismiss(value)
            return
        options = self.query_one("#pin-matches", OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected, "#pin-matches")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """Asks before something long or hard to undo (the tune key's 80-configuration search):
    `y` or `enter` goes ahead, `n` or `escape` does nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="edit-box"):
            yield Static(Text(self.question, style="bold"))
            if self.detail:
                yield Static(Text(self.detail, style="dim"))
            yield Label("y / enter: yes · n / esc: no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
