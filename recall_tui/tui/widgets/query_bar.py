"""The query input and the compact settings bar beneath it (preset, k, now, as-of, filters).

The bar only collects what the user typed into a `RecallRequest`; parsing errors (a bad k or
date) are shown in place and the last good value is kept, so a half-typed date never breaks the
live recall.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select

from recall_tui.vault.model import MEMORY_TYPES

ANY_TYPE = "any"


class QueryField(Input):
    """The query input. On every change Input sets its virtual width to the text's width, a
    reactive that lays out the whole screen; while the text fits in the field (no sideways
    scrolling, nothing else moves) that width is recorded without the layout pass, so a
    keystroke repaints the field only. A text wider than the field goes Input's own way."""

    def _watch_value(self, value: str) -> None:
        room = self.content_size.width
        width = self.content_width
        if room and width <= room and self.virtual_size.width <= room:
            self.set_reactive(Input.virtual_size, Size(width, 1))
        super()._watch_value(value)


@dataclass(frozen=True)
class RecallRequest:
    """Everything one recall is asked with, as the user set it in the bars."""

    query: str = ""
    """The query text."""
    preset: str = "default"
    """Preset name."""
    k: int | None = None
    """Hits asked for; None: the preset's k (the one rule the CLI follows too)."""
    now: datetime | None = None
    """Pinned `now` (None: the real clock)."""
    as_of: datetime | None = None
    """Bi-temporal as-of time (None: no as-of filter)."""
    include_inbox: bool = False
    """Also recall memories under `_inbox/`."""
    include_superseded: bool = False
    """Also recall superseded memories."""
    type_filter: str = ANY_TYPE
    """Only this memory type, or `any`."""
    verbosity: str = "lean"
    """`lean` or `full`."""


def _iso(when: datetime | None) -> str:
    """A time as the settings bar shows it: to the minute, `Z` for UTC."""
    if when is None:
        return ""
    return when.isoformat(timespec="minutes").replace("+00:00", "Z")


def parse_when(text: str) -> datetime | None:
    """An ISO-8601 date or datetime (UTC when no zone is given); empty means None."""
    text = text.strip()
    if not text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


class QueryBar(Widget):
    """Query input plus settings; posts `Changed` on any edit (each one runs a recall at once)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave the bar", show=False, id="query.leave"),
        Binding("down,ctrl+n", "move_hit(1)", "Next hit (stay in the bar)", show=False,
                id="query.hit_down"),
        Binding("up", "move_hit(-1)", "Previous hit (stay in the bar)", show=False,
                id="query.hit_up"),
        Binding("tab", "setting(1)", "Next setting", show=False, id="settings.next"),
        Binding("shift+tab", "setting(-1)", "Previous setting", show=False,
                id="settings.previous"),
    ]

    #: The settings, in the order tab goes through them.
    SETTINGS = ("preset", "k", "now", "as-of", "type", "inbox", "superseded")

    #: Under this width the filters take a second row (`-two-rows`, see app.tcss): one row
    #: needs 123 cells, 128 with `k 5 (config file)` (at 120 it cut `superseded` short).
    ONE_ROW_WIDTH = 130

    def on_resize(self) -> None:
        self.set_class(self.size.width < self.ONE_ROW_WIDTH, "-two-rows")

    @dataclass
    class Changed(Message):
        """The request changed; `typed` is True for keystrokes in the query input."""

        request: RecallRequest
        typed: bool

    def __init__(self, request: RecallRequest, presets: list[str], *,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.request = request
        self.presets = list(presets) if request.preset in presets else [request.preset, *presets]
        """The names the select lists (a copy: `set_presets` compares the app's new list
        with it)."""

    def compose(self) -> ComposeResult:
        r = self.request
        with Horizontal(id="query-row"):
            yield Label("❯ ", id="query-prompt")
            yield QueryField(value=r.query, placeholder="type a query — every keystroke "
                             "re-runs the pipeline", id="query", compact=True,
                             select_on_focus=False)
        with Horizontal(id="settings-row"):
            with Horizontal(id="settings-main"):
                yield Select([(p, p) for p in self.presets], value=r.preset, allow_blank=False,
                             id="preset", compact=True, tooltip="preset")
                yield Label("k", classes="setting-label")
                yield Input("" if r.k is None else str(r.k), id="k", compact=True, type="integer",
                            restrict=r"\d*", max_length=3, placeholder="·")
                yield Label("", id="k-source")
                yield Label("now", classes="setting-label")
                yield Input(_iso(r.now), placeholder="clock", id="now", compact=True)
                yield Label("as-of", classes="setting-label")
                yield Input(_iso(r.as_of), placeholder="—", id="as-of", compact=True)
            with Horizontal(id="settings-filters"):
                yield Select([(ANY_TYPE, ANY_TYPE), *((t, t) for t in MEMORY_TYPES)],
                             value=r.type_filter, allow_blank=False, id="type", compact=True,
                             tooltip="type filter")
                yield Checkbox("inbox", r.include_inbox, id="inbox", compact=True)
                yield Checkbox("superseded", r.include_superseded, id="superseded", compact=True)
                yield Label("", id="settings-error")

    def _emit(self, typed: bool = False, **changes: object) -> None:
        self.request = replace(self.request, **changes)
        self.post_message(self.Changed(self.request, typed))

    def _error(self, message: str) -> None:
        self.query_one("#settings-error", Label).update(Text(message, style="bold red"))

    @on(Input.Changed, "#query")
    def _query(self, event: Input.Changed) -> None:
        event.stop()
        self._emit(True, query=event.value)

    @on(Input.Changed, "#k")
    def _k(self, event: Input.Changed) -> None:
        event.stop()
        if not event.value.strip():  # empty: back to the preset's k
            self._error("")
            if self.request.k is not None:
                self._emit(k=None)
        elif event.value.isdigit() and int(event.value) > 0:
            self._error("")
            if self.request.k != int(event.value):
                self._emit(k=int(event.value))
        else:
            self._error("k must be ≥ 1 (empty: the preset's k)")

    @on(Input.Changed, "#now")
    @on(Input.Changed, "#as-of")
    def _when(self, event: Input.Changed) -> None:
        event.stop()
        name = "now" if event.input.id == "now" else "as_of"
        try:
            value = parse_when(event.value)
        except ValueError:
            self._error(f"{name.replace('_', '-')}: not an ISO date")
            return
        self._error("")
        self._emit(**{name: value})

    @on(Select.Changed, "#preset")
    def _preset(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.request.preset:
            self._emit(preset=event.value)

    @on(Select.Changed, "#type")
    def _type(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.request.type_filter:
            self._emit(type_filter=event.value)

    @on(Checkbox.Changed, "#inbox")
    def _inbox(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._emit(include_inbox=event.value)

    @on(Checkbox.Changed, "#superseded")
    def _superseded(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._emit(include_superseded=event.value)

    def action_move_hit(self, step: int) -> None:
        """Move the hits' cursor without leaving the bar (the explanation follows)."""
        results = self.screen.query_one("#results")
        if results.row_count:  # type: ignore[attr-defined]
            self.app.follow_results = True  # type: ignore[attr-defined]
            results.move_cursor(  # type: ignore[attr-defined]
                row=max(0, min(results.cursor_row + step, results.row_count - 1)))  # type: ignore[attr-defined]

    @on(Input.Submitted, "#query")
    def _open_hit(self, event: Input.Submitted) -> None:
        """Enter in the query opens the highlighted hit (as enter on the hits does)."""
        event.stop()
        results = self.screen.query_one("#results")
        if results.row_count:  # type: ignore[attr-defined]
            results.action_select_cursor()  # type: ignore[attr-defined]

    def _setting_focused(self) -> str | None:
        focused = self.screen.focused
        while focused is not None and focused is not self:
            if focused.id in self.SETTINGS:
                return focused.id
            focused = focused.parent  # type: ignore[assignment]
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """tab / shift+tab move between the settings only from a setting (in the query they
        switch panes, as everywhere else); the hit keys only from the query."""
        if action == "setting":
            return self._setting_focused() is not None
        if action == "move_hit":
            return self.query_one("#query").has_focus
        return True

    def action_setting(self, step: int) -> None:
        """Focus the next (previous) setting of the bar."""
        current = self._setting_focused()
        i = self.SETTINGS.index(current) if current else -1
        self.query_one(f"#{self.SETTINGS[(i + step) % len(self.SETTINGS)]}").focus()

    @on(Input.Submitted, "#k, #now, #as-of")
    def _back_to_query(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#query").focus()

    def action_leave(self) -> None:
        """From the query: hand the keys back to the tables (so letters are bindings again);
        from a setting: back to the query."""
        if self._setting_focused() is not None:
            self.query_one("#query").focus()
        else:
            self.screen.query_one("#results").focus()

    def show_k(self, k: int | None, source: str) -> None:
        """Show the k the last recall ran with and where it came from (`preset`, `config
        file`, `typed`): the placeholder of an empty field is the preset's k."""
        field = self.query_one("#k", Input)
        if k is not None:
            field.placeholder = str(k)
        self.query_one("#k-source", Label).update(Text(f"({source})", style="dim"))

    def set_presets(self, presets: list[str]) -> None:
        """Offer these presets in the select (a preset saved or deleted since the app opened);
        the current one stays listed even when its file went away."""
        current = self.request.preset
        names = presets if current in presets else [current, *presets]
        if names == self.presets:
            return
        self.presets = list(names)
        select = self.query_one("#preset", Select)
        with select.prevent(Select.Changed):
            select.set_options([(p, p) for p in self.presets])
            select.value = current

    def show_request(self, request: RecallRequest) -> None:
        """Show `request` in the settings without asking for a recall (replay: the recorded
        trace's preset, k, now and as-of)."""
        self.request = request
        self.set_presets(self.presets)
        select = self.query_one("#preset", Select)
        with select.prevent(Select.Changed):
            select.value = request.preset
        fields = (("#k", "" if request.k is None else str(request.k)),
                  ("#now", _iso(request.now)), ("#as-of", _iso(request.as_of)))
        for selector, text in fields:
            field = self.query_one(selector, Input)
            if field.value != text:
                with field.prevent(Input.Changed):
                    field.value = text

    def set_preset(self, name: str) -> None:
        """Switch the preset select (from a key or the palette). A name the select does not
        list yet (saved since the app opened) is added first."""
        if name not in self.presets:
            self.set_presets([*self.presets, name])
        self.query_one("#preset", Select).value = name

    def set_verbosity(self, verbosity: str) -> None:
        """Change verbosity (it has no widget of its own; `v` toggles it)."""
        self._emit(verbosity=verbosity)
