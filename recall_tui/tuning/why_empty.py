"""Why a recall returned nothing: the stage that emptied it, read from its trace.

`recall-tui eval` scores a query with no hits as 0 on every metric; a column of zeros says
nothing about *why*. `why_empty(trace)` names the stage that removed the last candidates (no
channel found any, the filter, the score floor, ...) and, for the floor, whether the boosts
(bastra's staleness factor, abmind's recency...) pushed candidates under it that would have
passed without them. `summarise(reasons)` turns one reason per query into the lines `eval`
prints under its table. Everything comes from the trace's stage records: this module computes
no score of its own. Headless: no textual, no rich.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from recall_tui.engine.trace import CHANNELS, STAGE_ORDER

#: `floor` drop reasons as the floor stage writes them: "score 12.3 < floor 30".
_FLOOR_DROP = re.compile(r"score (-?[0-9.eE+-]+) < floor (-?[0-9.eE+-]+)")
#: Boost factors in the boosts stage's candidate note: "stalenessx0.2 recencyx0.61".
_FACTOR = re.compile(r"([A-Za-z_]+)x(-?[0-9.eE+-]+)")


@dataclass(frozen=True)
class EmptyReason:
    """Why one recall came back without hits."""

    stage: str
    """The stage that removed the last candidates (`floor`, `filter`, `mmr`, ...), or
    `channels` when no channel produced a candidate at all."""
    detail: str
    """One line for people, e.g. "all 4 candidates under the floor 30 (best 20.0)"."""
    candidates: int = 0
    """Memories the stage removed (for `channels`: 0)."""
    boosted_under: int = 0
    """Floor only: candidates that scored at or over the floor before the boosts and under it
    after them (the boosts, not the match, dropped them)."""
    factors: tuple[str, ...] = ()
    """Floor only: the boosts below 1 on those candidates, e.g. ("staleness x0.2",)."""
    floor: float | None = None
    """Floor only: the floor value."""


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _floor_reason(trace, floor_rec) -> EmptyReason:
    notes: dict[str, str] = {}
    for rec in trace.stages:
        if rec.name == "boosts":
            notes = {c.id: c.note for c in rec.candidates}
    scored: list[tuple[str, float, float]] = []
    for d in floor_rec.dropped:
        m = _FLOOR_DROP.search(d.reason)
        if m:
            score, fl = _num(m.group(1)), _num(m.group(2))
            if score is not None and fl is not None:
                scored.append((d.id, score, fl))
    if not scored:  # only the cut at k (k=0) or a hop whose parent left
        reasons = Counter(d.reason.split(" ")[0] for d in floor_rec.dropped)
        return EmptyReason("floor", f"the cut at k removed {len(floor_rec.dropped)} candidate(s) "
                           f"({', '.join(sorted(reasons))})", len(floor_rec.dropped))
    floor = scored[0][2]
    best = max(s for _, s, _ in scored)
    under, names = 0, Counter()
    best_unboosted = 0.0
    for mid, score, _fl in scored:
        prod, low = 1.0, []
        for name, value in _FACTOR.findall(notes.get(mid, "")):
            v = _num(value)
            if v is not None and v > 0:
                prod *= v
                if v < 1.0:
                    low.append(f"{name} x{v:g}")
        unboosted = score / prod if prod > 0 else score
        best_unboosted = max(best_unboosted, unboosted)
        if low and unboosted >= floor:
            under += 1
            names.update(low)
    detail = (f"all {len(scored)} candidate(s) scored under the floor {floor:g} "
              f"(best {best:.1f})")
    factors = tuple(n for n, _ in names.most_common(3))
    if under:
        detail += (f"; {under} of them only because of the boosts ({', '.join(factors)}): "
                   f"without them the best would score {best_unboosted:.1f}")
    return EmptyReason("floor", detail, len(scored), under, factors, floor)


def why_empty(trace) -> EmptyReason | None:
    """The reason a trace has no hits, or None when it has some."""
    if trace.hits:
        return None
    by_name = {rec.name: rec for rec in trace.stages}
    if by_name.get("cache") is not None and trace.cache_hit:
        return EmptyReason("cache", "served from the cache: a cached recall with no hits")
    found = 0
    skipped: list[str] = []
    for name in CHANNELS:
        rec = by_name.get(name)
        if rec is None:
            continue
        if rec.skipped:
            skipped.append(f"{name}: {rec.reason}" if rec.reason else name)
        else:
            found += len(rec.candidates)
    if not found:
        ran = [n for n in CHANNELS if n in by_name and not by_name[n].skipped]
        detail = ("no channel found a candidate" + (f" (ran: {', '.join(ran)})" if ran else "")
                  + (f"; skipped {'; '.join(skipped)}" if skipped and not ran else ""))
        return EmptyReason("channels", detail)
    last = None
    for name in STAGE_ORDER:
        rec = by_name.get(name)
        if rec is not None and rec.dropped and name not in CHANNELS:
            last = rec
    if last is None:
        return EmptyReason("fuse", f"the channels found {found} candidate(s) but none reached "
                           "the end of the pipeline")
    if last.name == "floor":
        return _floor_reason(trace, last)
    reasons = Counter(d.reason for d in last.dropped)
    top = "; ".join(f"{r} ({n})" if n > 1 else r for r, n in reasons.most_common(2))
    return EmptyReason(last.name, f"{last.name} dropped the last {len(last.dropped)} "
                       f"candidate(s): {top}", len(last.dropped))


def summarise(reasons: Sequence[EmptyReason | None], total: int | None = None) -> list[str]:
    """Lines explaining the empty recalls of one run: how many, and per stage how many with a
    typical detail. Empty when every recall had hits."""
    empty = [r for r in reasons if r is not None]
    if not empty:
        return []
    n_all = len(reasons) if total is None else total
    out = [f"{len(empty)} of {n_all} queries returned no hits"]
    by_stage: dict[str, list[EmptyReason]] = {}
    for r in empty:
        by_stage.setdefault(r.stage, []).append(r)
    for stage, rs in sorted(by_stage.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        line = f"{len(rs)} emptied by {stage}"
        if stage == "floor":
            boosted = [r for r in rs if r.boosted_under]
            floors = sorted({r.floor for r in rs if r.floor is not None})
            if floors:
                line += f": every candidate under the floor {'/'.join(f'{f:g}' for f in floors)}"
            out.append(line)
            if boosted:
                names = Counter(f for r in boosted for f in r.factors)
                out.append(f"  in {len(boosted)} of them the boosts "
                           f"({', '.join(n for n, _ in names.most_common(3))}) pushed under the "
                           "floor candidates that would have passed without them:")
                out.append("  the boost factor x the floor, not the match, emptied the recall")
            continue
        line += f": {rs[0].detail}"
        out.append(line)
    return out


def summary_json(reasons: Sequence[EmptyReason | None]) -> dict:
    """The same as data: {"queries": n empty, "by_stage": {stage: n}, "boosted_under_floor": n}."""
    empty = [r for r in reasons if r is not None]
    return {
        "queries": len(empty),
        "by_stage": dict(Counter(r.stage for r in empty)),
        "boosted_under_floor": sum(1 for r in empty if r.boosted_under),
        "lines": summarise(reasons),
    }


def reason_json(r: EmptyReason | None) -> dict | None:
    """One reason as data (None stays None)."""
    if r is None:
        return None
    return {"stage": r.stage, "detail": r.detail, "candidates": r.candidates,
            "boosted_under": r.boosted_under, "factors": list(r.factors), "floor": r.floor}
