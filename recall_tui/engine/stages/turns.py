"""turns: brute-force cosine over raw transcript turns (memoturn include_turns). Reported
in Trace.turns beside the ranking, never fused."""

from __future__ import annotations

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.vector import query_vector
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate, TurnHit


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
    order = np.argsort(-sims, kind="stable")
    out = Out(info=[("turns", str(len(ids))), ("threshold", f"{cfg.threshold:g}")])
    for i in order:
        if len(out.candidates) >= cfg.limit or sims[i] < cfg.threshold:
            break
        t = turns.get(ids[i])
        if t is None or (session and t.session_id != session):
            continue
        out.candidates.append(Candidate(t.id, float(sims[i]), len(out.candidates) + 1,
                                        t.text[:100]))
        st.turns.append(TurnHit(t.session_id, t.seq, t.role, t.text, float(sims[i])))
    return out
