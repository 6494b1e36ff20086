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

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.turn_layout import layout, note, resort
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import analyze, fold
from recall_tui.engine.trace import Candidate


def seed_terms(bodies: list[str], exclude: set[str], idf: dict[str, float],
               df: dict[str, int], n: int, *, stem: bool, stop_words: bool) -> list[str]:
    """The `n` rarest terms (highest idf; ties by term) of the seed bodies that are not in
    `exclude` and occur in at least two memories (`df >= 2`)."""
    seen: set[str] = set()
    for b in bodies:
        seen.update(analyze(b, stem=stem, stop_words=stop_words))
    pool = [t for t in seen if t not in exclude and df.get(t, 0) >= 2]
    pool.sort(key=lambda t: (-idf.get(t, 0.0), t))
    return pool[:n]


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.hop2
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    seeds = [mid for mid in st.order if st.eligible.get(mid) is None][:cfg.from_top]
    if not seeds:
        return Out(skipped=True, reason="no eligible candidates to seed from")
    kidx = engine.keyword_index(st.cfg)
    body = kidx.fields["body"]
    speakers = {fold(s) for s in layout(engine).speaker.values()}
    exclude = set(st.query.terms) | set(analyze(" ".join(speakers), stem=st.cfg.parse.stem,
                                                stop_words=st.cfg.parse.stop_words))
    mems = engine.vault.memories
    seen = {t for s in seeds for t in analyze(mems[s].body_without_related,
                                              stem=st.cfg.parse.stem,
                                              stop_words=st.cfg.parse.stop_words)}
    df = {t: body.span[t][1] - body.span[t][0] for t in seen if t in body.span}
    terms = seed_terms([mems[s].body_without_related for s in seeds], exclude, body.idf, df,
                       cfg.terms, stem=st.cfg.parse.stem, stop_words=st.cfg.parse.stop_words)
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
    docs = np.argsort(-scores, kind="stable")[:cfg.limit]
    out = Out(info=info)
    added = 0
    for rank, d in enumerate(docs.tolist(), 1):
        if scores[d] <= 0:
            break
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
