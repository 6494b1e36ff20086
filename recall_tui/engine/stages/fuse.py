"""fuse: weighted reciprocal rank fusion, a convex combination of min-max normalised scores, or
MemoryVault's linear merge.

RRF: `score = sum over channels of w_c / (rrf_k + rank_c)`.

Linear (MemoryVault): `score = linear_similarity x cosine + linear_keyword x share`, where
`share` is how MemoryVault normalises its keyword_match_count: the distinct query terms the
memory matched in any weighted keyword field, divided by the distinct query terms (0..1).
Channels other than vector and keyword add `linear_keyword x w_c x raw / best raw of c`, so
they rank with keyword-like evidence; the divisor (the channel's best |raw| score in this
recall) is written in each hit's formula and in the stage's `divisors` info line. A channel's
rank is its own order (fuzzy ranks by sub-query, porter before trigram), which need not
follow its raw scores.

Convex (recall-tui's own): `score = sum over channels of w_c x (raw - lo_c) / (hi_c - lo_c)`,
each channel's raw scores min-max normalised over the candidates it returned in this recall
(hi_c its best, lo_c its worst; a channel whose candidates all score alike gives each 1), so a
channel's best candidate brings w_c and its worst 0. Unlike RRF it keeps how far apart the
scores are (a clear first vector match outscores a near-tie); unlike the linear merge every
channel is on the same 0..1 scale.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recall_tui.engine.config_sections import FuseConfig
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.topk import by_score
from recall_tui.engine.trace import CHANNELS, Candidate, ChannelScore


def rrf(rankings: Mapping[str, Sequence[tuple[str, float, int]]], weights: Mapping[str, float],
        k: int) -> dict[str, tuple[float, list[ChannelScore]]]:
    """Fuse channel rankings [(id, raw, rank)] into {id: (score, channel scores)}."""
    out: dict[str, tuple[float, list[ChannelScore]]] = {}
    for ch, rows in rankings.items():
        w = weights.get(ch, 1.0)
        for mid, raw, rank in rows:
            c = w / (k + rank)
            score, parts = out.get(mid, (0.0, []))
            parts.append(ChannelScore(ch, raw, rank, w, c))
            out[mid] = (score + c, parts)
    return out


def linear(rankings: Mapping[str, Sequence[tuple[str, float, int]]],
           keyword_share: Mapping[str, float], weights: Mapping[str, float],
           a: float, b: float) -> dict[str, tuple[float, list[ChannelScore]]]:
    """MemoryVault's merge: a x cosine + b x keyword share (+ other channels, see module doc)."""
    out: dict[str, tuple[float, list[ChannelScore]]] = {}
    bests = linear_divisors(rankings)
    for ch, rows in rankings.items():
        best = bests[ch]
        for mid, raw, rank in rows:
            if ch == "vector":
                w, c = a, a * raw
            elif ch == "keyword":
                w, c = b, b * keyword_share.get(mid, 0.0)
            else:
                w = b * weights.get(ch, 1.0)
                c = w * raw / best
            score, parts = out.get(mid, (0.0, []))
            parts.append(ChannelScore(ch, raw, rank, w, c))
            out[mid] = (score + c, parts)
    return out


def linear_divisors(rankings: Mapping[str, Sequence[tuple[str, float, int]]]) -> dict[str, float]:
    """Each channel's divisor in the linear merge: its best |raw| score in this recall (1 when
    it has none). Only the channels other than vector and keyword use it."""
    return {ch: max((abs(r[1]) for r in rows), default=0.0) or 1.0
            for ch, rows in rankings.items()}


def minmax(raw: float, lo: float, hi: float) -> float:
    """`raw` min-max normalised to 0..1 between a channel's worst (lo) and best (hi) score;
    1 when every candidate of the channel scored alike."""
    return (raw - lo) / (hi - lo) if hi > lo else 1.0


def ranges(rankings: Mapping[str, Sequence[tuple[str, float, int]]]) -> dict[str, tuple[float, float]]:
    """Each channel's (worst, best) raw score in this recall: the bounds convex fusion
    normalises by."""
    return {ch: (min(r[1] for r in rows), max(r[1] for r in rows))
            for ch, rows in rankings.items() if rows}


def convex(rankings: Mapping[str, Sequence[tuple[str, float, int]]],
           weights: Mapping[str, float],
           bounds: Mapping[str, tuple[float, float]] | None = None,
           ) -> dict[str, tuple[float, list[ChannelScore]]]:
    """Convex combination of min-max normalised scores (see the module doc); `bounds`:
    `ranges(rankings)` when the caller has it already."""
    out: dict[str, tuple[float, list[ChannelScore]]] = {}
    if bounds is None:
        bounds = ranges(rankings)
    for ch, rows in rankings.items():
        w = weights.get(ch, 1.0)
        for mid, raw, rank in rows:
            c = w * minmax(raw, *bounds[ch])
            score, parts = out.get(mid, (0.0, []))
            parts.append(ChannelScore(ch, raw, rank, w, c))
            out[mid] = (score + c, parts)
    return out


Rankings = Mapping[str, Sequence[tuple[str, float, int]]]
Fused = dict[str, tuple[float, list[ChannelScore]]]
Bounds = Mapping[str, tuple[float, float]]
Divisors = Mapping[str, float]


def _rrf_formula(cfg: FuseConfig, parts: Sequence[ChannelScore], score: float,
                 bounds: Bounds | None, divisors: Divisors | None) -> str:
    terms = " + ".join(f"{p.weight:g}/({cfg.rrf_k}+{p.rank}) [{p.channel}]" for p in parts)
    return f"RRF k={cfg.rrf_k}: Σ w/(k + rank); {terms or '0'} = {score:.4g}"


def _linear_formula(cfg: FuseConfig, parts: Sequence[ChannelScore], score: float,
                    bounds: Bounds | None, divisors: Divisors | None) -> str:
    known = divisors or {}

    def term(p: ChannelScore) -> str:
        if p.channel == "vector":
            return f"{p.weight:g} x {p.raw:.4g} [vector]"
        if p.channel == "keyword":  # the share is the matched fraction of the query terms
            share = p.contribution / p.weight if p.weight else 0.0
            return f"{p.weight:g} x {share:.4g} share [keyword]"
        best = known.get(p.channel, 1.0)
        return f"{p.weight:g} x {p.raw:.4g}/{best:.4g} [{p.channel}, ÷ its best raw]"

    terms = " + ".join(term(p) for p in parts)
    return (f"linear: {cfg.linear_similarity:g} x cosine + {cfg.linear_keyword:g} x keyword "
            f"share + other channels w x raw / their best raw; {terms or '0'} = {score:.4g}")


def _convex_formula(cfg: FuseConfig, parts: Sequence[ChannelScore], score: float,
                    bounds: Bounds | None, divisors: Divisors | None) -> str:
    known = bounds or {}

    def term(p: ChannelScore) -> str:
        lo, hi = known.get(p.channel, (p.raw, p.raw))
        norm = f"({p.raw:.4g}-{lo:.4g})/({hi:.4g}-{lo:.4g})" if hi > lo else "1 (one score)"
        return f"{p.weight:g} x {norm} [{p.channel}]"

    terms = " + ".join(term(p) for p in parts)
    return (f"convex: Σ w x (raw - worst) / (best - worst), per channel over this recall's "
            f"candidates; {terms or '0'} = {score:.4g}")


def _rrf_fuse(rankings: Rankings, st: RecallState, cfg: FuseConfig,
              weights: Mapping[str, float]) -> tuple[Fused, float, Bounds | None, Divisors | None]:
    fused = rrf(rankings, weights, cfg.rrf_k)
    return fused, sum(weights[c] / (cfg.rrf_k + 1) for c in rankings) or 1.0, None, None


def _linear_fuse(rankings: Rankings, st: RecallState, cfg: FuseConfig,
                 weights: Mapping[str, float]) -> tuple[Fused, float, Bounds | None, Divisors | None]:
    fused = linear(rankings, keyword_shares(st), weights, cfg.linear_similarity,
                   cfg.linear_keyword)
    best = (cfg.linear_similarity if "vector" in rankings else 0.0)
    best += cfg.linear_keyword * (1 + sum(weights[c] for c in rankings
                                          if c not in ("vector", "keyword")))
    if "keyword" not in rankings:
        best -= cfg.linear_keyword
    return fused, best if best > 0 else 1.0, None, linear_divisors(rankings)


def _convex_fuse(rankings: Rankings, st: RecallState, cfg: FuseConfig,
                 weights: Mapping[str, float]) -> tuple[Fused, float, Bounds | None, Divisors | None]:
    bounds = ranges(rankings)
    return (convex(rankings, weights, bounds), sum(weights[c] for c in rankings) or 1.0,
            bounds, None)


@dataclass(frozen=True)
class FusionMethod:
    """Everything that differs between the fusion methods, in one row of `METHODS`: the
    fuse stage, the hits' formulas and the floor's scaling text all read it from there."""

    fuse: Callable[[Rankings, RecallState, FuseConfig, Mapping[str, float]],
                   tuple[Fused, float, Bounds | None, Divisors | None]]
    """(fused scores, `fusion_max` (the best fused score possible here), the channel bounds
    convex's formula needs, the divisors linear's needs; None where a method has none)."""
    formula: Callable[[FuseConfig, Sequence[ChannelScore], float, Bounds | None,
                       Divisors | None], str]
    """One candidate's fused score written out with its numbers."""
    info: Callable[[FuseConfig, Bounds | None, Divisors | None], list[tuple[str, str]]]
    """The stage's facts after `method`."""
    best: Callable[[FuseConfig], str]
    """What `fusion_max` is, for the floor's scaling explanation."""


METHODS: dict[str, FusionMethod] = {
    "rrf": FusionMethod(
        _rrf_fuse, _rrf_formula, lambda cfg, _b, _d: [("rrf_k", str(cfg.rrf_k))],
        lambda cfg: (f"the best possible fused score here (rank 1 in every channel that ran, "
                     f"Σ w/(k+1), RRF k={cfg.rrf_k})")),
    "linear": FusionMethod(
        _linear_fuse, _linear_formula,
        lambda _cfg, _b, d: [("divisors", ", ".join(
            f"{ch} {v:.4g}" for ch, v in (d or {}).items() if ch not in ("vector", "keyword"))
            or "(none: vector and keyword only)")],
        lambda cfg: (f"the best possible fused score here (cosine 1 and every keyword term, "
                     f"linear {cfg.linear_similarity:g}/{cfg.linear_keyword:g})")),
    "convex": FusionMethod(
        _convex_fuse, _convex_formula,
        lambda _cfg, b, _d: [("ranges", ", ".join(f"{ch} {lo:.4g}..{hi:.4g}" for ch, (lo, hi)
                                              in (b or {}).items()) or "(none)")],
        lambda _cfg: ("the best possible fused score here (the best candidate of every "
                      "channel that ran, Σ w)")),
}


def method_of(cfg: FuseConfig) -> FusionMethod:
    """The configuration's fusion method (RRF for a name `METHODS` lacks)."""
    return METHODS.get(cfg.method, METHODS["rrf"])


def formula(cfg: FuseConfig, parts: Sequence[ChannelScore], score: float,
            bounds: Bounds | None = None, divisors: Divisors | None = None) -> str:
    """The fused score written out with its numbers, e.g.
    `RRF k=60: Σ w/(k + rank); 1/(60+1) [keyword] + 0.5/(60+3) [vector] = 0.02433` (parts
    separated by `; `: the rule, then the sum). Convex needs the channels' `bounds`; linear
    its `divisors` (`linear_divisors(rankings)`, each other channel's best raw score), so
    every term can be recomputed by hand (`0.3 x 5.28/8.98 [fuzzy, ÷ its best raw]`)."""
    return method_of(cfg).formula(cfg, parts, score, bounds, divisors)


def keyword_shares(st: RecallState) -> dict[str, float]:
    """Matched distinct query terms / distinct query terms, per memory."""
    n = len(set(st.query.terms)) or 1
    return {mid: len({t for mt in mts for t in mt.terms}) / n
            for mid, mts in st.matched_terms.items()}


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.fuse
    rankings = {ch: [(c.id, c.score, c.rank) for c in st.channels[ch]]
                for ch in CHANNELS if ch in st.channels}
    weights = {ch: float(getattr(cfg.weights, ch)) for ch in CHANNELS}
    method = method_of(cfg)
    fused, st.fusion_max, bounds, divisors = method.fuse(rankings, st, cfg, weights)
    scores = {mid: f[0] for mid, f in fused.items()}
    order = by_score(engine, scores, fused)
    st.fused = {mid: scores[mid] for mid in order}
    # The formula is written out for the hits only, when the trace is built (`Engine._hits`):
    # not for every candidate of every recall (every keystroke).
    st.fusion_text = lambda mid: (method.formula(cfg, fused[mid][1], fused[mid][0], bounds,
                                                 divisors)
                                  if mid in fused else "")
    st.channel_scores = {mid: fused[mid][1] for mid in order}
    st.order = order
    st.score = dict(st.fused)
    out = Out(info=[("method", cfg.method), *method.info(cfg, bounds, divisors),
                    ("channels", " ".join(rankings) or "(none)"),
                    ("fusion_max", f"{st.fusion_max:.6f}")])
    for rank, mid in enumerate(order, 1):
        chs = "+".join(p.channel for p in st.channel_scores[mid])
        out.candidates.append(Candidate(mid, st.fused[mid], rank, chs))
    return out
