"""hop2: a second hop across sessions, seeded by the terms of the first hits.

A multi-hop question ("how did the surgery date change?") matches one turn well; the turn
that completes the answer, often in another session, shares the first hit's rarer words
("knee", "surgery") rather than the question's. This stage takes the top `from_top` eligible
candidates (the seeds), picks from their bodies the `terms` rarest analysed terms that are
not query terms or speaker names and that occur in at least one other memory, scores every
memory's body by BM25 on those terms, and adds

    factor x (the best seed's score) x (BM25 / the best BM25 of this hop)

to the `limit` best (the seeds excluded). With `below_seeds` a raised memory is capped just
under the weakest seed, so the hop reorders what lies below the seeds and never displaces
them. The seeds, the terms and each addition are in the trace, as the 1-hop expansion's
parents are."""

from __future__ import annotations

import heapq
from typing import Any

from recall_tui.engine.bm25 import KeywordIndex
from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.turn_layout import layout, note, resort
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import analyze
from recall_tui.engine.topk import best_first
from recall_tui.engine.trace import Candidate


def seed_terms(bodies: list[str], exclude: set[str], idf: dict[str, float],
               df: dict[str, int], n: int, *, stem: bool, stop_words: bool) -> list[str]:
    """The `n` rarest terms (highest idf; ties by term) of the seed bodies that are not in
    `exclude` and occur in at least two memories (`df >= 2`)."""
    seen: set[str] = set()
    for b in bodies:
        seen.update(analyze(b, stem=stem, stop_words=stop_words))
    return rarest(seen, exclude, idf, df, n)


def rarest(seen: set[str], exclude: set[str] | frozenset[str], idf: dict[str, float],
           df: dict[str, int], n: int) -> list[str]:
    """`seed_terms` on the seeds' terms already analysed."""
    pool = [t for t in seen if t not in exclude and df.get(t, 0) >= 2]
    pool.sort(key=lambda t: (-idf.get(t, 0.0), t))
    return pool[:n]


def body_terms(engine: StageContext, mid: str, *, stem: bool, stop_words: bool) -> frozenset[str]:
    """The analysed terms of a memory's body (without `## Related`), kept per vault: a seed
    is analysed once, not on every recall it seeds."""
    cache: dict[str, frozenset[str]] = engine.memo(f"hop2.body_terms.{stem}.{stop_words}", dict)
    terms = cache.get(mid)
    if terms is None:
        terms = cache[mid] = frozenset(analyze(engine.vault.memories[mid].body_without_related,
                                               stem=stem, stop_words=stop_words))
    return terms


def rare_terms(engine: StageContext, kidx: KeywordIndex, key: str, mid: str, *, stem: bool,
               stop_words: bool) -> tuple[tuple[float, str], ...]:
    """A seed's body terms that `rarest` may pick (held by two memories or more), as
    (-idf, term) in `rarest`'s order, kept per vault and keyword index (`key`): a recall
    merges its seeds' lists and walks them to the first `terms` not excluded, instead of
    looking up and sorting every term of every seed (`rarest` over their union gives the
    same terms: tests/test_fast_paths.py)."""
    # Held with the keyword index it was made from: its idf and df change with any memory,
    # so a list kept across a refresh that rebuilt the index would be stale.
    memo: list[Any] = engine.memo(f"hop2.rare_terms.{key}", lambda: [None, {}])
    if memo[0] is not kidx:
        memo[0], memo[1] = kidx, {}
    cache: dict[str, tuple[tuple[float, str], ...]] = memo[1]
    got = cache.get(mid)
    if got is None:
        body = kidx.fields["body"]
        span, idf = body.span, body.idf
        got = cache[mid] = tuple(sorted(
            (-idf.get(t, 0.0), t)
            for t in body_terms(engine, mid, stem=stem, stop_words=stop_words)
            if t in span and span[t][1] - span[t][0] >= 2))
    return got


def merged_rarest(lists: list[tuple[tuple[float, str], ...]], exclude: set[str] | frozenset[str],
                  n: int) -> list[str]:
    """`rarest` over the union of the seeds' `rare_terms` lists (n >= 1): their merge in
    (-idf, term) order, each term once, the excluded ones skipped, the first `n`."""
    out: list[str] = []
    last = None
    for _w, t in heapq.merge(*lists):
        if t == last:  # the same term from another seed: equal keys arrive together
            continue
        last = t
        if t in exclude:
            continue
        out.append(t)
        if len(out) == n:
            break
    return out


def speaker_terms(engine: StageContext, *, stem: bool, stop_words: bool) -> frozenset[str]:
    """The analysed terms of every speaker name (never a hop term), built once per vault."""
    return engine.memo(f"hop2.speaker_terms.{stem}.{stop_words}", lambda: frozenset(
        analyze(" ".join(sorted(layout(engine).names)), stem=stem, stop_words=stop_words)))


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.hop2
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    seeds = [mid for mid in st.order if st.eligible.get(mid) is None][:cfg.from_top]
    if not seeds:
        return Out(skipped=True, reason="no eligible candidates to seed from")
    kidx = engine.keyword_index(st.cfg)
    body = kidx.fields["body"]
    stem, stop = st.cfg.parse.stem, st.cfg.parse.stop_words
    exclude = set(st.query.terms) | speaker_terms(engine, stem=stem, stop_words=stop)
    if cfg.terms >= 1:
        kcfg = st.cfg.keyword
        key = f"{kcfg.k1}.{kcfg.b}.{kcfg.epsilon}.{stem}.{stop}"
        terms = merged_rarest([rare_terms(engine, kidx, key, s, stem=stem, stop_words=stop)
                               for s in seeds], exclude, cfg.terms)
    else:
        seen = set().union(*(body_terms(engine, s, stem=stem, stop_words=stop) for s in seeds))
        df = {t: body.span[t][1] - body.span[t][0] for t in seen if t in body.span}
        terms = rarest(seen, exclude, body.idf, df, cfg.terms)
    info = [("seeds", " ".join(seeds)), ("terms", " ".join(terms) or "(none)"),
            ("factor", f"{cfg.factor:g}")]
    if not terms:
        return Out(info=info, reason="the seeds have no term shared with another memory")
    scores = body.scores(terms)
    for s in seeds:
        scores[kidx.pos[s]] = 0.0
    best = float(scores.max()) if len(scores) else 0.0
    if best <= 0:
        return Out(info=info, reason="no other memory holds a seed term")
    top_seed = st.score[seeds[0]]
    cap = min(st.score[s] for s in seeds) * (1 - 1e-9) if cfg.below_seeds else None
    out = Out(info=info)
    added = 0
    for rank, d in enumerate(best_first(scores, scores > 0, cfg.limit).tolist(), 1):
        mid = kidx.ids[d]
        add = cfg.factor * top_seed * float(scores[d]) / best
        old = st.score.get(mid)
        added += old is None
        new = (old or 0.0) + add
        capped = cap is not None and new > cap and (old is None or old < cap)
        if capped and cap is not None:
            new = cap
        kept = cap is not None and old is not None and old >= cap
        if kept and old is not None:
            new = old  # an ineligible memory above the seeds: the filter will drop it anyway
        st.score[mid] = new
        note(st, mid, f"hop2: +{add:.4g} = {cfg.factor:g} x {top_seed:.4g} (seed {seeds[0]}) "
                      f"x {float(scores[d]):.4g}/{best:.4g} (BM25 on the seeds' terms)"
                      + (f", capped under the weakest seed at {cap:.4g}" if capped else "")
                      + (" (not applied: above the weakest seed already)" if kept else ""))
        out.candidates.append(Candidate(mid, st.score[mid], rank, f"+{add:.4g} via "
                                        f"{' '.join(terms)}"))
    st.hop2_notes.update({c.id: c.note for c in out.candidates})
    resort(engine, st)
    out.info.append(("added", str(added)))
    out.info.append(("raised", str(len(out.candidates) - added)))
    return out
