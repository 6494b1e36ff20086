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
    order (fuse, hops, boosts and the turn stages re-rank by it). Each memory's
    `-updated.timestamp()` is kept per vault instead of being computed in every sort key of
    every recall (the same float: `timestamp()` of the same datetime), and the order is three
    stable sorts keyed by the id itself and by bound methods (id, then newer first, then the
    score, descending: a stable sort keeps equal keys in the order the last one left them)
    instead of a tuple built per id: the same order as
    `sorted(ids, key=lambda mid: (-score[mid], newer[mid], mid))` (tests/test_fast_paths.py)."""
    newer: dict[str, float] = engine.memo("topk.newer", lambda: {
        mid: -m.updated.timestamp() for mid, m in engine.vault.memories.items()})
    out = sorted(ids)
    out.sort(key=newer.__getitem__)
    out.sort(key=score.__getitem__, reverse=True)
    return out
