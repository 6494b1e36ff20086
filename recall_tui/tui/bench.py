"""`recall-tui bench --tui`: keystroke to painted results, measured through the real app.

Lives in the front end (it drives Textual); the engine-side benchmark is `recall_tui.diagnostics.bench`,
whose stand-in embedder and statistics it reuses.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textual import events

from recall_tui.diagnostics.bench import make_bench_embedder, stats
from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.index.store import Index
from recall_tui.tui.app import make_app
from recall_tui.tui.settings import Settings
from recall_tui.vault.reader import read_vault

#: Keystrokes timed per UI pass (typed one at a time, each waited for).
TUI_KEYSTROKES = 20


def tui_keystroke_bench(vault_path: str | os.PathLike[str], *, embedder: str = "standin",
                        queries: Sequence[str], keystrokes: int = TUI_KEYSTROKES,
                        debounces: Sequence[int] = (0, 80), preset: str = "default",
                        log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Keystroke to painted results in the real app, driven by Textual's test driver.

    The index is built in a temporary folder (the vault is not written). For each debounce
    setting, the queries are typed one key at a time through `run_test` + `pilot.press`; each
    keystroke is timed from the press until the app has applied the recall for exactly that
    text (the `RecallDone` of the latest sequence number) and the screen has processed the
    refresh that draws it. The driver is headless, so the time to emit the frame to a real
    terminal is not included; everything before it (engine, worker thread, message, widget
    updates, layout and compositing) is.
    """
    vault = read_vault(vault_path)
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
                           "passes": []}
    with tempfile.TemporaryDirectory(prefix="recall-bench-tui-") as tmp:
        log(f"building the index of {len(vault.memories)} memories ({emb.name}) ...")
        index = Index.open(vault, emb, path=Path(tmp) / "index.sqlite")
        engine = Engine(vault, index, load_preset(preset, vault.root), preset=preset)
        for debounce in debounces:
            log(f"typing {len(text)} keys with debounce {debounce} ms ...")
            app = make_app(vault.root, settings=Settings(debounce_ms=debounce), engine=engine,
                           preset=preset)
            engine.clear_cache()  # every pass runs every recall (no cache hits)
            latencies, engine_ms = asyncio.run(_type_and_time(app, typed))
            out["passes"].append({"debounce_ms": debounce, "latency_ms": stats(latencies),
                                  "engine_total_ms": stats(engine_ms), "samples": latencies})
    return out


async def _type_and_time(app: Any, typed: Sequence[str]) -> tuple[list[float], list[float]]:
    """Type each query key by key; per key, ms from the key event to its results painted, and
    the engine's own time for that recall."""
    latencies: list[float] = []
    engine_ms: list[float] = []
    async with app.run_test(size=(120, 36)) as pilot:
        while app.recall_pending:
            await pilot.pause(0.01)
        field = app.main().query_one("#query")
        for query in typed:
            field.value = ""
            field.focus()
            while app.recall_pending:
                await pilot.pause(0.01)
            await pilot.pause()
            for ch in query:
                before = app.seq
                t0 = time.perf_counter()
                # the key event as a terminal driver posts it (pilot.press would add the test
                # driver's own wait for the whole app to go idle, ~100-250 ms here)
                app.post_message(events.Key(ch, ch))
                # the recall for this text was launched (seq moved on) and its answer applied
                while app.seq == before or app.recall_pending:
                    await asyncio.sleep(0.0005)
                await _next_paint(app)  # the refresh that draws the applied trace
                latencies.append((time.perf_counter() - t0) * 1000)
                if app.trace is not None:
                    engine_ms.append(app.trace.total_ms)
    return latencies, engine_ms


async def _next_paint(app: Any) -> None:
    """Return once the screen has run its next refresh (layout, compositing, the frame)."""
    done = asyncio.get_running_loop().create_future()
    app.screen.call_after_refresh(lambda: done.done() or done.set_result(None))
    await done
