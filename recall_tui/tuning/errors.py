"""Error analysis: the judged questions where a baseline preset (the default) loses to
another preset, grouped by category, with both rankings side by side. Pure arrangement of
already scored results (`recall_tui.tuning.metrics.QueryResult`); `recall-tui errors` prints
it. Headless."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: A delta within this is a tie (as in `metrics.compare`).
TIE = 1e-9


@dataclass(frozen=True)
class Side:
    """One preset's side of a lost question."""

    preset: str
    recall: float | None
    mrr: float | None
    hits: tuple[tuple[str, int, str], ...]
    """The top hits: (id, judged grade or -1 when unjudged, text)."""


@dataclass(frozen=True)
class Loss:
    """A question where the baseline scored under `other`."""

    line: int
    query: str
    category: str
    relevant: Mapping[str, int]
    baseline: Side
    other: Side
    metric: str
    """The metric it lost on: `recall`, or `mrr` when recall tied."""


def lost_on(base: Mapping[str, float | None], other: Mapping[str, float | None]) -> str | None:
    """`recall` when the baseline's recall@k is lower, `mrr` when recall ties and MRR is
    lower, else None. An undefined metric (no relevant id) never loses."""
    br, orr = base.get("recall"), other.get("recall")
    if br is None or orr is None:
        return None
    if orr - br > TIE:
        return "recall"
    if abs(orr - br) <= TIE:
        bm, om = base.get("mrr") or 0.0, other.get("mrr") or 0.0
        if om - bm > TIE:
            return "mrr"
    return None


def _side(name: str, r: Any, judged: Mapping[str, int], top: int,
          text: Callable[[str], str]) -> Side:
    hits = tuple((mid, judged.get(mid, -1), text(mid)) for mid in r.ranked[:top])
    return Side(name, r.metrics.get("recall"), r.metrics.get("mrr"), hits)


def losses(golden: Sequence[Any], results: Mapping[str, Sequence[Any]], baseline: str, *,
           top: int, text: Callable[[str], str]) -> dict[str, list[Loss]]:
    """category -> the losses of `baseline` against every other preset, in golden order
    (one entry per question and preset it lost to). `results[name][i]` scores `golden[i]`."""
    out: dict[str, list[Loss]] = {}
    base = results[baseline]
    for name, rs in results.items():
        if name == baseline:
            continue
        for q, b, o in zip(golden, base, rs, strict=True):
            metric = lost_on(b.metrics, o.metrics)
            if metric is None:
                continue
            cat = q.category or "(none)"
            out.setdefault(cat, []).append(Loss(
                q.line, q.query, cat, dict(q.relevant), _side(baseline, b, q.relevant, top, text),
                _side(name, o, q.relevant, top, text), metric))
    for cat in out:
        out[cat].sort(key=lambda x: (x.line, x.other.preset))
    return dict(sorted(out.items()))


def to_json(grouped: Mapping[str, Sequence[Loss]]) -> dict[str, Any]:
    """The grouped losses as plain JSON."""
    def side(s: Side) -> dict[str, Any]:
        return {"preset": s.preset, "recall": s.recall, "mrr": s.mrr,
                "hits": [{"id": i, "grade": None if g < 0 else g, "text": t}
                         for i, g, t in s.hits]}
    return {cat: [{"line": x.line, "query": x.query, "lost_on": x.metric,
                   "relevant": dict(x.relevant), "baseline": side(x.baseline),
                   "other": side(x.other)} for x in rows]
            for cat, rows in grouped.items()}
