"""short-circuit (abmind): when the cheap source channel alone returns >= k eligible results,
the costly channels (vector, signature) are skipped. The decision is taken right after the
source channel ran, before those channels would run; this record explains it.

k is the configuration's k (abmind's preset: 5), never the k a recall asks for: otherwise a
recall at k = 10 could run the vector channel that the same recall at k = 5 skipped, and its
top 5 would differ."""

from __future__ import annotations

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState


def decide(engine: StageContext, st: RecallState) -> None:
    """Take the decision (called by the pipeline before the vector stage)."""
    cfg = st.cfg.short_circuit
    if not cfg.enabled:
        st.short_circuit = (False, "disabled by the configuration", 0)
        return
    src = st.channels.get(cfg.source)
    if src is None:
        st.short_circuit = (False, f"source channel {cfg.source} did not run", 0)
        return
    n = sum(1 for c in src if st.eligible.get(c.id, "x") is None)
    k = st.cfg.k
    if n >= k:
        why = f"short-circuit: {cfg.source} returned {n} eligible results >= k={k}"
        for ch in cfg.skip:
            st.skip_channels[ch] = why
        st.short_circuit = (True, why + f"; skipped {', '.join(cfg.skip)}", n)
    else:
        st.short_circuit = (False, f"{cfg.source} returned {n} eligible results < k={k}; "
                            f"{', '.join(cfg.skip)} run", n)


def run(engine: StageContext, st: RecallState) -> Out:
    fired, why, n = st.short_circuit
    info = [("fired", "yes" if fired else "no"), ("source_count", str(n)),
            ("k", f"{st.cfg.k} (the configuration's)")]
    if not st.cfg.short_circuit.enabled:
        return Out(skipped=True, reason=why, info=info)
    return Out(reason=why, info=info)
