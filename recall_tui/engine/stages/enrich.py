"""enrich (abmind, bastra): timelines of hits sharing a topic, conflict and supersession
warnings. Payload size (lean ~160 / full <= 400 characters) is applied when the hits are
built."""

from __future__ import annotations

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.vault.model import Chain, Vault


def warnings_for(vault: Vault, hits: list[str],
                 chains: dict[str, Chain] | None = None) -> dict[str, list[str]]:
    """Conflict warnings between hits, and superseded-but-recalled warnings. `chains`
    (id -> Chain) avoids scanning every chain per hit."""
    out: dict[str, list[str]] = {mid: [] for mid in hits}
    for i, a in enumerate(hits):
        ma = vault.memories[a]
        chain = chains.get(a) if chains is not None else vault.chain_of(a)
        if ma.status == "superseded" or (chain is not None and chain.head != a):
            by = ma.superseded_by or (chain.head if chain else "?")
            out[a].append(f"superseded by {by}: recalled only because superseded memories are included")
        for b in hits[i + 1:]:
            mb = vault.memories[b]
            if chain is not None and b in chain.ids:
                out[a].append(f"conflicts with {b} (same supersession chain)")
                out[b].append(f"conflicts with {a} (same supersession chain)")
            elif ma.topic_key and ma.topic_key == mb.topic_key and ma.summary != mb.summary:
                out[a].append(f"may conflict with {b} (same topic_key {ma.topic_key})")
                out[b].append(f"may conflict with {a} (same topic_key {ma.topic_key})")
    return out


def timelines(vault: Vault, hits: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Topics (topic_key, else topic_path) shared by two or more hits, members oldest first."""
    groups: dict[str, list[str]] = {}
    for mid in hits:
        m = vault.memories[mid]
        topic = m.topic_key or m.topic_path
        if topic:
            groups.setdefault(topic, []).append(mid)
    out = []
    for topic, ids in groups.items():
        if len(ids) >= 2:
            ids.sort(key=lambda i: (vault.memories[i].created, i))
            out.append((topic, tuple(ids)))
    return out


def run(engine: StageContext, st: RecallState) -> Out:
    if not st.cfg.enrich.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    st.warnings = warnings_for(engine.vault, st.hits, engine.chains())
    st.timeline = timelines(engine.vault, st.hits)
    n = sum(len(v) for v in st.warnings.values())
    return Out(info=[("timelines", str(len(st.timeline))), ("warnings", str(n)),
                     ("verbosity", st.verbosity)])
