"""The golden tab of the tuning pane: the judged queries (the vault's golden.jsonl or another
file) scored under the starting and the tuned configuration (`recall_tui.tuning.golden`:
`run_golden`, `compare_runs`, the figures `recall-tui eval` prints), re-scored in a debounced
worker when a knob changes.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.widgets import Input, Static, TabbedContent
from textual.worker import get_current_worker

from recall_tui.engine.config import Config
from recall_tui.tui.panes.tuning.base import TuningBase
from recall_tui.tui.panes.tuning.common import (
    BADGE_STYLE,
    GOLDEN_DEBOUNCE_S,
    GOLDEN_K,
    _fig,
)
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.vim import VimTable

#: Where `J` keeps its judgements when no queries file is loaded: inside the tool's own
#: folder, the only place it writes in a vault.
JUDGED = Path(".recall") / "golden.jsonl"


def default_queries_file(root: Path) -> Path:
    """The vault's judged queries: `.recall/golden.jsonl` once `J` has written there, else
    the vault's `golden.jsonl` (the user's own file, which the UI reads and never writes)."""
    judged = root / JUDGED
    return judged if judged.exists() or not (root / "golden.jsonl").exists() else \
        root / "golden.jsonl"


class GoldenTab(TuningBase):
    """The golden set's figures and per-query badges."""

    # --- golden ------------------------------------------------------------------------------------

    def queries_file(self) -> Path:
        """The judged queries the golden tab shows: the file loaded there, else the vault's
        own (`default_queries_file`: what the tune runs on, and where `J` writes)."""
        if self.golden_source is not None:
            return self.golden_source
        engine = self.recall_app.engine
        root = engine.vault.root if engine is not None else self.recall_app.vault_path
        return default_queries_file(Path(root))

    def schedule_golden(self, *, force: bool = False) -> None:
        """Re-score the golden set after a short pause (a burst of knob changes runs once)."""
        if force:
            self._golden_key = None
        if self._golden_timer is not None:
            self._golden_timer.stop()
        self.golden_busy = True
        self._golden_timer = self.set_timer(GOLDEN_DEBOUNCE_S, self._start_golden)

    def _start_golden(self) -> None:
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        self._golden_timer = None
        app = self.recall_app
        if app.engine is None or self.config is None or self.base is None:
            self.golden_busy = False
            return
        engine = app.recalls.engine_for(app.request.preset)
        path = self.queries_file()
        self.golden_path = path
        try:
            digest = file_hash(path)
            if digest is None and self.golden_source is not None:
                raise FileNotFoundError("no such file")
        except OSError as exc:  # a chosen file that is missing, a folder, unreadable
            reason = exc.strerror or str(exc)
            self._golden_unusable(f"{path}: cannot read it: {reason}")
            return
        key = (self.config.hash(), self.base.hash(), engine.fingerprint, digest, app.request.now)
        if key == self._golden_key:
            self.golden_busy = False
            return
        self.golden_hash = digest
        self.golden_error = None
        if digest is None:
            self.golden_queries = []
            self.golden_current = self.golden_baseline = None
            self.golden_busy = False
            self._draw_golden()
            return
        try:
            self.golden_queries = read_golden(path)
        except UnicodeDecodeError as exc:
            self._golden_unusable(f"{path}: not UTF-8 text (byte {exc.start})")
            return
        except ValueError as exc:  # GoldenError: file:line: reason
            self._golden_unusable(str(exc))
            return
        if not self.golden_queries:
            self._golden_unusable(f"{path}: no judged queries in it (one JSON object a line: "
                                  '{"query": ..., "relevant": {id: grade}})')
            return
        self._draw_runs()  # the judged column depends on the golden set
        if not self.golden_visible():  # scored when the golden tab is shown
            self.golden_busy = False
            return
        self._golden_key = key
        now = app.request.now or datetime.now(timezone.utc)
        self._run_golden(engine, list(self.golden_queries), self.base, self.config, now,
                         (self.base.hash(), engine.fingerprint, digest))

    @work(thread=True, exclusive=True, group="golden")
    def _run_golden(self, engine: Any, queries: list[Any], base: Config, config: Config,
                    now: datetime, base_key: tuple[str, str, str | None]) -> None:
        from recall_tui.engine import Cancelled
        from recall_tui.tuning.golden import run_golden

        worker = get_current_worker()
        cancel = lambda: worker.is_cancelled  # noqa: E731 - handed down to the engine
        try:
            baseline = self._baseline_cache.get(base_key)
            if baseline is None:
                baseline = run_golden(engine, queries, base, k=GOLDEN_K, now=now,
                                      label=f"start ({self.base_name})", cancel=cancel)
            current = baseline if config.hash() == base.hash() else run_golden(
                engine, queries, config, k=GOLDEN_K, now=now, label="tuned", cancel=cancel)
        except Cancelled:
            return
        except Exception as exc:  # shown in the pane
            self.app.call_from_thread(self._golden_failed, f"{type(exc).__name__}: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._golden_done, base_key, baseline, current)

    def _golden_unusable(self, error: str) -> None:
        self.golden_queries = []
        self.golden_current = self.golden_baseline = None
        self._golden_key = None
        self.golden_error = error
        self.golden_busy = False
        self._draw_golden()

    @on(Input.Submitted, "#golden-file")
    def _golden_file(self, event: Input.Submitted) -> None:
        """Load another queries file (a path, `~` allowed; relative to the working folder,
        else to the vault); an empty field goes back to the vault's golden.jsonl."""
        event.stop()
        self.load_golden_file(event.value)
        self.query_one("#golden-table").focus()  # the path is typed: keys go to the list

    def load_golden_file(self, text: str) -> None:
        """Score the golden set of the file at `text` (empty: the vault's golden.jsonl)."""
        text = text.strip()
        if not text:
            self.golden_source = None
        else:
            path = Path(text).expanduser()
            if not path.is_absolute() and not path.exists():
                path = Path(self.recall_app.vault_path) / path
            self.golden_source = path
        self.schedule_golden(force=True)

    def golden_visible(self) -> bool:
        """The golden tab is on screen (the set is only re-scored then: it is ~2 recalls per
        judged query)."""
        main = self.recall_app.main()
        return (main is not None and main.active_pane() == "tuning"
                and self.query_one("#tuning-tabs", TabbedContent).active == "tune-golden")

    @on(TabbedContent.TabActivated, "#tuning-tabs")
    def _inner_tab(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if event.pane.id == "tune-side":  # a preset saved (S) since is a choice now
            self._fill_side_select()
        if event.pane.id == "tune-golden":
            self.schedule_golden()

    def _golden_failed(self, error: str) -> None:
        self.golden_busy = self._golden_timer is not None
        self.golden_error = error
        self._draw_golden()

    def _golden_done(self, base_key: tuple[str, str, str | None], baseline: Any,
                     current: Any) -> None:
        self._baseline_cache = {base_key: baseline}
        self.golden_baseline, self.golden_current = baseline, current
        self.golden_busy = self._golden_timer is not None
        self._draw_golden()

    def _draw_golden(self) -> None:
        from recall_tui.tuning.golden import compare_runs

        summary = self.query_one("#golden-summary", Static)
        table = self.query_one("#golden-table", VimTable)
        table.clear()
        if self.golden_error:
            summary.update(Text(self.golden_error, style="bold red"))
            return
        if self.golden_hash is None:
            summary.update(Text("no golden.jsonl in this vault: add judged queries (one JSON "
                                "object a line, see docs/evaluation.md), or judge a hit with J",
                                style="yellow"))
            return
        cur, base = self.golden_current, self.golden_baseline
        if cur is None or base is None:
            summary.update(Text("scoring the golden set…", style="dim"))
            return
        from recall_tui.tui.panes.tuning.evidence import EvidenceChart
        self.query_one("#golden-evidence", EvidenceChart).show(cur)  # issue 20
        cmp = compare_runs(cur, base)
        t = Text()
        t.append(f"{len(cur.queries)} judged queries, k={cur.k}, start = {self.base_name}, "
                 f"from {self.golden_source or 'golden.jsonl'}\n", style="bold")
        for name, label in (("recall", f"recall@{cur.k}"), ("mrr", "MRR"),
                            ("ndcg", f"nDCG@{cur.k}")):
            b, c, d = base.means.get(name), cur.means.get(name), cmp.mean_deltas.get(name)
            t.append(f"{label} {_fig(b)} → {_fig(c)} ")
            t.append(f"({'' if d is None or d < 0 else '+'}{_fig(d)})  ",
                     style="green" if d and d > 0 else "red" if d and d < 0 else "dim")
        t.append(f"\nbetter {cmp.better}  worse {cmp.worse}  same {cmp.same}")
        summary.update(t)
        for q, badge in zip(cur.queries, cmp.badges, strict=True):
            nb, nc = badge.baseline.metrics.get("ndcg"), badge.current.metrics.get("ndcg")
            table.add_row(Text(str(q.line), justify="right"),
                          Text(badge.badge, style=BADGE_STYLE.get(badge.badge, "")),
                          Text(f"{_fig(nb)} → {_fig(nc)}"),
                          Text(_fig(badge.current.metrics.get("recall"))),
                          Text(str(len(badge.current.unjudged)), justify="right"),
                          lit(q.query, single_line=True), key=f"line{q.line}")

    @on(VimTable.RowSelected, "#golden-table")
    def _run_golden_query(self, event: VimTable.RowSelected) -> None:
        """Enter on a golden query runs it in the Recall pane."""
        event.stop()
        for q in self.golden_queries:
            if f"line{q.line}" == event.row_key.value:
                self.recall_app.run_query(q.query)
                return
