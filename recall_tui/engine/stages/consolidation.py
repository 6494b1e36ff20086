"""consolidation: keyword match over digest paragraphs (abmind S6). Paragraphs are not
memories: they get a fixed score, appear as `digest:...` candidates of this stage and are
never fused into the memory ranking."""

from __future__ import annotations

import hashlib

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.consolidation
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if st.query.empty:
        return Out(skipped=True, reason="no query terms")
    digests = engine.vault.digests
    if not digests:
        return Out(info=[("paragraphs", "0")], reason="the vault has no digests")
    q = set(st.query.terms)
    seen: set[str] = set()
    hits = []
    for p, toks in zip(digests, engine.digest_tokens(), strict=True):
        matched = q & toks
        if len(matched) < max(1, cfg.min_terms):
            continue
        h = hashlib.sha256((p.text[:80] + p.label).encode()).hexdigest()
        if h in seen:
            continue
        seen.add(h)
        hits.append((len(matched), p, matched))
    hits.sort(key=lambda x: (-x[0], x[1].path, x[1].index))
    out = Out(info=[("paragraphs", str(len(digests))), ("matched", str(len(hits)))])
    tw = st.query.term_words
    for rank, (_, p, matched) in enumerate(hits[: cfg.limit], 1):
        terms = " ".join(sorted(tw.get(t, t) for t in matched))
        snippet = " ".join(p.text.split())[:100]
        out.candidates.append(Candidate(p.id, cfg.score, rank, f"[{terms}] {snippet}"))
    st.consolidation = list(out.candidates)
    return out
