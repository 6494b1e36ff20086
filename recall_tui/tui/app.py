"""The live recall debugger: a Textual app over the headless engine.

The app owns the state (vault, engine, the latest trace, pins, session timings) and the two
workers: one opens the engine, one runs a recall. Each keystroke in the query re-runs the
pipeline after a short debounce in an exclusive thread worker that passes its cancel flag to
`Engine.recall`; results come back as `RecallDone` messages stamped with a sequence number and
an answer older than the latest request is dropped, so the input never waits for the engine.
`MainScreen` lays the widgets out and routes their messages; widgets draw what they are handed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Static
from textual.worker import get_current_worker

from recall_tui.engine.trace import Trace
from recall_tui.tui.agent_actions import AgentActions
from recall_tui.tui.commands import PaletteCommand, RecallCommands
from recall_tui.tui.keymap import all_bindings, display_keys, unknown_ids
from recall_tui.tui.messages import EngineFailed, EngineReady, RecallDone, RecallFailed
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.vault import VaultPane
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.screens.dialogs import HelpScreen, PinScreen
from recall_tui.tui.screens.main import MainScreen
from recall_tui.tui.session import SessionTools
from recall_tui.tui.settings import Settings
from recall_tui.tui.state import UIState
from recall_tui.tui.tuning_actions import TuningActions
from recall_tui.tui.widgets.explain import ExplanationTree, StageDetail
from recall_tui.tui.widgets.query_bar import ANY_TYPE, QueryBar, RecallRequest
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from recall_tui.vault.model import Vault


class RecallApp(AgentActions, TuningActions, SessionTools, App[None]):
    """recall-tui's terminal UI. Build it with `make_app` (tests use the same factory)."""

    CSS_PATH = "app.tcss"
    TITLE = "recall-tui"
    COMMANDS = App.COMMANDS | {RecallCommands}
    COMMAND_PALETTE_BINDING = "ctrl+p"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("slash", "focus_query", "Query", id="app.focus_query"),
        Binding("ctrl+p", "command_palette", "Palette", priority=True, id="app.palette"),
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
        Binding("S", "save_preset", "Save tuned preset", show=False, id="app.save_preset"),
        Binding("X", "reset_knobs", "Reset knobs", show=False, id="app.reset_knobs"),
        Binding("J", "judge", "Judge hit", show=False, id="app.judge"),
        Binding("E", "edit_recall_when", "Edit recall_when", show=False,
                id="app.recall_when"),
        Binding("e", "open_editor", "Open in $EDITOR", show=False, id="app.editor"),
    ]

    def __init__(self, vault_path: str | Path, *, settings: Settings | None = None,
                 preset: str | None = None, now: datetime | None = None,
                 embedder: str | None = None, query: str = "", stable_timings: bool = False,
                 presets: list[str] | None = None, engine: Any = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.vault_path = Path(vault_path)
        self.embedder_kind = embedder or self.settings.embedder
        self.stable_timings = stable_timings
        self.request = RecallRequest(query=query, preset=preset or self.settings.preset,
                                     k=self.settings.k, now=now,
                                     verbosity=self.settings.verbosity)
        self.presets = presets or [self.request.preset]
        self._given_engine = engine
        self.engine: Any = None
        self.vault: Vault | None = None
        self.trace: Trace | None = None
        self.previous: Trace | None = None
        self.current_id: str | None = None
        self.follow_results = True
        """The current memory is the hit under the results cursor (False after the user opened
        another memory from the vault browser or the palette)."""
        self.pinned: tuple[str, ...] = ()
        self.timings: dict[str, list[float]] = {}
        self.seq = 0
        """The latest recall asked for; a RecallDone with another seq is stale."""
        self.applied_seq = 0
        self.stale_dropped = 0
        self.round_trip_ms = 0.0
        """Wall time of the last applied recall as the worker measured it (engine + thread)."""
        self._debounce: Timer | None = None
        self._engines: dict[str, Any] = {}
        self.status_text = "opening vault…"

    # --- lifecycle ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        if self.settings.keymap:
            self.set_keymap(dict(self.settings.keymap))
            bad = unknown_ids(self.settings.keymap)
            if bad:
                self.notify(f"keymap: unknown binding id(s): {', '.join(bad)}",
                            severity="warning", markup=False, timeout=8)
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        else:
            self.notify(f"theme {self.settings.theme!r} is not a built-in theme",
                        severity="warning", markup=False)
        self.open_vault()

    def get_default_screen(self) -> Screen:
        return MainScreen(self.request, self.presets, self.stable_timings)

    @work(thread=True, exclusive=True, group="engine")
    def open_vault(self) -> None:
        """Read the vault and open the engine (it may build or update the index)."""
        from recall_tui.engine import open_engine

        t0 = time.perf_counter()
        if self._given_engine is not None:
            engine = self._given_engine
            self.post_message(EngineReady(engine, engine.vault, 0.0))
            return

        def progress(done: int, total: int, what: str) -> None:
            self.call_from_thread(self._progress, f"indexing: {what} {done}/{total}")

        try:
            engine = open_engine(self.vault_path, preset=self.request.preset,
                                 embedder=self.embedder_kind, progress=progress)
        except Exception as exc:  # shown to the user, with the cause
            self.post_message(EngineFailed(f"{self.vault_path}: {exc}"))
            return
        self.post_message(EngineReady(engine, engine.vault, (time.perf_counter() - t0) * 1000))

    def _progress(self, text: str) -> None:
        self.status_text = text
        self._set_status()

    def on_engine_ready(self, message: EngineReady) -> None:
        self.engine, self.vault = message.engine, message.vault
        self._engines = {message.engine.preset: message.engine}
        self.status_text = "vault opened"
        if message.elapsed_ms and not self.stable_timings:
            self.status_text += f" in {message.elapsed_ms:.0f} ms"
        self.refresh_views()
        self.launch_recall()
        self.warm_up()
        self.start_watching()

    def on_engine_failed(self, message: EngineFailed) -> None:
        self.status_text = "cannot open the vault"
        self._set_status()
        self.notify(message.reason, title="cannot open the vault", severity="error",
                    markup=False, timeout=30)

    # --- recall --------------------------------------------------------------------------------

    def request_recall(self, request: RecallRequest, *, typed: bool) -> None:
        """A new request from the bars: debounce keystrokes, run other changes at once."""
        self.request = request
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if typed and self.settings.debounce_ms > 0:  # 0: every keystroke runs at once
            self._debounce = self.set_timer(self.settings.debounce_ms / 1000, self.launch_recall)
        else:
            self.launch_recall()

    def launch_recall(self) -> None:
        """Start a recall of the current request (replacing any that is running)."""
        self._debounce = None
        if self.engine is None:
            return
        self.seq += 1
        if not self.request.query.strip():
            self._apply(None)
            return
        self.run_recall(self.seq, self.request, self.pinned)

    def _engine_for(self, preset: str) -> Any:
        """The engine running `preset`: one per preset, sharing the vault and its index."""
        engine = self._engines.get(preset)
        if engine is None:
            from recall_tui.engine import Engine
            from recall_tui.engine.config import load_preset

            base = self.engine
            engine = Engine(base.vault, base.index, load_preset(preset, self.vault_path),
                            preset=preset)
            self._engines[preset] = engine
        return engine

    @staticmethod
    def _recall_filters(request: RecallRequest) -> Any:
        """The per-call filters the settings bar asks for (None = as the preset says)."""
        from recall_tui.engine import Filters

        return Filters(
            types=() if request.type_filter == ANY_TYPE else (request.type_filter,),
            include_inbox=True if request.include_inbox else None,
            include_superseded=True if request.include_superseded else None)

    @work(thread=True, exclusive=True, group="recall")
    def run_recall(self, seq: int, request: RecallRequest, why: tuple[str, ...]) -> None:
        """Run one recall in a thread; a newer request cancels it between stages."""
        from recall_tui.engine import Cancelled

        worker = get_current_worker()
        t0 = time.perf_counter()
        try:
            trace = self._engine_for(request.preset).recall(
                request.query, k=request.k, now=request.now, as_of=request.as_of,
                why=list(why), verbosity=request.verbosity, filters=self._recall_filters(request),
                cancel=lambda: worker.is_cancelled)
        except Cancelled:
            return
        except Exception as exc:  # the engine promises not to raise; if it does, show it
            self.post_message(RecallFailed(seq, f"{type(exc).__name__}: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(RecallDone(seq, trace, (time.perf_counter() - t0) * 1000))

    def on_recall_done(self, message: RecallDone) -> None:
        if message.seq != self.seq:
            self.stale_dropped += 1
            return
        self.round_trip_ms = message.elapsed_ms
        for s in message.trace.stages:
            if not s.skipped:
                self.timings.setdefault(s.name, []).append(s.ms)
        self.record(message.trace)  # first, so the status line drawn by _apply counts it
        self._apply(message.trace)

    def on_recall_failed(self, message: RecallFailed) -> None:
        if message.seq == self.seq:
            self.applied_seq = message.seq
            self.status_text = "recall failed"
            self._set_status()
            self.notify(message.error, title="recall failed", severity="error", markup=False)

    def _apply(self, trace: Trace | None) -> None:
        if trace is not None:
            self.previous = self.trace
        self.trace = trace
        self.applied_seq = self.seq
        self.refresh_views()

    @property
    def recall_pending(self) -> bool:
        """True while a recall is waiting for its debounce or running (tests and screenshots
        wait for this to turn False before they look at the screen)."""
        return self.engine is None or self._debounce is not None or self.applied_seq != self.seq

    # --- state -> views ------------------------------------------------------------------------

    def ui_state(self) -> UIState:
        engine, index = self.engine, getattr(self.engine, "index", None)
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
        results.show(trace, self.previous, self.request.verbosity)
        if self.follow_results and results.current_id() is not None:
            self.current_id = results.current_id()
        main.query_one(PinnedTable).show(self.pinned, trace, self.vault)
        self._refresh_detail(main)
        pane = main.pane_widget(main.active_pane())
        if pane is not None and pane.is_mounted:
            self.refresh_pane(pane)
        self._set_status()

    def _refresh_detail(self, main: MainScreen) -> None:
        trace = self.trace
        hit = trace.hit(self.current_id) if (trace and self.current_id) else None
        main.query_one(ExplanationTree).show(hit)
        detail = main.query_one(StageDetail)
        stage_name = None
        wf = main.query_one(Waterfall)
        if main.query_one("#detail", ContentSwitcher).current == "stage-detail" and wf.row_count:
            stage_name = wf.coordinate_to_cell_key(wf.cursor_coordinate).row_key.value
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

    def _set_status(self) -> None:
        main = self.main()
        if main is None:
            return
        t = Text()
        self.agent_status_head(t)
        t.append_text(lit(self.vault_path.resolve().name, "bold", single_line=True))
        if self.vault is not None:
            t.append(f"  {len(self.vault.memories)} memories  {len(self.vault.problems)} problems")
        t.append(f"  {self.status_text}", style="dim")
        if self.trace is not None:
            tr = self.trace
            t.append(f"  preset {tr.preset}  k {tr.k}  {len(tr.hits)} hits")
            if tr.cache_hit:
                t.append("  cache hit", style="bold green")
            if not self.stable_timings:
                t.append(f"  {tr.total_ms:.1f} ms", style="cyan")
                t.append(f" (worker {self.round_trip_ms:.0f} ms)", style="dim")
            emb = tr.vault.get("embedder")
            if emb:
                t.append(f"  embedder {one_line(emb, 30)}", style="dim")
        self.agent_status_tail(t)
        if self.pinned:
            t.append(f"  pinned {len(self.pinned)}", style="magenta")
        if self.stale_dropped and not self.stable_timings:
            t.append(f"  stale dropped {self.stale_dropped}", style="dim")
        main.query_one("#status", Static).update(self.record_status(t))

    # --- actions -------------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(all_bindings(self.settings.keymap), self.settings.source))

    def action_focus_query(self) -> None:
        main = self.main()
        if main is not None:
            main.query_one("#query").focus()

    def pin(self, memory_id: str) -> None:
        """Pin a memory: every recall from now on says where it fell out (or where it ranked)."""
        if memory_id in self.pinned:
            self.notify(f"already pinned: {memory_id}", markup=False)
            return
        self.pinned = (*self.pinned, memory_id)
        self.notify(f"pinned {memory_id}", markup=False)
        self.launch_recall()
        main = self.main()
        if main is not None:
            main.query_one(PinnedTable).show(self.pinned, self.trace, self.vault)
            self._set_status()

    def unpin(self, memory_id: str) -> None:
        self.pinned = tuple(p for p in self.pinned if p != memory_id)
        self.launch_recall()
        self.refresh_views()

    def action_pin(self) -> None:
        if self.current_id:
            self.pin(self.current_id)
        else:
            self.notify("nothing to pin: highlight a hit or a memory in the vault browser")

    def action_pin_by_id(self) -> None:
        ids = sorted(self.vault.memories) if self.vault else []

        def done(result: str | None) -> None:
            if result:
                self.pin(result)

        self.push_screen(PinScreen(ids), done)

    def action_unpin_all(self) -> None:
        self.pinned = ()
        self.launch_recall()
        self.refresh_views()

    def action_copy(self, what: str) -> None:
        """Copy the current memory's id, its file text, or the trace as JSON."""
        if what == "trace":
            if self.trace is None:
                self.notify("no trace to copy yet")
                return
            self.copy_to_clipboard(self.trace.to_json(indent=2))
            self.notify("copied the trace JSON")
            return
        memory = self.vault.get(self.current_id) if (self.vault and self.current_id) else None
        if memory is None:
            self.notify("no memory selected")
            return
        if what == "id":
            self.copy_to_clipboard(memory.id)
            self.notify(f"copied id {memory.id}", markup=False)
        else:
            self.copy_to_clipboard((Path(self.vault.root) / memory.path).read_text("utf-8"))
            self.notify(f"copied the text of {memory.id}", markup=False)

    def action_toggle_verbosity(self) -> None:
        main = self.main()
        if main is not None:
            verbosity = "full" if self.request.verbosity == "lean" else "lean"
            main.query_one(QueryBar).set_verbosity(verbosity)

    def action_next_preset(self) -> None:
        self.set_preset(self.presets[(self.presets.index(self.request.preset) + 1)
                                     % len(self.presets)] if self.request.preset in self.presets
                        else self.presets[0])

    def set_preset(self, name: str) -> None:
        main = self.main()
        if main is not None:
            main.query_one(QueryBar).set_preset(name)

    def action_rerun(self) -> None:
        for engine in self._engines.values():
            engine.clear_cache()
        self.launch_recall()

    def palette_commands(self) -> list[PaletteCommand]:
        """Everything the palette offers: every bound action, presets, per-memory pin/open."""
        out: list[PaletteCommand] = []
        main = self.main()
        for b in all_bindings(self.settings.keymap):
            if b.where in ("help", "pin dialog") or b.id == "app.palette":
                continue
            target = self if b.where == "global" else main
            if b.where in ("global", "main screen") and target is not None:
                action = next(x.action for x in type(target).BINDINGS
                              if isinstance(x, Binding) and x.id == b.id)
                out.append(PaletteCommand(f"{b.description} ({display_keys(b.keys)})", f"binding {b.id}",
                                          _runner(target, action)))
        for name in self.presets:
            out.append(PaletteCommand(f"Preset: {name}", "re-run the query with this preset",
                                      lambda n=name: self.set_preset(n)))
        out.append(PaletteCommand("Verbosity: lean/full", "toggle the results' payloads",
                                  self.action_toggle_verbosity))
        for mid in self.pinned:
            out.append(PaletteCommand(f"Unpin {one_line(mid, 60)}", "stop asking about it",
                                      lambda m=mid: self.unpin(m)))
        if self.vault is not None:
            for m in self.vault.memories.values():
                label = f"{one_line(m.id, 50)} — {one_line(m.title, 60)}"
                out.append(PaletteCommand(f"Pin {label}", "ask every recall why it is missing",
                                          lambda i=m.id: self.pin(i), discover=False))
                out.append(PaletteCommand(f"Open {label}", "show it in the memory pane",
                                          lambda i=m.id: self.open_memory(i), discover=False))
        return out

    def open_memory(self, memory_id: str, *, follow_results: bool = False) -> None:
        """Show `memory_id` in the memory pane. Unless it came from the results table, the
        panes stay on it when a new recall redraws the table."""
        self.follow_results = follow_results
        self.set_current(memory_id)
        main = self.main()
        if main is not None:
            main.action_show_pane("memory")


def _runner(target: Any, action: str) -> Callable[[], object]:
    """A callable running `action` (as written in a Binding) on `target`."""
    return lambda: target.run_action(action)


def make_app(vault_path: str | Path, *, settings: Settings | None = None,
             preset: str | None = None, now: datetime | None = None, embedder: str | None = None,
             query: str = "", stable_timings: bool = False, engine: Any = None) -> RecallApp:
    """Build the app with the presets the vault can see. Tests and screenshots use this too;
    they pass an already open `engine` (the real one) so one index serves many app runs."""
    from recall_tui.engine.config import list_presets

    presets = list_presets(vault_path) or ["default"]
    settings = settings or Settings()
    chosen = preset or settings.preset
    return RecallApp(vault_path, settings=settings, preset=chosen, now=now, embedder=embedder,
                     query=query, stable_timings=stable_timings, presets=presets, engine=engine)
