"""turns: brute-force cosine over raw transcript turns (memoturn include_turns). Reported
in Trace.turns beside the ranking, never fused."""

from __future__ import annotations

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.vector import query_vector
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.topk import best_first
from recall_tui.engine.trace import Candidate, TurnHit
from recall_tui.vault.model import Turn


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.turns
    if not (cfg.enabled or st.include_turns):
        return Out(skipped=True, reason="off (turns.enabled is false and include_turns not asked)")
    if engine.index is None:
        return Out(skipped=True, reason="no index")
    vec, reason = query_vector(engine, st)
    if vec is None:
        return Out(skipped=True, reason=f"needs a query embedding: {reason}")
    ids, mat = engine.index.turn_vectors()
    if len(ids) == 0:
        return Out(info=[("turns", "0")], reason="no turn vectors")
    sims = np.asarray(mat, dtype=np.float32) @ np.asarray(vec, dtype=np.float32)
    turns = engine.turns_by_id()
    session = st.filters.session_id
    # Only the turns that can be taken are sorted (with a million turns the full sort cost
    # as much as the product): the limit plus a margin for turns the vault no longer holds,
    # and all of them when that margin was not enough (or a session filter skips turns).
    margin = None if session else 4 * cfg.limit + 16
    order = best_first(sims, sims >= cfg.threshold, margin)
    picked = _take(order, sims, ids, turns, cfg.limit, cfg.threshold, session)
    if margin is not None and len(picked) < cfg.limit and len(order) == margin:
        picked = _take(best_first(sims, sims >= cfg.threshold, None), sims, ids, turns,
                       cfg.limit, cfg.threshold, session)
    out = Out(info=[("turns", str(len(ids))), ("threshold", f"{cfg.threshold:g}")])
    for t, sim in picked:
        out.candidates.append(Candidate(t.id, sim, len(out.candidates) + 1, t.text[:100]))
        st.turns.append(TurnHit(t.session_id, t.seq, t.role, t.text, sim))
    return out


def _take(order: np.ndarray, sims: np.ndarray, ids: list[str], turns: dict[str, Turn],
          limit: int, threshold: float, session: str | None) -> list[tuple[Turn, float]]:
    """The first `limit` turns of `order` at or above `threshold` that the vault holds (and
    of `session`, when one is asked for)."""
    picked: list[tuple[Turn, float]] = []
    for i in order:
        if len(picked) >= limit or sims[i] < threshold:
            break
        t = turns.get(ids[i])
        if t is None or (session and t.session_id != session):
            continue
        picked.append((t, float(sims[i])))
    return picked
