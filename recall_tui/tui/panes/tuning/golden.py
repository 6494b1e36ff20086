"""The golden tab of the tuning pane: the judged queries (the vault's golden.jsonl or another
file) scored under the starting and the tuned configuration (`recall_tui.tuning.golden`:
`run_golden`, `compare_runs`, the figures `recall-tui eval` prints), re-scored in a debounced
worker when a knob changes. The tab owns the golden set's state; the pane asks it for the
queries file and the judgements the knobs tab's judged column shows.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from recall_tui.engine.config import Config
from recall_tui.tui.figures import change_figures
from recall_tui.tui.panes.tuning.common import (
    BADGE_STYLE,
    GOLDEN_DEBOUNCE_S,
    GOLDEN_K,
    _fig,
)
from recall_tui.tui.panes.tuning.evidence import EvidenceChart
from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import VimTable

# Where the judged queries are: the tuning layer's one rule (`eval`, `tune`, `errors` and the
# gate read the same file).
from recall_tui.tuning.golden import default_queries_file

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.pane import TuningPane


class GoldenTab(Vertical):
    """The golden set's figures and per-query badges."""

    def __init__(self, pane: TuningPane) -> None:
        super().__init__()
        self.pane = pane
        self.busy = False
        """A golden run is waiting for its debounce or under way."""
        self.path: Path | None = None
        """The queries file last scored."""
        self.source: Path | None = None
        """Another queries file loaded in this tab (None: the vault's golden.jsonl)."""
        self.file_hash: str | None = None
        """sha256 of the queries file as last read (the stamp `mark_relevant` checks)."""
        self.queries: list[Any] = []
        self.current: Any = None
        """The golden run under the tuned configuration."""
        self.baseline: Any = None
        """The golden run under the starting configuration."""
        self.error: str | None = None
        self._baseline_cache: dict[tuple[str, str, str | None], Any] = {}
        self._timer: Timer | None = None
        self._key: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Input(id="golden-file", placeholder="another queries file (JSONL): type "
                    "its path, enter; empty + enter: the vault's golden.jsonl")
        yield Static(id="golden-summary")
        yield EvidenceChart(id="golden-evidence")  # issue 20: the floor on the evidence
        yield VimTable(id="golden-table", flex=("query",))

    def on_mount(self) -> None:
        gt = self.query_one("#golden-table", VimTable)
        for label in ("line", "badge", "nDCG start→now", "recall", "unjudged", "query"):
            gt.add_column(label)

    # --- golden ------------------------------------------------------------------------------------

    def queries_file(self) -> Path:
        """The judged queries the golden tab shows: the file loaded there, else the vault's
        own (`recall_tui.tuning.golden.default_queries_file`, what `eval` and the tune read:
        `.recall/golden.jsonl`, where `J` writes, once it exists)."""
        if self.source is not None:
            return self.source
        app = self.pane.recall_app
        root = app.engine.vault.root if app.engine is not None else app.vault_path
        return default_queries_file(Path(root))

    def judgement_for(self, query: str) -> dict[str, int] | None:
        """The golden judgements of `query`, None when the golden set does not hold it."""
        for q in self.queries:
            if q.query == query:
                return dict(q.relevant)
        return None

    def schedule(self, *, force: bool = False) -> None:
        """Re-score the golden set after a short pause (a burst of knob changes runs once)."""
        if force:
            self._key = None
        if self._timer is not None:
            self._timer.stop()
        self.busy = True
        self._timer = self.set_timer(GOLDEN_DEBOUNCE_S, self._start)

    def _start(self) -> None:
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        self._timer = None
        app = self.pane.recall_app
        config, base = self.pane.config, self.pane.base
        if app.engine is None or config is None or base is None:
            self.busy = False
            return
        engine = app.recalls.engine_for(app.request.preset)
        path = self.queries_file()
        self.path = path
        try:
            digest = file_hash(path)
            if digest is None and self.source is not None:
                raise FileNotFoundError("no such file")
        except OSError as exc:  # a chosen file that is missing, a folder, unreadable
            reason = exc.strerror or str(exc)
            self._golden_unusable(f"{path}: cannot read it: {reason}")
            return
        key = (config.hash(), base.hash(), engine.fingerprint, digest, app.request.now)
        if key == self._key:
            self.busy = False
            return
        self.file_hash = digest
        self.error = None
        if digest is None:
            self.queries = []
            self.current = self.baseline = None
            self.busy = False
            self._draw()
            return
        try:
            self.queries = read_golden(path)
        except UnicodeDecodeError as exc:
            self._golden_unusable(f"{path}: not UTF-8 text (byte {exc.start})")
            return
        except ValueError as exc:  # GoldenError: file:line: reason
            self._golden_unusable(str(exc))
            return
        if not self.queries:
            self._golden_unusable(f"{path}: no judged queries in it (one JSON object a line: "
                                  '{"query": ..., "relevant": {id: grade}})')
            return
        self.pane.golden_loaded()  # the judged column depends on the golden set
        if not self.is_shown():  # scored when the golden tab is shown
            self.busy = False
            return
        self._key = key
        now = app.request.now or datetime.now(timezone.utc)
        self._run_golden(engine, list(self.queries), base, config, now,
                         (base.hash(), engine.fingerprint, digest))

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
                                      label=f"start ({self.pane.base_name})", cancel=cancel)
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
        self.queries = []
        self.current = self.baseline = None
        self._key = None
        self.error = error
        self.busy = False
        self._draw()

    @on(Input.Submitted, "#golden-file")
    def _golden_file(self, event: Input.Submitted) -> None:
        """Load another queries file (a path, `~` allowed; relative to the working folder,
        else to the vault); an empty field goes back to the vault's golden.jsonl."""
        event.stop()
        self.load_file(event.value)
        self.query_one("#golden-table").focus()  # the path is typed: keys go to the list

    def load_file(self, text: str) -> None:
        """Score the golden set of the file at `text` (empty: the vault's golden.jsonl)."""
        text = text.strip()
        if not text:
            self.source = None
        else:
            path = Path(text).expanduser()
            if not path.is_absolute() and not path.exists():
                path = Path(self.pane.recall_app.vault_path) / path
            self.source = path
        self.schedule(force=True)

    def is_shown(self) -> bool:
        """The golden tab is on screen (the set is only re-scored then: it is ~2 recalls per
        judged query)."""
        return self.pane.tab_shown("tune-golden")

    def _golden_failed(self, error: str) -> None:
        self.busy = self._timer is not None
        self.error = error
        self._draw()

    def _golden_done(self, base_key: tuple[str, str, str | None], baseline: Any,
                     current: Any) -> None:
        self._baseline_cache = {base_key: baseline}
        self.baseline, self.current = baseline, current
        self.busy = self._timer is not None
        self._draw()

    def _draw(self) -> None:
        from recall_tui.tuning.golden import compare_runs

        summary = self.query_one("#golden-summary", Static)
        table = self.query_one("#golden-table", VimTable)
        table.clear()
        if self.error:
            summary.update(Text(self.error, style="bold red"))
            return
        if self.file_hash is None:
            summary.update(Text("no golden.jsonl in this vault: add judged queries (one JSON "
                                "object a line, see docs/evaluation.md), or judge a hit with J",
                                style="yellow"))
            return
        cur, base = self.current, self.baseline
        if cur is None or base is None:
            summary.update(Text("scoring the golden set…", style="dim"))
            return
        self.query_one("#golden-evidence", EvidenceChart).show(cur)  # issue 20
        cmp = compare_runs(cur, base)
        t = Text()
        t.append(f"{len(cur.queries)} judged queries, k={cur.k}, start = {self.pane.base_name}, "
                 f"from {self.source or 'golden.jsonl'}\n", style="bold")
        for name, label in (("recall", f"recall@{cur.k}"), ("mrr", "MRR"),
                            ("ndcg", f"nDCG@{cur.k}")):
            b, c, d = base.means.get(name), cur.means.get(name), cmp.mean_deltas.get(name)
            fb, fc, fd = change_figures(b, c, d)  # one precision: the three agree
            t.append(f"{label} {fb} → {fc} ")
            t.append(f"({fd})  ",
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
        for q in self.queries:
            if f"line{q.line}" == event.row_key.value:
                self.pane.recall_app.run_query(q.query)
                return
