"""Retrieval-quality metrics and the judged-query ("golden") file format.

Pure functions over ranked id lists and graded judgements, so the eval command, the
benchmarks and the side-by-side view all score recalls the same way. Headless: no textual,
no rich. Formulas and the paired test are documented in docs/evaluation.md.

Judgements are `{id: grade}` with grade 1..3 (3 = the memory that must come back, 1 = useful
context); grade 0 means "judged, not relevant". A plain list of ids means grade 1 each.
Ids a ranking returns that have no judgement at all are *unjudged*: they are not counted as
wrong by any metric here (they add nothing, like grade 0) but are reported, because an
unjudged hit is often a judgement that is missing rather than a bad recall.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

#: The metrics every query is scored on, in report order.
METRIC_NAMES: tuple[str, ...] = ("recall", "mrr", "ndcg", "precision")

#: Random sign flips drawn by the paired randomisation test when exact enumeration is too big.
RANDOMISATION_ROUNDS = 20_000
#: Fixed seed so the randomisation p-value is the same on every run.
RANDOMISATION_SEED = 20261121
#: Up to this many non-zero deltas the randomisation test enumerates all 2^n sign patterns.
EXACT_LIMIT = 16


# --------------------------------------------------------------------------------------------
# judgements


def normalise_judgements(relevant: Mapping[str, Any] | Sequence[str]) -> dict[str, int]:
    """Turn `{id: grade}` or `[ids]` into `{id: grade}`; raise ValueError on a bad shape.

    A list means every id is relevant with grade 1. Grades must be whole numbers 0..3.
    """
    if isinstance(relevant, Mapping):
        out: dict[str, int] = {}
        for key, grade in relevant.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"judged id must be a non-empty string, got {key!r}")
            if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
                raise ValueError(f"grade of {key!r} must be an integer 0..3, got {grade!r}")
            out[key] = grade
        return out
    if isinstance(relevant, (list, tuple)):
        out = {}
        for key in relevant:
            if not isinstance(key, str) or not key:
                raise ValueError(f"judged id must be a non-empty string, got {key!r}")
            out[key] = 1
        return out
    raise ValueError(f"relevant must be an object {{id: grade}} or a list of ids, got {type(relevant).__name__}")


def _dedupe(ids: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id: a ranking never counts one memory twice."""
    seen: set[str] = set()
    out: list[str] = []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


# --------------------------------------------------------------------------------------------
# per-query metrics


def recall_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float | None:
    """Fraction of the relevant ids (grade >= 1) found in the top k; None when none are relevant."""
    rel = {i for i, g in judged.items() if g > 0}
    if not rel:
        return None
    top = set(_dedupe(ranked)[:k])
    return len(rel & top) / len(rel)


def precision_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float | None:
    """Relevant ids in the top k divided by k (a short ranking is not padded: empty slots count
    as misses); None when none are relevant."""
    rel = {i for i, g in judged.items() if g > 0}
    if not rel or k <= 0:
        return None
    return sum(1 for i in _dedupe(ranked)[:k] if i in rel) / k


def reciprocal_rank(ranked: Sequence[str], judged: Mapping[str, int], k: int | None = None) -> float | None:
    """1 / rank of the first relevant id within the top k (0 if none); None when none are relevant."""
    if not any(g > 0 for g in judged.values()):
        return None
    ranking = _dedupe(ranked)
    if k is not None:
        ranking = ranking[:k]
    for rank, i in enumerate(ranking, start=1):
        if judged.get(i, 0) > 0:
            return 1.0 / rank
    return 0.0


def dcg(grades: Sequence[int]) -> float:
    """Discounted cumulative gain: sum of (2^grade - 1) / log2(rank + 1) over ranks from 1."""
    return sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


def ndcg_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float | None:
    """DCG of the top k over the DCG of the ideal top k built from the judgements.

    None when no judged id is relevant (the ideal DCG would be 0).
    """
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    if not ideal:
        return None
    got = [judged.get(i, 0) for i in _dedupe(ranked)[:k]]
    return dcg(got) / dcg(ideal)


@dataclass(frozen=True)
class QueryResult:
    """One judged query scored against one ranking."""

    query: str
    """The query text as asked."""
    ranked: tuple[str, ...]
    """The ids the recall returned, best first."""
    judged: Mapping[str, int]
    """The judgements it was scored against, id -> grade."""
    k: int
    """The cut-off of recall@k, nDCG@k and precision@k."""
    metrics: Mapping[str, float | None]
    """Metric name -> value; None when the query has no relevant id (excluded from means)."""
    unjudged: tuple[str, ...]
    """Ids in the top k with no judgement: not wrong, but worth a look."""
    missed: tuple[str, ...]
    """Relevant ids (grade >= 1) not in the top k, highest grade first."""


def score_query(query: str, ranked: Sequence[str], judged: Mapping[str, int], k: int) -> QueryResult:
    """Score one ranking on every metric of METRIC_NAMES."""
    ranking = _dedupe(ranked)
    top = ranking[:k]
    metrics = {
        "recall": recall_at_k(ranking, judged, k),
        "mrr": reciprocal_rank(ranking, judged, k),
        "ndcg": ndcg_at_k(ranking, judged, k),
        "precision": precision_at_k(ranking, judged, k),
    }
    unjudged = tuple(i for i in top if i not in judged)
    missed = tuple(
        sorted((i for i, g in judged.items() if g > 0 and i not in top), key=lambda i: (-judged[i], i))
    )
    return QueryResult(query, tuple(ranking), dict(judged), k, metrics, unjudged, missed)


def mean_metrics(results: Sequence[QueryResult]) -> dict[str, float | None]:
    """Mean of each metric over the queries where it is defined (None when it never is)."""
    out: dict[str, float | None] = {}
    for name in METRIC_NAMES:
        vals = [r.metrics[name] for r in results if r.metrics.get(name) is not None]
        out[name] = sum(vals) / len(vals) if vals else None  # type: ignore[arg-type]
    return out


def off_topic_summary(queries: Sequence[GoldenQuery],
                      results: Sequence[QueryResult]) -> dict[str, Any]:
    """How a run treats the off-topic queries (`GoldenQuery.off_topic`): {"queries": count,
    "abstained": how many got no hit, "abstention": abstained / queries, "mean_injected": the
    mean number of hits they got}; rate and mean are None without off-topic queries.
    `queries` and `results` pair up in order."""
    injected = [len(r.ranked[: r.k]) for q, r in zip(queries, results, strict=True) if q.off_topic]
    n = len(injected)
    abstained = sum(1 for x in injected if x == 0)
    return {"queries": n, "abstained": abstained,
            "abstention": abstained / n if n else None,
            "mean_injected": sum(injected) / n if n else None}


#: The category name `by_category` gives queries whose line has no `category`.
UNCATEGORISED = "(none)"


def by_category(queries: Sequence[GoldenQuery],
                results: Sequence[QueryResult]) -> dict[str, dict[str, Any]]:
    """Category -> {"queries": count, "scored": count with a relevant id, and the mean of every
    metric of METRIC_NAMES over that category}, categories in order of first appearance;
    queries without one fall under UNCATEGORISED. `queries` and `results` pair up in order."""
    groups: dict[str, list[QueryResult]] = {}
    for q, r in zip(queries, results, strict=True):
        groups.setdefault(q.category or UNCATEGORISED, []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for cat, rs in groups.items():
        row: dict[str, Any] = {"queries": len(rs),
                               "scored": sum(1 for r in rs if r.metrics.get("recall") is not None)}
        row.update(mean_metrics(rs))
        out[cat] = row
    return out


# --------------------------------------------------------------------------------------------
# paired comparison


def sign_test_p(wins: int, losses: int) -> float:
    """Exact two-sided sign test: P(a split at least this lopsided | no difference), ties dropped."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def randomisation_p(deltas: Sequence[float]) -> float:
    """Paired randomisation test on the mean delta, two-sided.

    Under the null hypothesis each query's delta is as likely to have either sign, so the
    p-value is the share of sign patterns whose |mean| is at least the observed |mean|. With up
    to EXACT_LIMIT non-zero deltas every pattern is enumerated (exact); beyond, a fixed-seed
    sample of RANDOMISATION_ROUNDS patterns is used, counted as (hits + 1) / (rounds + 1).
    Zero deltas do not change under a sign flip and are left out.
    """
    d = np.array([x for x in deltas if x != 0.0], dtype=float)
    if d.size == 0:
        return 1.0
    observed = abs(d.sum()) - 1e-12
    if d.size <= EXACT_LIMIT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
        sums = np.abs(signs @ d)
        return float(np.mean(sums >= observed))
    rng = np.random.default_rng(RANDOMISATION_SEED)
    signs = rng.choice((1.0, -1.0), size=(RANDOMISATION_ROUNDS, d.size))
    hits = int(np.sum(np.abs(signs @ d) >= observed))
    return (hits + 1) / (RANDOMISATION_ROUNDS + 1)


@dataclass(frozen=True)
class MetricComparison:
    """One metric compared between a baseline and a candidate over the same queries."""

    metric: str
    """Which metric (one of METRIC_NAMES)."""
    baseline_mean: float | None
    """Mean over the paired queries for the baseline."""
    candidate_mean: float | None
    """Mean over the paired queries for the candidate."""
    deltas: tuple[float, ...]
    """candidate - baseline per paired query, in query order."""
    wins: int
    """Queries where the candidate scored higher."""
    losses: int
    """Queries where the candidate scored lower."""
    ties: int
    """Queries with equal scores."""
    sign_p: float
    """Exact two-sided sign-test p-value (ties dropped)."""
    randomisation_p: float
    """Two-sided paired randomisation-test p-value on the mean delta."""

    @property
    def mean_delta(self) -> float | None:
        return sum(self.deltas) / len(self.deltas) if self.deltas else None


@dataclass(frozen=True)
class Comparison:
    """A candidate preset against a baseline preset on the same judged queries."""

    baseline: str
    """Name of the baseline (the first preset given)."""
    candidate: str
    """Name of the preset compared with it."""
    metrics: Mapping[str, MetricComparison] = field(hash=False)
    """Metric name -> its paired comparison."""
    queries: tuple[str, ...] = ()
    """The paired queries, in order (those where both results are defined)."""


def compare(
    baseline: Sequence[QueryResult],
    candidate: Sequence[QueryResult],
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    tolerance: float = 1e-9,
) -> Comparison:
    """Pair the two result lists query by query (same order) and compare every metric.

    Deltas within `tolerance` count as ties (float noise is not a win).
    """
    if len(baseline) != len(candidate):
        raise ValueError(f"cannot pair {len(baseline)} results with {len(candidate)}")
    for a, b in zip(baseline, candidate, strict=True):
        if a.query != b.query:
            raise ValueError(f"results out of order: {a.query!r} paired with {b.query!r}")
    out: dict[str, MetricComparison] = {}
    queries: tuple[str, ...] = ()
    for name in METRIC_NAMES:
        pairs = [
            (a.metrics[name], b.metrics[name], a.query)
            for a, b in zip(baseline, candidate, strict=True)
            if a.metrics.get(name) is not None and b.metrics.get(name) is not None
        ]
        deltas = tuple(0.0 if abs(b - a) <= tolerance else b - a for a, b, _ in pairs)  # type: ignore[operator]
        wins = sum(1 for d in deltas if d > 0)
        losses = sum(1 for d in deltas if d < 0)
        n = len(pairs)
        out[name] = MetricComparison(
            metric=name,
            baseline_mean=sum(a for a, _, _ in pairs) / n if n else None,  # type: ignore[misc]
            candidate_mean=sum(b for _, b, _ in pairs) / n if n else None,  # type: ignore[misc]
            deltas=deltas,
            wins=wins,
            losses=losses,
            ties=n - wins - losses,
            sign_p=sign_test_p(wins, losses),
            randomisation_p=randomisation_p(deltas),
        )
        if name == "recall":
            queries = tuple(q for _, _, q in pairs)
    return Comparison(baseline_name, candidate_name, out, queries)


# --------------------------------------------------------------------------------------------
# list similarity (side-by-side view)


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """|A[:k] ∩ B[:k]| / k: how many of the top k two rankings share."""
    if k <= 0:
        raise ValueError("k must be positive")
    return len(set(_dedupe(a)[:k]) & set(_dedupe(b)[:k])) / k


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap RBO_ext (Webber, Moffat, Zobel 2010, eq. 32).

    Top-weighted agreement of two rankings in 0..1 (1 = identical). `p` is the persistence:
    the weight of depth d is proportional to p^(d-1), so with p = 0.9 the first 10 ranks carry
    about 86% of the weight. Unequal lengths follow the paper: with S the shorter list (length
    s) and L the longer (length l), X_d is |S[:d] ∩ L[:d]| (S stops growing after s), and

        RBO_ext = (1-p)/p * ( Σ_{d=1..l} X_d/d · p^d + Σ_{d=s+1..l} X_s (d-s)/(s·d) · p^d )
                  + ( (X_l - X_s)/l + X_s/s ) · p^l

    Two empty lists are identical (1.0); one empty list shares nothing (0.0).
    """
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    x, y = _dedupe(a), _dedupe(b)
    if not x and not y:
        return 1.0
    if not x or not y:
        return 0.0
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    s, ln = len(short), len(long_)
    seen_s: set[str] = set()
    seen_l: set[str] = set()
    overlap = 0
    xs: list[int] = []  # xs[d-1] = X_d
    for d in range(1, ln + 1):
        if d <= s:
            item_s = short[d - 1]
            if item_s in seen_l:
                overlap += 1
            seen_s.add(item_s)
        item_l = long_[d - 1]
        if item_l in seen_s:
            overlap += 1
        seen_l.add(item_l)
        xs.append(overlap)
    x_s, x_l = xs[s - 1], xs[ln - 1]
    sum1 = sum(xs[d - 1] / d * p**d for d in range(1, ln + 1))
    sum2 = sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, ln + 1))
    return (1 - p) / p * (sum1 + sum2) + ((x_l - x_s) / ln + x_s / s) * p**ln


# --------------------------------------------------------------------------------------------
# the golden file


class GoldenError(ValueError):
    """A line of a judged-queries file that cannot be used; names the file and the line."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class GoldenQuery:
    """One judged query of a golden.jsonl file."""

    query: str
    """The query text."""
    relevant: Mapping[str, int]
    """Judged ids -> grade (0..3)."""
    note: str
    """Free text: why these ids are relevant, what the query tests."""
    as_of: datetime | None
    """Evaluate as of this time (bi-temporal), from `as_of` or `as_of=YYYY-MM-DD` in the note."""
    line: int
    """1-based line in the file."""
    category: str | None = None
    """What kind of question it is (e.g. `single-fact`, `temporal`, `multi-hop`), from the
    optional `category` key; None when the line has none. `eval` breaks its figures down by it."""
    off_topic: bool = False
    """Nothing in the vault is relevant (`"relevant": []` or `{}`, or `"off_topic": true`):
    the right answer is to inject nothing. Scored by `off_topic_summary`, never by the
    ranking metrics (their means stay over the on-topic queries)."""


_AS_OF_IN_NOTE = re.compile(r"\bas_of=(\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)")


def parse_time(text: str) -> datetime:
    """ISO-8601 date or datetime; a `Z` suffix is UTC and a missing zone is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def golden_object(text: str, path: str, n: int) -> dict[str, Any]:
    """One non-blank, non-`#` line of a judged-queries file as its JSON object."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldenError(path, n, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise GoldenError(path, n, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def golden_query(obj: Mapping[str, Any], path: str, n: int, *,
                 require_relevant: bool = True) -> GoldenQuery:
    """A line's object as a `GoldenQuery`, every key checked as `read_golden` documents.
    Without `require_relevant` a line with no `relevant` is allowed (an unjudged query of a
    query set, `tuning/snapshot.py`): its `relevant` is empty and it is off-topic only when
    it says `"off_topic": true`."""
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise GoldenError(path, n, '"query" must be a non-empty string')
    judged = "relevant" in obj
    if not judged and require_relevant:
        raise GoldenError(path, n, '"relevant" is missing')
    try:
        relevant = normalise_judgements(obj["relevant"]) if judged else {}
    except ValueError as exc:
        raise GoldenError(path, n, str(exc)) from None
    note = obj.get("note", "")
    if not isinstance(note, str):
        raise GoldenError(path, n, '"note" must be a string')
    as_of_text = obj.get("as_of")
    if as_of_text is None:
        m = _AS_OF_IN_NOTE.search(note)
        as_of_text = m.group(1) if m else None
    as_of = None
    if as_of_text is not None:
        if not isinstance(as_of_text, str):
            raise GoldenError(path, n, '"as_of" must be an ISO-8601 string')
        try:
            as_of = parse_time(as_of_text)
        except ValueError:
            raise GoldenError(path, n, f"as_of {as_of_text!r} is not an ISO-8601 date or time") from None
    category = obj.get("category")
    if isinstance(category, int) and not isinstance(category, bool):
        category = str(category)  # a numbered category (1, 2, ...) is a label too
    if category is not None and (not isinstance(category, str) or not category.strip()):
        raise GoldenError(path, n, '"category" must be a non-empty string or an integer')
    flag = obj.get("off_topic", False)
    if not isinstance(flag, bool):
        raise GoldenError(path, n, '"off_topic" must be true or false')
    if flag and any(g > 0 for g in relevant.values()):
        raise GoldenError(path, n, '"off_topic" is true but "relevant" names a relevant id')
    off_topic = flag or (judged and not relevant)
    return GoldenQuery(query, relevant, note, as_of, n,
                       category.strip() if category is not None else None, off_topic)


def read_golden(path: str | Path) -> list[GoldenQuery]:
    """Read a judged-queries file: one JSON object a line, blank lines and `#` lines skipped.

    Each object: `{"query": str, "relevant": {id: grade} | [ids], "note": str?, "as_of": str?,
    "category": str?, "off_topic": bool?}`; an empty `relevant` (or `"off_topic": true`) marks
    a query nothing in the vault answers (`GoldenQuery.off_topic`).
    Raises GoldenError (file:line: reason) on the first bad line, FileNotFoundError if missing.
    """
    p = Path(path)
    out: list[GoldenQuery] = []
    with p.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            out.append(golden_query(golden_object(text, str(p), n), str(p), n))
    return out
