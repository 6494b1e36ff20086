"""Tables and trees that also move with j/k and g/G.

The extra bindings have ids (`list.down`, `list.up`, `list.top`, `list.bottom`) shared by every
list-like widget, so one keymap entry remaps them everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._segment_tools import line_crop
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import DataTable, Tree
from textual.widgets.data_table import CellDoesNotExist, CellKey, RowKey

from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.cells import one_line_cell

VIM_TABLE_BINDINGS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False, id="list.down"),
    Binding("k", "cursor_up", "Up", show=False, id="list.up"),
    Binding("g", "scroll_top", "First row", show=False, id="list.top"),
    Binding("G", "scroll_bottom", "Last row", show=False, id="list.bottom"),
    Binding("ctrl+f", "find", "Search this list", show=False, id="list.find"),
    Binding("f", "full_row", "Row in full", show=False, id="list.full"),
]


def _share(natural: list[int], room: int, minimum: int | None = None) -> list[int]:
    """Widths for the flexible columns, in priority order: each takes what its content needs
    while leaving `minimum` (FLEX_MIN unless told) for each one after it; the last ones get
    what is left (never under `minimum`)."""
    floor = FLEX_MIN if minimum is None else minimum
    widths = []
    for i, need in enumerate(natural):
        after = floor * (len(natural) - i - 1)
        w = max(floor, min(need, room - after))
        widths.append(w)
        room -= w
    return widths


def _fair_share(natural: list[int], room: int, minimum: int | None = None) -> list[int]:
    """Widths for the flexible columns, shared fairly: a column needing no more than an equal
    share gets what it needs, the rest split what is left equally (the first ones take the odd
    cells); never under `minimum`. So a short key column is not cut for a long one."""
    floor = FLEX_MIN if minimum is None else minimum
    widths = [0] * len(natural)
    left = list(range(len(natural)))
    while left:
        each = room // len(left)
        small = [i for i in left if natural[i] <= each]
        if not small:
            extra = room - each * len(left)
            for j, i in enumerate(left):
                widths[i] = max(floor, each + (1 if j < extra else 0))
            break
        for i in small:
            widths[i] = max(floor, natural[i])
            room -= widths[i]
            left.remove(i)
    return widths


def _matches(needle: str, haystack: str) -> bool:
    return needle.casefold() in haystack.casefold()


def _next_match(texts: list[str], needle: str, current: int, step: int) -> int | None:
    """Index of the first text holding `needle`: from the top (step 0) or after / before
    `current` (step 1 / -1), wrapping around."""
    n = len(texts)
    if not n or not needle:
        return None
    order = (range(n) if step == 0 else
             [(current + step * i) % n for i in range(1, n + 1)])
    return next((i for i in order if _matches(needle, texts[i])), None)


#: A flexible column is never made narrower than this (it scrolls sideways instead).
FLEX_MIN = 8


class SteadyBox:
    """A scrolling list whose box the CSS sizes (`1fr`, a number of cells), not its content.

    Textual's `virtual_size` (the content's size: rows, the widest line) asks for a layout of
    the whole screen whenever it changes, though all it changes for such a box is its
    scrollbars. A recall that takes the hits from five rows to none and back (the floor
    abstains on one prefix, keeps on the next) paid a screen layout and the repaint of every
    region it touched on each keystroke. Here a new virtual size updates the scrollbars only;
    a scrollbar that comes or goes still asks for the layout itself (the box's inside
    changes). A box sized by its content (`auto`) lays the screen out as before.

    Used by the recall view's boxes, which every keystroke redraws (the stages, the hits, the
    explanation, the pinned ids, the stage detail); the panes' lists lay out as Textual does
    (a tab strip placed before its first layout relies on it)."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self) -> None:
        widget: Any = self
        styles = widget.styles
        if (not widget.is_mounted or not widget.container_size
                or any(s is not None and s.is_auto for s in (styles.width, styles.height))):
            widget.refresh(layout=True)
        else:
            self._update_scrollbars()

    def _update_scrollbars(self) -> None:
        """Textual's `_scroll_update` less its unconditional repaint of the scrollbars: a
        scrollbar's size and window are reactives that repaint it when they change, so a new
        width of a box whose rows stay (the stages) repaints no scrollbar. A scrollbar that
        comes or goes asks for the layout itself (`_refresh_scrollbars`)."""
        widget: Any = self
        widget._refresh_scrollbars()
        width, height = widget.container_size
        virtual, styles = widget.virtual_size, widget.styles
        if widget.show_vertical_scrollbar and styles.scrollbar_size_vertical:
            bar = widget.vertical_scrollbar
            bar.window_virtual_size = virtual.height
            bar.window_size = height - widget.scrollbar_size_horizontal
        if widget.show_horizontal_scrollbar and styles.scrollbar_size_horizontal:
            bar = widget.horizontal_scrollbar
            bar.window_virtual_size = virtual.width
            bar.window_size = width - widget.scrollbar_size_vertical
        widget.scroll_x = widget.validate_scroll_x(widget.scroll_x)
        widget.scroll_y = widget.validate_scroll_y(widget.scroll_y)


if TYPE_CHECKING:  # the mixin's super() is a Widget's (it comes before one in the MRO)
    from textual.widget import Widget as _WidgetBase
else:
    _WidgetBase = object


class PaintPass(_WidgetBase):
    """One paint of a widget's visible lines (`render_lines`) works out once what each line
    asks again and again: the widget's style (Textual walks every ancestor's CSS for it on
    each call), its component styles and its size. Nothing a paint reads changes during it, so the
    lines are the same; `_pass` is also where a subclass keeps its own per-paint values."""

    _pass: dict[Any, Any] | None = None

    def render_lines(self, crop: Any) -> Any:
        self._pass = {}
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def _once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """`compute()`, worked out once per paint (every time outside one)."""
        memo = self._pass
        if memo is None:
            return compute()
        value = memo.get(key)
        if value is None:
            value = memo[key] = compute()
        return value

    @property
    def rich_style(self) -> Style:
        style: Style = self._once("style", lambda: super(PaintPass, self).rich_style)
        return style

    @property
    def size(self) -> Size:
        size: Size = self._once("size", lambda: super(PaintPass, self).size)
        return size

    def get_component_rich_style(self, *names: str, partial: bool = False,
                                 default: Any = None) -> Any:
        return self._once(("component", names, partial, default),
                          lambda: super(PaintPass, self).get_component_rich_style(
                              *names, partial=partial, default=default))

    def get_component_styles(self, *names: str) -> Any:
        return self._once(("styles", names),
                          lambda: super(PaintPass, self).get_component_styles(*names))


class VimTable(PaintPass, DataTable):
    """A row-cursor DataTable with vim motions; cells are Rich `Text`, never markup strings.

    Columns named in `flex` share the width the other columns leave (each up to the width its
    content needs); a cell cut to fit ends in `…`. The full text is one key away (enter on a
    row opens it wherever the table's owner says)."""

    BINDINGS: ClassVar[list[BindingType]] = VIM_TABLE_BINDINGS
    FLEX: ClassVar[tuple[str, ...]] = ()
    """The flexible columns of a subclass (the `flex` argument overrides it)."""
    FLEX_FAIR: ClassVar[bool] = False
    """The flexible columns share the width fairly (`_fair_share`), not in FLEX's order."""
    FLEX_TYPICAL: ClassVar[bool] = False
    """A flexible column needs the width nine cells in ten fit in, not its widest cell's: one
    long value (a knob's dict) no longer claims a share its other cells leave empty."""
    FLEX_FLOOR: ClassVar[int] = FLEX_MIN
    """The narrowest a flexible column is made; under it the table scrolls sideways. A table
    whose flexible cells are read in full elsewhere sets it low, so it never scrolls."""

    def __init__(self, *, id: str | None = None, classes: str | None = None,
                 flex: tuple[str, ...] | None = None, fair: bool | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.flex = self.FLEX if flex is None else flex
        """Keys of the columns that take the width there is."""
        self.fair = self.FLEX_FAIR if fair is None else fair
        """The flexible columns share the width fairly (FLEX_FAIR unless told)."""
        self._fit_dirty = True

    def on_resize(self) -> None:
        self._fit_dirty = True

    async def _on_idle(self, _event: Any) -> None:
        # DataTable measures new cells in its own idle handler, which runs after this one:
        # fit the flexible columns once it has (only when something changed, so an idle
        # table stays idle).
        if self.flex and (self._fit_dirty or self._updated_cells or
                          self._require_update_dimensions):
            self.call_later(self.fit_columns)

    def fit_columns(self) -> None:
        """Give the flexible columns the width left by the others (no wider than their
        content); called when the size or the cells change."""
        self._fit_dirty = False
        cols = {k.value: c for k, c in self.columns.items()}
        flex = [cols[k] for k in self.flex if k in cols]
        # the vertical scrollbar's width is always kept free: it comes and goes with the rows
        # and its arrival would not trigger a new fit
        width = self.size.width - self.styles.scrollbar_size_vertical
        if not flex or width <= 0:
            return
        pad = 2 * self.cell_padding
        fixed = sum(c.get_render_width(self) for k, c in cols.items() if k not in self.flex)
        room = width - fixed - pad * len(flex)
        natural = [max(self._typical_width(c) if self.FLEX_TYPICAL else c.content_width, 1)
                   for c in flex]
        widths = (_fair_share if self.fair else _share)(natural, room, self.FLEX_FLOOR)
        if self.FLEX_TYPICAL:  # room left over goes to the cells wider than most, in order
            spare = room - sum(widths)
            for i, c in enumerate(flex):
                extra = max(0, min(spare, c.content_width - widths[i]))
                widths[i] += extra
                spare -= extra
        changed = False
        for c, w in zip(flex, widths, strict=True):
            if c.auto_width or c.width != w:
                c.auto_width, c.width = False, w
                changed = True
        if changed:
            self._require_update_dimensions = True
            self._clear_caches()
            self.refresh()

    def _typical_width(self, column: Any) -> int:
        """The width nine in ten of `column`'s cells (and its label) fit in."""
        widths = sorted(_width(row.get(column.key, "")) for row in self._data.values())
        label = column.label.cell_len if isinstance(column.label, Text) else 0
        nine_in_ten = widths[-(-len(widths) * 9 // 10) - 1] if widths else 0
        return max(label, nine_in_ten)

    def row_texts(self) -> list[str]:
        """Each row's cells as plain text, joined (what `/` searches)."""
        out = []
        for r in range(self.row_count):
            out.append(" ".join(c.plain if isinstance(c, Text) else str(c)
                                for c in self.get_row_at(r)))
        return out

    def action_find(self) -> None:
        """`ctrl+f`: search every column of this table; the cursor follows the match (`/`
        is the query's, from anywhere)."""
        from recall_tui.tui.widgets.popups import FindScreen

        start = self.cursor_row
        texts = self.row_texts()

        def find(needle: str, step: int) -> bool:
            i = _next_match(texts, needle, self.cursor_row, step)
            if i is not None:
                self.move_cursor(row=i)
            return i is not None

        def done(keep: bool | None) -> None:
            if not keep and self.row_count:
                self.move_cursor(row=min(start, self.row_count - 1))
            self.focus()

        self.app.push_screen(FindScreen(self.border_title or "this table", find), done)

    def action_full_row(self) -> None:
        """Show the row under the cursor in full: every column, nothing cut."""
        from recall_tui.tui.widgets.popups import RowScreen

        if not self.row_count:
            return
        labels = [c.label.plain for c in self.ordered_columns]
        cells = [c if isinstance(c, Text) else Text(str(c))
                 for c in self.get_row_at(self.cursor_row)]
        self.app.push_screen(RowScreen(str(self.border_title or "row"),
                                       list(zip(labels, cells, strict=False))))

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
        cell = lit(value, single_line=True) if isinstance(value, str) else value
        if isinstance(cell, Text) and cell.overflow is None:
            cell.overflow, cell.no_wrap = "ellipsis", True  # a cut cell ends in …
        return cell

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
            line = self._direct_cell(value, row_index, column_index, base_style, width,
                                     cursor, hover)
            lines = cache[key] = ([line] if line is not None else super()._render_cell(
                row_index, column_index, base_style, width, cursor, hover))
        return lines

    #: Draw plain one-line cells without Rich's layout (`cells.one_line_cell`); tests turn
    #: it off to compare with DataTable's own drawing.
    DIRECT = True

    def _direct_cell(self, value: Any, row_index: int, column_index: int, base_style: Any,
                     width: int, cursor: bool, hover: bool) -> list[Segment] | None:
        """A data cell of a one-line row drawn as DataTable would (its row and column in the
        style's meta, the cursor and hover styles over it), without Rich's layout; None for
        anything else (a fixed row or column, a taller row, a cell that is not a one-line
        `Text`)."""
        row_key = self._row_locations.get_key(row_index)
        row = self.rows.get(row_key) if row_key is not None else None
        if (not self.DIRECT or row_index < self.fixed_rows or column_index < self.fixed_columns
                or not isinstance(value, Text) or row is None or row.height != 1):
            return None
        component, post = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
            self.cursor_foreground_priority == "css", self.cursor_background_priority == "css")
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index})
        return one_line_cell(self.app.console.get_style, value, width, self.cell_padding,
                             pre + component, post)

    def notify_style_update(self) -> None:
        """A theme or CSS change: every kept cell and line rendering is stale."""
        self.__dict__.pop("_cells_by_content", None)
        self.__dict__.pop("_lines_by_content", None)
        super().notify_style_update()

    #: Rendered lines kept by what they show (see `_render_line`); cleared when this big.
    LINE_CACHE_MAX = 1024

    def _get_row_style(self, row_index: int, base_style: Any) -> Any:
        memo = self.__dict__.get("_pass")
        if memo is None or row_index < self.fixed_rows:
            return super()._get_row_style(row_index, base_style)
        key = ("row_style", row_index % 2 if self.zebra_stripes else 0, base_style)
        style = memo.get(key)
        if style is None:
            style = memo[key] = super()._get_row_style(row_index, base_style)
        return style

    def _render_line(self, y: int, x1: int, x2: int, base_style: Any) -> Any:
        """DataTable keeps a rendered line only until the next cell update anywhere in the
        table (its line cache is keyed by a table-wide update counter), so one changed score
        re-rendered every visible line. Here a data row's line is also kept by the cells it
        shows (the cell objects themselves: the cache holds them, so their ids cannot be
        reused while an entry lives), its position, the cursor and hover on that row, the
        widths and the styles: after `set_rows`, only the rows that changed are rendered
        again. The header line is kept by its labels and widths (DataTable drew it again
        after every update). Fixed rows and columns and row labels go to DataTable's path."""
        memo = self.__dict__.get("_pass")
        try:
            row_key, line_no = self._get_offsets(y)
        except LookupError:
            row_key = None
        if (memo is None or row_key is None or self.fixed_rows or self.fixed_columns
                or self._labelled_row_exists):
            return super()._render_line(y, x1, x2, base_style)
        try:
            columns = memo.get("columns")
            if columns is None:
                ordered = self.ordered_columns
                columns = memo["columns"] = (
                    tuple(c.key for c in ordered),
                    tuple(c.get_render_width(self) for c in ordered),
                    tuple(_content_key(c.label) for c in ordered))
            keys, widths, labels = columns
            if row_key is self._header_row_key:
                return self._header_line(y, x1, x2, base_style, line_no, widths, labels)
            data = self._data[row_key]
            cells = tuple(data.get(k) for k in keys)
            row_index = self._row_locations.get(row_key)
            cursor, hover = self.cursor_coordinate, self.hover_coordinate
            if self.cursor_type == "row":
                cursor, hover = cursor.row == row_index, hover.row == row_index
            key = (row_index, line_no, x1, x2, self.size.width, base_style, cursor, hover,
                   self.cursor_type, self.show_cursor, self._show_hover_cursor,
                   self._pseudo_class_state, widths, tuple(map(id, cells)),
                   self.rows[row_key].height, self.cell_padding, self.zebra_stripes,
                   self.cursor_foreground_priority, self.cursor_background_priority)
            cache = self.__dict__.setdefault("_lines_by_content", {})
        except (AttributeError, KeyError, TypeError):  # DataTable changed: its own path
            return super()._render_line(y, x1, x2, base_style)
        entry = cache.get(key)
        if entry is None:
            if len(cache) >= self.LINE_CACHE_MAX:
                cache.clear()
            strip = (self._direct_line(row_index, line_no, x1, x2, base_style, widths,
                                       cursor is True, hover is True)
                     if self.DIRECT and self.cursor_type == "row" and row_index is not None
                     else super()._render_line(y, x1, x2, base_style))
            entry = cache[key] = (cells, strip)
        return entry[1]

    def _header_line(self, y: int, x1: int, x2: int, base_style: Any, line_no: int,
                     widths: tuple[int, ...], labels: tuple[Any, ...]) -> Strip:
        """The header's line `line_no`, drawn by DataTable and kept by what it shows."""
        key = ("header", line_no, x1, x2, self.size.width, base_style, self.cursor_coordinate,
               self.hover_coordinate, self.cursor_type, self.show_cursor,
               self._show_hover_cursor, self._pseudo_class_state, widths, labels,
               self.header_height, self.cell_padding, self.cursor_foreground_priority,
               self.cursor_background_priority)
        cache = self.__dict__.setdefault("_lines_by_content", {})
        entry = cache.get(key)
        if entry is None:
            if len(cache) >= self.LINE_CACHE_MAX:
                cache.clear()
            entry = cache[key] = ((), super()._render_line(y, x1, x2, base_style))
        strip: Strip = entry[1]
        return strip

    def _direct_line(self, row_index: int, line_no: int, x1: int, x2: int, base_style: Any,
                     widths: tuple[int, ...], cursor: bool, hover: bool) -> Strip:
        """One line of a data row with a row cursor (no fixed rows or columns, no labels),
        put together as DataTable does it (each cell in its row's zebra style, the rest of
        the line in that style with the cursor's, cropped to the scroll position) without
        its per-line look-ups of every component style."""
        row_style = self._get_row_style(row_index, base_style)
        line: list[Segment] = []
        for column_index, width in enumerate(widths):
            line.extend(self._render_cell(row_index, column_index, row_style, width,
                                          cursor=cursor, hover=hover)[line_no])
        size = self.size.width
        rest, _ = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
            False, False)
        rest = row_style + rest + Style.from_meta(
            {"row": row_index, "column": 0, "out_of_bounds": True})
        line.append(Segment(" " * max(0, size - sum(widths)), rest))
        return Strip(line_crop(line, x1, x2, size)).adjust_cell_length(
            size, base_style).simplify()

    def cursor_key(self) -> str | None:
        """The key of the row under the cursor; None for an empty table (or a cursor out of
        range right after a clear)."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:
            return None

    def set_subtitle(self, text: Any) -> None:
        """Set the bottom border's text; nothing is repainted when it is the one shown
        (setting it always repaints the whole table)."""
        if self.__dict__.get("_subtitle_shown", ()) != (text,):
            self._subtitle_shown = (text,)
            self.border_subtitle = text

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> bool:
        """Show `rows` (key, cells). When the keys are the ones on screen, in the same order,
        only the cells that differ are replaced: no clear, so the cursor, the scroll position
        and the column widths stay, no highlight event fires, and nothing is repainted when
        nothing changed. Otherwise the rows are rebuilt. Returns True when it rebuilt."""
        keys = [key for key, _ in rows]
        if self.row_count and keys == [r.key.value for r in self.ordered_rows]:
            columns = self.ordered_columns  # the order the cells come in
            changed: list[int] = []
            for index, (key, cells) in enumerate(rows):
                row_key = RowKey(key)
                data = self._data[row_key]
                for column, new in zip(columns, cells, strict=False):
                    old = data.get(column.key)
                    new = self.cell(new)
                    if same_cell(new, old):
                        continue
                    # what `update_cell` does, less its repaint of the whole table
                    data[column.key] = new
                    if not changed or changed[-1] != index:
                        changed.append(index)
                    if _width(new) > column.content_width:  # re-measure, maybe widen
                        self._updated_cells.add(CellKey(row_key, column.key))
                        self._require_update_dimensions = True
            if changed:
                self._update_count += 1
                if self.region.area == 0:
                    # hidden (another pane shown): `refresh_row` repaints only rows in view,
                    # so nothing would be marked and, shown again, the table would paint the
                    # lines it kept from before; mark it all
                    self.refresh()
                else:
                    self._refresh_rows(changed)
                self.check_idle()
            return False
        self.clear()
        for key, cells in rows:
            self.add_row(*cells, key=key)
        return True


    def _refresh_rows(self, indexes: Sequence[int]) -> None:
        """Repaint the rows at `indexes` that are in view, in one refresh (DataTable's
        `refresh_row` asks for one each, and measures every row above it to place it)."""
        wanted = set(indexes)
        width = max(self.size.width, sum(c.get_render_width(self) for c in self.columns.values())
                    + self._row_label_column_width)
        window, offset = self.window_region, self.scroll_offset
        y = self.header_height if self.show_header else 0
        regions = []
        for index, row in enumerate(self.ordered_rows):
            if index in wanted:
                region = Region(0, y, width, row.height)
                if window.overlaps(region):
                    regions.append(region.translate(-offset))
            y += row.height
        if regions:
            self.refresh(*regions)


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


class VimTree(PaintPass, Tree):
    """A Tree with vim motions. Labels must be passed as `Text` (a str would be parsed as markup)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("g", "scroll_home", "First row", show=False, id="list.top"),
        Binding("G", "scroll_end", "Last row", show=False, id="list.bottom"),
        Binding("ctrl+f", "find", "Search this tree", show=False, id="tree.find"),
        Binding("f", "full_line", "Line in full", show=False, id="tree.full"),
    ]

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """A line that goes on past the box's right edge ends in `…` (`f` shows it whole)."""
        strip = super()._render_line(y, x1, x2, base_style)
        lines = self._tree_lines
        if y >= len(lines) or strip.cell_length < 2:
            return strip
        line = lines[y]
        width = (line._get_guide_width(self.guide_depth, self.show_root)
                 + self.get_label_width(line.node))
        # the cells a vertical scrollbar covers are not seen: the … goes before them
        room = self._once("room", lambda: self.scrollable_content_region.width)
        seen = min(strip.cell_length, room or strip.cell_length)
        if width <= x1 + seen or seen < 2:
            return strip
        cut = list(strip.crop(seen - 1, seen))
        style = cut[0].style if cut else None
        return Strip.join([strip.crop(0, seen - 1), Strip([Segment("…", style)]),
                           strip.crop(seen, strip.cell_length)])

    def action_full_line(self) -> None:
        """`f`: the line under the cursor in full, with the lines under it (wrapped)."""
        from recall_tui.tui.widgets.popups import RowScreen

        node = self.cursor_node
        if node is None:
            return
        text = Text()

        def walk(n: Any, depth: int) -> None:
            if text.plain:
                text.append("\n" + "  " * depth)
            text.append_text(self.process_label(n.label) if not isinstance(n.label, Text)
                             else n.label)
            for child in n.children:
                walk(child, depth + 1)

        walk(node, 0)
        self.app.push_screen(RowScreen(str(self.border_title or "line"), [("line", text)]))

    def action_find(self) -> None:
        """`ctrl+f`: search every node's label (collapsed branches too); the cursor
        follows."""
        from recall_tui.tui.widgets.popups import FindScreen

        nodes: list[Any] = []

        def walk(node: Any) -> None:
            nodes.append(node)
            for child in node.children:
                walk(child)

        walk(self.root)
        texts = [n.label.plain for n in nodes]
        start = self.cursor_node

        def go(node: Any) -> None:
            parent = node.parent
            while parent is not None:
                parent.expand()
                parent = parent.parent
            _ = self._tree_lines  # lay the expanded tree out so the node has its line
            self.move_cursor(node)

        def find(needle: str, step: int) -> bool:
            current = nodes.index(self.cursor_node) if self.cursor_node in nodes else 0
            i = _next_match(texts, needle, current, step)
            if i is not None:
                go(nodes[i])
            return i is not None

        def done(keep: bool | None) -> None:
            if not keep and start is not None:
                go(start)
            self.focus()

        self.app.push_screen(FindScreen("this tree", find), done)

    def process_label(self, label: str | Text) -> Text:
        """Tree parses `str` labels as markup; here a `str` is always shown literally."""
        text = label if isinstance(label, Text) else lit(label)
        return text.split()[0] if text.plain else text
