"""`recall-tui bench --tui`: keystroke to painted results, measured through the real app.

Lives in the front end (it drives Textual); the engine-side benchmark is `recall_tui.diagnostics.engine_bench`,
whose stand-in embedder and statistics it reuses.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from textual import events

from recall_tui.diagnostics.engine_bench_child import make_bench_embedder, stats
from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.index.store import Index
from recall_tui.tui.app import make_app
from recall_tui.tui.settings import Settings
from recall_tui.vault.reader import read_vault

#: Keystrokes timed per UI pass (typed one at a time, each waited for).
TUI_KEYSTROKES = 20

#: The passes: `paced` waits for each key's results before the next key (keystroke to
#: painted results); `burst` types a key every `BURST_INTERVAL_MS` without waiting (a fast
#: typist) and times from the last key to the paint of the final text's results.
MODES = ("paced", "burst")
BURST_INTERVAL_MS = 40

#: The phases of one keystroke, in order (see `_Clock`).
PHASES = ("input", "to_thread", "engine", "to_ui", "views", "paint")


def tui_keystroke_bench(vault_path: str | os.PathLike[str], *, embedder: str = "standin",
                        queries: Sequence[str], keystrokes: int = TUI_KEYSTROKES,
                        modes: Sequence[str] = MODES, preset: str = "default",
                        index_path: Path | None = None,
                        log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Keystroke to painted results in the real app, driven by Textual's test driver.

    The index is built in a temporary folder (the vault is not written). The queries are
    typed one key at a time through `run_test`, each key posted as the terminal driver posts
    it. In the `paced` pass each keystroke is timed from the post until the app has applied
    the recall for exactly that text (the `RecallDone` of the latest sequence number) and the
    screen has processed the refresh that draws it, and split into phases (`_Clock`). In the
    `burst` pass the keys of each query arrive every `BURST_INTERVAL_MS` regardless, and the
    time runs from the last key to the paint of the final text; it also counts the recall
    threads started. The driver is headless: each frame is still turned into the terminal
    output a real driver would write (`_write_frames`), only the write itself is left out;
    everything before it (engine, worker thread, message, widget updates, layout,
    compositing, the frame's escape sequences) is included.

    `index_path`: the index file to use (built there when missing, and kept), e.g. the one
    `bench --keep-index` kept for the same vault; else one is built in a temporary folder.
    On a vault with raw turns the turn channel is switched on, as the engine bench does.
    """
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"unknown UI bench mode(s) {bad}; known: {', '.join(MODES)}")
    vault = read_vault(vault_path, cache=True)  # (setup, not timed: 1M turns parse in ~1 min)
    emb = make_bench_embedder(embedder)
    text = ""
    typed: list[str] = []  # what to type: whole queries, cut at `keystrokes` keys
    for q in queries:
        if len(text) >= keystrokes:
            break
        part = q[: keystrokes - len(text)]
        typed.append(part)
        text += part
    out: dict[str, Any] = {"vault": str(vault_path), "memories": len(vault.memories),
                           "embedder": f"{emb.name} {emb.model}", "keystrokes": len(text),
                           "typed": typed, "driver": "textual run_test (headless)",
                           "burst_interval_ms": BURST_INTERVAL_MS, "passes": []}
    with tempfile.TemporaryDirectory(prefix="recall-bench-tui-") as tmp:
        path = index_path or Path(tmp) / "index.sqlite"
        log(("opening the index" if path.exists() else "building the index")
            + f" of {len(vault.memories)} memories and {len(vault.turns)} turns ({emb.name}) ...")
        index = Index.open(vault, emb, path=path)
        cfg = load_preset(preset, vault.root)
        if vault.turns and not cfg.turns.enabled:
            cfg = cfg.with_value("turns.enabled", True)
        out["turns"], out["turn_channel"] = len(vault.turns), cfg.turns.enabled
        engine = Engine(vault, index, cfg, preset=preset)
        for mode in modes:
            log(f"typing {len(text)} keys, {mode} ...")
            clocked = _ClockedEngine(engine)
            # the clocked stand-in has the engine's whole surface (it forwards every attribute)
            app = make_app(vault.root, settings=Settings(), engine=cast(Engine, clocked),
                           preset=preset)
            engine.clear_cache()  # every pass runs every recall (no cache hits)
            if mode == "paced":
                latencies, engine_ms, phases = asyncio.run(_type_and_time(app, typed, clocked))
                out["passes"].append({
                    "mode": mode, "latency_ms": stats(latencies),
                    "engine_total_ms": stats(engine_ms), "samples": latencies,
                    "phases_ms": {k: stats(v) for k, v in phases.items()}})
            else:
                latencies, engine_ms, runs = asyncio.run(_burst(app, typed))
                out["passes"].append({
                    "mode": mode, "latency_ms": stats(latencies),
                    "engine_total_ms": stats(engine_ms), "samples": latencies,
                    "keys": len(text), "recalls_started": runs})
    return out


class _ClockedEngine:
    """The bench's engine, unchanged, with the wall-clock start and end of each recall kept
    (for the phase split); everything else is the engine's own."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.started: float = 0.0
        self.ended: float = 0.0
        self.cpu_ms: float = 0.0
        """The recall thread's own CPU time in the last recall."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def recall(self, *args: Any, **kw: Any) -> Any:
        self.started = time.perf_counter()
        cpu = time.thread_time()
        try:
            return self._engine.recall(*args, **kw)
        finally:
            self.ended = time.perf_counter()
            self.cpu_ms = (time.thread_time() - cpu) * 1000


class _Clock:
    """Timestamps of one keystroke's way to the screen, taken by wrapping the app's methods
    on this instance: `input` key posted -> `request_recall` (the Input's change, the query
    bar's message, the screen's routing); `to_thread` -> the engine's recall starts in the
    worker thread; `engine` its run; `to_ui` -> the `RecallDone` handled (`show_answer` called);
    `views` the widgets updated (`refresh_views`, one figure per widget in `widgets`);
    `paint` -> the screen's next refresh done: the wait for the frame, layout if any,
    compositing, the frame's terminal output (`_write_frames`)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.marks: dict[str, float] = {}
        self.widgets: dict[str, float] = {}
        self.after: dict[str, Callable[[], None]] = {}
        """Called right after the wrapped method of that mark returns (on the UI thread)."""
        wrap = self._wrap
        wrap(app, "request_recall", "request")
        wrap(app, "show_answer", "apply")

    def _wrap(self, obj: Any, name: str, mark: str, *, widget: bool = False) -> None:
        inner = getattr(obj, name)

        def timed(*args: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            self.marks.setdefault(mark, t)
            try:
                return inner(*args, **kw)
            finally:
                if widget:
                    self.widgets[mark] = self.widgets.get(mark, 0.0) + (
                        time.perf_counter() - t) * 1000
                else:
                    self.marks.setdefault(mark + "_end", time.perf_counter())
                    hook = self.after.get(mark)
                    if hook is not None:
                        hook()

        setattr(obj, name, timed)

    def watch_widgets(self, main: Any) -> None:
        from recall_tui.tui.widgets.explain import ExplanationTree, StageDetail
        from recall_tui.tui.widgets.results import ResultsTable
        from recall_tui.tui.widgets.waterfall import Waterfall
        from recall_tui.tui.widgets.whynot import PinnedTable

        for cls in (Waterfall, ResultsTable, PinnedTable, ExplanationTree, StageDetail):
            self._wrap(main.query_one(cls), "show", cls.__name__, widget=True)
        self._wrap(self.app, "update_status", "status", widget=True)

    def reset(self) -> None:
        self.marks.clear()
        self.widgets.clear()


async def _type_and_time(app: Any, typed: Sequence[str], clocked: _ClockedEngine,
                         ) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """Type each query key by key; per key, ms from the key event to its results painted, the
    engine's own time for that recall, and the phases (see `_Clock`)."""
    latencies: list[float] = []
    engine_ms: list[float] = []
    phases: dict[str, list[float]] = {}
    async with app.run_test(size=(120, 36)) as pilot:
        _write_frames(app)
        await _opened(app, pilot)
        clock = _Clock(app)
        clock.watch_widgets(app.main())
        field = app.main().query_one("#query")
        for query in typed:
            field.value = ""
            field.focus()
            while app.recall_pending:
                await pilot.pause(0.01)
            await pilot.pause()
            for ch in query:
                before = app.recalls.seq
                clock.reset()
                painted = asyncio.get_running_loop().create_future()

                def applied(before: int = before, painted: Any = painted) -> None:
                    # the answer for this text (seq moved on, nothing pending) is on the
                    # widgets: wait for the refresh that draws it; no polling, so the bench
                    # takes no CPU from the app while it waits
                    if app.recalls.seq != before and not app.recall_pending and not painted.done():
                        app.screen.call_after_refresh(
                            lambda: painted.done() or painted.set_result(None))

                clock.after["apply"] = applied
                t0, cpu0 = time.perf_counter(), time.thread_time()
                # the key event as a terminal driver posts it (pilot.press would add the test
                # driver's own wait for the whole app to go idle, ~100-250 ms here)
                app.post_message(events.Key(ch, ch))
                await painted  # the refresh that draws the applied trace
                t_end = time.perf_counter()
                latencies.append((t_end - t0) * 1000)
                # CPU time, which a busy machine stretches far less than wall time: the UI
                # thread's from the key to the frame, the recall thread's for the recall
                phases.setdefault("cpu.ui_thread", []).append((time.thread_time() - cpu0) * 1000)
                phases.setdefault("cpu.recall_thread", []).append(clocked.cpu_ms)
                if app.trace is not None:
                    engine_ms.append(app.trace.total_ms)
                m = clock.marks
                if {"request", "apply", "apply_end"} <= m.keys():
                    points = [t0, m["request"], clocked.started, clocked.ended, m["apply"],
                              m["apply_end"], t_end]
                    for name, a, b in zip(PHASES, points, points[1:], strict=False):
                        phases.setdefault(name, []).append((b - a) * 1000)
                    for name, ms in clock.widgets.items():
                        phases.setdefault(f"views.{name}", []).append(ms)
    return latencies, engine_ms, phases


async def _burst(app: Any, typed: Sequence[str]) -> tuple[list[float], list[float], int]:
    """Type each query's keys every BURST_INTERVAL_MS without waiting; per query, ms from its
    last key to the paint of its results; and the recall threads started in all."""
    latencies: list[float] = []
    engine_ms: list[float] = []
    runs = 0
    async with app.run_test(size=(120, 36)) as pilot:
        _write_frames(app)
        await _opened(app, pilot)
        field = app.main().query_one("#query")
        for query in typed:
            field.value = ""
            field.focus()
            while app.recall_pending:
                await pilot.pause(0.01)
            await pilot.pause()
            runs_before = app.recalls.recall_runs
            for i, ch in enumerate(query):
                if i:
                    await asyncio.sleep(BURST_INTERVAL_MS / 1000)
                t0 = time.perf_counter()
                app.post_message(events.Key(ch, ch))
            while (app.request.query != query or app.recall_pending or app.trace is None
                   or app.trace.query != query):
                await asyncio.sleep(0.0005)
            await _next_paint(app)
            latencies.append((time.perf_counter() - t0) * 1000)
            engine_ms.append(app.trace.total_ms)
            runs += app.recalls.recall_runs - runs_before
    return latencies, engine_ms, runs


def _write_frames(app: Any) -> None:
    """Make the headless app turn each frame into the bytes a terminal driver would write.

    Textual's headless driver skips that step (`App._display` renders a frame's escape
    sequences only for a real driver), so without this the time would end before the frame
    exists as terminal output. Here every frame is rendered to its terminal sequence as
    `App._display` does it for a real terminal, and the bytes are dropped (nothing to write
    them to)."""
    from textual._compositor import CompositorUpdate

    inner = app._display

    def display(screen: Any, renderable: Any) -> None:
        inner(screen, renderable)
        if isinstance(renderable, CompositorUpdate) and not app._batch_count:
            app.bench_frame_bytes = len(renderable.render_segments(app.console))

    app._display = display


async def _opened(app: Any, pilot: Any) -> None:
    """Wait until the app has opened the vault and finished its warm-up (the embedder's model
    and the vector matrix loaded, see `SessionTools.warm_up`): a person reads the first
    screen before typing; the bench starts typing when that work is done."""
    while app.recall_pending or any(w.group == "warm" and not w.is_finished
                                    for w in app.workers):
        await pilot.pause(0.01)


async def _next_paint(app: Any) -> None:
    """Return once the screen has run its next refresh (layout, compositing, the frame and
    its terminal output)."""
    done = asyncio.get_running_loop().create_future()
    app.screen.call_after_refresh(lambda: done.done() or done.set_result(None))
    await done
