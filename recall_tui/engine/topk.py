"""The best entries of a score array in the order of a stable descending sort, without sorting
every entry: what the stages that rank all memories or all turns per recall take their top from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from recall_tui.engine.stages import StageContext


def best_first(scores: np.ndarray, eligible: np.ndarray, limit: int | None) -> np.ndarray:
    """Indices where `eligible` holds, highest score first, ties by index (the order
    `argsort(-scores, kind="stable")` gives them), only the first `limit` (None: all). A
    partition keeps every entry tied with the `limit`-th score, so the sort of those few
    settles the ties exactly as the full sort would."""
    docs = np.flatnonzero(eligible)
    if limit is not None:
        if limit <= 0:
            return docs[:0]
        if len(docs) > limit:
            s = scores[docs]
            kth = np.partition(s, len(s) - limit)[len(s) - limit]
            docs = docs[s >= kth]
    order = docs[np.lexsort((docs, -scores[docs]))]
    return order if limit is None else order[:limit]


def by_score(engine: StageContext, score: Mapping[str, float], ids: Iterable[str]) -> list[str]:
    """Memory ids best score first, ties: newer `updated` first, then id: the pipeline's
    order (fuse, hops, boosts and the turn stages re-rank by it). The tie-break is one int
    per memory kept per vault (`tie_ranks`), and the order is two stable sorts keyed by
    bound methods (ties rank first, then the score, descending: a stable sort keeps equal
    scores in tie order) instead of a tuple built per id per sort: the same order as
    `sorted(ids, key=lambda mid: (-score[mid], -updated.timestamp(), mid))`
    (tests/test_fast_paths.py)."""
    ranks = tie_ranks(engine)
    out = sorted(ids, key=ranks.__getitem__)
    out.sort(key=score.__getitem__, reverse=True)
    return out


def tie_ranks(engine: StageContext) -> dict[str, int]:
    """memory id -> its place when the vault's memories are sorted by newer `updated` first,
    then id (`-updated.timestamp()`, then the id), built once per vault."""
    def build() -> dict[str, int]:
        memories = engine.vault.memories
        newer = {mid: -m.updated.timestamp() for mid, m in memories.items()}
        ordered = sorted(memories, key=lambda mid: (newer[mid], mid))
        return {mid: i for i, mid in enumerate(ordered)}
    return engine.memo("topk.tie_ranks", build)
