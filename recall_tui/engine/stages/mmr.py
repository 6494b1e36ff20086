"""mmr (abmind): maximal marginal relevance. Relevance is each candidate's score divided by
the best score (0..1); similarity is Jaccard on lower-cased content words or the cosine of
the embeddings; every pick records its relevance, its penalty (max similarity to the memories
already picked), the memory it was closest to and the runner-up."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import jaccard
from recall_tui.engine.trace import Candidate, MMRStep


def mmr_order(ids: Sequence[str], relevance: Mapping[str, float],
              sim: Callable[[str, str], float], lam: float) -> list[MMRStep]:
    """Greedy MMR over all ids: each step picks max lam x rel - (1 - lam) x max sim to the
    picked ones; ties keep the input order."""
    left = list(ids)
    picked: list[str] = []
    steps: list[MMRStep] = []
    cache: dict[tuple[str, str], float] = {}

    def s(a: str, b: str) -> float:
        key = (a, b) if a < b else (b, a)
        if key not in cache:
            cache[key] = sim(a, b)
        return cache[key]

    while left:
        scored = []
        for cid in left:
            pen, closest = 0.0, None
            for p in picked:
                v = s(cid, p)
                if closest is None or v > pen:
                    pen, closest = v, p
            scored.append((lam * relevance[cid] - (1 - lam) * pen, cid, pen, closest))
        best_i = max(range(len(scored)), key=lambda i: (scored[i][0], -i))
        val, cid, pen, closest = scored[best_i]
        others = [x for i, x in enumerate(scored) if i != best_i]
        runner = max(others, key=lambda x: x[0])[1] if others else None
        steps.append(MMRStep(len(steps) + 1, cid, relevance[cid], pen, lam, val, closest, runner))
        picked.append(cid)
        left.remove(cid)
    return steps


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.mmr
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if len(st.order) < 2:
        return Out(skipped=True, reason="fewer than 2 candidates")
    st.pre_mmr_rank = {mid: i for i, mid in enumerate(st.order, 1)}
    pool = st.order[: cfg.pool]
    rest = st.order[cfg.pool:]
    top = max(st.score[mid] for mid in pool)
    rel = {mid: (st.score[mid] / top if top > 0 else 0.0) for mid in pool}
    method = cfg.similarity
    sim: Callable[[str, str], float]
    if method == "cosine":
        vecs = engine.memory_vectors()
        if vecs and all(mid in vecs for mid in pool):
            def sim(a: str, b: str) -> float:
                return float(np.dot(vecs[a], vecs[b]))
        else:
            method = "jaccard (no vectors for cosine)"
    if not method == "cosine":
        ws = engine.word_sets()

        def sim(a: str, b: str) -> float:
            return jaccard(ws[a], ws[b])

    steps = mmr_order(pool, rel, sim, cfg.lam)
    for step in steps:
        st.mmr[step.id] = step
    st.order = [s.id for s in steps] + rest
    out = Out(info=[("lambda", f"{cfg.lam:g}"), ("similarity", method),
                    ("pool", str(len(pool)))])
    for step in steps:
        note = f"rel {step.relevance:.3f} pen {step.penalty:.3f}"
        if step.closest_id:
            note += f" near {step.closest_id}"
        out.candidates.append(Candidate(step.id, step.mmr, step.step, note))
    return out
