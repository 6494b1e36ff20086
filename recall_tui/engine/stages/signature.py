"""signature: 256-bit LSH signatures, Hamming similarity, no model needed (abmind Ss)."""

from __future__ import annotations

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate
from recall_tui.index import signature as lsh


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.signature
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if "signature" in st.skip_channels:
        return Out(skipped=True, reason=st.skip_channels["signature"])
    if st.query.empty:
        return Out(skipped=True, reason="no query terms")
    q = lsh.signature(st.query.text)
    if q == 0:
        return Out(skipped=True, reason="no content words for a signature")
    ids, bits = engine.signature_matrix()
    qbits = np.unpackbits(np.frombuffer(lsh.to_bytes(q), dtype=np.uint8), bitorder="little")
    sim_arr = 1.0 - (bits != qbits).sum(axis=1) / lsh.BITS if len(ids) else np.zeros(0)
    sims = list(zip(ids, sim_arr.tolist(), strict=True))
    passing = [x for x in sims if x[1] >= cfg.min_similarity]
    passing.sort(key=lambda x: (-x[1], x[0]))
    st.signature_sims = dict(sims)
    out = Out(info=[("compared", str(len(sims))), ("min", f"{cfg.min_similarity:g}"),
                    ("passing", str(len(passing))), ("cap", str(cfg.cap))])
    for rank, (mid, sim) in enumerate(passing[: cfg.cap], 1):
        out.candidates.append(Candidate(mid, sim, rank, f"hamming sim {sim:.3f}"))
    return out
