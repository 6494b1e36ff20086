"""vector: kNN over the memory embeddings (best effort: no embedder, no vectors or a
dimension mismatch skip it with the reason, never fail the recall)."""

from __future__ import annotations

import time

import numpy as np

from recall_tui.engine.depth import pool_depth
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate


def query_vector(engine: StageContext, st: RecallState) -> tuple[np.ndarray | None, str]:
    """Embed the query once per recall (the index caches embeddings too). Returns
    (vector or None, reason when None)."""
    if st.qvec_reason is not None:
        return st.qvec, st.qvec_reason
    vec: np.ndarray | None = None
    reason = ""
    # An index still making its vectors (a progressive open) says how far it got, e.g.
    # `embedding 1,234 / 10,000`: every vector channel skips with that reason.
    pending = getattr(engine.index, "embedding_progress", None)
    state = pending() if pending is not None else None
    if engine.index is None:
        reason = "no index"
    elif state is not None:
        reason = f"embedding {state[0]:,} / {state[1]:,}"
    elif st.query.empty:
        reason = "no query terms"
    else:
        t0 = time.perf_counter()
        try:
            vec = engine.index.embed_query(st.query.text)
        except Exception as exc:  # the embedder died: degrade, as the seeds require
            vec, reason = None, f"embedder failed: {exc}"
        st.embed_ms = (time.perf_counter() - t0) * 1000
        if vec is None and not reason:
            reason = "no embedder"
        if vec is not None:
            dim = int((engine.index.embedder_info or {}).get("dim") or 0)
            if dim and vec.shape[-1] != dim:
                reason = f"dimension mismatch: query {vec.shape[-1]} vs index {dim}"
                vec = None
    st.qvec, st.qvec_reason = vec, reason
    return vec, reason


def fetch_count(st: RecallState) -> int:
    """Neighbours fetched: the candidate depth (not the recall's k) x overfetch."""
    return pool_depth(st.cfg, st.k) * max(1, st.cfg.vector.overfetch)


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.vector
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if "vector" in st.skip_channels:
        return Out(skipped=True, reason=st.skip_channels["vector"])
    vec, reason = query_vector(engine, st)  # skipped while a progressive open embeds
    if vec is None:
        return Out(skipped=True, reason=reason)
    want = fetch_count(st)
    assert engine.index is not None  # a query vector needs the index
    try:
        rows = engine.index.vector_search(vec, want)
    except Exception as exc:
        return Out(skipped=True, reason=f"vector search failed: {exc}")
    st.vector_ran = True
    st.vector_sims = {mid: float(s) for mid, s in rows}
    out = Out(info=[("fetch", str(want)), ("threshold", f"{cfg.threshold:g}"),
                    ("embed_ms", f"{st.embed_ms:.1f}")])
    rank = 0
    under = 0
    for mid, sim in rows:
        m = engine.vault.get(mid)
        if m is None:
            continue
        if sim < cfg.threshold:
            under += 1
            continue
        if m.type in cfg.skip_types:
            continue
        rank += 1
        out.candidates.append(Candidate(mid, float(sim), rank, f"cos {sim:.3f}"))
    out.info.append(("under_threshold", str(under)))
    return out
