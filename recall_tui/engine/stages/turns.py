"""turns: cosine over raw transcript turns (memoturn include_turns). Reported in Trace.turns
beside the ranking, never fused.

Below `turns.exact_below` turn vectors every turn's cosine is computed from the matrix of
their stored vectors (exact); at or above, the turns whose sign-bit codes are nearest the
query's (`index/turn_codes.py`) form a shortlist of `turns.shortlist` turns, whose stored
vectors are read from the index and re-scored, so every reported similarity is the one the
exact path gives. A turn's vector is stored as float16 (`index/vectors.py`, TURN_DTYPE) and
widened to float32 for the product; the trace names the storage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.vector import query_vector
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.topk import best_first
from recall_tui.engine.trace import Candidate, TurnHit
from recall_tui.index.turn_codes import CODE_NAME
from recall_tui.index.vectors import TURN_DTYPE
from recall_tui.vault.model import Turn

if TYPE_CHECKING:
    from recall_tui.index.store import Index
    from recall_tui.index.turn_codes import TurnCodes

#: The shortlist when `turns.shortlist` is 0: max(SHORTLIST_MIN, SHORTLIST_PER_HIT x limit).
SHORTLIST_MIN = 200
SHORTLIST_PER_HIT = 20
#: What the trace says of the turn vectors' storage.
STORED = (f"stored as {np.dtype(TURN_DTYPE).name} ({np.dtype(TURN_DTYPE).itemsize} bytes a"
          " dimension), widened to float32 for the cosine")
#: The stage's reason while the open is still reading and indexing the session logs.
TURNS_PENDING = "turns still being indexed (the open reads the session logs after the memories)"


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.turns
    if not (cfg.enabled or st.include_turns):
        return Out(skipped=True, reason="off (turns.enabled is false and include_turns not asked)")
    if engine.index is None:
        return Out(skipped=True, reason="no index")
    pending = getattr(engine.index, "turns_pending", None)
    if pending is not None and pending():
        # The progressive open reads and indexes the session logs after the memories are
        # usable: say so, never answer as if the vault had no turns.
        return Out(skipped=True, reason=TURNS_PENDING)
    failed = getattr(engine.index, "turns_error", None)
    why = failed() if failed is not None else None
    if why:
        return Out(skipped=True, reason=f"turns not indexed: {why}")
    vec, reason = query_vector(engine, st)
    if vec is None:
        return Out(skipped=True, reason=f"needs a query embedding: {reason}")
    codes = engine.index.turn_codes()
    if codes.n == 0:
        return Out(info=[("turns", "0")], reason="no turn vectors")
    q = np.asarray(vec, dtype=np.float32)
    if codes.n < cfg.exact_below:
        picked, info = _exact(engine, st, q)
    else:
        picked, info = _shortlisted(engine.index, codes, engine.turns_by_id(), st, q)
    out = Out(info=[("turns", str(codes.n)), ("threshold", f"{cfg.threshold:g}"), *info])
    for t, sim in picked:
        out.candidates.append(Candidate(t.id, sim, len(out.candidates) + 1, t.text[:100]))
        st.turns.append(TurnHit(t.session_id, t.seq, t.role, t.text, sim))
    return out


def _exact(engine: StageContext, st: RecallState, q: np.ndarray
           ) -> tuple[list[tuple[Turn, float]], list[tuple[str, str]]]:
    """Every turn's cosine from the float32 matrix, the best taken."""
    cfg = st.cfg.turns
    assert engine.index is not None
    ids, mat = engine.index.turn_vectors()
    sims = np.asarray(mat, dtype=np.float32) @ q
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
    return picked, [("search", f"exact: every turn's cosine ({len(ids)} turns, fewer than "
                               f"turns.exact_below {cfg.exact_below})"),
                    ("vectors", STORED)]


def _shortlisted(index: Index, codes: TurnCodes, turns: Mapping[str, Turn], st: RecallState,
                 q: np.ndarray) -> tuple[list[tuple[Turn, float]], list[tuple[str, str]]]:
    """The turns whose codes are nearest the query's, re-scored with their exact vectors and
    the best taken. With a session filter only that session's turns are considered (all of
    them exactly when they fit in the shortlist). When turns the vault no longer holds leave
    fewer than `limit`, the shortlist grows fourfold until it has held every turn."""
    cfg = st.cfg.turns
    session = st.filters.session_id
    size = cfg.shortlist or max(SHORTLIST_MIN, SHORTLIST_PER_HIT * cfg.limit)
    among = codes.of_session(session) if session else None
    pool = codes.n if among is None else len(among)
    while True:
        pos = codes.shortlist(q, size, among)
        picked, missing = rescore(index, codes.rowids[pos], q, turns, cfg.limit,
                                  cfg.threshold, session)
        if len(picked) >= cfg.limit or not missing or len(pos) >= pool:
            break
        size *= 4
    where = f"of session {session}'s {pool}" if session else f"of {pool}"
    info = [("search", f"shortlist by {CODE_NAME}, re-scored exactly"),
            ("vectors", STORED),
            ("code", f"{CODE_NAME}: {codes.words_per_code * 8} bytes a turn, "
                     f"{codes.nbytes / 1e6:.1f} MB"),
            ("shortlist", f"{len(pos)} {where} turns nearest by Hamming distance"
                          + (" (all of them: exact)" if len(pos) >= pool else "")),
            ("re-score", f"cosine of the {len(pos)} shortlisted turns' stored vectors, as the"
                         " exact path computes it")]
    return picked, info


def rescore(index: Index, rowids: np.ndarray, q: np.ndarray, turns: Mapping[str, Turn],
            limit: int, threshold: float, session: str | None
            ) -> tuple[list[tuple[Turn, float]], int]:
    """The first `limit` of the turns `rowids` by exact cosine with `q` (at least
    `threshold`, held by the vault, of `session` when asked), in the exact path's order
    (ties by session and seq, the order it reads the turns in); and how many turns at or
    above the threshold were passed over because the vault does not hold them."""
    ids, sessions, seqs, mat = index.turn_rows(rowids.tolist())
    sims = mat @ q
    order = sorted(range(len(ids)), key=lambda i: (-float(sims[i]), sessions[i], seqs[i]))
    picked: list[tuple[Turn, float]] = []
    missing = 0
    for i in order:
        if len(picked) >= limit or sims[i] < threshold:
            break
        t = turns.get(ids[i])
        if t is None or (session and t.session_id != session):
            missing += 1
            continue
        picked.append((t, float(sims[i])))
    return picked, missing


def _take(order: np.ndarray, sims: np.ndarray, ids: list[str], turns: Mapping[str, Turn],
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
