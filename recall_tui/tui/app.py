"""The live recall debugger: a Textual app over the headless engine.

The app owns the state (vault, engine, the latest trace, pins, session timings) and the two
workers: one opens the engine, one runs a recall. Each keystroke in the query runs the
pipeline at once in a thread worker; while one recall runs, only the newest request waits
(the running one is cancelled at its next stage boundary, and when its thread ends the waiting
request starts at once), so at most one recall thread runs and typing is never delayed on an
idle machine. Results come back as `RecallDone` messages stamped with a sequence number and an
answer older than the latest request is dropped, so the input never waits for the engine.
`MainScreen` lays the widgets out and routes their messages; widgets draw what they are handed.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Checkbox, ContentSwitcher, Static

from recall_tui.engine import Engine
from recall_tui.engine.trace import Trace
from recall_tui.tui import memory_actions
from recall_tui.tui.agent_actions import AgentFeed
from recall_tui.tui.commands import PaletteCommand, RecallCommands
from recall_tui.tui.keymap import all_bindings, unknown_ids
from recall_tui.tui.messages import (
    EngineFailed,
    EngineReady,
    RecallDone,
    RecallFailed,
    RecallFinished,
    VectorsReady,
)
from recall_tui.tui.opening import VaultOpener, progress_bar
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.vault import VaultPane
from recall_tui.tui.recalling import RecallController
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.screens.dialogs import HelpScreen
from recall_tui.tui.screens.main import MainScreen
from recall_tui.tui.session import SessionTools
from recall_tui.tui.settings import Settings
from recall_tui.tui.state import UIState
from recall_tui.tui.tuning_control import TuningController
from recall_tui.tui.widgets.explain import ExplanationTree, StageDetail
from recall_tui.tui.widgets.query_bar import QueryBar, QueryField, RecallRequest
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from recall_tui.vault.model import Vault


class RecallApp(App[None]):
    """recall-tui's terminal UI. Build it with `make_app` (tests use the same factory).

    It owns the state the panes draw (`ui_state`) and its controllers, each with its own
    state: `recalls` (the recall scheduler and the vault's engines), `opening` (the vault's
    progressive open), `agent` (the agent's recalls and active configuration), `session`
    (recording, bug reports, the warm-up), `tuning` (the Tuning pane, judging, the editors,
    the vault watcher). The memory actions are functions of `memory_actions` its thin
    methods call."""

    replaying: ClassVar[bool] = False
    """True in `ReplayApp` (recorded traces, no engine): the views word their hints for it and
    no watcher starts."""
    CSS_PATH = "app.tcss"
    TITLE = "recall-tui"
    COMMANDS = App.COMMANDS | {RecallCommands}
    COMMAND_PALETTE_BINDING = "ctrl+p"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("slash", "focus_query", "Query", id="app.focus_query"),
        # show=False: the footer shows Textual's own `^p Palette` at its right end already
        Binding("ctrl+p", "command_palette", "Palette", show=False, priority=True,
                id="app.palette"),
        Binding("p", "pin", "Pin", id="app.pin"),
        Binding("P", "pin_by_id", "Pin id…", show=False, id="app.pin_by_id"),
        Binding("U", "unpin_all", "Unpin all", show=False, id="app.unpin_all"),
        Binding("y", "copy('id')", "Copy id", id="app.copy_id"),
        Binding("Y", "copy('text')", "Copy memory text", show=False, id="app.copy_text"),
        Binding("ctrl+y", "copy('trace')", "Copy trace JSON", show=False, id="app.copy_trace"),
        Binding("v", "toggle_verbosity", "Lean/full", id="app.verbosity"),
        Binding("o", "next_preset", "Next preset", show=False, id="app.next_preset"),
        Binding("ctrl+r", "rerun", "Re-run", show=False, id="app.rerun"),
        Binding("R", "toggle_record", "Record on/off", show=False, id="app.record"),
        Binding("B", "bug_report", "Bug report", show=False, id="app.bug_report"),
        Binding("t", "tuning('tune-knobs')", "Tuning", show=False, id="app.tuning"),
        Binding("D", "tuning('tune-side')", "Side by side", show=False, id="app.side_by_side"),
        Binding("M", "tuning('tune-golden')", "Golden set", show=False, id="app.golden"),
        Binding("T", "tune", "Tune: search the knobs by cross-validation", show=False,
                id="app.tune"),
        Binding("W", "errors", "Error analysis: where this preset loses to the seed presets",
                show=False, id="app.errors"),
        Binding("S", "save_preset", "Save tuned preset", show=False, id="app.save_preset"),
        Binding("X", "reset_knobs", "Reset knobs", show=False, id="app.reset_knobs"),
        Binding("J", "judge", "Judge hit", show=False, id="app.judge"),
        Binding("E", "edit_recall_when", "Edit recall_when", show=False,
                id="app.recall_when"),
        Binding("e", "open_editor", "Open in $EDITOR", show=False, id="app.editor"),
        Binding("comma", "setting('preset')", "Settings: preset", show=False,
                id="app.settings"),
        Binding("K", "setting('k')", "Settings: k", show=False, id="app.setting_k"),
        Binding("N", "setting('now')", "Settings: now", show=False, id="app.setting_now"),
        Binding("A", "setting('as-of')", "Settings: as-of", show=False,
                id="app.setting_as_of"),
        Binding("F", "setting('type')", "Settings: type filter", show=False,
                id="app.setting_type"),
        Binding("I", "toggle_setting('inbox')", "Settings: include inbox on/off", show=False,
                id="app.toggle_inbox"),
        Binding("H", "toggle_setting('superseded')", "Settings: include superseded on/off",
                show=False, id="app.toggle_superseded"),
    ]

    def __init__(self, vault_path: str | Path, *, settings: Settings | None = None,
                 preset: str | None = None, now: datetime | None = None,
                 embedder: str | None = None, query: str = "", stable_timings: bool = False,
                 presets: list[str] | None = None, engine: Engine | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.vault_path = Path(vault_path)
        self.embedder_kind = embedder or self.settings.embedder
        self.stable_timings = stable_timings
        if stable_timings:  # screenshots and snapshot tests: the same image on a loaded machine
            # (a tab underline sliding into place could be caught mid-way, or left where an
            # earlier layout put it); a user's animations are theirs to set
            self.animation_level = "none"
        self.request = RecallRequest(query=query, preset=preset or self.settings.preset,
                                     k=self.settings.k, now=now,
                                     verbosity=self.settings.verbosity)
        self.presets = presets or [self.request.preset]
        self.given_engine = engine
        """The engine the caller opened (`make_app(engine=)`: tests, the bench, a replay), used
        instead of opening the vault; None when the app opens it."""
        self.engine: Engine | None = None
        """The engine of the request's preset once the vault is open (`recalls.engine_for`
        gives the others)."""
        self.vault: Vault | None = None
        self.trace: Trace | None = None
        self.previous: Trace | None = None
        self.current_id: str | None = None
        self.follow_results = True
        """The current memory is the hit under the results cursor (False after the user opened
        another memory from the vault browser or the palette)."""
        self.pinned: tuple[str, ...] = ()
        self.timings: dict[str, list[float]] = {}
        self.recalls = RecallController(self)
        """The recall scheduler and the vault's engines (one per preset): `engine_for`,
        `recall_filters`, `launch`."""
        self.status_text = "opening vault…"
        self._status_drawn: tuple[Any, ...] | None = None
        self.k_source = "config file" if self.settings.k is not None else "preset"
        """Where the request's k came from: `preset` (k unset: the preset's own k), `config
        file`, `typed` (the settings bar) or `recorded` (replay)."""
        self._k_drawn: tuple[Any, ...] | None = None
        self.opening = VaultOpener(self)
        self.agent = AgentFeed(self)
        self.session = SessionTools(self)
        self.tuning = TuningController(self)

    # --- lifecycle ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        if self.settings.keymap:
            self.set_keymap(dict(self.settings.keymap))
            bad = unknown_ids(self.settings.keymap)
            if bad:
                self.notify(f"keymap: unknown binding id(s): {', '.join(bad)}",
                            severity="warning", markup=False, timeout=8)
        for notice in self.settings.notices:
            self.notify(notice, severity="information", markup=False, timeout=8)
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        else:
            self.notify(f"theme {self.settings.theme!r} is not a built-in theme",
                        severity="warning", markup=False)
        self.open_vault()
        self.agent.start()

    def open_vault(self) -> None:
        """Start opening the vault (`VaultOpener.start`; a replay has nothing to open)."""
        self.opening.start()

    def on_engine_ready(self, message: EngineReady) -> None:
        self.opening.engine_ready(message)

    def on_vectors_ready(self, message: VectorsReady) -> None:
        self.opening.vectors_ready(message)

    def on_unmount(self) -> None:
        self.tuning.stop_watching()  # the watch thread ends with the app

    def get_default_screen(self) -> Screen:
        return MainScreen(self.request, self.presets, self.stable_timings)

    def on_engine_failed(self, message: EngineFailed) -> None:
        self.status_text = "cannot open the vault"
        self.update_status()
        self.notify(message.reason, title="cannot open the vault", severity="error",
                    markup=False, timeout=30)

    # --- recall (scheduled by `self.recalls`) -------------------------------------------------

    def request_recall(self, request: RecallRequest, *, typed: bool) -> None:
        """A new request from the bars (typed or not): run it now, or, while a recall runs,
        keep it as the one to run next (see `RecallController.launch`)."""
        if request.k != self.request.k:
            self.k_source = "typed" if request.k is not None else "preset"
        self.request = request
        self.launch_recall()

    def launch_recall(self) -> None:
        """Recall the current request (`RecallController.launch`)."""
        self.recalls.launch()

    def on_recall_finished(self, message: RecallFinished) -> None:
        self.recalls.finished(message)

    def on_recall_done(self, message: RecallDone) -> None:
        self.recalls.done(message)

    def on_recall_failed(self, message: RecallFailed) -> None:
        self.recalls.failed(message)

    def show_answer(self, trace: Trace | None) -> None:
        """Put the answer to the current request on screen (the controller calls this)."""
        # Δ compares with the last recall whose ranking differed: a re-run that changes nothing
        # (the watcher seeing the file a save just wrote, a cache hit) must not wipe the moves
        if trace is not None and (self.trace is None or _ranking(self.trace) != _ranking(trace)):
            self.previous = self.trace
        self.trace = trace
        self.refresh_views()

    def show_recorded(self, trace: Trace) -> None:
        """Show a recorded `trace` (an agent's recall) as the answer to the current request:
        a recall on its way is dropped (its answer would replace it), Δ compares with nothing."""
        self.recalls.cancel_pending()
        self.previous = None
        self.trace = trace
        self.follow_results = True

    def show_recall_failed(self, error: str) -> None:
        self.status_text = "recall failed"
        self.update_status()
        self.notify(error, title="recall failed", severity="error", markup=False)

    def record(self, trace: Trace) -> None:
        """Append an applied recall to the recording, if one is on (`SessionTools.record`)."""
        self.session.record(trace)

    @property
    def recall_pending(self) -> bool:
        """True while a recall is waiting or running (tests and screenshots wait for this to
        turn False before they look at the screen). During a progressive first open the
        re-run that follows the vectors counts as waiting: the screen is final only then.
        `answer_pending` is the narrower "the current request has no answer yet"."""
        return self.answer_pending or self.opening.vectors_pending

    @property
    def answer_pending(self) -> bool:
        """True until the answer to the current request is on screen."""
        return self.engine is None or self.recalls.pending

    # --- state -> views ------------------------------------------------------------------------

    def ui_state(self) -> UIState:
        engine = self.engine
        index = engine.index if engine is not None else None
        return UIState(
            vault=self.vault, trace=self.trace, current_id=self.current_id, pinned=self.pinned,
            timings=self.timings, stable_timings=self.stable_timings,
            load_memory=(lambda mid: engine.load_memory(mid, "full")) if engine else (lambda _: None),
            recall_stats=(lambda mid: index.recall_stats(mid)) if index else (lambda _: None),
        )

    def main(self) -> MainScreen | None:
        """The main screen once it is composed (None before)."""
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen) and screen.is_mounted:
                return screen
        return None

    def refresh_views(self) -> None:
        """Redraw the main view and the visible pane from the current state."""
        main = self.main()
        if main is None:
            return
        trace = self.trace
        main.query_one(Waterfall).show(trace)
        results = main.query_one(ResultsTable)
        results.show(trace, self.previous, self.request.verbosity, self.vault)
        if trace is None:
            results.say(self.status_text if self.engine is None else
                        "type a query: every keystroke re-runs the pipeline")
        if self.engine is None or self.opening.progress is not None:
            self.opening.hits_box_note()  # the vault is opening: say how far it got
        if self.follow_results and results.current_id() is not None:
            self.current_id = results.current_id()
        main.query_one(PinnedTable).show(self.pinned, trace, self.vault)
        self._refresh_detail(main)
        pane = main.pane_widget(main.active_pane())
        if pane is not None and pane.is_mounted:
            self.refresh_pane(pane)
        self.update_status()

    def _refresh_detail(self, main: MainScreen) -> None:
        trace = self.trace
        hit = trace.hit(self.current_id) if (trace and self.current_id) else None
        main.query_one(ExplanationTree).show(hit)
        detail = main.query_one(StageDetail)
        stage_name = None
        wf = main.query_one(Waterfall)
        if main.query_one("#detail", ContentSwitcher).current == "stage-detail":
            stage_name = wf.cursor_key()
        detail.show(trace.stage(stage_name) if (trace and stage_name) else None, self.vault)

    def refresh_pane(self, pane: StatePane) -> None:
        if pane.is_mounted:
            pane.show_state(self.ui_state())

    def set_current(self, memory_id: str, *, refresh_main: bool = True) -> None:
        """Make `memory_id` the memory the panes, pin and copy act on."""
        self.current_id = memory_id
        main = self.main()
        if main is None:
            return
        if refresh_main:
            self._refresh_detail(main)
        pane = main.pane_widget(main.active_pane())
        if pane is not None and pane.is_mounted and not isinstance(pane, VaultPane):
            self.refresh_pane(pane)

    def update_status(self) -> None:
        """Redraw the status line from the app's state (the controllers call it after a change)."""
        main = self.main()
        if main is None:
            return
        t = Text()
        self.agent.status_head(t)
        t.append_text(lit(self.vault_path.resolve().name, "bold", single_line=True))
        if self.vault is not None:
            t.append(f"  {len(self.vault.memories)} memories  {len(self.vault.problems)} problems")
        t.append(f"  {self.status_text}", style="dim")
        progress = self.opening.progress
        if progress is not None and progress[1]:
            done, total = progress
            t.append("  ▕", style="dim")
            t.append(progress_bar(done, total), style="cyan")
            t.append(f"▏ {done:,} / {total:,}", style="dim")
        if self.trace is not None:
            tr = self.trace
            t.append(f"  preset {tr.preset}  k {tr.k} ({self.k_source})  {len(tr.hits)} hits")
            if tr.cache_hit:
                t.append("  cache hit", style="bold green")
            if not self.stable_timings:
                t.append(f"  {tr.total_ms:.1f} ms", style="cyan")
                t.append(f" (worker {self.recalls.round_trip_ms:.0f} ms)", style="dim")
            emb = tr.vault.get("embedder")
            if emb:
                t.append(f"  embedder {one_line(emb, 30)}", style="dim")
        self.agent.status_tail(t)
        if self.pinned:
            t.append(f"  pinned {len(self.pinned)}", style="magenta")
        if self.recalls.stale_dropped and not self.stable_timings:
            t.append(f"  stale dropped {self.recalls.stale_dropped}", style="dim")
        shown = self.session.record_status(t)
        drawn = (id(main), shown.plain, tuple(shown.spans))
        if drawn != self._status_drawn:  # the line is one row high: no layout pass needed
            self._status_drawn = drawn
            main.query_one("#status", Static).update(shown, layout=False)
        preset_k = None
        if self.engine is not None:
            preset_k = self.recalls.engine_for(self.request.preset).config.k
        elif self.trace is not None:
            preset_k = self.trace.k
        if (preset_k, self.k_source) != self._k_drawn:  # a Label: redraw only on a change
            self._k_drawn = (preset_k, self.k_source)
            main.query_one(QueryBar).show_k(preset_k, self.k_source)

    # --- actions -------------------------------------------------------------------------------

    def action_errors(self) -> None:
        from recall_tui.tui.screens.errors import open_errors

        open_errors(self)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(all_bindings(self.settings.keymap), self.settings.source))

    def action_focus_query(self) -> None:
        """`/` from anywhere (and `escape` from any list): the query, its text kept (the
        cursor at its end, nothing selected, so typing adds to it)."""
        main = self.main()
        if main is None:
            return
        if self.screen is not main:  # a dialog: it owns its keys
            return
        field = main.query_one("#query", QueryField)
        field.focus()
        field.cursor_position = len(field.value)

    def action_setting(self, name: str) -> None:
        """Focus one field of the settings bar (`preset`, `k`, `now`, `as-of`, `type`): type
        the value; `enter` or `escape` goes back to the query, `tab` to the next setting."""
        main = self.main()
        if main is not None and self.screen is main:
            main.query_one(f"#{name}").focus()

    def action_toggle_setting(self, name: str) -> None:
        """Flip the `inbox` or `superseded` checkbox (the recall re-runs)."""
        main = self.main()
        if main is not None:
            main.query_one(f"#{name}", Checkbox).toggle()

    def action_toggle_verbosity(self) -> None:
        main = self.main()
        if main is not None:
            verbosity = "full" if self.request.verbosity == "lean" else "lean"
            main.query_one(QueryBar).set_verbosity(verbosity)

    def reload_presets(self) -> list[str]:
        """Re-read the presets the vault can see (one saved with `S` or by `recall-tui preset`,
        one deleted since) and offer them in the settings bar's select."""
        from recall_tui.engine.config import list_presets

        found = list_presets(self.vault_path) or ["default"]
        self.presets[:] = found
        engines = self.recalls.engines
        if engines is not None:
            engines.forget(set(engines.presets()) - set(found) - {self.request.preset})
        main = self.main()
        if main is not None:
            main.query_one(QueryBar).set_presets(found)
        return found

    def action_next_preset(self) -> None:
        self.reload_presets()
        self.set_preset(self.presets[(self.presets.index(self.request.preset) + 1)
                                     % len(self.presets)] if self.request.preset in self.presets
                        else self.presets[0])

    def set_preset(self, name: str) -> None:
        if name not in self.presets and name not in self.reload_presets():
            self.notify(f"preset {name!r} is gone (its file was removed)", severity="warning",
                        markup=False)
            return
        main = self.main()
        if main is not None:
            main.query_one(QueryBar).set_preset(name)

    def action_rerun(self) -> None:
        if self.recalls.engines is not None:
            self.recalls.engines.clear_caches()
        self.launch_recall()

    def action_toggle_record(self) -> None:
        self.session.toggle_record()

    def action_bug_report(self) -> None:
        self.session.bug_report()

    # --- tuning, judging, the editors (`TuningController`) ------------------------------------

    def action_tuning(self, tab: str = "tune-knobs") -> None:
        self.tuning.show(tab)

    def action_tune(self) -> None:
        self.tuning.tune()

    def action_reset_knobs(self) -> None:
        self.tuning.reset_knobs()

    def action_save_preset(self) -> None:
        self.tuning.save_preset()

    def action_judge(self) -> None:
        if self.agent.ready_to_judge():  # False (said) when the Agent pane has nothing to judge
            self.tuning.judge()

    def action_edit_recall_when(self) -> None:
        self.tuning.edit_recall_when()

    def action_open_editor(self) -> None:
        self.tuning.open_editor()

    def selected_hit(self) -> str | None:
        """The hit the user sees highlighted, what `J`, `E` and `e` act on: on the Agent pane
        the id under its side-by-side cursor, else `TuningController.hit_on_screen`."""
        pane = self.agent.pane_shown()
        if pane is not None:
            return pane.selected_hit()
        return self.tuning.hit_on_screen()

    # --- memories: pins, copies, opening (`memory_actions`) -----------------------------------

    def pin(self, memory_id: str) -> None:
        memory_actions.pin(self, memory_id)

    def unpin(self, memory_id: str) -> None:
        memory_actions.unpin(self, memory_id)

    def action_pin(self) -> None:
        memory_actions.pin_current(self)

    def action_pin_by_id(self) -> None:
        memory_actions.pin_by_id(self)

    def action_unpin_all(self) -> None:
        memory_actions.unpin_all(self)

    def action_copy(self, what: str) -> None:
        memory_actions.copy(self, what)

    def palette_commands(self) -> list[PaletteCommand]:
        return memory_actions.palette_commands(self)

    def run_query(self, text: str) -> None:
        memory_actions.run_query(self, text)

    def open_memory(self, memory_id: str, *, follow_results: bool = False) -> None:
        memory_actions.open_memory(self, memory_id, follow_results=follow_results)

    # --- the agent's recalls (`AgentFeed`) ----------------------------------------------------

    def action_judge_agent_recall(self) -> None:
        self.agent.judge_recall()

    def action_judge_query_set(self) -> None:
        self.agent.judge_query_set()


def _ranking(trace: Trace) -> tuple[str, ...]:
    return tuple(h.id for h in trace.hits)



def make_app(vault_path: str | Path, *, settings: Settings | None = None,
             preset: str | None = None, now: datetime | None = None, embedder: str | None = None,
             query: str = "", stable_timings: bool = False,
             engine: Engine | None = None) -> RecallApp:
    """Build the app with the presets the vault can see. Tests and screenshots use this too;
    they pass an already open `engine` (the real one) so one index serves many app runs."""
    from recall_tui.engine.config import list_presets

    presets = list_presets(vault_path) or ["default"]
    settings = settings or Settings()
    chosen = preset or settings.preset
    return RecallApp(vault_path, settings=settings, preset=chosen, now=now, embedder=embedder,
                     query=query, stable_timings=stable_timings, presets=presets, engine=engine)
