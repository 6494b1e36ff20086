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
    newer: dict[str, float] = engine.memo("topk.newer", lambda: _newer(engine))
    out = sorted(ids)
    out.sort(key=newer.__getitem__)
    out.sort(key=score.__getitem__, reverse=True)
    return out


def _newer(engine: StageContext) -> dict[str, float]:
    """id -> `-updated.timestamp()`: from a keyword index's `updated` array when the engine
    has one over the very same Memory objects (the same doubles, negated: no datetime touched again,
    ~10x less CPU at 100k memories), else from every memory."""
    mems = engine.vault.memories
    for kidx in getattr(engine, "_kw", {}).values():
        # (built over these very Memory objects: a kept index over equal contents may have
        # other `updated` values, e.g. a file's time)
        if len(kidx.memories) == len(mems) and all(
                a is b for a, b in zip(kidx.memories, mems.values(), strict=True)):
            return dict(zip(kidx.ids, (-kidx.updated).tolist(), strict=True))
    return {mid: -m.updated.timestamp() for mid, m in engine.vault.memories.items()}
