"""Running recalls for the UI: at once, one thread at a time, only the newest request waiting.

A request (a keystroke, a setting, a pin) runs a recall at once when no recall thread runs.
While one runs, the newest request waits in a single slot and the running recall is cancelled
at its next stage boundary (its answer would be stale); the thread's closing `RecallFinished`
starts the waiting request. Answers carry the request's sequence number; an older one is
dropped. So typing is never delayed on an idle machine, a burst of keys costs at most two
recalls, and no pile of cancelled threads competes for the CPU.

`RecallController` is that scheduler, an object the app owns (`app.recalls`); it also holds
the vault's `EngineSet` (one engine per preset) and is what panes and actions ask for an
engine (`engine_for`) and for the settings bar's filters (`recall_filters`). The app's message
handlers hand the worker's messages to it; it hands answers back through `RecallHost`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from textual.message import Message
from textual.worker import get_current_worker

from recall_tui.engine import Engine, Filters
from recall_tui.engine.engines import EngineSet
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


class RecallHost(Protocol):
    """What the controller uses of the app that owns it (`RecallApp`)."""

    request: RecallRequest
    """The request on screen (the bars), what `launch` recalls."""
    pinned: tuple[str, ...]
    """The ids asked "why not?" for, passed to every recall."""
    timings: dict[str, list[float]]
    """The session's stage times (`add_timings`)."""
    trace: Trace | None
    """The trace on screen."""

    def post_message(self, message: Message) -> bool: ...

    def run_worker(self, work: Callable[[], None], *, group: str = ..., exclusive: bool = ...,
                   thread: bool = ...) -> Any: ...

    def record(self, trace: Trace) -> None:
        """Append an applied recall to the recording, if one is on."""

    def show_answer(self, trace: Trace | None) -> None:
        """Put `trace` on screen (None: no query)."""

    def show_recall_failed(self, error: str) -> None:
        """Say that the current request's recall raised."""


class RecallController:
    """The app's recall scheduler and its engines (see the module docstring)."""

    def __init__(self, host: RecallHost) -> None:
        self._host = host
        self.engines: EngineSet | None = None
        """The vault's engines, one per preset (None until the vault is open)."""
        self.seq = 0
        """The latest recall asked for; a RecallDone with another seq is stale."""
        self.applied_seq = 0
        """The seq of the answer on screen (== `seq`: nothing pending)."""
        self.stale_dropped = 0
        """Answers dropped because a newer request came first."""
        self.round_trip_ms = 0.0
        """Wall time of the last applied recall as the worker measured it (engine + thread)."""
        self.recall_runs = 0
        """Recall threads started (tests check that a burst of keys costs few of them)."""
        self._running_seq: int | None = None
        self._queued = False

    # --- engines ------------------------------------------------------------------------------

    def attach(self, engines: EngineSet) -> None:
        """The vault is open: recall with these engines from now on."""
        self.engines = engines

    @property
    def ready(self) -> bool:
        """True once the vault's engines are there."""
        return self.engines is not None

    def engine_for(self, preset: str) -> Engine:
        """The engine running `preset`: one per preset, sharing the vault and its index.
        Raises ValueError for an unknown preset, RuntimeError before the vault is open."""
        if self.engines is None:
            raise RuntimeError("the vault is not open yet")
        return self.engines.for_preset(preset)

    @staticmethod
    def recall_filters(request: RecallRequest) -> Filters:
        """The per-call filters the settings bar asks for (None = as the preset says)."""
        return Filters(
            types=() if request.type_filter == ANY_TYPE else (request.type_filter,),
            include_inbox=True if request.include_inbox else None,
            include_superseded=True if request.include_superseded else None)

    # --- scheduling -----------------------------------------------------------------------------

    @property
    def trace(self) -> Trace | None:
        """The trace on screen."""
        return self._host.trace

    @property
    def running_seq(self) -> int | None:
        """The seq of the recall whose thread is running (None when no thread runs)."""
        return self._running_seq

    @property
    def pending(self) -> bool:
        """True until the answer to the current request is on screen."""
        return self.engines is None or self.applied_seq != self.seq

    def launch(self) -> None:
        """Recall the host's current request: at once when no recall thread runs; otherwise
        cancel the running one (it stops at its next stage boundary; its answer would be
        stale) and leave this request waiting: `finished` starts it as soon as that thread
        ends. Only the newest request waits, so a burst of keys costs at most two recalls
        and never runs two threads side by side."""
        if self.engines is None:
            return
        self.seq += 1
        if not self._host.request.query.strip():
            self._queued = False
            self.apply(None)
            return
        if self._running_seq is not None:
            self._queued = True
            return
        self._start()

    def apply(self, trace: Trace | None) -> None:
        """Show `trace` as the answer to the current request."""
        self.applied_seq = self.seq
        self._host.show_answer(trace)

    def cancel_pending(self) -> None:
        """A trace no recall of ours made (a recorded agent recall) is going on screen: drop
        any recall on its way (its answer would replace it) and count the screen answered."""
        self.seq += 1
        self.applied_seq = self.seq

    def _start(self) -> None:
        self._queued = False
        self._running_seq = self.seq
        self.recall_runs += 1
        seq, request, why = self.seq, self._host.request, self._host.pinned
        self._host.run_worker(lambda: self._run(seq, request, why), thread=True,
                              exclusive=False, group="recall")

    def _run(self, seq: int, request: RecallRequest, why: tuple[str, ...]) -> None:
        """Run one recall in a thread; a newer request (`seq` moved on) cancels it between
        stages. Always ends by posting `RecallFinished`, which starts the next one."""
        from recall_tui.engine import Cancelled

        worker = get_current_worker()
        t0 = time.perf_counter()
        post = self._host.post_message

        def cancelled() -> bool:
            return worker.is_cancelled or self.seq != seq

        try:
            trace = self.engine_for(request.preset).recall(
                request.query, k=request.k, now=request.now, as_of=request.as_of,
                why=list(why), verbosity=request.verbosity, filters=self.recall_filters(request),
                cancel=cancelled)
        except Cancelled:
            pass
        except Exception as exc:  # the engine promises not to raise; if it does, show it
            post(RecallFailed(seq, f"{type(exc).__name__}: {exc}"))
        else:
            if not cancelled():
                post(RecallDone(seq, trace, (time.perf_counter() - t0) * 1000))
        finally:
            post(RecallFinished(seq))

    # --- the worker's messages (the app's handlers hand them on) ----------------------------------

    def finished(self, message: RecallFinished) -> None:
        """The recall thread ended (answered, failed or cancelled): run the waiting request."""
        if message.seq != self._running_seq:
            return
        self._running_seq = None
        if self._queued and self.applied_seq != self.seq and self.engines is not None:
            self._start()
        self._queued = False

    def done(self, message: RecallDone) -> None:
        """An answer: shown when it is the current request's, else dropped."""
        if message.seq != self.seq:
            self.stale_dropped += 1
            return
        self.round_trip_ms = message.elapsed_ms
        add_timings(self._host.timings, message.trace)
        self._host.record(message.trace)  # first, so the status line drawn by apply counts it
        self.apply(message.trace)

    def failed(self, message: RecallFailed) -> None:
        """The engine raised: said when it was the current request's recall."""
        if message.seq == self.seq:
            self.applied_seq = message.seq
            self._host.show_recall_failed(message.error)
