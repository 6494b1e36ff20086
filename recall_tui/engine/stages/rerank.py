"""rerank (Memoria): a cross-encoder scores (query, memory) pairs for the top N; the best
`keep` stay. No cross-encoder ships with recall-tui: without one the stage is recorded as
skipped and only the truncation to `keep` happens. A user scorer plugs in through
`Engine(..., reranker=...)`: any object with `name` and `score(query, texts) -> list[float]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate
from recall_tui.vault.model import Memory


class Reranker(Protocol):
    """A cross-encoder: higher score = more relevant."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


def memory_text(m: Memory) -> str:
    """What the cross-encoder reads for a memory."""
    return f"{m.title}. {m.summary}"


def rerank_ids(ids: Sequence[str], scores: Sequence[float], keep: int) -> list[str]:
    """Order ids by score (stable on ties) and keep the best `keep`."""
    order = sorted(range(len(ids)), key=lambda i: -scores[i])
    return [ids[i] for i in order][:keep]


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.rerank
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    top = st.order[: cfg.top_n]
    rest = st.order[cfg.top_n:]
    scorer = engine.reranker
    info = [("top_n", str(cfg.top_n)), ("keep", str(cfg.keep))]
    if scorer is None or (cfg.model and getattr(scorer, "name", "") != cfg.model):
        kept = top[: cfg.keep]
        out = Out(skipped=True, info=info,
                  reason=f"no cross-encoder configured: truncated the top {cfg.top_n} to {cfg.keep}")
    else:
        texts = [memory_text(engine.vault.memories[mid]) for mid in top]
        try:
            scores = [float(x) for x in scorer.score(st.query.text, texts)]
            if len(scores) != len(top):
                raise ValueError(f"returned {len(scores)} scores for {len(top)} texts")
        except Exception as exc:  # a user scorer must not fail the recall
            scores = None
            kept = top[: cfg.keep]
            out = Out(skipped=True, info=info,
                      reason=f"cross-encoder {scorer.name} failed ({exc}): truncated to {cfg.keep}")
        if scores is not None:
            for mid, s in zip(top, scores, strict=True):
                st.rerank[mid] = s
            kept = rerank_ids(top, scores, cfg.keep)
            out = Out(info=info + [("model", scorer.name)])
            for rank, mid in enumerate(kept, 1):
                out.candidates.append(Candidate(mid, st.rerank[mid], rank))
    kept_set = set(kept)
    for mid in top + rest:
        if mid not in kept_set:
            out.dropped.append(st.drop(mid, "rerank", f"beyond the re-ranked top {cfg.keep}"))
    st.order = kept
    return out
