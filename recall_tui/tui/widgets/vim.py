"""Tables and trees that also move with j/k and g/G.

The extra bindings have ids (`list.down`, `list.up`, `list.top`, `list.bottom`) shared by every
list-like widget, so one keymap entry remaps them everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
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
        return super().add_row(*(self.cell(c) for c in cells), **kwargs)

    @staticmethod
    def cell(value: Any) -> Any:
        """A cell as this table stores it (`add_row` and `set_rows` both go through here, so
        a cell handed again compares equal to the one on screen)."""
        return lit(value, single_line=True) if isinstance(value, str) else value

    #: Rendered cells kept by what they show (see `_render_cell`); cleared when this big.
    CELL_CACHE_MAX = 4096

    def _render_cell(self, row_index: int, column_index: int, base_style: Any, width: int,
                     cursor: bool = False, hover: bool = False) -> Any:
        """DataTable renders a cell once per *table update* (its cache key holds an update
        counter, so changing one cell re-renders every visible one). Here a data cell's
        rendering is also kept by its content, position, width and style: after `set_rows`
        changed a few cells, only those are rendered again. Header and label cells, and any
        surprise in DataTable's internals, go to DataTable's own path."""
        if row_index < 0 or column_index < 0:
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        try:
            row_key = self._row_locations.get_key(row_index)
            value = self._data[row_key][self._column_locations.get_key(column_index)]
            key = (_content_key(value), row_index, column_index, base_style, width, cursor,
                   hover, self._show_hover_cursor, self._pseudo_class_state,
                   self.rows[row_key].height, self.cell_padding, self.show_cursor,
                   self.cursor_foreground_priority, self.cursor_background_priority,
                   self.fixed_rows, self.fixed_columns)
            cache = self.__dict__.setdefault("_cells_by_content", {})
        except (AttributeError, KeyError, TypeError):  # DataTable changed: its own path
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        lines = cache.get(key)
        if lines is None:
            if len(cache) >= self.CELL_CACHE_MAX:
                cache.clear()
            lines = cache[key] = super()._render_cell(row_index, column_index, base_style,
                                                      width, cursor, hover)
        return lines

    def notify_style_update(self) -> None:
        """A theme or CSS change: every kept cell rendering is stale."""
        self.__dict__.pop("_cells_by_content", None)
        super().notify_style_update()

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> bool:
        """Show `rows` (key, cells). When the keys are the ones on screen, in the same order,
        only the cells that differ are replaced: no clear, so the cursor, the scroll position
        and the column widths stay, no highlight event fires, and nothing is repainted when
        nothing changed. Otherwise the rows are rebuilt. Returns True when it rebuilt."""
        keys = [key for key, _ in rows]
        if self.row_count and keys == [r.key.value for r in self.ordered_rows]:
            columns = list(self.columns.values())
            for key, cells in rows:
                for column, new, old in zip(columns, cells, self.get_row(key), strict=False):
                    new = self.cell(new)
                    if same_cell(new, old):
                        continue
                    grow = _width(new) > column.content_width  # re-measure, maybe widen
                    self.update_cell(key, column.key, new, update_width=grow)
            return False
        self.clear()
        for key, cells in rows:
            self.add_row(*cells, key=key)
        return True


def same_cell(a: Any, b: Any) -> bool:
    """Two cells draw the same: text, spans, base style and justification (rich's own
    `Text.__eq__` ignores the base style and justification)."""
    if isinstance(a, Text) and isinstance(b, Text):
        return (a.plain == b.plain and a.spans == b.spans and str(a.style) == str(b.style)
                and a.justify == b.justify)
    return type(a) is type(b) and a == b


def _content_key(cell: Any) -> Any:
    """What a cell draws, as a hashable key (a Text by its text, spans, style, layout)."""
    if isinstance(cell, Text):
        return (cell.plain, tuple(cell.spans), str(cell.style), cell.justify, cell.overflow,
                cell.no_wrap, cell.end)
    return (type(cell).__name__, str(cell))


def _width(cell: Any) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell_len(str(cell))


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
