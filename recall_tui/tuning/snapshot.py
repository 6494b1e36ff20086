"""Snapshots of a query set's rankings, their differences, and a regression gate.

A snapshot freezes, for every query of a query set, the ranked ids and scores one
configuration returned (with the clock, k and embedder pinned), and the judgements the query
had, if any. Two snapshots, or a snapshot and a fresh run, can then be compared query by query:
the ids gained and lost, rank moves, overlap (Jaccard of the top k, rank-biased overlap), and,
where the query is judged, whether it got better or worse (`diff`). The gate compares a fresh
run against a saved baseline with the paired tests `eval` and `tune` use and fails when
recall@k, MRR or the abstention rate on "nothing relevant" queries is significantly worse
(`gate`).

The query set is a judged-queries file (the format `eval` reads, parsed by the same
`metrics.golden_query`) or a plain one: a JSON object a line whose `relevant` may be missing (an
unjudged query, compared by overlap only), or a plain line of text. A query `eval` counts as
off-topic (`"relevant": []`, or `"off_topic": true`) needs no memory: it counts toward the
abstention rate (the share of such queries that got no hit). Headless: no textual, no rich.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recall_tui.tuning import metrics
from recall_tui.tuning.metrics import QueryResult

FORMAT = "recall-tui-snapshot"
VERSION = 1
#: The metrics the gate tests (the abstention rate is added when the set has off-topic queries).
GATE_METRICS: tuple[str, ...] = ("recall", "mrr")
#: The order in which a judged query's metrics decide "better" or "worse" (as the golden pane's
#: badges do): graded and top-weighted first, then coverage, then the first relevant hit.
VERDICT_METRICS: tuple[str, ...] = ("ndcg", "recall", "mrr")
TOLERANCE = 1e-9


class SnapshotError(ValueError):
    """A snapshot or query-set file that cannot be used; the message names the file."""


# --------------------------------------------------------------------------------------------
# the query set


@dataclass(frozen=True)
class SetQuery:
    """One query of a query set: judged (`relevant` is a dict, possibly empty) or not (None)."""

    query: str
    line: int
    relevant: Mapping[str, int] | None = None
    as_of: datetime | None = None
    category: str | None = None

    @property
    def off_topic(self) -> bool:
        """Judged as needing no memory (`"relevant": []`)."""
        return self.relevant is not None and not self.relevant

    @property
    def key(self) -> tuple[str, str | None]:
        return self.query, self.as_of.isoformat() if self.as_of else None


def read_query_set(path: str | os.PathLike[str]) -> list[SetQuery]:
    """Read a query set: judged lines as `eval` reads them (`metrics.golden_query`, the same
    checks), JSON lines without `relevant` (unjudged), or plain text lines; blank and `#`
    lines skipped. A line `eval` counts as off-topic (`"relevant": []`, or `"off_topic": true`
    with only grade-0 ids) becomes `relevant={}`: nothing is relevant, fewer hits is better.
    Raises GoldenError (file:line: reason) on a bad line and FileNotFoundError when the file
    is missing."""
    p = Path(path)
    out: list[SetQuery] = []
    with p.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            if not text.startswith("{"):
                out.append(SetQuery(text, n))
                continue
            obj = metrics.golden_object(text, str(p), n)
            g = metrics.golden_query(obj, str(p), n, require_relevant=False)
            relevant: dict[str, int] | None = (
                {} if g.off_topic else dict(g.relevant) if "relevant" in obj else None)
            out.append(SetQuery(g.query, n, relevant, g.as_of, g.category))
    return out


def file_sha256(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------------
# snapshots


@dataclass(frozen=True)
class Entry:
    """One query's frozen ranking."""

    query: str
    line: int
    hits: tuple[tuple[str, float], ...]
    """(id, final score), best first."""
    relevant: Mapping[str, int] | None = None
    as_of: str | None = None
    category: str | None = None

    @property
    def ids(self) -> list[str]:
        return [i for i, _ in self.hits]

    @property
    def key(self) -> tuple[str, str | None]:
        return self.query, self.as_of

    @property
    def off_topic(self) -> bool:
        return self.relevant is not None and not self.relevant

    def result(self, k: int) -> QueryResult | None:
        """Scored against its judgements at `k`; None when it has none."""
        if self.relevant is None:
            return None
        return metrics.score_query(self.query, self.ids, self.relevant, k)


@dataclass(frozen=True)
class Snapshot:
    """A query set's rankings under one configuration, frozen."""

    preset: str
    config_hash: str
    k: int
    now: str
    embedder: str
    vault: str
    queries_file: str
    queries_sha256: str
    created: str
    entries: tuple[Entry, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": VERSION, "created": self.created,
            "vault": self.vault, "queries_file": self.queries_file,
            "queries_sha256": self.queries_sha256, "preset": self.preset,
            "config_hash": self.config_hash, "k": self.k, "now": self.now,
            "embedder": self.embedder,
            "queries": [
                {"query": e.query, "line": e.line, "as_of": e.as_of, "category": e.category,
                 "relevant": dict(e.relevant) if e.relevant is not None else None,
                 "hits": [{"id": i, "score": s} for i, s in e.hits]}
                for e in self.entries
            ],
        }

    def coverage(self) -> tuple[int, int]:
        """(judged, all) over the top-k results of every query: how much of what this
        configuration returns has a judgement (a query judged "needs no memory" counts its
        hits as judged: they are all wrong)."""
        c = coverage(self)
        return c.total - c.unjudged, c.total

    def label(self) -> str:
        return f"{self.preset} ({self.config_hash[:8] or 'no hash'}, k={self.k})"


@dataclass(frozen=True)
class Coverage:
    """How much of what a configuration returns for a query set has a judgement."""

    unjudged: int
    """Top-k results (query, id) with no judgement."""
    total: int
    """Top-k results over the whole set."""
    k: int
    preset: str
    queries: int

    def line(self) -> str:
        """The coverage line the judge screen, `log sample --coverage` and `snapshot` show."""
        return (f"{self.unjudged} of the top-{self.k} results of this set ({self.total} over "
                f"{self.queries} queries) are unjudged under {self.preset}")


def coverage(snap: Snapshot, judged: Mapping[str, Mapping[str, int]] | None = None) -> Coverage:
    """Count the top-k results of `snap` that have no judgement: in `judged` (query text ->
    {id: grade}, e.g. `judged_queries` of the judged file) when given, else in each entry's
    own `relevant`. A query judged as needing no memory (`{}`) has every hit judged (wrong)."""
    unjudged = total = 0
    for e in snap.entries:
        top = e.ids[: snap.k]
        total += len(top)
        rel = e.relevant if judged is None else judged.get(e.query)
        if rel is None:
            unjudged += len(top)
        elif rel:
            unjudged += sum(1 for i in top if i not in rel)
    return Coverage(unjudged, total, snap.k, snap.preset, len(snap.entries))


def judged_queries(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """The judgements of a judged-queries file by query text ({} for "needs no memory");
    an unjudged line is left out. A missing file has none; a bad line raises (GoldenError)."""
    try:
        return {q.query: dict(q.relevant) for q in read_query_set(path) if q.relevant is not None}
    except FileNotFoundError:
        return {}


def take(engine: Any, queries: Sequence[SetQuery], *, k: int, now: datetime,
         queries_file: str = "", queries_sha256: str = "",
         cancel: Callable[[], bool] | None = None, config: Any = None,
         preset: str | None = None,
         progress: Callable[[int, int], None] | None = None) -> Snapshot:
    """Recall every query of the set at `k` (each at its own `as_of`) and freeze the rankings;
    under `config` (a `Config`, on the engine's vault, index and embedder) when given, labelled
    `preset` (default: the engine's preset name). `progress(done, total)` is called after each
    query (the Tuning pane's set view shows it)."""
    entries: list[Entry] = []
    config_hash = ""
    for n, q in enumerate(queries, start=1):
        trace = engine.recall(q.query, k=k, now=now, as_of=q.as_of, cancel=cancel, config=config)
        config_hash = config_hash or trace.config_hash
        entries.append(Entry(q.query, q.line, tuple((h.id, float(h.score)) for h in trace.hits),
                             dict(q.relevant) if q.relevant is not None else None,
                             q.as_of.isoformat() if q.as_of else None, q.category))
        if progress is not None:
            progress(n, len(queries))
    index = getattr(engine, "index", None)
    embedder = (getattr(index, "embedder_info", None) or {}).get("name") or "none"
    return Snapshot(preset=preset if preset is not None else getattr(engine, "preset", ""),
                    config_hash=config_hash, k=k,
                    now=now.isoformat(), embedder=str(embedder),
                    vault=str(getattr(getattr(engine, "vault", None), "root", "")),
                    queries_file=queries_file, queries_sha256=queries_sha256,
                    created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    entries=tuple(entries))


def save(snap: Snapshot, path: str | os.PathLike[str]) -> None:
    """Write the snapshot as JSON, atomically (a temp file in the same folder, renamed)."""
    from recall_tui.vault.edit import atomic_write

    p = Path(path)
    data = (json.dumps(snap.to_dict(), indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    atomic_write(p, data, 0o644)


def load(path: str | os.PathLike[str]) -> Snapshot:
    """Read a snapshot written by `save`; SnapshotError names the file and what is wrong."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{p}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SnapshotError(f"{p}: not a recall-tui snapshot (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise SnapshotError(f"{p}: snapshot version {doc.get('version')!r}, this recall-tui "
                            f"reads version {VERSION}")
    try:
        entries = tuple(
            Entry(str(q["query"]), int(q.get("line") or 0),
                  tuple((str(h["id"]), float(h["score"])) for h in q.get("hits") or ()),
                  ({str(i): int(g) for i, g in q["relevant"].items()}
                   if isinstance(q.get("relevant"), dict) else None),
                  q.get("as_of"), q.get("category"))
            for q in doc.get("queries") or ()
        )
        return Snapshot(preset=str(doc.get("preset", "")), config_hash=str(doc.get("config_hash", "")),
                        k=int(doc["k"]), now=str(doc.get("now", "")),
                        embedder=str(doc.get("embedder", "")), vault=str(doc.get("vault", "")),
                        queries_file=str(doc.get("queries_file", "")),
                        queries_sha256=str(doc.get("queries_sha256", "")),
                        created=str(doc.get("created", "")), entries=entries)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SnapshotError(f"{p}: malformed snapshot ({type(exc).__name__}: {exc})") from None


def query_set_of(snap: Snapshot) -> list[SetQuery]:
    """The query set a snapshot was taken on (to re-run it under another configuration)."""
    return [SetQuery(e.query, e.line, e.relevant,
                     metrics.parse_time(e.as_of) if e.as_of else None, e.category)
            for e in snap.entries]


# --------------------------------------------------------------------------------------------
# differences


@dataclass(frozen=True)
class QueryDiff:
    """How one query's ranking moved from snapshot A to snapshot B (both cut at k)."""

    query: str
    line: int
    gained: tuple[str, ...]
    """In B's top k, not in A's (B's order)."""
    lost: tuple[str, ...]
    """In A's top k, not in B's (A's order)."""
    moved: tuple[tuple[str, int, int], ...]
    """(id, rank in A, rank in B) for ids in both whose rank changed."""
    jaccard: float
    rbo: float
    verdict: str
    """`better`, `worse`, `same` (judged), or `unjudged`."""
    deltas: Mapping[str, float | None] = field(default_factory=dict)
    """Metric -> B minus A (judged queries)."""
    off_topic: bool = False
    hits_a: int = 0
    hits_b: int = 0
    lost_relevant: tuple[str, ...] = ()
    """Judged relevant (grade >= 1) ids in A's top k and not in B's."""
    gained_relevant: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.gained or self.lost or self.moved)


@dataclass(frozen=True)
class SnapshotDiff:
    a: str
    b: str
    k: int
    queries: tuple[QueryDiff, ...]
    only_a: tuple[str, ...]
    """Queries in A's set only (not compared)."""
    only_b: tuple[str, ...]
    comparison: metrics.Comparison | None
    """The paired test over the judged queries (None when none is judged)."""
    notes: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        n = len(self.queries)
        verdicts = [q.verdict for q in self.queries]
        return {
            "queries": n,
            "changed": sum(1 for q in self.queries if q.changed),
            "mean_jaccard": sum(q.jaccard for q in self.queries) / n if n else None,
            "mean_rbo": sum(q.rbo for q in self.queries) / n if n else None,
            "better": verdicts.count("better"),
            "worse": verdicts.count("worse"),
            "same": verdicts.count("same"),
            "unjudged": verdicts.count("unjudged"),
        }

    def to_dict(self) -> dict[str, Any]:
        comp = None
        if self.comparison is not None:
            comp = {name: {"a_mean": mc.baseline_mean, "b_mean": mc.candidate_mean,
                           "mean_delta": mc.mean_delta, "wins": mc.wins, "losses": mc.losses,
                           "ties": mc.ties, "sign_p": mc.sign_p,
                           "randomisation_p": mc.randomisation_p}
                    for name, mc in self.comparison.metrics.items()}
        return {
            "a": self.a, "b": self.b, "k": self.k, "summary": self.summary(),
            "paired": comp, "notes": list(self.notes),
            "only_a": list(self.only_a), "only_b": list(self.only_b),
            "queries": [
                {"query": q.query, "line": q.line, "verdict": q.verdict,
                 "gained": list(q.gained), "lost": list(q.lost),
                 "moved": [{"id": i, "a": ra, "b": rb} for i, ra, rb in q.moved],
                 "jaccard": q.jaccard, "rbo": q.rbo, "deltas": dict(q.deltas),
                 "off_topic": q.off_topic, "hits_a": q.hits_a, "hits_b": q.hits_b,
                 "lost_relevant": list(q.lost_relevant),
                 "gained_relevant": list(q.gained_relevant)}
                for q in self.queries
            ],
        }


def _verdict(ra: QueryResult | None, rb: QueryResult | None,
             off_topic: bool, na: int, nb: int) -> tuple[str, dict[str, float | None]]:
    if off_topic:  # fewer hits is better when nothing is relevant
        if na == nb:
            return "same", {"hits": 0.0}
        return ("better" if nb < na else "worse"), {"hits": float(nb - na)}
    if ra is None or rb is None:
        return "unjudged", {}
    deltas: dict[str, float | None] = {}
    for name in metrics.METRIC_NAMES:
        a, b = ra.metrics.get(name), rb.metrics.get(name)
        deltas[name] = None if a is None or b is None else b - a
    for name in VERDICT_METRICS:
        d = deltas.get(name)
        if d is not None and abs(d) > TOLERANCE:
            return ("better" if d > 0 else "worse"), deltas
    return "same", deltas


def diff_json(d: SnapshotDiff) -> str:
    """The difference as `recall-tui diff --json` prints it (and the Tuning pane exports it)."""
    from recall_tui.vault.literal import json_text

    return json_text(d.to_dict(), indent=2) + "\n"


def diff(a: Snapshot, b: Snapshot, *, k: int | None = None) -> SnapshotDiff:
    """Compare two snapshots query by query, matched by query text and as_of, at `k` (default
    the smaller of the two snapshots' k, so both sides are compared at the same depth)."""
    depth = k or min(a.k, b.k)
    notes: list[str] = []
    if a.k != b.k:
        notes.append(f"snapshots taken at k={a.k} and k={b.k}: compared at k={depth}")
    if a.now != b.now:
        notes.append(f"clocks differ: {a.now} and {b.now} (staleness and recency boosts move)")
    if a.embedder != b.embedder:
        notes.append(f"embedders differ: {a.embedder} and {b.embedder}")
    if a.queries_sha256 and b.queries_sha256 and a.queries_sha256 != b.queries_sha256:
        notes.append("the query sets' files differ; queries are matched by text")
    bmap = {e.key: e for e in b.entries}
    amap = {e.key: e for e in a.entries}
    out: list[QueryDiff] = []
    res_a: list[QueryResult] = []
    res_b: list[QueryResult] = []
    for ea in a.entries:
        eb = bmap.get(ea.key)
        if eb is None:
            continue
        la, lb = ea.ids[:depth], eb.ids[:depth]
        rank_a = {i: n for n, i in enumerate(la, 1)}
        rank_b = {i: n for n, i in enumerate(lb, 1)}
        gained = tuple(i for i in lb if i not in rank_a)
        lost = tuple(i for i in la if i not in rank_b)
        moved = tuple((i, rank_a[i], rank_b[i]) for i in lb if i in rank_a and rank_a[i] != rank_b[i])
        union = set(la) | set(lb)
        jac = len(set(la) & set(lb)) / len(union) if union else 1.0
        judged = eb.relevant if eb.relevant is not None else ea.relevant
        ra = rb = None
        if judged is not None:
            ra = metrics.score_query(ea.query, ea.ids, judged, depth)
            rb = metrics.score_query(eb.query, eb.ids, judged, depth)
            if judged:
                res_a.append(ra)
                res_b.append(rb)
        off = judged is not None and not judged
        verdict, deltas = _verdict(ra, rb, off, len(la), len(lb))
        good = {i for i, g in (judged or {}).items() if g > 0}
        out.append(QueryDiff(ea.query, ea.line, gained, lost, moved, jac, metrics.rbo(la, lb),
                             verdict, deltas, off, len(la), len(lb),
                             tuple(i for i in lost if i in good),
                             tuple(i for i in gained if i in good)))
    only_a = tuple(e.query for e in a.entries if e.key not in bmap)
    only_b = tuple(e.query for e in b.entries if e.key not in amap)
    comp = (metrics.compare(res_a, res_b, baseline_name=a.label(), candidate_name=b.label())
            if res_a else None)
    return SnapshotDiff(a.label(), b.label(), depth, tuple(out), only_a, only_b, comp, tuple(notes))


# --------------------------------------------------------------------------------------------
# the gate


@dataclass(frozen=True)
class GateCheck:
    metric: str
    baseline: float | None
    current: float | None
    p: float
    """Paired randomisation test, two-sided."""
    worse: bool
    """Significantly worse: lower mean and p < alpha."""
    n: int


@dataclass(frozen=True)
class GateResult:
    passed: bool
    alpha: float
    checks: tuple[GateCheck, ...]
    worse_queries: tuple[QueryDiff, ...]
    diff: SnapshotDiff

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed, "alpha": self.alpha,
            "test": "paired randomisation test on the per-query deltas (two-sided)",
            "checks": [{"metric": c.metric, "baseline": c.baseline, "current": c.current,
                        "p": c.p, "worse": c.worse, "queries": c.n} for c in self.checks],
            "worse_queries": [{"query": q.query, "line": q.line, "lost": list(q.lost),
                               "gained": list(q.gained), "lost_relevant": list(q.lost_relevant),
                               "deltas": dict(q.deltas)}
                              for q in self.worse_queries],
            "diff": self.diff.to_dict(),
        }


def gate(baseline: Snapshot, current: Snapshot, *, alpha: float = 0.05) -> GateResult:
    """Fail when the current run is significantly worse than the baseline on recall@k or MRR
    over the judged queries, or on the abstention rate over the "nothing relevant" queries
    (paired randomisation test, p < alpha, and a lower mean). Noise passes: a drop the test
    cannot tell from chance is reported but does not fail."""
    d = diff(baseline, current)
    checks: list[GateCheck] = []
    if d.comparison is not None:
        for name in GATE_METRICS:
            mc = d.comparison.metrics[name]
            n = mc.wins + mc.losses + mc.ties
            delta = mc.mean_delta
            worse = delta is not None and delta < -TOLERANCE and mc.randomisation_p < alpha
            checks.append(GateCheck(name, mc.baseline_mean, mc.candidate_mean,
                                    mc.randomisation_p, worse, n))
    off = [q for q in d.queries if q.off_topic]
    if off:
        deltas = [float(q.hits_b == 0) - float(q.hits_a == 0) for q in off]
        base = sum(1 for q in off if q.hits_a == 0) / len(off)
        cur = sum(1 for q in off if q.hits_b == 0) / len(off)
        p = metrics.randomisation_p(deltas)
        checks.append(GateCheck("abstention", base, cur, p, cur < base - TOLERANCE and p < alpha,
                                len(off)))
    worse_q = tuple(q for q in d.queries if q.verdict == "worse")
    return GateResult(not any(c.worse for c in checks), alpha, tuple(checks), worse_q, d)


def gate_configs(engine: Any, baseline: Any, candidate: Any, queries: Sequence[SetQuery], *,
                 k: int, now: datetime, alpha: float = 0.05, baseline_name: str = "baseline",
                 candidate_name: str = "candidate",
                 cancel: Callable[[], bool] | None = None) -> GateResult:
    """The gate between two configurations (`Config`s) on one engine's vault, index, embedder
    and clock: the query set is recalled under each at `k` and `gate` compares them, the
    baseline first. What the Tuning pane's save runs before it makes a tuned preset the
    agent's, with the active preset as the baseline."""
    base = take(engine, queries, k=k, now=now, cancel=cancel, config=baseline, preset=baseline_name)
    cur = take(engine, queries, k=k, now=now, cancel=cancel, config=candidate, preset=candidate_name)
    return gate(base, cur, alpha=alpha)


def gate_lines(res: GateResult) -> list[str]:
    """The gate's verdict as plain lines (what `recall-tui gate` prints, without markup): one
    per tested metric, then the queries that got worse, then passed/failed."""
    out: list[str] = []
    if not res.checks:
        out.append("nothing to test: no judged query in the set")
    for c in res.checks:
        b = "-" if c.baseline is None else f"{c.baseline:.3f}"
        n = "-" if c.current is None else f"{c.current:.3f}"
        out.append(f"  {c.metric:<11} {b} → {n}  p={c.p:.3g} over {c.n} queries  "
                   f"{'WORSE' if c.worse else 'ok'}")
    if res.worse_queries:
        out.append(f"{len(res.worse_queries)} queries got worse:")
        for q in res.worse_queries:
            what = (f"lost relevant {', '.join(q.lost_relevant)}" if q.lost_relevant
                    else "more hits on a query that needs none" if q.off_topic
                    else "relevant hits ranked lower")
            out.append(f"  line {q.line}: {q.query}: {what}")
    out.append("gate passed" if res.passed else "gate failed")
    return out
