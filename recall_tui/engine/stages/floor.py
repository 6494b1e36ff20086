"""floor (bastra): put scores on the reported scale, drop those under the floor, cut at k.
Never pads.

Scales: `fusion_max` reports 100 x score / (the best fused score possible in this recall:
rank 1 in every channel that ran, weights included; a+b in linear mode; Σ w in convex mode),
so bastra's bands read naturally (>= 100 strong, 30-100 worth reading, < 30 noise); `top` reports
100 x score / the best hit's score; `raw` reports the boosted score itself.
"""

from __future__ import annotations

from recall_tui.engine.config_sections import FuseConfig
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate


def scale(scores: dict[str, float], how: str, fusion_max: float) -> dict[str, float]:
    """Scores on the reported scale."""
    if how == "raw":
        return dict(scores)
    if how == "top":
        top = max(scores.values(), default=0.0)
        return {k: (100 * v / top if top > 0 else 0.0) for k, v in scores.items()}
    return {k: 100 * v / (fusion_max or 1.0) for k, v in scores.items()}


def explain(before: float, after: float, how: str, fusion_max: float, top: float,
            fuse_cfg: FuseConfig) -> str:
    """The scaling step written out: the score before, what it is divided by, and why a
    score can pass 100."""
    if how == "raw":
        return f"raw scale: the score as it is, {after:.4g}"
    if how == "top":
        return (f"100 x {before:.4g} / {top:.4g} = {after:.4g}; {top:.4g} is the best hit's "
                f"score in this recall")
    if fuse_cfg.method == "linear":
        best = (f"the best possible fused score here (cosine 1 and every keyword term, "
                f"linear {fuse_cfg.linear_similarity:g}/{fuse_cfg.linear_keyword:g})")
    elif fuse_cfg.method == "convex":
        best = ("the best possible fused score here (the best candidate of every channel that "
                "ran, Σ w)")
    else:
        best = (f"the best possible fused score here (rank 1 in every channel that ran, "
                f"Σ w/(k+1), RRF k={fuse_cfg.rrf_k})")
    text = f"100 x {before:.4g} / {fusion_max:.4g} = {after:.4g}; {fusion_max:.4g} is {best}"
    if after > 100:
        text += "; over 100: the boosts (or a hop) lifted it above that best fused score"
    return text


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.floor
    before = {mid: st.score[mid] for mid in st.order}
    st.final = scale(before, cfg.scale, st.fusion_max)
    top = max(before.values(), default=0.0)
    # Written out for the hits only, when the trace is built (see fuse's formula).
    final, fusion_max, fuse_cfg = st.final, st.fusion_max, st.cfg.fuse
    st.scaling_text = lambda mid: (explain(before[mid], final[mid], cfg.scale, fusion_max,
                                           top, fuse_cfg) if mid in before else "")
    floor = st.filters.min_score if st.filters.min_score is not None else (
        cfg.min_score if cfg.enabled else None)
    out = Out(info=[("scale", cfg.scale), ("k", str(st.k)),
                    ("floor", "off" if floor is None else f"{floor:g}")])
    passing = []
    for mid in st.order:
        if floor is not None and st.final[mid] < floor:
            out.dropped.append(st.drop(mid, "floor", f"score {st.final[mid]:.1f} < floor {floor:g}"))
        else:
            passing.append(mid)
    beyond = st.cfg.hops.beyond_k
    direct = [mid for mid in passing if not (beyond and mid in st.hops)]
    kept = direct[: st.k]
    for rank, mid in enumerate(direct[st.k:], st.k + 1):
        out.dropped.append(st.drop(mid, "floor", f"rank {rank} > k={st.k}"))
    if beyond:
        parents = set(kept)
        for mid in passing:
            if mid in st.hops:
                if st.hops[mid].from_id in parents:
                    kept.append(mid)
                else:
                    out.dropped.append(st.drop(mid, "floor", f"its parent {st.hops[mid].from_id} "
                                                             "is not among the hits"))
    st.hits = kept
    for rank, mid in enumerate(kept, 1):
        out.candidates.append(Candidate(mid, st.final[mid], rank))
    return out
