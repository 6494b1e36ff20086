"""keyword: BM25 over weighted fields (bastra's MiniSearch weights), matched terms per field."""

from __future__ import annotations

from collections.abc import Mapping

from recall_tui.engine.bm25 import FIELDS, KeywordIndex
from recall_tui.engine.config import Config
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate, MatchedTerms


def field_weights(cfg: Config) -> dict[str, float]:
    """The keyword section's weight per field."""
    return {f: float(getattr(cfg.keyword, f)) for f in FIELDS}


def _written(mt: tuple[MatchedTerms, ...]) -> tuple[tuple[MatchedTerms, ...], str]:
    """The matched terms with the candidate's note, `title: postgres upgrade; body: ...`."""
    return mt, "; ".join(f"{m.field}: {' '.join(m.terms)}" for m in mt)


def _matched(kidx: KeywordIndex, top: list[int], terms: tuple[str, ...],
             tw: Mapping[str, str], weights: dict[str, float]
             ) -> list[tuple[tuple[MatchedTerms, ...], str]]:
    """Per ranked document: its matched terms per field (the query's words) and its note.
    Built once per distinct pattern of matches (`KeywordIndex.matched_masks`): the 50
    candidates of a recall share a handful, so this is a few objects, not one per field per
    candidate. Equal to building them from `KeywordIndex.matched_terms` (tests/test_fast_paths.py)."""
    masks = kidx.matched_masks(top, terms, weights)
    if masks is None:
        return [_written(tuple(MatchedTerms(f, tuple(tw.get(t, t) for t in ts), weights[f])
                               for f, ts in per.items()))
                for per in kidx.matched_terms(top, terms, weights)]
    names, uniq, keys = masks
    words = [tw.get(t, t) for t in uniq]
    seen: dict[tuple[int, ...], tuple[tuple[MatchedTerms, ...], str]] = {}
    out = []
    for key in keys:
        got = seen.get(key)
        if got is None:
            got = seen[key] = _written(tuple(
                MatchedTerms(names[fi], tuple(w for j, w in enumerate(words) if bits >> j & 1),
                             weights[names[fi]])
                for fi, bits in enumerate(key) if bits))
        out.append(got)
    return out


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
    scores = res.total[top].tolist()
    for rank, (d, score, (mt, note)) in enumerate(
            zip(top, scores, _matched(kidx, top, st.query.terms, tw, weights), strict=True), 1):
        mid = ids[d]
        st.matched_terms[mid] = mt
        out.candidates.append(Candidate(mid, score, rank, note))
    out.info = [
        ("terms", " ".join(st.query.terms)),
        ("fields", " ".join(f"{f}x{w:g}" for f, w in weights.items() if w)),
        ("matched", str(len(st.keyword_all))),
        ("limit", str(cfg.limit)),
    ]
    return out
