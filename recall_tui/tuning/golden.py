"""The judged-query ("golden") set under a configuration, against a baseline, and its edits.

The tuning pane re-scores the whole golden set every time a knob moves, so this module gives
it three things, all headless: `run_golden` (every judged query through the engine, scored by
`recall_tui.tuning.metrics`, cancellable between queries so a UI worker can drop a stale run),
`compare_runs` (a badge per query, better / worse / same, and the change of every mean), and
`mark_relevant` (write one judgement back into golden.jsonl, atomically, refusing when the
file changed since it was read). `recall-tui eval` scores through `score_queries` too, so the
pane and the command cannot disagree. Headless: no textual, no rich.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from recall_tui.engine import Cancelled
from recall_tui.engine.config import Config
from recall_tui.tuning import metrics
from recall_tui.tuning.metrics import GoldenQuery, QueryResult
from recall_tui.vault.edit import EditConflict, atomic_write, content_hash

#: The order the badge looks at metrics: graded and top-weighted first, then coverage, then
#: the first relevant hit's rank. The first metric that differs decides.
BADGE_METRICS: tuple[str, ...] = ("ndcg", "recall", "mrr")
#: Differences smaller than this are float noise, not a change.
TOLERANCE = 1e-9


def score_queries(engine: Any, queries: Sequence[GoldenQuery], *, k: int, now: datetime,
                  config: Config | None = None,
                  cancel: Callable[[], bool] | None = None,
                  on_trace: Callable[[GoldenQuery, Any], None] | None = None) -> list[QueryResult]:
    """Recall every judged query (at its own `as_of`) and score the ranking at `k`.

    The one scoring loop shared by `recall-tui eval` and the golden pane. `cancel` is checked
    before each query and passed into the engine (checked between stages); when it turns True
    `recall_tui.engine.Cancelled` is raised and the partial run is dropped. `on_trace(query,
    trace)` sees every recall's trace (`eval` reads from it why a recall came back empty).
    """
    out: list[QueryResult] = []
    for q in queries:
        if cancel is not None and cancel():
            raise Cancelled()
        trace = engine.recall(q.query, k=k, now=now, as_of=q.as_of, config=config, cancel=cancel)
        if on_trace is not None:
            on_trace(q, trace)
        out.append(metrics.score_query(q.query, [h.id for h in trace.hits], q.relevant, k))
    return out


@dataclass(frozen=True)
class GoldenRun:
    """The golden set recalled and scored under one configuration."""

    label: str
    """What ran, e.g. a preset name or "current"."""
    config_hash: str
    """`Config.hash()` of the configuration used."""
    k: int
    """The cut-off of recall@k, nDCG@k and precision@k."""
    vault_fingerprint: str
    """The engine's fingerprint of the vault it ran on (ids and content hashes)."""
    queries: tuple[GoldenQuery, ...]
    """The judged queries, in file order."""
    results: tuple[QueryResult, ...]
    """One scored ranking per query, same order; `unjudged` lists hits with no judgement."""
    means: Mapping[str, float | None] = field(hash=False)
    """Metric name -> mean over the queries where it is defined (as `recall-tui eval` prints)."""
    ms: float
    """Wall time of the run."""
    evidence: Mapping[str, Any] | None = field(default=None, hash=False)
    """`recall_tui.tuning.distribution.distribution` of the run (the evidence of relevant and
    other hits, of on- and off-topic queries, and the floor); None without a calibrated floor."""
    off_topic: Mapping[str, Any] | None = field(default=None, hash=False)
    """`metrics.off_topic_summary` of the run (abstention and mean injected)."""

    def result_for(self, query: str) -> QueryResult | None:
        """The scored ranking of a query text, or None when the set has no such query."""
        for r in self.results:
            if r.query == query:
                return r
        return None

    @staticmethod
    def judgement(result: QueryResult, memory_id: str) -> int | None:
        """A hit's grade for the query (0 = judged not relevant), None when unjudged.

        Unjudged is not wrong: the UI shows it as "unjudged", never as a miss.
        """
        return result.judged.get(memory_id)


def run_golden(engine: Any, queries: Sequence[GoldenQuery], config: Config | None = None, *,
               k: int, now: datetime, label: str = "current",
               cancel: Callable[[], bool] | None = None) -> GoldenRun:
    """Score `queries` under `config` (the engine's own when None). Raises Cancelled when
    `cancel()` turns True; the figures are those `recall-tui eval` prints for the same config."""
    from recall_tui.tuning.distribution import distribution

    cfg = config or engine.config
    t0 = time.perf_counter()
    traces: list[Any] = []
    results = score_queries(engine, queries, k=k, now=now, config=cfg, cancel=cancel,
                            on_trace=lambda _q, tr: traces.append(tr))
    return GoldenRun(
        label=label,
        config_hash=cfg.hash(),
        k=k,
        vault_fingerprint=getattr(engine, "fingerprint", ""),
        queries=tuple(queries),
        results=tuple(results),
        means=MappingProxyType(metrics.mean_metrics(results)),
        ms=(time.perf_counter() - t0) * 1000,
        evidence=distribution(queries, traces),
        off_topic=metrics.off_topic_summary(queries, results),
    )


@dataclass(frozen=True)
class QueryBadge:
    """One judged query: current against baseline."""

    query: str
    """The query text."""
    badge: str
    """`better`, `worse`, `same`, or `unscored` (no relevant judgement: nothing to score)."""
    metric: str | None
    """The metric that decided the badge (None for `same` and `unscored`)."""
    deltas: Mapping[str, float | None] = field(hash=False)
    """Metric name -> current - baseline (None where either side is undefined)."""
    current: QueryResult
    """The current run's scored ranking."""
    baseline: QueryResult
    """The baseline run's scored ranking."""


@dataclass(frozen=True)
class RunComparison:
    """A current golden run against the baseline run: per-query badges and mean deltas."""

    badges: tuple[QueryBadge, ...]
    """One badge per query, file order."""
    mean_deltas: Mapping[str, float | None] = field(hash=False)
    """Metric name -> current mean - baseline mean (None where either is undefined)."""
    better: int
    """Queries whose badge is `better`."""
    worse: int
    """Queries whose badge is `worse`."""
    same: int
    """Queries whose badge is `same`."""
    paired: metrics.Comparison
    """The paired test of `recall_tui.tuning.metrics.compare` (wins, losses, p-values per metric)."""


def _delta(cur: float | None, base: float | None) -> float | None:
    if cur is None or base is None:
        return None
    d = cur - base
    return 0.0 if abs(d) <= TOLERANCE else d


def compare_runs(current: GoldenRun, baseline: GoldenRun) -> RunComparison:
    """Badge every query better / worse / same and take the difference of every mean.

    The badge follows BADGE_METRICS: the first metric whose value moved decides. Both runs
    must hold the same queries in the same order at the same k (ValueError otherwise).
    """
    if current.k != baseline.k:
        raise ValueError(f"cannot compare runs at k={current.k} and k={baseline.k}")
    paired = metrics.compare(list(baseline.results), list(current.results),
                             baseline_name=baseline.label, candidate_name=current.label,
                             tolerance=TOLERANCE)
    badges: list[QueryBadge] = []
    for cur, base in zip(current.results, baseline.results, strict=True):
        deltas = {m: _delta(cur.metrics.get(m), base.metrics.get(m)) for m in metrics.METRIC_NAMES}
        badge, decided = "same", None
        if all(cur.metrics.get(m) is None for m in BADGE_METRICS):
            badge = "unscored"
        else:
            for m in BADGE_METRICS:
                d = deltas[m]
                if d:
                    badge, decided = ("better" if d > 0 else "worse"), m
                    break
        badges.append(QueryBadge(cur.query, badge, decided, MappingProxyType(deltas), cur, base))
    mean_deltas = {m: _delta(current.means.get(m), baseline.means.get(m)) for m in metrics.METRIC_NAMES}
    return RunComparison(
        badges=tuple(badges),
        mean_deltas=MappingProxyType(mean_deltas),
        better=sum(1 for b in badges if b.badge == "better"),
        worse=sum(1 for b in badges if b.badge == "worse"),
        same=sum(1 for b in badges if b.badge == "same"),
        paired=paired,
    )


# --------------------------------------------------------------------------------------------
# where the judgements are

#: Where the TUI keeps its judgements (the Agent pane's judge screen, `J`): inside the tool's
#: own folder, the only place it writes in a vault.
JUDGED = Path(".recall") / "golden.jsonl"


def default_queries_file(root: str | os.PathLike[str]) -> Path:
    """The judged queries a command reads when `--queries` is not given: the TUI's
    `.recall/golden.jsonl` once it exists (it starts as a copy of the vault's golden.jsonl and
    holds every judgement made since), else the vault's own `golden.jsonl`."""
    judged = Path(root) / JUDGED
    return judged if judged.exists() else Path(root) / "golden.jsonl"


# --------------------------------------------------------------------------------------------
# writing judgements


def file_hash(path: str | os.PathLike[str]) -> str | None:
    """sha256 of a file's bytes, or None when it does not exist: the stamp `mark_relevant`
    checks before writing."""
    try:
        return content_hash(Path(path).read_bytes())
    except FileNotFoundError:
        return None


def _line_query(text: str) -> tuple[str | None, dict[str, Any] | None]:
    """The query of a golden line and its parsed object; (None, None) for blank, comment or
    unparsable lines (those are never touched)."""
    s = text.strip()
    if not s or s.startswith("#"):
        return None, None
    try:
        obj = json.loads(s)
    except json.JSONDecodeError:
        return None, None
    if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
        return None, None
    return obj["query"], obj


def mark_relevant(golden_path: str | os.PathLike[str], query: str, memory_id: str,
                  grade: int | None, *, expected_hash: str | None,
                  line: int | None = None) -> str:
    """Set (grade 0..3) or remove (grade None) one judgement of `query` in a golden file.

    Only the line of that query is rewritten (as compact JSON with its keys in their order);
    every other line keeps its bytes. A query not in the file is appended as a new line. When
    several lines hold the same query text, `line` (1-based, as `GoldenQuery.line`) says which;
    otherwise the first is used. `expected_hash` is the sha256 of the bytes the caller read
    (None: the caller read no file, so it must not exist yet); when the file differs nothing
    is written and `EditConflict` carries both versions. The write is atomic. Returns the
    sha256 of the file afterwards.
    """
    return judge_query(golden_path, query, {memory_id: grade}, expected_hash=expected_hash,
                       line=line)


def judge_query(golden_path: str | os.PathLike[str], query: str,
                grades: Mapping[str, int | None], *, expected_hash: str | None,
                off_topic: bool | None = None, meta: Mapping[str, Any] | None = None,
                log_id: str | None = None, line: int | None = None) -> str:
    """`mark_relevant` for several ids at once, plus what a judged query may carry.

    `grades`: id -> grade 0..3, or None to remove that judgement. `off_topic` True marks the
    query as needing no memory (`"off_topic": true`; every relevant grade becomes 0, since
    nothing was), False clears the mark; a grade of 1..3 clears it too (read_golden refuses
    both at once). `meta` keys are set on the line as they are (e.g. `judged_by`,
    `judged_at`, `prompt`); `log_id` is appended to the line's `log_ids` (the flight
    recorder's record ids it was judged from). Same conflict check and atomic write as
    `mark_relevant`; a query not in the file with nothing to set writes nothing.
    """
    for mid, grade in grades.items():
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)
                                  or not 0 <= grade <= 3):
            raise ValueError(f"grade must be an integer 0..3 or None, got {grade!r}")
        if not mid:
            raise ValueError("memory id must be a non-empty string")
    path = Path(golden_path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = None
    disk_hash = None if raw is None else content_hash(raw)
    text = "" if raw is None else raw.decode("utf-8")
    lines = text.split("\n")
    ends = [ln.endswith("\r") for ln in lines]
    target = None
    for i, ln in enumerate(lines):
        q, obj = _line_query(ln)
        if q == query and (line is None or line == i + 1):
            target = (i, obj)
            break

    def edit(obj: dict[str, Any]) -> dict[str, Any]:
        judged = metrics.normalise_judgements(obj.get("relevant", {}))
        for mid, grade in grades.items():
            if grade is None:
                judged.pop(mid, None)
            else:
                judged[mid] = grade
        if off_topic:
            judged = dict.fromkeys(judged, 0)
            obj["off_topic"] = True
        elif off_topic is False or any(g > 0 for g in judged.values()):
            obj.pop("off_topic", None)
        obj["relevant"] = judged
        obj.update(meta or {})
        if log_id:
            ids = [x for x in obj.get("log_ids", []) if isinstance(x, str) and x != log_id]
            obj["log_ids"] = [*ids, log_id][-20:]
        return obj

    if target is not None:
        i, obj = target
        assert obj is not None
        lines[i] = json.dumps(edit(obj), ensure_ascii=False) + ("\r" if ends[i] else "")
        new_text = "\n".join(lines)
    elif not off_topic and all(g is None for g in grades.values()):
        new_text = text
    else:
        entry = json.dumps(edit({"query": query}), ensure_ascii=False)
        nl = "\r\n" if text.endswith("\r\n") else "\n"
        sep = "" if not text or text.endswith("\n") else nl
        new_text = f"{text}{sep}{entry}{nl}"
    if disk_hash != expected_hash:
        raise EditConflict(str(path), expected_hash or "(no file)", disk_hash or "(no file)",
                           text, new_text)
    data = new_text.encode("utf-8")
    if raw is not None and data == raw:
        return disk_hash or content_hash(data)
    # the last look before the rename: a writer that slipped in meanwhile wins, we refuse
    now_hash = file_hash(path)
    if now_hash != disk_hash:
        now_text = path.read_text(encoding="utf-8", errors="replace") if now_hash else ""
        raise EditConflict(str(path), disk_hash or "(no file)", now_hash or "(no file)",
                           now_text, new_text)
    mode = stat.S_IMODE(os.stat(path).st_mode) if raw is not None else 0o644
    atomic_write(path, data, mode)
    return content_hash(data)
