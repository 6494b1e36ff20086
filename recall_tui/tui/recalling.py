"""Running recalls for the UI: at once, one thread at a time, only the newest request waiting.

A request (a keystroke, a setting, a pin) runs a recall at once when no recall thread runs.
While one runs, the newest request waits in a single slot and the running recall is cancelled
at its next stage boundary (its answer would be stale); the thread's closing `RecallFinished`
starts the waiting request. Answers carry the request's sequence number; an older one is
dropped. So typing is never delayed on an idle machine, a burst of keys costs at most two
recalls, and no pile of cancelled threads competes for the CPU.
"""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.worker import get_current_worker

from recall_tui.engine.trace import Trace
from recall_tui.tui.messages import RecallDone, RecallFailed, RecallFinished
from recall_tui.tui.widgets.query_bar import ANY_TYPE, RecallRequest


def add_timings(timings: dict[str, list[float]], trace: Trace) -> None:
    """Add the stage times `trace` measured to the session's `timings`. A cache hit's later
    stages are the cached run's records (`StageRecord.cached`): their ms were counted when
    that run was, so they are not added again (they would count one run twice and skew p50
    and p95); the stages the hit itself ran (parse, the cache lookup) are."""
    for s in trace.stages:
        if not s.skipped and not s.cached:
            timings.setdefault(s.name, []).append(s.ms)


class RecallRunner:
    """The RecallApp's recall scheduling and worker (a mixin: `seq`, `applied_seq`, `request`,
    `pinned`, `engine` and the rest live on the app)."""

    def request_recall(self, request: RecallRequest, *, typed: bool) -> None:
        """A new request from the bars (typed or not): run it now, or, while a recall runs,
        keep it as the one to run next (see `launch_recall`)."""
        if request.k != self.request.k:
            self.k_source = "typed" if request.k is not None else "preset"
        self.request = request
        self.launch_recall()

    def launch_recall(self) -> None:
        """Recall the current request: at once when no recall thread runs; otherwise cancel
        the running one (it stops at its next stage boundary; its answer would be stale) and
        leave this request waiting: `on_recall_finished` starts it as soon as that thread
        ends. Only the newest request waits, so a burst of keys costs at most two recalls
        and never runs two threads side by side."""
        if self.engine is None:
            return
        self.seq += 1
        if not self.request.query.strip():
            self._queued = False
            self._apply(None)
            return
        if self._running_seq is not None:
            self._queued = True
            return
        self._start_recall()

    def _start_recall(self) -> None:
        self._queued = False
        self._running_seq = self.seq
        self.recall_runs += 1
        self.run_recall(self.seq, self.request, self.pinned)

    def on_recall_finished(self, message: RecallFinished) -> None:
        """The recall thread ended (answered, failed or cancelled): run the waiting request."""
        if message.seq != self._running_seq:
            return
        self._running_seq = None
        if self._queued and self.applied_seq != self.seq and self.engine is not None:
            self._start_recall()
        self._queued = False

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

    @work(thread=True, exclusive=False, group="recall")
    def run_recall(self, seq: int, request: RecallRequest, why: tuple[str, ...]) -> None:
        """Run one recall in a thread; a newer request (`self.seq` moved on) cancels it
        between stages. Always ends by posting `RecallFinished`, which starts the next one."""
        from recall_tui.engine import Cancelled

        worker = get_current_worker()
        t0 = time.perf_counter()

        def cancelled() -> bool:
            return worker.is_cancelled or self.seq != seq

        try:
            trace = self._engine_for(request.preset).recall(
                request.query, k=request.k, now=request.now, as_of=request.as_of,
                why=list(why), verbosity=request.verbosity, filters=self._recall_filters(request),
                cancel=cancelled)
        except Cancelled:
            pass
        except Exception as exc:  # the engine promises not to raise; if it does, show it
            self.post_message(RecallFailed(seq, f"{type(exc).__name__}: {exc}"))
        else:
            if not cancelled():
                self.post_message(RecallDone(seq, trace, (time.perf_counter() - t0) * 1000))
        finally:
            self.post_message(RecallFinished(seq))

    def on_recall_done(self, message: RecallDone) -> None:
        if message.seq != self.seq:
            self.stale_dropped += 1
            return
        self.round_trip_ms = message.elapsed_ms
        add_timings(self.timings, message.trace)
        self.record(message.trace)  # first, so the status line drawn by _apply counts it
        self._apply(message.trace)

    def on_recall_failed(self, message: RecallFailed) -> None:
        if message.seq == self.seq:
            self.applied_seq = message.seq
            self.status_text = "recall failed"
            self._set_status()
            self.notify(message.error, title="recall failed", severity="error", markup=False)
