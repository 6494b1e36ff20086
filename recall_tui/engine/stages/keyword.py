"""keyword: BM25 over weighted fields (bastra's MiniSearch weights), matched terms per field."""

from __future__ import annotations

from recall_tui.engine.bm25 import FIELDS
from recall_tui.engine.config import Config
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate, MatchedTerms


def field_weights(cfg: Config) -> dict[str, float]:
    """The keyword section's weight per field."""
    return {f: float(getattr(cfg.keyword, f)) for f in FIELDS}


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.keyword
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if st.query.empty:
        return Out(skipped=True, reason="no query terms")
    weights = field_weights(st.cfg)
    kidx = engine.keyword_index(st.cfg)
    res = kidx.search(st.query.terms, weights)
    ids = kidx.ids
    top = kidx.ranked(res, cfg.limit).tolist()
    st.keyword_all = kidx.scores_of(res)
    tw = st.query.term_words
    out = Out()
    per_doc = kidx.matched_terms(top, st.query.terms, weights)
    for rank, (d, terms) in enumerate(zip(top, per_doc, strict=True), 1):
        mid = ids[d]
        mt = tuple(MatchedTerms(f, tuple(tw.get(t, t) for t in ts), weights[f])
                   for f, ts in terms.items())
        st.matched_terms[mid] = mt
        note = "; ".join(f"{m.field}: {' '.join(m.terms)}" for m in mt)
        out.candidates.append(Candidate(mid, float(res.total[d]), rank, note))
    out.info = [
        ("terms", " ".join(st.query.terms)),
        ("fields", " ".join(f"{f}x{w:g}" for f, w in weights.items() if w)),
        ("matched", str(len(st.keyword_all))),
        ("limit", str(cfg.limit)),
    ]
    return out
