"""Replay: the same UI over recorded traces, read only, with no engine and no index.

`recall-tui replay FILE` hands the traces of a recording, a report's JSON twin or a single
trace to `run_replay`. Every pane that draws a trace draws the recorded one (waterfall, hits,
explanation, stage detail, the why-not answers the trace carries, MMR, timings from the
recorded ms). Panes that need the vault (memory text, supersession chain, entities, the vault
browser) read it only when the trace's vault root exists on this machine, read only and as it
is now; otherwise they say they are not available. The Tuning and Agent panes need the live
app (an engine, the agent's growing log): they are stand-ins that say so. Nothing re-runs:
editing the query or the settings, pinning, re-running, recording, bug reports, tuning,
judging and editing memories are refused with a notice.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static, TabPane

from recall_tui.engine.trace import Trace, trace_time
from recall_tui.tui.app import RecallApp
from recall_tui.tui.commands import PaletteCommand
from recall_tui.tui.keymap import all_bindings, display_keys
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.recalling import add_timings
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.screens.main import MainScreen
from recall_tui.tui.settings import Settings
from recall_tui.tui.widgets.query_bar import QueryBar, RecallRequest
from recall_tui.tui.widgets.table import VimTable
from recall_tui.vault.model import Vault

#: Panes that draw the vault rather than the trace.
VAULT_PANES = ("memory", "supersession", "entities", "vault")
NOT_AVAILABLE = "not available in replay (the vault is not here)"
#: Panes that need the live app (an engine, the agent's log as it grows): a stand-in in replay,
#: saying why, with the keys that lead there refused with a notice.
LIVE_PANES = {
    "tuning": "tuning re-runs queries under other knobs, and a replay has no engine: open the "
              "vault in the live app (recall-tui VAULT) to tune",
    "agent": "the Agent pane lists the recalls an agent gets from the live vault and re-runs "
             "them; a replay only holds its recorded traces: open the vault in the live app "
             "(recall-tui VAULT) to see them",
}
NOT_IN_REPLAY = "not available in a replay"


def request_of(trace: Trace) -> RecallRequest:
    """The query bar's request that shows what `trace` ran with."""
    return RecallRequest(query=trace.query, preset=trace.preset, k=trace.k,
                         now=trace_time(trace.now), as_of=trace_time(trace.as_of),
                         verbosity=trace.verbosity)


def replay_vault(traces: Sequence[Trace]) -> Vault | None:
    """The recorded vault, read (read only) when its root exists here; None otherwise."""
    from recall_tui.vault.reader import read_vault

    root = traces[0].vault.get("root") if traces else None
    if not root or not Path(root).is_dir():
        return None
    try:
        return read_vault(root)
    except OSError:
        return None


class UnavailablePane(StatePane):
    """Stands in for a vault pane when the recorded vault is not on this machine, and for the
    panes that need the live app (`LIVE_PANES`) in every replay."""

    def __init__(self, *, id: str | None = None, reason: str | None = None) -> None:
        super().__init__(id=id)
        self.reason = reason
        """Why the pane is not here (None: the vault is not on this machine)."""

    def compose(self) -> ComposeResult:
        yield Static(id="unavailable-text")

    def show_state(self, state: Any) -> None:
        name = (self.id or "").removeprefix("pane-")
        t = Text(f"{name}: {NOT_AVAILABLE if self.reason is None else NOT_IN_REPLAY}",
                 style="bold yellow")
        if self.reason is not None:
            t.append(f"\n{self.reason}", style="dim")
        self.query_one("#unavailable-text", Static).update(t)


class TraceListScreen(ModalScreen[int | None]):
    """Every recorded trace (number, query, preset, hits, ms); enter opens one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Close", id="replay_list.close"),
    ]

    def __init__(self, traces: Sequence[Trace], current: int) -> None:
        super().__init__()
        self.traces = traces
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text(f"{len(self.traces)} recorded traces — enter opens one",
                              style="bold"))
            yield VimTable(id="trace-list")
            yield Label("esc closes")

    def on_mount(self) -> None:
        t = self.query_one(VimTable)
        for label in ("#", "query", "preset", "k", "hits", "ms", "now"):
            t.add_column(label)
        for i, tr in enumerate(self.traces):
            t.add_row(str(i + 1), lit(one_line(tr.query, 60), single_line=True), tr.preset,
                      str(tr.k), str(len(tr.hits)), f"{tr.total_ms:.1f}", tr.now, key=str(i))
        t.move_cursor(row=self.current)
        t.focus()

    @on(DataTable.RowSelected, "#trace-list")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        self.dismiss(int(event.row_key.value or 0))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReplayScreen(MainScreen):
    """The main screen with a REPLAY bar, read-only settings and stand-ins for vault panes."""

    AUTO_FOCUS = "#results"

    def compose(self) -> ComposeResult:
        yield Static(id="replay-bar")
        yield from super().compose()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#settings-row").disabled = True  # only the query stays focusable
        # focus where [ and ] step (the query is read only): after the screen's own focus
        self.call_after_refresh(self._initial_focus)
        app: ReplayApp = self.app  # type: ignore[assignment]
        self.call_after_refresh(app.show_trace, app.index_at)  # once the screen is mounted

    def _initial_focus(self) -> None:
        # Only while the recall pane is still shown: a key pressed before this ran (a pane's
        # number) must not be undone by focusing a widget of the recall pane, which would
        # switch the tab straight back.
        if self.active_pane() == "recall":
            self.query_one("#results").focus()

    def pane_widget(self, name: str, build: bool = True) -> StatePane | None:
        app: ReplayApp = self.app  # type: ignore[assignment]
        if name in LIVE_PANES or (name in VAULT_PANES and app.vault is None):
            tab = self.query_one(f"#{name}", TabPane)
            found = tab.query(UnavailablePane)
            if found:
                return found.first()
            if not build:
                return None
            pane = UnavailablePane(id=f"pane-{name}", reason=LIVE_PANES.get(name))
            tab.mount(pane)
            return pane
        return super().pane_widget(name, build)


class ReplayApp(RecallApp):
    """recall-tui over recorded traces: no engine, no index, nothing re-runs."""

    CSS = "#replay-bar { height: 1; background: $warning 30%; }"
    replaying = True
    """Read by the views that word a live-mode hint differently (and by the watcher)."""
    BINDINGS: ClassVar[list[BindingType]] = [
        *RecallApp.BINDINGS,
        Binding("right_square_bracket", "step(1)", "Next trace", id="replay.next"),
        Binding("left_square_bracket", "step(-1)", "Previous trace", id="replay.previous"),
        Binding("L", "trace_list", "Trace list", id="replay.list"),
    ]

    def __init__(self, traces: Sequence[Trace], source: str | Path | None = None, *,
                 settings: Settings | None = None, vault: Vault | None = None,
                 stable_timings: bool = False) -> None:
        if not traces:
            raise ValueError("nothing to replay: no traces")
        self.traces = list(traces)
        self.source = Path(source) if source is not None else None
        first = self.traces[0]
        root = first.vault.get("root") or (self.source.parent if self.source else ".")
        super().__init__(root, settings=settings, preset=first.preset, now=trace_time(first.now),
                         query=first.query, stable_timings=stable_timings,
                         presets=sorted({t.preset for t in self.traces}))
        self.request = request_of(first)
        self.k_source = "recorded"
        self.vault = vault
        self.index_at = 0
        self.title = f"recall-tui REPLAY {self.source or ''}".rstrip()
        self.timings = {}
        for t in self.traces:
            add_timings(self.timings, t)
        self.show_trace(0)

    def get_default_screen(self) -> ReplayScreen:
        return ReplayScreen(self.request, self.presets, self.stable_timings)

    def open_vault(self) -> None:
        """Nothing to open: the traces are the data (the vault, if here, was read already)."""

    @property
    def recall_pending(self) -> bool:
        return False

    # --- stepping ------------------------------------------------------------------------------

    def show_trace(self, i: int) -> None:
        """Make trace `i` the one every pane draws."""
        self.index_at = i
        trace = self.traces[i]
        self.previous = self.traces[i - 1] if i > 0 else None
        self.trace = trace
        self.pinned = tuple(w.id for w in trace.why)
        self.request = request_of(trace)
        where = "vault read as it is now" if self.vault is not None else NOT_AVAILABLE
        self.status_text = f"REPLAY trace {i + 1} of {len(self.traces)} · {where}"
        main = self.main()
        if main is None:
            return
        field = main.query_one("#query", Input)
        if field.value != trace.query:
            field.value = trace.query
        main.query_one(QueryBar).show_request(self.request)
        self.refresh_views()

    def refresh_views(self) -> None:
        super().refresh_views()
        main = self.main()
        if main is None:
            return
        t = Text()
        t.append(" REPLAY ", style="bold reverse")
        t.append(f" trace {self.index_at + 1} of {len(self.traces)}", style="bold")
        keys = {b.id: display_keys(b.keys) for b in all_bindings(self.settings.keymap)}
        t.append(f"  {keys['replay.previous']} {keys['replay.next']} step · "
                 f"{keys['replay.list']} list · read only  ", style="dim")
        t.append_text(lit(str(self.source or "traces"), "bold", single_line=True))
        t.append(f"  recorded now {self.trace.now if self.trace else '?'}", style="dim")
        main.query_one("#replay-bar", Static).update(t)

    def action_step(self, step: int) -> None:
        i = self.index_at + step
        if not 0 <= i < len(self.traces):
            self.notify("no more traces" if step > 0 else "this is the first trace")
            return
        self.show_trace(i)

    def action_focus_query(self) -> None:
        """`escape` / `/` in a replay: the query is the recorded one and read only, so focus
        goes to the hits instead, where the replay's keys ([ ] L) work; typed there, `L` would
        only be refused as an edit of the recorded query."""
        main = self.main()
        if main is None or self.screen is not main:
            return
        main.action_show_pane("recall")
        main.query_one("#results").focus()

    def action_trace_list(self) -> None:
        def chosen(i: int | None) -> None:
            if i is not None:
                self.show_trace(i)

        self.push_screen(TraceListScreen(self.traces, self.index_at), chosen)

    # --- refusals ------------------------------------------------------------------------------

    def _read_only(self, what: str) -> None:
        self.notify(f"replay is read only: {what}", severity="warning", markup=False)

    def request_recall(self, request: RecallRequest, *, typed: bool) -> None:
        trace = self.traces[self.index_at]
        if request.query == trace.query:
            return
        self._read_only("the query is the recorded one (step with [ and ])")
        main = self.main()
        if main is not None:
            main.query_one("#query", Input).value = trace.query

    def launch_recall(self) -> None:
        """Nothing re-runs in replay."""

    def pin(self, memory_id: str) -> None:
        self._read_only("pins are the ones the recording asked about")

    def unpin(self, memory_id: str) -> None:
        self._read_only("pins are the ones the recording asked about")

    def action_unpin_all(self) -> None:
        self._read_only("pins are the ones the recording asked about")

    def action_rerun(self) -> None:
        self._read_only("nothing re-runs (there is no engine)")

    def action_toggle_record(self) -> None:
        self._read_only("record in the live app")

    def action_bug_report(self) -> None:
        self._read_only("make bug reports in the live app")

    def action_toggle_verbosity(self) -> None:
        self._read_only("the verbosity is the recorded one")

    def set_preset(self, name: str) -> None:
        self._read_only("the preset is the recorded one")

    def reload_presets(self) -> list[str]:
        """The presets are the recorded traces' (no vault's presets are read)."""
        return self.presets

    # the Tuning and Agent panes are stand-ins here (LIVE_PANES): their keys say why

    def action_tune(self) -> None:
        self.action_tuning("tune-tune")  # shows the stand-in
        self._read_only("tuning needs the live app (there is no engine)")

    def action_save_preset(self) -> None:
        self._read_only("tuning needs the live app (there is no engine)")

    def action_reset_knobs(self) -> None:
        self._read_only("tuning needs the live app (there is no engine)")

    def action_judge(self) -> None:
        self._read_only("judge hits in the live app")

    def action_edit_recall_when(self) -> None:
        self._read_only("edit recall_when in the live app")

    def action_open_editor(self) -> None:
        self._read_only("edit memories in the live app")

    def palette_commands(self) -> list[PaletteCommand]:
        out = [c for c in super().palette_commands() if not c.help.startswith("ask every")]
        for b in all_bindings(self.settings.keymap):
            if b.where == "replay":
                action = next(x.action for x in ReplayApp.BINDINGS
                              if isinstance(x, Binding) and x.id == b.id)
                out.append(PaletteCommand(f"{b.description} ({display_keys(b.keys)})",
                                          f"binding {b.id}",
                                          partial(self.run_action, action)))
        for i, t in enumerate(self.traces):
            out.append(PaletteCommand(f"Trace {i + 1}: {one_line(t.query, 60)}",
                                      f"{len(t.hits)} hits · {t.total_ms:.1f} ms",
                                      partial(self.show_trace, i), discover=False))
        return out


def make_replay_app(traces: Sequence[Trace], source: str | Path | None = None, *,
                    settings: Settings | None = None, stable_timings: bool = False) -> ReplayApp:
    """The replay app over `traces`, with the recorded vault when it is on this machine."""
    return ReplayApp(traces, source, settings=settings, vault=replay_vault(traces),
                     stable_timings=stable_timings)


def run_replay(traces: Sequence[Trace], source: str | Path | None = None) -> int:
    """Open the replay UI (blocking) and return the exit status."""
    from recall_tui.tui.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"recall-tui replay: {exc}")
        return 2
    app = make_replay_app(traces, source, settings=settings)
    app.run()
    return int(app.return_code or 0)  # an exception inside the UI exits non-zero
