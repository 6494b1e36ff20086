"""Opening the vault in the UI, progressively: the screen is up at once, the status line
and the hits box say what is happening (reading, indexing the text, a bar while embedding),
the engine answers as soon as the text is indexed, and the results update when the vectors
arrive. The headless part is the engine's `recall_tui.engine.opening.open_progressive` (its
statuses arrive on the opening's own thread and hop to the UI's). `VaultOpener` is the
controller the app owns for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_tui.engine import Engine
from recall_tui.engine.engines import EngineSet
from recall_tui.engine.opening import OpenStatus
from recall_tui.tui.messages import EngineFailed, EngineReady, VectorsReady
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import bar

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp


class VaultOpener:
    """The vault's opening, a controller `RecallApp` owns (`app.opening`): it starts the
    engine's progressive open, draws its progress, and hands the engine over to the app when
    the app's `EngineReady` and `VectorsReady` handlers pass the messages on. Its own state is
    how far the opening got (`vectors_pending`, `progress`)."""

    def __init__(self, app: RecallApp) -> None:
        self.app = app
        self.vectors_pending = False
        """The engine answers but the index is still making its vectors (progressive open)."""
        self.progress: tuple[int, int] | None = None
        """(done, total) of the embedding while the vectors are made, else None."""
        self._in_memory_noted = False
        self.watch_when_opened = False
        """True while a progressive open runs: the watch starts once it is done (`opened`)."""

    def start(self) -> None:
        """Open the vault with the engine's progressive open (`open_progressive`): the UI is
        up from the start, the status line and the hits box say what is happening, and when
        vectors remain to be made the engine is handed over as soon as the text is indexed
        (`EngineReady(vectors_pending=True)`; keyword, fuzzy and topic answer, the vector
        stage skips with `embedding n / N`), then `VectorsReady` when the vectors exist."""
        from recall_tui.engine.opening import VaultOpening as EngineOpening

        app = self.app
        if app.given_engine is not None:
            app.run_worker(self._hand_over_given_engine, thread=True, exclusive=True,
                           group="engine")
            return
        handed: list[Engine] = []
        shown: list[tuple[str, int, int]] = []

        def on_status(st: OpenStatus) -> None:  # on the opening's own thread
            if st.usable and not handed and opening.engine is not None:
                handed.append(opening.engine)
                app.post_message(EngineReady(opening.engine, opening.engine.vault,
                                             opening.first_usable_ms or st.elapsed_ms,
                                             vectors_pending=opening.vectors_deferred))
            if st.phase == "failed":
                if handed:
                    app.post_message(VectorsReady(st.elapsed_ms, st.error))
                else:
                    app.post_message(EngineFailed(f"{app.vault_path}: {st.error}"))
            elif st.phase == "ready":
                index = opening.engine.index if opening.engine is not None else None
                if opening.vectors_deferred and index is not None:
                    app.post_message(VectorsReady(st.elapsed_ms, index.report.embed_error))
                elif handed:  # (no message: the vectors were there all along)
                    app.call_from_thread(self.opened)
            elif st.phase == "turns":
                return  # (after the hand-over: the turn stage's reason says it, not the bar)
            else:
                # At most ~100 updates a phase: each one waits for the UI thread.
                step = st.done * 100 // st.total if st.total else 0
                if shown and shown[-1] == (st.phase, step, st.total) and st.done != st.total:
                    return
                shown.append((st.phase, step, st.total))
                app.call_from_thread(self.show_progress, *_progress_args(st))

        self.watch_when_opened = True  # the turns phase runs after the hand-over
        opening = EngineOpening(app.vault_path, preset=app.request.preset,
                                embedder=app.embedder_kind, config=None, on_status=on_status,
                                engine_kw={})
        opening.start()

    def _hand_over_given_engine(self) -> None:
        """An engine given to `make_app`: handed over from a worker, as the message arrives
        after the first layout (the snapshots depend on that order)."""
        engine = self.app.given_engine
        if engine is not None:  # `start` runs this only then
            self.app.post_message(EngineReady(engine, engine.vault, 0.0))

    def show_progress(self, text: str, done: int = 0, total: int = 0) -> None:
        """Opening progress: a phase, or `embed` with counts (drawn as a bar)."""
        app = self.app
        if text == "embed" and total:
            self.progress = (done, total)
            app.status_text = "embedding"
        else:
            app.status_text = text + "…"
        app.update_status()
        self.hits_box_note()

    def hits_box_note(self) -> None:
        """While the vault opens, the (empty) hits box says what is happening."""
        app = self.app
        main = app.main()
        if main is None:
            return
        results = main.query_one(ResultsTable)
        if app.engine is None:
            results.border_title = f"hits · {app.status_text}"
            results.set_subtitle("the query runs when the text is indexed")
        elif self.progress is not None:
            done, total = self.progress
            results.border_title = "hits"
            results.set_subtitle(f"vectors: embedding {done:,} / {total:,} · keyword, "
                                 f"fuzzy and topic answer now")
        else:
            results.border_title = "hits"
            results.set_subtitle(None)

    def engine_ready(self, message: EngineReady) -> None:
        """The engine answers (the app's `EngineReady` handler): hand it to the app, run the
        query, warm up, and watch the vault once the vectors are there too."""
        app = self.app
        app.engine, app.vault = message.engine, message.vault
        app.recalls.attach(EngineSet.of(message.engine, root=app.vault_path))
        self.vectors_pending = message.vectors_pending
        app.status_text = "text indexed" if message.vectors_pending else "vault opened"
        if message.elapsed_ms and not app.stable_timings:
            app.status_text += f" in {message.elapsed_ms:.0f} ms"
        if message.vectors_pending and self.progress is None:
            self.progress = (0, 0)
        self._note_in_memory_index()
        self.hits_box_note()
        app.refresh_views()
        app.launch_recall()
        app.session.warm_up()
        if not message.vectors_pending and not self.watch_when_opened:
            app.tuning.start_watching()

    def opened(self) -> None:
        """The progressive open finished with no vectors to make (its turns phase ran after
        the hand-over): the engine set takes the vault the engine reads now (with the turns),
        and the vault is watched from here. Watching earlier would re-read every session log
        beside the turns phase (the watch begins with a re-read of the folder)."""
        app = self.app
        if app.recalls.engines is not None and app.engine is not None:
            app.recalls.engines.set_vault(app.engine.vault)
            app.vault = app.engine.vault
            app.session.warm_turns()  # the turn stage's structures, now that they exist
        app.tuning.start_watching()

    def vectors_ready(self, message: VectorsReady) -> None:
        """The vectors arrived (the app's `VectorsReady` handler): every preset's engine
        forgets its answers made without them and the query runs again, so the results update
        by themselves."""
        app = self.app
        self.vectors_pending = False
        self.progress = None
        if app.recalls.engines is not None and app.engine is not None:
            app.recalls.engines.set_vault(app.engine.vault)
            app.recalls.engines.vectors_changed()
        if message.error:
            app.status_text = "vectors unavailable"
            app.notify(message.error, title="vectors unavailable", severity="warning",
                       markup=False, timeout=15)
        else:
            app.status_text = "vectors ready"
            if not app.stable_timings:
                app.status_text += f" in {message.elapsed_ms / 1000:.1f} s"
        self._note_in_memory_index()
        self.hits_box_note()
        app.launch_recall()
        app.tuning.start_watching()

    def _note_in_memory_index(self) -> None:
        """Once per app: say that the index lives in memory for this run (its file could not
        be written). The report says so once the index is open, which may be only when the
        vectors are ready in a staged open."""
        index = getattr(self.app.engine, "index", None)
        if self._in_memory_noted or index is None:
            return
        if index.report.in_memory and index.report.location_note:
            self._in_memory_noted = True
            self.app.notify(index.report.location_note, title="index kept in memory",
                            severity="warning", markup=False, timeout=20)


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """`done / total` as a bar of eighth blocks, padded to `width` cells."""
    filled = bar(done, total, width) if done else ""
    return filled + " " * (width - len(filled))


def _progress_args(st: OpenStatus) -> tuple[str, int, int]:
    """A status of the engine's open as `VaultOpener.show_progress` arguments."""
    if st.phase == "embedding":
        return "embed", st.done, st.total
    if st.phase == "indexing":
        return f"indexing the text of {st.total:,} memories", 0, 0
    if st.phase == "reading":
        return "reading the vault", st.done, st.total
    return st.phase, 0, 0
