"""The main screen: the query bar, the pane tabs and the status line. It routes widget
messages to the app, which owns the state; it computes nothing itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer, Input, Static, TabbedContent, TabPane, Tabs

from recall_tui.tui.panes.agent import AgentPane
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.entities import EntitiesPane
from recall_tui.tui.panes.memory import MemoryPane
from recall_tui.tui.panes.mmr import MMRPane
from recall_tui.tui.panes.problems import ProblemsPane
from recall_tui.tui.panes.supersession import SupersessionPane
from recall_tui.tui.panes.timings import TimingsPane
from recall_tui.tui.panes.tuning import TuningPane
from recall_tui.tui.panes.vault import VaultPane, VaultTree
from recall_tui.tui.sparse_paint import use_sparse_paint
from recall_tui.tui.widgets.explain import ExplanationTree, StageDetail
from recall_tui.tui.widgets.query_bar import QueryBar, RecallRequest
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp

#: Pane id -> (tab title, widget class built the first time the tab is shown). `recall` is
#: the main view and is always built.
PANES: dict[str, tuple[str, type[StatePane] | None]] = {
    "recall": ("1 Recall", None),
    "memory": ("2 Memory", MemoryPane),
    "supersession": ("3 Supersession", SupersessionPane),
    "entities": ("4 Entities", EntitiesPane),
    "mmr": ("5 MMR", MMRPane),
    "timings": ("6 Timings", TimingsPane),
    "vault": ("7 Vault", VaultPane),
    "problems": ("8 Problems", ProblemsPane),
    "tuning": ("9 Tuning", TuningPane),
    "agent": ("0 Agent", AgentPane),
}
PANE_ORDER = list(PANES)

#: Each pane's main list: the widget its pane key (and `escape` back from a dialog) focuses.
#: The tuning pane's depends on its tab (`TUNING_MAIN`).
PANE_MAIN: dict[str, str] = {
    "recall": "#results",
    "memory": "#memory-frontmatter",
    "supersession": "#chain-table",
    "entities": "#entity-edges",
    "mmr": "#mmr-table",
    "timings": "#timings-table",
    "vault": "#vault-tree",
    "problems": "#problems-table",
    "agent": "#agent-table",
}
TUNING_MAIN: dict[str, str] = {
    "tune-knobs": "#knob-table",
    "tune-side": "#side-b",
    "tune-golden": "#golden-table",
    "tune-tune": "#tune-board",
}


#: Cells a tab takes besides its title (Textual's `Tab { padding: 0 1 }`).
TAB_PADDING = 2


def fit_titles(titles: list[str], keep: int, room: int) -> list[str]:
    """The tab titles in `room` cells: all whole when they fit; else title `keep` whole and
    the others cut to one length (the first ones take the odd cells), each cut one ending in
    `…`, never under its key and one letter (`2 M…`)."""
    if sum(map(len, titles)) <= room:
        return list(titles)
    others = [i for i in range(len(titles)) if i != keep]
    left = room - len(titles[keep])
    cap = max(len(titles[i]) for i in others)
    while cap > 4 and sum(min(len(titles[i]), cap) for i in others) > left:
        cap -= 1
    spare = left - sum(min(len(titles[i]), cap) for i in others)
    out = list(titles)
    for i in others:
        n = min(len(titles[i]), cap)
        if n < len(titles[i]) and spare > 0:
            n, spare = n + 1, spare - 1
        out[i] = titles[i] if n >= len(titles[i]) else titles[i][:n - 1] + "…"
    return out


class PaneTabs(TabbedContent):
    """The pane tabs. A pane's focus notice is a message: when a pane key was pressed after a
    widget of the old pane took focus but before the notice arrived, Textual's TabbedContent
    would switch straight back to the old pane; the same for the tab strip's own notice of
    an earlier switch. A notice is acted on only while it is still true: the focused widget
    inside the pane it names, the tab it names the strip's active one."""

    # Textual runs the handler of every class in the MRO: a stale notice is stopped here with
    # prevent_default(), so TabbedContent's own handler never sees it; a live one goes on to it.

    def _on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tabs.active != event.tab.id:
            event.prevent_default()
            event.stop()

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors_with_self:
            event.prevent_default()
            event.stop()

    # The strip fits the width: when the titles do not, the shown pane's stays whole and the
    # others are cut with `…` (at 80 columns the strip used to end in a bare `8 Pr`).

    def on_resize(self) -> None:
        self.fit_labels()

    @on(TabbedContent.TabActivated)
    def _refit(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content is self:
            self.fit_labels()

    def fit_labels(self) -> None:
        width = self.size.width
        if not width or not self.is_mounted:
            return
        names = [n for n in PANES if self.query(f"#--content-tab-{n}")]
        titles = [PANES[n][0] for n in names]
        active = self.active or "recall"
        shown = fit_titles(titles, names.index(active) if active in names else 0,
                           width - TAB_PADDING * len(titles))
        for name, label in zip(names, shown, strict=True):
            tab = self.get_tab(name)
            if tab.label.plain != label:
                tab.label = label


class MainScreen(Screen):
    """Query bar, the pane tabs, a status line; routes widget messages to the app's state."""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-narrow"), (120, "-wide")]
    """Under 120 columns the recall grid and the knobs take narrower shares (see app.tcss)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "pane(1)", "Next pane", show=False, id="pane.next"),
        Binding("shift+tab", "pane(-1)", "Previous pane", show=False, id="pane.previous"),
        *(Binding(str(i % 10), f"show_pane('{name}')", title.split(" ", 1)[1], show=False,
                  id=f"pane.{name}") for i, (name, (title, _)) in enumerate(PANES.items(), 1)),
        Binding("w", "focus_widget('waterfall')", "Stages", show=False, id="focus.stages"),
        Binding("r", "focus_widget('results')", "Hits", show=False, id="focus.hits"),
        Binding("x", "focus_widget('explain')", "Explanation", show=False, id="focus.explain"),
        Binding("i", "focus_widget('pinned')", "Pinned", show=False, id="focus.pinned"),
        Binding("escape", "app.focus_query", "Query", show=False, id="focus.query"),
        Binding("ctrl+o", "focus_box(1)", "Next box of this pane", show=False,
                id="focus.next_box"),
        Binding("ctrl+b", "focus_box(-1)", "Previous box of this pane", show=False,
                id="focus.previous_box"),
    ]

    def __init__(self, request: RecallRequest, presets: list[str], stable_timings: bool) -> None:
        super().__init__()
        use_sparse_paint(self)  # a frame asks only the widgets it repaints for their lines
        self.request = request
        self.presets = presets
        self.stable_timings = stable_timings
        self._focus_when_built: StatePane | None = None

    def compose(self) -> ComposeResult:
        yield QueryBar(self.request, self.presets, id="querybar")
        with PaneTabs(id="panes", initial="recall"):
            for name, (title, _cls) in PANES.items():
                with TabPane(title, id=name):
                    if name == "recall":
                        with Horizontal(id="recall-grid"):
                            with Vertical(id="recall-left"):
                                yield Waterfall(stable_timings=self.stable_timings,
                                                id="waterfall")
                                yield PinnedTable(id="pinned")
                            with Vertical(id="recall-right"):
                                yield ResultsTable(id="results")
                                with ContentSwitcher(id="detail", initial="explain"):
                                    yield ExplanationTree(id="explain")
                                    yield StageDetail(id="stage-detail")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.app.refresh_views()  # type: ignore[attr-defined]
        if self.stable_timings:  # reproducible images: no blinking cursors either
            for field in self.query(Input):
                field.cursor_blink = False
        self.query_one("#query").focus()

    # --- panes -------------------------------------------------------------------------------

    def active_pane(self) -> str:
        return self.query_one("#panes", TabbedContent).active or "recall"

    def _in_bar(self) -> bool:
        return self.focused is not None and self.query_one(QueryBar) in self.focused.ancestors

    def action_show_pane(self, name: str) -> None:
        # Drop focus first: when a focused widget is hidden, Textual moves focus to a sibling
        # in the same (hidden) pane, which would switch the tab straight back.
        if not self._in_bar():
            self.set_focus(None)
        self.query_one("#panes", TabbedContent).active = name

    def action_pane(self, step: int) -> None:
        i = PANE_ORDER.index(self.active_pane())
        self.action_show_pane(PANE_ORDER[(i + step) % len(PANE_ORDER)])

    def action_focus_widget(self, widget_id: str) -> None:
        self.action_show_pane("recall")
        if widget_id == "explain":
            self.query_one("#detail", ContentSwitcher).current = "explain"
        self.query_one(f"#{widget_id}").focus()

    def action_focus_box(self, step: int) -> None:
        """Move focus to the next (previous) focusable box of the pane shown (tab switches
        panes): the stages, hits, detail and pinned boxes of Recall, the knob list, its edit
        field and the hits of Tuning, the filter and the tree of Vault..."""
        tab = self.query_one(f"#{self.active_pane()}", TabPane)
        boxes = [w for w in self.focus_chain if tab in w.ancestors]
        if not boxes:
            return
        i = boxes.index(self.focused) if self.focused in boxes else (-1 if step > 0 else 0)
        boxes[(i + step) % len(boxes)].focus()

    def pane_widget(self, name: str, build: bool = True) -> StatePane | None:
        """The pane's widget, built the first time it is asked for (hidden panes are lazy);
        with build=False only a pane already built (None otherwise), for callers that only
        read its state or update it when it is there."""
        cls = PANES[name][1]
        if cls is None:
            return None
        tab = self.query_one(f"#{name}", TabPane)
        found = tab.query(cls)
        if found:
            return found.first()
        if not build:
            return None
        pane = cls(id=f"pane-{name}")
        tab.mount(pane)
        return pane

    @on(TabbedContent.TabActivated, "#panes")
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or "recall"
        app = cast("RecallApp", self.app)  # which owns the state
        if name not in PANES:
            return
        if name != self.active_pane():
            # a stale message: another pane key was pressed before this one was handled, and
            # focusing this (now hidden) pane would switch the tabs back to it
            return
        pane = self.pane_widget(name)
        # Typing in the query bar stays there; otherwise focus follows the pane.
        in_bar = self._in_bar()
        if pane is None:
            if not in_bar:
                self.query_one("#results").focus()
        elif pane.is_mounted:
            app.refresh_pane(pane)
            if not in_bar:
                self.focus_main(name)
        else:  # just built: focus it once its children exist (see _needs_state)
            self._focus_when_built = None if in_bar else pane

    def focus_main(self, name: str | None = None) -> None:
        """Focus the main list of pane `name` (the one shown when None): the hits, the
        memory's frontmatter, the vault tree, the tuning tab's list..."""
        name = name or self.active_pane()
        selector = PANE_MAIN.get(name)
        if name == "tuning":
            found = self.query("#tuning-tabs")
            tab = found.first(TabbedContent).active if found else "tune-knobs"
            selector = TUNING_MAIN.get(tab or "tune-knobs")
        target = self.query(selector) if selector else None
        if target:
            target.first().focus()
            return
        pane = self.pane_widget(name, build=False) if name in PANES else None
        if pane is not None:
            self._focus_first(pane)

    def _focus_unclaimed(self, before: Any = None) -> bool:
        """Focus is where the key left it (`before`), nowhere, or on a tab strip: nothing
        (a click, a key, a test) claimed it since, so the pane's main list may take it."""
        from textual.widgets import Tabs

        now = self.focused
        return now is None or now is before or isinstance(now, Tabs)

    def focus_main_later(self, name: str, before: Any = None) -> None:
        """`focus_main(name)` once the pane is laid out, unless focus moved meanwhile from
        `before` (where it was when the key was pressed), or another pane was shown meanwhile
        (a pane key pressed before the layout: focusing the old pane would switch back to it)."""

        def go() -> None:
            if self.active_pane() == name and self._focus_unclaimed(before):
                self.focus_main(name)

        self.call_after_refresh(go)

    @staticmethod
    def _focus_first(pane: StatePane) -> None:
        for w in pane.query("*"):
            if w.focusable:
                w.focus()
                return

    # --- routing -----------------------------------------------------------------------------

    @on(QueryBar.Changed)
    def _request(self, event: QueryBar.Changed) -> None:
        self.app.request_recall(event.request, typed=event.typed)  # type: ignore[attr-defined]

    @on(Waterfall.StageChosen)
    def _stage(self, event: Waterfall.StageChosen) -> None:
        app = cast("RecallApp", self.app)  # which owns the state
        stage = app.trace.stage(event.name) if app.trace else None
        self.query_one(StageDetail).show(stage, app.vault)
        self.query_one("#detail", ContentSwitcher).current = "stage-detail"

    @on(ResultsTable.HitChosen)
    def _hit(self, event: ResultsTable.HitChosen) -> None:
        app = cast("RecallApp", self.app)  # which owns the state
        results = self.query_one(ResultsTable)
        if not (app.follow_results or results.has_focus):
            return  # the user opened another memory; a redraw of the table must not steal it
        app.follow_results = True
        self.query_one("#detail", ContentSwitcher).current = "explain"
        app.set_current(event.id)

    @on(ResultsTable.HitOpened)
    def _open_hit(self, event: ResultsTable.HitOpened) -> None:
        self.app.open_memory(event.id)  # type: ignore[attr-defined]

    @on(VaultTree.Open)
    def _open(self, event: VaultTree.Open) -> None:
        self.app.open_memory(event.id, follow_results=False)  # type: ignore[attr-defined]

    @on(VaultTree.Cursor)
    def _vault_cursor(self, event: VaultTree.Cursor) -> None:
        app = cast("RecallApp", self.app)  # which owns the state
        app.follow_results = False
        app.set_current(event.id, refresh_main=False)

    @on(StatePane.NeedsState)
    def _needs_state(self, event: StatePane.NeedsState) -> None:
        self.app.refresh_pane(event.pane)  # type: ignore[attr-defined]
        if event.pane is self._focus_when_built:
            self._focus_when_built = None
            name = (event.pane.id or "").removeprefix("pane-")
            if self.active_pane() == name and self._focus_unclaimed():
                self.focus_main(name)

    @on(VaultTree.Pin)
    def _pin(self, event: VaultTree.Pin) -> None:
        self.app.pin(event.id)  # type: ignore[attr-defined]
