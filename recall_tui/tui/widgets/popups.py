"""Two small modal screens the list widgets open: a table row in full (every cell wrapped,
nothing cut) and the `/` search box of a table or tree.

They import no other widget, so the list widgets (`widgets/table.py`) can open them (kept among
the widgets: a screen module importing them would make a cycle).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class RowScreen(ModalScreen[None]):
    """One row of a table in full: each column's label and its whole cell, wrapped."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter,f", "close", "Close", id="row.close"),
    ]

    def __init__(self, title: str, cells: Sequence[tuple[str, Text]]) -> None:
        super().__init__()
        self.title_text = title
        self.cells = list(cells)

    def compose(self) -> ComposeResult:
        with Vertical(id="row-box", classes="edit-box wide"):
            yield Label(Text(self.title_text, style="bold"))
            with VerticalScroll(id="row-cells"):
                for label, value in self.cells:
                    t = Text(f"{label}: ", style="bold")
                    shown = value.copy()
                    shown.no_wrap, shown.overflow = False, "fold"  # everything, wrapped
                    t.append_text(shown)
                    yield Static(t, classes="row-cell")
            yield Label(Text("esc closes", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)


class FindScreen(ModalScreen[bool]):
    """The `/` search of a table or tree: each edit asks `find(text, step)` to move the
    list's cursor to the next match (`step` 0: from the top; 1 / -1: next / previous match);
    enter keeps the position, escape puts the cursor back where it was."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel the search", id="find.cancel"),
        Binding("down,ctrl+n", "step(1)", "Next match", id="find.next"),
        Binding("up", "step(-1)", "Previous match", id="find.previous"),
    ]

    DEFAULT_CSS = """
    FindScreen { align: center bottom; background: $background 0%; }
    #find-box { height: 3; width: 100%; border-top: solid $accent; background: $surface; }
    #find-row { height: 1; }
    #find-label { width: auto; color: $accent; }
    #find-input { width: 1fr; }
    """

    def __init__(self, what: str, find: Callable[[str, int], bool]) -> None:
        super().__init__()
        self.what = what
        self.find = find

    def compose(self) -> ComposeResult:
        with Vertical(id="find-box"):
            with Vertical(id="find-row"):
                yield Input(placeholder=f"search {self.what} (every column)", id="find-input",
                            compact=True)
            yield Label(Text("enter keeps · ↓/↑ next/previous match · esc goes back",
                             style="dim"), id="find-status")

    def on_mount(self) -> None:
        self.query_one("#find-input").focus()

    @on(Input.Changed, "#find-input")
    def _changed(self, event: Input.Changed) -> None:
        self._say(self.find(event.value, 0), event.value)

    def _say(self, found: bool, text: str) -> None:
        status = self.query_one("#find-status", Label)
        if not text or found:
            status.update(Text("enter keeps · ↓/↑ next/previous match · esc goes back",
                               style="dim"))
        else:
            t = Text("no match for ", style="yellow")
            t.append(text)
            status.update(t)

    def action_step(self, step: int) -> None:
        text = self.query_one("#find-input", Input).value
        if text:
            self._say(self.find(text, step), text)

    @on(Input.Submitted, "#find-input")
    def _keep(self, event: Input.Submitted) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
