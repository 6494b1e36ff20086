"""Session tools of the live app: recording recalls, the bug-report action, the warm start.

`SessionTools` is a controller the app owns (`app.session`), with the recording, the last
report and the warm-up time as its state: the app calls `record(trace)` for every recall it
applies, `record_status(text)` when it draws the status line, and `warm_up()` once the engine
is open; the app's `R` and `B` actions call `toggle_record()` and `bug_report()`. The headless parts (`Recorder`,
`build_report`, `write_report`) do the work; this module only wires them to keys and threads.
"""

from __future__ import annotations

import gc
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from recall_tui.diagnostics.recording import Recorder
from recall_tui.engine.trace import Trace
from recall_tui.tui.safe import one_line

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp

#: From this many memories the warm-up moves the objects made so far out of the garbage
#: collector's reach (see `SessionTools.warm_up`).
FREEZE_MIN_MEMORIES = 2000

#: Warm repeats the bug-report action measures: enough for a median, quick enough to wait for.
REPORT_REPEAT = 10


class SessionTools:
    """Record toggle, bug report and warm start: a controller `RecallApp` owns."""

    def __init__(self, app: RecallApp) -> None:
        self.app = app
        self.recorder: Recorder | None = None
        """The open (or last) recording; None until the first toggle."""
        self.last_report: tuple[Path, Path] | None = None
        """The Markdown and JSON paths of the last bug report written."""
        self.warm_ms: float | None = None
        """How long warming the embedder took (None until it finished)."""

    # --- recording ---------------------------------------------------------------------------

    def toggle_record(self) -> None:
        """Start a new recording under `.recall/recordings/`, or stop the running one."""
        app = self.app
        if self.recorder is not None and self.recorder.active:
            path = self.recorder.stop()
            app.notify(f"recording stopped: {self.recorder.count} trace(s) in {path}",
                       title="recording", markup=False, timeout=8)
        else:
            self.recorder = Recorder(app.vault_path)
            try:
                path = self.recorder.start()
            except OSError as exc:
                self.recorder = None
                app.notify(f"cannot start a recording in {app.vault_path}: {exc}",
                           severity="error", markup=False)
                return
            app.notify(f"recording every recall to {path}", title="recording", markup=False)
        app.update_status()

    def record(self, trace: Trace) -> None:
        """Append an applied (completed, non-stale) recall to the recording, if one is on."""
        if self.recorder is None or not self.recorder.active:
            return
        try:
            self.recorder.append(trace)
        except OSError as exc:
            self.recorder.stop()
            self.app.notify(f"recording stopped: cannot write {self.recorder.path}: {exc}",
                            severity="error", markup=False)

    def record_status(self, status: Text) -> Text:
        """`status` led by `● REC n traces path` while recording (first, so a narrow terminal
        never cuts it off)."""
        rec = self.recorder
        if rec is None or not rec.active or rec.path is None:
            return status
        root = Path(self.app.vault_path)
        try:
            shown = str(rec.path.relative_to(root))
        except ValueError:
            shown = str(rec.path)
        t = Text()
        t.append(f"● REC {rec.count} trace{'s' if rec.count != 1 else ''} ", style="bold red")
        t.append(one_line(shown, 60), style="red")
        t.append("  ")
        t.append_text(status)
        return t

    # --- bug report --------------------------------------------------------------------------

    def bug_report(self) -> None:
        """Build a bug report for the current query (in a thread: it re-runs the query)."""
        app = self.app
        query = app.request.query
        if app.engine is None:
            app.notify("the vault is not open yet")
            return
        if not query.strip():
            app.notify("type a query first: the report is about one query")
            return
        app.notify(f"building a bug report for {one_line(query, 60)!s} "
                   f"({REPORT_REPEAT} warm runs)…", markup=False)
        app.run_worker(partial(self._build_bug_report, query), thread=True, exclusive=True,
                       group="report")

    def _build_bug_report(self, query: str) -> None:
        """Run `build_report`, write the Markdown and JSON twins, copy the Markdown."""
        from recall_tui.diagnostics.report import (
            REPORTS_DIR,
            build_report,
            render_markdown,
            write_report,
        )

        app = self.app
        try:
            engine = app.recalls.engine_for(app.request.preset)
            r = app.request  # exactly what is on screen: k, as-of, filters, pins, verbosity
            report = build_report(engine, query, REPORT_REPEAT, r.now, k=r.k, as_of=r.as_of,
                                  why=list(app.pinned), filters=app.recalls.recall_filters(r),
                                  verbosity=r.verbosity, warm_process=True)
            md, js = write_report(report, Path(app.vault_path) / REPORTS_DIR)
            text = render_markdown(report)
        except Exception as exc:  # shown to the user, with the cause
            app.call_from_thread(app.notify, f"bug report failed: {type(exc).__name__}: {exc}",
                                 severity="error", markup=False)
            return
        app.call_from_thread(self._report_written, md, js, text)

    def _report_written(self, md: Path, js: Path, markdown: str) -> None:
        app = self.app
        self.last_report = (md, js)
        app.copy_to_clipboard(markdown)
        app.notify(f"{md}\n{js}\nThe Markdown is on the clipboard.", title="bug report written",
                   markup=False, timeout=12)

    # --- warm start --------------------------------------------------------------------------

    def warm_up(self) -> None:
        """In a thread (one at a time): `_warm_up`."""
        self.app.run_worker(self._warm_up, thread=True, exclusive=True, group="warm")

    def warm_turns(self) -> None:
        """In a thread: `_warm_turns` (a progressive open's turns phase is done)."""
        self.app.run_worker(self._warm_turns, thread=True, exclusive=True, group="warm-turns",
                            exit_on_error=False)

    def _warm_turns(self) -> None:
        """The turn stage's structures (the turns' codes, the turns by id), when the preset
        has the turn channel on and the turns are indexed."""
        engine = self.app.engine
        index = engine.index if engine is not None else None
        if engine is None or index is None or not engine.config.turns.enabled:
            return
        try:
            if not index.turns_pending() and not index.turns_error():
                index.turn_codes()
                engine.turns_by_id()
        except Exception:  # the turn stage reports it with its reason on the next recall
            return

    def _warm_up(self) -> None:
        """Make now, in a thread, while the user reads the first screen, what the first
        recalls would otherwise make while the user waits.

        - The embedder's model: the local embedder creates its ONNX session on the first
          `embed` (0.6-1 s).
        - The vector search's matrix: the first vector search loads every stored vector
          (with its tie order and norms) from the index: about half a second at 10k
          memories, paid by the third keystroke before (the vector stage skips shorter
          queries). The index's lock makes a recall that arrives meanwhile wait for this
          load rather than make it twice.
        - Then, when the preset's floor is calibrated, the floor's calibration (the vault's
          term statistics and the off-topic probes' best evidence over every memory,
          `calibration.probe_bests`, memoised in the engine): 1-4 s of CPU at 10k memories,
          which the first keystroke with a vector search paid (it made the 95th percentile
          of keystroke to paint ten times the median). Built here, not by a recall: a
          recall would count as one of the app's.
        - Then what the first keystrokes of a large vault built (issue 24, 100k memories):
          the turn layout of the speaker, window and hop2 stages (every memory's speaker:
          0.4 s of CPU, paid by the first query with a candidate), and the fuzzy channel's
          vocabulary, in-memory bm25 and its most frequent words' postings
          (`FtsSearch.warm`: a word being typed is completed to common words, whose first
          load cost 50-300 ms); with the turn channel on and the turns indexed, the turns'
          codes (6-7 s of CPU at a million turns, paid by the first keystroke). A progressive
          open indexes the turns after the hand-over: `warm_turns` then.
        - Then, for a large vault, the objects made so far (the vault, the index's
          structures) are moved out of the garbage collector's reach (`gc.freeze`): a full
          collection walked them all, 100-300 ms at 10k memories, stopping the UI and the
          recall thread alike at a random keystroke.

        Failures are left for the recall to report (it says why the vector channel did not
        run).
        """
        from recall_tui.engine import calibration
        from recall_tui.engine.stages import turn_layout

        engine = self.app.engine
        index = engine.index if engine is not None else None
        if engine is None or index is None:
            return
        t0 = time.perf_counter()
        try:
            vec = index.embed_query("warm up")
            if vec is not None:
                index.vector_search(vec, 1)
            # (not while a progressive open still embeds: the calibration is made again
            # from the vectors when they arrive)
            if engine.config.floor.calibrated and not self.app.opening.vectors_pending:
                calibration.probe_bests(engine)
            cfg = engine.config
            if cfg.speaker.enabled or cfg.window.enabled or cfg.hop2.enabled:
                turn_layout.layout(engine)
            if cfg.fuzzy.enabled and cfg.fuzzy.porter:
                index.keyword.warm()
            self._warm_turns()
        except Exception:  # the first recall reports an unusable embedder with its reason
            return
        finally:
            vault = getattr(engine, "vault", None)
            if vault is not None and len(vault.memories) >= FREEZE_MIN_MEMORIES:
                gc.freeze()
        self.warm_ms = (time.perf_counter() - t0) * 1000
