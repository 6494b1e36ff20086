"""fuzzy: abmind's three FTS5 sub-queries over the index.

1. porter: a stemmed FTS5 match of any query word (`"w1" OR "w2"`, `Index.fts_any`);
2. trigram: typo and substring tolerance. `trigram_mode = "scan"` (abmind): a trigram match
   of every query trigram on the content, diacritics stripped. `"correct"` (default): the
   query words missing from the index's vocabulary are corrected or completed against it
   (`Index.correct_terms`) and the replacements searched like sub-query 1; the info line
   `corrections` says which word became what;
3. original: trigram on the `original` column, only while results < limit.

Results are de-duplicated by id in that order; each candidate's note names its sub-query.

`limit` 0 is abmind's `limit`, its k: the configuration's k, not the k a recall asks for, so
the rows (and the short-circuit that counts them) are the same at every requested k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recall_tui.engine.config_sections import FuzzyConfig
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import fold
from recall_tui.engine.trace import Candidate


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.fuzzy
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    index = engine.index
    if index is None:
        return Out(skipped=True, reason="no index")
    if st.query.empty:
        return Out(skipped=True, reason="no query terms")
    limit = cfg.limit or st.cfg.k  # the configuration's k, never the recall's (module doc)
    found: dict[str, tuple[float, str]] = {}
    info: list[tuple[str, str]] = [("limit", str(limit))]
    text = fold(st.query.text)

    def take(name: str, fn: Callable[[], Sequence[tuple[str, float]]]) -> None:
        try:
            rows = fn()
        except Exception as exc:  # a malformed match must not fail the recall
            info.append((name, f"failed: {exc}"))
            return
        new = 0
        for mid, score in rows:
            if mid not in found and mid in engine.vault.memories:
                found[mid] = (float(score), name)
                new += 1
        info.append((name, f"{len(rows)} rows, {new} new"))

    if cfg.porter:
        take("porter", lambda: index.fts_any(st.query.words, limit))
    if cfg.trigram and cfg.trigram_mode == "scan":
        # The content trigram table is built on the first scan (it is not needed otherwise).
        try:
            built = index.ensure_trigram(engine.vault)
        except Exception as exc:
            info.append(("trigram index", f"failed: {exc}"))
        else:
            if built is not None:
                info.append(("trigram index", f"built now (first scan): {built:.0f} ms"))
        take("trigram", lambda: index.fts_trigram(text, limit, column="content"))
    elif cfg.trigram:
        _corrected(engine, st, cfg, limit, info, take)
    if cfg.original_fallback:
        if len(found) < limit:
            take("original", lambda: index.fts_trigram(text, limit, column="original"))
        else:
            info.append(("original", "not needed (limit reached)"))
    out = Out(info=info)
    for rank, (mid, (score, sub)) in enumerate(found.items(), 1):
        out.candidates.append(Candidate(mid, score, rank, sub))
    return out


def _corrected(engine: StageContext, st: RecallState, cfg: FuzzyConfig, limit: int,
               info: list[tuple[str, str]],
               take: Callable[[str, Callable[[], Sequence[tuple[str, float]]]], None]) -> None:
    """Sub-query 2 in `correct` mode: replacements of unknown words, searched by porter bm25."""
    index = engine.index
    assert index is not None  # run() skips the stage without an index
    try:
        fixes = index.correct_terms(
            st.query.words,
            max_edits=cfg.max_edits or None,
            max_completions=max(0, cfg.completions),
        )
    except Exception as exc:  # a damaged index must not fail the recall
        info.append(("corrections", f"failed: {exc}"))
        return
    terms = list(dict.fromkeys(t for c in fixes for t in c.terms))
    if not fixes:
        info.append(("corrections", "every word is in the vocabulary"))
        return
    info.append(("corrections", "; ".join(c.describe() for c in fixes)))
    if terms:
        take("corrected", lambda: index.fts_any(terms, limit))
