"""Opening the vault in the UI, progressively: the screen is up at once, the status line
and the hits box say what is happening (reading, indexing the text, a bar while embedding),
the engine answers as soon as the text is indexed, and the results update when the vectors
arrive. The headless part is the engine's `recall_tui.engine.opening.open_progressive` (its
statuses arrive on the opening's own thread and hop to the UI's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from recall_tui.engine.engines import EngineSet
from recall_tui.engine.opening import OpenStatus
from recall_tui.tui.messages import EngineFailed, EngineReady, VectorsReady
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import bar

if TYPE_CHECKING:
    from recall_tui.tui.recalling import RecallController


class VaultOpening:
    """The RecallApp's opening worker and the handlers of its messages (a mixin: the state it
    reads and sets lives on the app)."""

    recalls: RecallController
    """The app's recall controller (`RecallApp.recalls`): the open engine goes there."""

    def open_vault(self) -> None:
        """Open the vault with the engine's progressive open (`open_progressive`): the UI is
        up from the start, the status line and the hits box say what is happening, and when
        vectors remain to be made the engine is handed over as soon as the text is indexed
        (`EngineReady(vectors_pending=True)`; keyword, fuzzy and topic answer, the vector
        stage skips with `embedding n / N`), then `VectorsReady` when the vectors exist."""
        from recall_tui.engine.opening import VaultOpening as EngineOpening

        if self._given_engine is not None:
            self._hand_over_given_engine()
            return
        handed: list[Any] = []
        shown: list[tuple[str, int, int]] = []

        def on_status(st: OpenStatus) -> None:  # on the opening's own thread
            if st.usable and not handed and opening.engine is not None:
                handed.append(opening.engine)
                self.post_message(EngineReady(opening.engine, opening.engine.vault,
                                              opening.first_usable_ms or st.elapsed_ms,
                                              vectors_pending=opening.vectors_deferred))
            if st.phase == "failed":
                if handed:
                    self.post_message(VectorsReady(st.elapsed_ms, st.error))
                else:
                    self.post_message(EngineFailed(f"{self.vault_path}: {st.error}"))
            elif st.phase == "ready":
                if opening.vectors_deferred:
                    self.post_message(VectorsReady(st.elapsed_ms,
                                                   opening.engine.index.report.embed_error))
            else:
                # At most ~100 updates a phase: each one waits for the UI thread.
                step = st.done * 100 // st.total if st.total else 0
                if shown and shown[-1] == (st.phase, step, st.total) and st.done != st.total:
                    return
                shown.append((st.phase, step, st.total))
                self.call_from_thread(self._progress, *_progress_args(st))

        opening = EngineOpening(self.vault_path, preset=self.request.preset,
                                embedder=self.embedder_kind, config=None, on_status=on_status,
                                engine_kw={})
        opening.start()

    @work(thread=True, exclusive=True, group="engine")
    def _hand_over_given_engine(self) -> None:
        """An engine given to `make_app`: handed over from a worker, as the message arrives
        after the first layout (the snapshots depend on that order)."""
        engine = self._given_engine
        self.post_message(EngineReady(engine, engine.vault, 0.0))

    def _progress(self, text: str, done: int = 0, total: int = 0) -> None:
        """Opening progress: a phase, or `embed` with counts (drawn as a bar)."""
        if text == "embed" and total:
            self.open_progress = (done, total)
            self.status_text = "embedding"
        else:
            self.status_text = text + "…"
        self._set_status()
        self._hits_box_note()

    def _hits_box_note(self) -> None:
        """While the vault opens, the (empty) hits box says what is happening."""
        main = self.main()
        if main is None:
            return
        results = main.query_one(ResultsTable)
        if self.engine is None:
            results.border_title = f"hits · {self.status_text}"
            results.set_subtitle("the query runs when the text is indexed")
        elif self.open_progress is not None:
            done, total = self.open_progress
            results.border_title = "hits"
            results.set_subtitle(f"vectors: embedding {done:,} / {total:,} · keyword, "
                                 f"fuzzy and topic answer now")
        else:
            results.border_title = "hits"
            results.set_subtitle(None)

    def on_engine_ready(self, message: EngineReady) -> None:
        self.engine, self.vault = message.engine, message.vault
        self.recalls.attach(EngineSet.of(message.engine, root=self.vault_path))
        self.vectors_pending = message.vectors_pending
        self.status_text = "text indexed" if message.vectors_pending else "vault opened"
        if message.elapsed_ms and not self.stable_timings:
            self.status_text += f" in {message.elapsed_ms:.0f} ms"
        if message.vectors_pending and self.open_progress is None:
            self.open_progress = (0, 0)
        self._note_in_memory_index()
        self._hits_box_note()
        self.refresh_views()
        self.launch_recall()
        self.warm_up()
        if not message.vectors_pending:
            self.start_watching()

    def on_vectors_ready(self, message: VectorsReady) -> None:
        """The vectors arrived: every preset's engine forgets its answers made without them
        and the query runs again, so the results update by themselves."""
        self.vectors_pending = False
        self.open_progress = None
        if self.recalls.engines is not None:
            self.recalls.engines.set_vault(self.engine.vault)
            self.recalls.engines.vectors_changed()
        if message.error:
            self.status_text = "vectors unavailable"
            self.notify(message.error, title="vectors unavailable", severity="warning",
                        markup=False, timeout=15)
        else:
            self.status_text = "vectors ready"
            if not self.stable_timings:
                self.status_text += f" in {message.elapsed_ms / 1000:.1f} s"
        self._note_in_memory_index()
        self._hits_box_note()
        self.launch_recall()
        self.start_watching()

    def _note_in_memory_index(self) -> None:
        """Once per app: say that the index lives in memory for this run (its file could not
        be written). The report says so once the index is open, which may be only when the
        vectors are ready in a staged open."""
        index = getattr(self.engine, "index", None)
        if getattr(self, "_in_memory_noted", False) or index is None:
            return
        if index.report.in_memory and index.report.location_note:
            self._in_memory_noted = True
            self.notify(index.report.location_note, title="index kept in memory",
                        severity="warning", markup=False, timeout=20)


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """`done / total` as a bar of eighth blocks, padded to `width` cells."""
    filled = bar(done, total, width) if done else ""
    return filled + " " * (width - len(filled))


def _progress_args(st: OpenStatus) -> tuple[str, int, int]:
    """A status of the engine's open as `_progress` arguments."""
    if st.phase == "embedding":
        return "embed", st.done, st.total
    if st.phase == "indexing":
        return f"indexing the text of {st.total:,} memories", 0, 0
    if st.phase == "reading":
        return "reading the vault", st.done, st.total
    return st.phase, 0, 0
