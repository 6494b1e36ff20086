"""Answers to "why is X (not) here?", read from the fate each memory met in this recall
(never by re-running the pipeline).

Stages named in answers: `vault` (unknown id), `filter`, `keyword` (matched beyond the
channel limit), `fuse` (no channel matched it),
`hops`, `rerank`, `mmr` (demoted from within k to beyond it), `floor` (under the floor, rank
> k, or the calibrated floor abstained: "best evidence 0.21 < calibrated floor 0.40:
abstained"; every memory the calibrated floor measured gets its evidence as a detail),
`hits` (found). What the speaker, window and hop2 stages added to a memory's score
is listed in the details (and a hit they alone brought in says so)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.vector import fetch_count
from recall_tui.engine.state import RecallState
from recall_tui.engine.trace import CHANNELS, WhyNot


def _channel_details(engine: StageContext, st: RecallState, mid: str) -> list[str]:
    """Why each channel did or did not find the memory."""
    out: list[str] = []
    cfg = st.cfg
    fate = st.fates.get(mid)
    seen = fate.channels if fate else {}
    m = engine.vault.memories[mid]
    for ch in CHANNELS:
        if ch in seen:
            rank, raw = seen[ch]
            out.append(f"{ch}: rank {rank} (score {raw:.4g})")
            continue
        if ch not in st.channels:
            rec = st.stage_reasons.get(ch, "did not run")
            out.append(f"{ch}: skipped ({rec})")
            continue
        if ch == "keyword":
            if mid in st.keyword_all:
                out.append(f"keyword: matched (score {st.keyword_all[mid]:.4g}) but ranked "
                           f"beyond the limit {cfg.keyword.limit}")
            else:
                tw = st.query.term_words
                lacks = sorted({tw.get(t, t) for t in st.query.terms})
                out.append(f"keyword: none of the query terms in its weighted fields "
                           f"(lacks {', '.join(lacks)})")
        elif ch == "vector":
            sim = _vector_similarity(engine, st, mid)
            if sim is None:
                out.append("vector: not among the nearest neighbours")
            elif m.type in cfg.vector.skip_types:
                out.append(f"vector: type {m.type} skips the vector channel")
            elif sim < cfg.vector.threshold:
                out.append(f"vector: similarity {sim:.3f} < threshold {cfg.vector.threshold:g}")
            else:
                out.append(f"vector: similarity {sim:.3f} but beyond the {fetch_count(st)} "
                           "nearest neighbours fetched")
        elif ch == "signature":
            sim = st.signature_sims.get(mid)
            if sim is not None and sim < cfg.signature.min_similarity:
                out.append(f"signature: similarity {sim:.3f} < {cfg.signature.min_similarity:g}")
            else:
                out.append(f"signature: beyond the cap {cfg.signature.cap}")
        elif ch == "topic":
            out.append(f"topic: its topic_key is {m.topic_key or '(none)'}")
        elif ch == "graph":
            out.append("graph: its edges mention no entity reached from the query")
        else:
            out.append(f"{ch}: not found")
    return out


def _vector_similarity(engine: StageContext, st: RecallState, mid: str) -> float | None:
    sims = st.vector_sims
    if mid in sims:
        return sims[mid]
    q = st.qvec
    if q is None:
        return None
    vecs = engine.memory_vectors()
    v = vecs.get(mid)
    return None if v is None else float(np.dot(v, q))


def answer(engine: StageContext, st: RecallState, ids: Sequence[str]) -> tuple[WhyNot, ...]:
    """One WhyNot per asked id."""
    out = []
    for mid in ids:
        if mid not in engine.vault.memories:
            out.append(WhyNot(mid, False, None, "vault", "unknown id: no memory has this id"))
            continue
        fate = st.fates.get(mid)
        ranks = tuple((ch, r) for ch, (r, _) in (fate.channels.items() if fate else ()))
        turn_notes = st.turn_notes.get(mid, [])
        details = tuple(_channel_details(engine, st, mid)) + tuple(turn_notes)
        ev = st.evidence.get(mid)  # the calibrated floor's measure of it
        if ev is not None:
            details += (f"floor: {ev.describe()}",)
        if mid in st.hits:
            rank = st.hits.index(mid) + 1
            how = "1-hop neighbour" if mid in st.hops else "direct hit"
            if mid not in st.fused and mid not in st.hops and turn_notes:
                how = "brought in by " + " and ".join(sorted({n.split(":")[0] for n in turn_notes}))
            out.append(WhyNot(mid, True, rank, "hits", f"found at rank {rank} ({how})",
                              ranks, details))
            continue
        if fate is not None and fate.stage:
            stage, reason = fate.stage, fate.reason
            extra: list[str] = []
            pre = st.pre_mmr_rank.get(mid)
            if stage == "floor" and reason.startswith("rank") and pre is not None and pre <= st.k:
                step = st.mmr.get(mid)
                post = st.order.index(mid) + 1 if mid in st.order else None
                stage = "mmr"
                reason = f"MMR demoted it from rank {pre} to {post} (> k={st.k})"
                if step and step.closest_id:
                    extra.append(f"too close to {step.closest_id} (similarity {step.penalty:.3f})")
            if mid in st.hops:
                h = st.hops[mid]
                extra.append(f"came in as a 1-hop neighbour of {h.from_id}")
            out.append(WhyNot(mid, False, None, stage, reason, ranks, tuple(extra) + details))
            continue
        in_fused = mid in st.fused or mid in st.hops or bool(turn_notes)
        filt = st.eligible.get(mid)
        if not in_fused:
            if filt:
                out.append(WhyNot(mid, False, None, "filter", filt, ranks,
                                  ("also: not matched by any channel",) + details))
            elif mid in st.keyword_all:
                out.append(WhyNot(mid, False, None, "keyword",
                                  f"matched by keyword but ranked beyond its limit "
                                  f"{st.cfg.keyword.limit}", ranks, details))
            else:
                out.append(WhyNot(mid, False, None, "fuse", "not matched by any channel",
                                  ranks, details))
            continue
        out.append(WhyNot(mid, False, None, "enrich", "not among the final hits", ranks, details))
    return tuple(out)
