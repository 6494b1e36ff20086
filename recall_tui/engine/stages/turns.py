"""turns: brute-force cosine over raw transcript turns (memoturn include_turns). Reported
in Trace.turns beside the ranking, never fused."""

from __future__ import annotations

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.vector import query_vector
from recall_tui.engine.state import Out, RecallState
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
    order, cut = _best_first(sims, cfg.threshold, cfg.limit if not session else None)
    picked = _take(order, sims, ids, turns, cfg.limit, cfg.threshold, session)
    if cut and len(picked) < cfg.limit:  # turns the vault no longer holds filled the margin
        picked = _take(_best_first(sims, cfg.threshold, None)[0], sims, ids, turns, cfg.limit,
                       cfg.threshold, session)
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


def _best_first(sims: np.ndarray, threshold: float,
                limit: int | None) -> tuple[np.ndarray, bool]:
    """Indexes of `sims` from the most similar down, ties by index (`argsort(-sims,
    kind="stable")`'s order), cut where the caller's loop would stop anyway: below
    `threshold`, and after `limit` entries plus a margin for turns the vault no longer holds.
    With a million turns the full sort cost as much as the product itself; this sorts only
    the few that can be taken. `limit` None: every entry at or above the threshold. The flag
    says whether entries at or above the threshold were cut."""
    keep = np.flatnonzero(sims >= threshold)
    cut = False
    if limit is not None and len(keep) > 4 * limit + 16:
        top = 4 * limit + 16
        part = keep[np.argpartition(-sims[keep], top - 1)[:top]]
        kth = sims[part].min()
        cut = True
        keep = keep[sims[keep] >= kth]  # every tie at the cut, so ties keep their order
    if len(keep) == 0:
        return keep, cut
    return keep[np.lexsort((keep, -sims[keep]))], cut
