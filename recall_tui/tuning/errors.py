"""Error analysis: the judged questions where a baseline preset (the default) loses to
another preset, grouped by category, with both rankings side by side. `losses` is a pure
arrangement of already scored results (`recall_tui.tuning.metrics.QueryResult`);
`score_presets` scores them with `eval`'s loop and `why_expected` asks the engine why each
expected memory ranked where it did. `recall-tui errors` prints it, the TUI's error-analysis
screen shows it. Headless."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: A delta within this is a tie (as in `metrics.compare`).
TIE = 1e-9

#: The presets a baseline is compared with unless told otherwise: the five seed presets.
SEEDS = ("bastra", "abmind", "memoryvault", "memoturn", "memoria")


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


def compared(baseline: str, others: Sequence[str] = ()) -> list[str]:
    """The presets to run: the baseline first, then `others` (default: the seed presets)
    without the baseline."""
    return [baseline] + [p for p in (others or SEEDS) if p != baseline]


def hit_text(vault: Any) -> Callable[[str], str]:
    """A hit's text as both sides show it: the body without its related links, whitespace
    folded, cut at 160 characters ("" for an id the vault does not hold)."""
    def text(mid: str) -> str:
        m = vault.get(mid)
        return "" if m is None else " ".join(m.body_without_related.split())[:160]
    return text


def score_presets(engines: Mapping[str, Any], golden: Sequence[Any], *, k: int, now: datetime,
                  cancel: Callable[[], bool] | None = None,
                  on_preset: Callable[[str], None] | None = None) -> dict[str, list[Any]]:
    """preset name -> the judged queries scored under its engine (`score_queries`, the loop
    of `recall-tui eval`), in `engines` order; `on_preset(name)` is told before each runs."""
    from recall_tui.tuning.golden import score_queries

    out: dict[str, list[Any]] = {}
    for name, engine in engines.items():
        if on_preset is not None:
            on_preset(name)
        out[name] = score_queries(engine, golden, k=k, now=now, cancel=cancel)
    return out


def summary(grouped: Mapping[str, Sequence[Loss]], names: Sequence[str], n: int, k: int) -> str:
    """The one-line verdict above the losses."""
    total = sum(len(v) for v in grouped.values())
    return (f"{names[0]} loses {total} times on {n} questions to {', '.join(names[1:])} "
            f"(recall@{k}, or MRR on a recall tie)")


def why_expected(engine: Any, q: Any, *, k: int, now: datetime) -> Any:
    """The recall of judged query `q` under `engine` (at its `as_of`), asked why about each
    relevant id (grade >= 1): the returned `Trace` holds a `WhyNot` per relevant id (found at
    a rank, or the stage that lost it and why) and, for each found one, its hit's explanation."""
    return engine.recall(q.query, k=k, now=now, as_of=q.as_of,
                         why=[m for m, g in q.relevant.items() if g > 0])
