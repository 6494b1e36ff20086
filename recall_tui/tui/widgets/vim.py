"""Tables and trees that also move with j/k and g/G.

The extra bindings have ids (`list.down`, `list.up`, `list.top`, `list.bottom`) shared by every
list-like widget, so one keymap entry remaps them everywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Tree

from recall_tui.tui.safe import lit

VIM_TABLE_BINDINGS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False, id="list.down"),
    Binding("k", "cursor_up", "Up", show=False, id="list.up"),
    Binding("g", "scroll_top", "First row", show=False, id="list.top"),
    Binding("G", "scroll_bottom", "Last row", show=False, id="list.bottom"),
]


class VimTable(DataTable):
    """A row-cursor DataTable with vim motions; cells are Rich `Text`, never markup strings."""

    BINDINGS: ClassVar[list[BindingType]] = VIM_TABLE_BINDINGS

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)

    def add_column(self, label: Any, *, key: str | None = None, **kwargs: Any):  # type: ignore[override]
        """Columns are keyed by their label unless told otherwise (tests read cells by name)."""
        return super().add_column(label, key=key or str(label), **kwargs)

    def add_row(self, *cells: Any, **kwargs: Any):  # type: ignore[override]
        """DataTable parses `str` cells as markup; here a `str` is always shown literally."""
        safe = [lit(c, single_line=True) if isinstance(c, str) else c for c in cells]
        return super().add_row(*safe, **kwargs)


class VimTree(Tree):
    """A Tree with vim motions. Labels must be passed as `Text` (a str would be parsed as markup)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("g", "scroll_home", "First row", show=False, id="list.top"),
        Binding("G", "scroll_end", "Last row", show=False, id="list.bottom"),
    ]

    def process_label(self, label: str | Text) -> Text:
        """Tree parses `str` labels as markup; here a `str` is always shown literally."""
        text = label if isinstance(label, Text) else lit(label)
        return text.split()[0] if text.plain else text
