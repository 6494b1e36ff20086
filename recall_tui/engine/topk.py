"""The best entries of a score array in the order of a stable descending sort, without sorting
every entry: what the stages that rank all memories or all turns per recall take their top from."""

from __future__ import annotations

import numpy as np


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
