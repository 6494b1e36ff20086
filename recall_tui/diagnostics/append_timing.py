"""How long a session of raw turns appended to a live vault takes to reach the next recall.

Issue 24's figure: "appending one session of 200 turns to a live vault: visible to the next
recall within 1 s". The bench measures it as a user would see it, on a vault with turns: the
engine set watches the vault (as the TUI and the service do), a new session log is written
into `sessions/`, and the clock stops when a recall of a word only that session holds returns
one of its turns. The split says where the time went: the watcher's notice (its debounce
included), the new vault (`read_ms`: the patch with the changed files, `patched`, or the
re-read of the whole folder), the index update, the swap into the engines, and the recall
itself.

The session is removed again afterwards and the vault refreshed, so the synthetic vault the
bench keeps is left as it was.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recall_tui.engine import Engine
from recall_tui.engine.engines import EngineSet
from recall_tui.index.watch import ChangeSummary

#: Turns in the appended session (the issue's figure).
APPEND_TURNS = 200
#: How long to wait for the watcher before calling the append lost.
WAIT_S = 300.0


def user_turn(token: str) -> str:
    """The question every user turn of the appended session asks (`token` is a word nothing
    else in the vault has). The recall asks it word for word, so the turn channel finds it by
    its vector with stand-in vectors as well as with a real model."""
    return f"Where did we leave the {token} rollout plan?"


def _session_lines(token: str, turns: int) -> bytes:
    """A session log of `turns` turns; every user turn asks `user_turn(token)`."""
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    lines = []
    for seq in range(turns):
        role = "user" if seq % 2 == 0 else "assistant"
        text = (user_turn(token) if role == "user"
                else f"Turn {seq}: the rollout notes are in the deploy runbook.")
        lines.append(json.dumps({"seq": seq, "role": role, "text": text,
                                 "at": (start + timedelta(seconds=40 * seq)).isoformat()}))
    return ("\n".join(lines) + "\n").encode("utf-8")


def time_append(engine: Engine, *, turns: int = APPEND_TURNS, now: datetime | None = None,
                log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Append a session of `turns` turns to `engine`'s vault under a watch and time it until a
    recall returns one of them. The engine's vault must have raw turns (a `sessions/` folder)."""
    if not engine.config.turns.enabled:
        return {"turns": turns, "error": "the turn channel is off in this configuration"}
    root = Path(engine.vault.root)
    sessions = root / "sessions"
    token = f"zqappend{os.getpid()}x{int(time.time())}"
    session_id = f"bench-append-{token}"
    path = sessions / f"{session_id}.jsonl"
    data = _session_lines(token, turns)
    engines = EngineSet.of(engine)
    done = threading.Event()
    summaries: list[tuple[float, ChangeSummary]] = []

    def on_change(summary: ChangeSummary) -> None:
        summaries.append((time.perf_counter(), summary))
        if any(session_id in f for f in summary.files) or summary.added:
            done.set()

    log(f"appending a session of {turns} turns to a watched vault ...")
    engines.watch(on_change)
    result: dict[str, Any] = {"turns": turns, "session": path.name}
    try:
        # A live vault: the watch's catch-up (a read of the whole folder) has run.
        if not engines.watch_settled.wait(WAIT_S):
            result["error"] = f"the watch's first read did not finish within {WAIT_S:.0f} s"
            return result
        summaries.clear()
        done.clear()
        t0 = time.perf_counter()
        with open(path, "xb") as fh:
            fh.write(data)
        written = time.perf_counter()
        if not done.wait(WAIT_S):
            result["error"] = f"the watcher did not report {path.name} within {WAIT_S:.0f} s"
            return result
        seen_at, summary = summaries[-1]
        engine.clear_cache()
        trace = engine.recall(user_turn(token), now=now)
        recalled = time.perf_counter()
        found = [t for t in trace.turns if t.session_id == session_id]
        report = summary.index
        result.update({
            "visible_ms": (recalled - t0) * 1000,
            "write_ms": (written - t0) * 1000,
            "notice_and_refresh_ms": (seen_at - written) * 1000,
            "refresh_ms": summary.ms,
            "patched": summary.patched,
            "read_ms": summary.read_ms,
            "index_update_ms": getattr(report, "ms", None),
            "swap_ms": summary.swap_ms,
            "embed_ms": getattr(report, "embed_ms", None),
            "recall_ms": trace.total_ms,
            "debounce_ms": engines.watcher.debounce_ms if engines.watcher else None,
            "batches": len(summaries),
            "hits_from_session": len(found),
            "visible": bool(found),
        })
        if summary.error:
            result["error"] = summary.error
    finally:
        engines.stop_watching()
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        engines.refresh()  # the vault (and the index) as they were
    return result
