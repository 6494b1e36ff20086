"""floor (bastra): put scores on the reported scale, drop those under the floor, cut at k.
Never pads.

Scales: `fusion_max` reports 100 x score / (the best fused score possible in this recall:
rank 1 in every channel that ran, weights included; a+b in linear mode; Σ w in convex mode),
so bastra's bands read naturally (>= 100 strong, 30-100 worth reading, < 30 noise); `top` reports
100 x score / the best hit's score; `raw` reports the boosted score itself; `evidence` (with the
calibrated floor only; the default preset's) reports 50 x the hit's evidence E (0..100), a
score with one meaning in every recall (the order stays the fusion's); before the calibrated
decision it acts as `fusion_max`.

The calibrated floor (`floor.calibrated`, the default preset's): after the cut at k, each
kept hit's evidence E = lexical + vector is measured against the vault's own calibration
(`recall_tui.engine.calibration`); when the best is under `floor.evidence_floor` the recall
abstains (every hit dropped with "best evidence 0.21 < calibrated floor 0.40: abstained"),
otherwise a hit whose reported score shows as 0.0 (under ZERO_SHOWN; min-max fusion gives a
channel's worst candidate 0) is dropped when its own evidence is under the floor too. The stage's info lines give the
calibration, the best evidence and the decision; each hit's scaling text ends with its
evidence.

This is the only stage that reads the recall's k: every pool before it is sized by the
candidate depth (`recall_tui.engine.depth`), so the hits at k = n are the first n at any k up
to the depth. The info line `depth` says which; `note` when k is above it.
"""

from __future__ import annotations

import dataclasses

from recall_tui.engine import calibration
from recall_tui.engine.config_sections import FuseConfig
from recall_tui.engine.depth import above_depth, pool_depth
from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.fuse import method_of
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate

#: The evidence scale (`floor.scale = "evidence"`, calibrated floor only): score = 50 x E.
EVIDENCE_SCALE = 50.0

#: A reported score under this shows as 0.0 (one decimal): under the calibrated floor such a
#: hit is dropped.
ZERO_SHOWN = 0.05


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
    best = method_of(fuse_cfg).best(fuse_cfg)
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
                    ("floor", "off" if floor is None else f"{floor:g}"),
                    ("depth", str(pool_depth(st.cfg, st.k)))])
    if note := above_depth(st.cfg, st.k):
        out.info.append(("note", note))
    passing = []
    for mid in st.order:
        if floor is not None and st.final[mid] < floor:
            out.dropped.append(st.drop(mid, "floor", f"score {st.final[mid]:.1f} < floor {floor:g}"))
        else:
            passing.append(mid)
    beyond = st.cfg.hops.beyond_k
    direct = [mid for mid in passing if not (beyond and mid in st.hops)]
    notes: dict[str, str] = {}
    if cfg.calibrated and direct:
        # The decision, and the drop of hits shown as 0.0, look at the whole candidate depth
        # before the cut at k, so that a dropped hit's slot is refilled and the hits at k = n
        # are the first n at any k up to the depth (prefix-stable ranking).
        from recall_tui.engine.stages.vector import query_vector

        vectors = bool(engine.memory_vectors()) and query_vector(engine, st)[0] is not None
        if vectors:
            level, how = calibration.floor_for(engine, cfg.evidence_floor, cfg.probe_margin)
        else:
            level, how = cfg.lexical_floor, ("no vector evidence in this recall: the lexical "
                                             "floor (floor.lexical_floor)")
        out.info.append(("calibrated floor", f"{level:.2f}: {how}"))
        pool = direct[: max(pool_depth(st.cfg, st.k), st.k)]
        rest = direct[len(pool):]
        survivors = decide(engine, st, pool, level, out, notes, pool)
        if not survivors:  # abstained: nothing beyond the depth comes in instead
            reason = next((v for k_, v in out.info if k_ == "decision"), "abstained")
            for mid in rest:
                out.dropped.append(st.drop(mid, "floor", reason))
            rest = []
        direct = survivors + rest
    elif cfg.calibrated:
        level, how = calibration.floor_for(engine, cfg.evidence_floor, cfg.probe_margin)
        out.info.append(("calibrated floor", f"{level:.2f}: {how}"))
        decide(engine, st, [], level, out, notes, [])
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
        out.candidates.append(Candidate(mid, st.final[mid], rank, notes.get(mid, "")))
    return out


def decision(best: float | None, floor: float) -> tuple[bool, str]:
    """(abstain, the decision written out) for the best hit's evidence against the floor."""
    if best is None:
        return False, "no hit to judge"
    if best < floor:
        return True, f"best evidence {best:.2f} < calibrated floor {floor:.2f}: abstained"
    return False, f"best evidence {best:.2f} >= calibrated floor {floor:.2f}: kept"


def decide(engine: StageContext, st: RecallState, kept: list[str], floor: float, out: Out,
           notes: dict[str, str], judged: list[str] | None = None) -> list[str]:
    """The calibrated relevance decision over the hits kept at k (see the module doc)."""
    from recall_tui.engine.stages.vector import query_vector

    cal = calibration.for_engine(engine)
    qvec, _reason = query_vector(engine, st) if kept else (None, "")
    vecs = engine.memory_vectors() if qvec is not None else {}
    fixes = calibration.one_edit_corrections(engine, st.query.words) if kept else {}
    qt = calibration.query_terms(cal, st.query.terms, st.query.words, fixes)
    ev: dict[str, calibration.Evidence] = {}

    def measure(mid: str) -> calibration.Evidence:
        if mid not in ev:
            v = vecs.get(mid)
            cos = float(v @ qvec) if v is not None and qvec is not None else None
            ev[mid] = calibration.evidence(cal, qt, mid, cos)
        return ev[mid]

    # the hits, then the rest of the candidate depth (its best counts for the decision too)
    considered = [*kept, *(m for m in (judged or []) if m not in kept)] if kept else []
    for mid in considered:
        e = measure(mid)
        hop = st.hops.get(mid)
        if hop is not None:  # a 1-hop neighbour inherits its parent's evidence, like its score
            inherited = measure(hop.from_id).value * hop.link_score * hop.factor
            if inherited > e.value:
                ev[mid] = dataclasses.replace(e, inherited=inherited, via=hop.from_id)
    st.evidence = ev
    best_id = max(considered, key=lambda m: ev[m].value) if considered else None
    best = ev[best_id].value if best_id is not None else None
    abstain, text = decision(best, floor)
    out.info += [("calibration", cal.describe()),
                 ("query idf", ", ".join(f"{t} {w:.2f}" for t, w in qt.weight.items()) or "(none)"),
                 ("best evidence", "-" if best_id is None else f"{best:.2f} ({best_id})"),
                 ("evidence", "; ".join(f"{m} {ev[m].value:.4f}" for m in kept) or "(none)"),
                 ("decision", text)]
    scaling = st.scaling_text

    def written(mid: str) -> str:
        base = scaling(mid) if scaling is not None else ""
        e = ev.get(mid)
        return base if e is None else f"{base}; {e.describe()}"

    st.scaling_text = written
    if abstain:
        for mid in kept:
            out.dropped.append(st.drop(mid, "floor", f"{text} (this memory: {ev[mid].describe()})"))
        return []
    if st.cfg.floor.scale == "evidence":
        before = dict(st.final)
        final = st.final  # not `st` itself: a closure kept on `st` would make a cycle
        for mid in kept:
            final[mid] = EVIDENCE_SCALE * ev[mid].value

        def evidence_scaled(mid: str) -> str:
            e = ev.get(mid)
            if e is None:
                return written(mid)
            return (f"evidence scale: {EVIDENCE_SCALE:g} x E = {EVIDENCE_SCALE:g} x "
                    f"{e.value:.4g} = {final.get(mid, 0.0):.4g} (the same meaning in every "
                    f"recall: 50 = every query term matched or a cosine at the vault's "
                    f"same-subject level; fusion_max would show {before.get(mid, 0.0):.4g}); "
                    f"{e.describe()}")

        st.scaling_text = evidence_scaled
    out_kept = []
    for mid in kept:
        notes[mid] = ev[mid].describe()
        if st.final[mid] < ZERO_SHOWN and (st.cfg.floor.scale == "evidence" or ev[mid].value < floor):
            out.dropped.append(st.drop(mid, "floor", f"score {st.final[mid]:.1f} and evidence "
                                                     f"{ev[mid].value:.2f} < calibrated floor "
                                                     f"{floor:.2f}: shown as 0.0 with too little "
                                                     "evidence, not injected"))
        else:
            out_kept.append(mid)
    return out_kept
