"""hops (bastra): pull in the 1-hop `related_via` neighbours of the top direct hits with
score = parent score x link score x factor, tagged `1-hop`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from recall_tui.engine.depth import pool_depth
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.topk import by_score
from recall_tui.engine.trace import Candidate, HopInfo
from recall_tui.vault.model import Vault


def expand(vault: Vault, parents: Sequence[str], score: Mapping[str, float], factor: float,
           exclude: set[str]) -> dict[str, tuple[float, HopInfo]]:
    """Neighbours of `parents` not in `exclude`; a neighbour reached twice keeps its best."""
    out: dict[str, tuple[float, HopInfo]] = {}
    for pid in parents:
        m = vault.get(pid)
        if m is None:
            continue
        for link in m.related_via:
            if link.id in exclude or link.id not in vault.memories:
                continue
            s = score[pid] * link.score * factor
            if link.id not in out or s > out[link.id][0]:
                out[link.id] = (s, HopInfo(pid, link.relation, link.score, factor))
    return out


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.hops
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if not st.order:
        return Out(skipped=True, reason="no direct hits to expand")
    # Expand the top eligible direct hits (an ineligible parent would be dropped anyway).
    direct = [mid for mid in st.order if st.eligible.get(mid) is None]
    n = cfg.from_top or pool_depth(st.cfg, st.k)
    parents = direct[:n]
    found = expand(engine.vault, parents, st.score, cfg.factor, set(st.order))
    for nid, (s, info) in found.items():
        st.hops[nid] = info
        st.hop_scores[nid] = s
        st.score[nid] = s
    st.order = by_score(engine, st.score, st.score)
    out = Out(info=[("parents", str(len(parents))), ("factor", f"{cfg.factor:g}"),
                    ("added", str(len(found))), ("beyond_k", str(cfg.beyond_k).lower())])
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    for rank, (nid, (s, info)) in enumerate(ranked, 1):
        out.candidates.append(Candidate(nid, s, rank, f"1-hop from {info.from_id} "
                                        f"({info.relation} {info.link_score:g})"))
    return out
