"""Two rankings of the same query side by side: what moved, what is new, what was dropped.

The side-by-side view and the tuning pane's "rank change against the configuration you
started from" column both read this module, so "up 2" means the same everywhere: a better
(smaller) rank in B than in A. List similarity comes from `recall_tui.tuning.metrics` (overlap at k,
rank-biased overlap). Pure functions over traces; headless (no textual, no rich).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from recall_tui.engine.trace import Trace
from recall_tui.tuning import metrics

#: Persistence of the rank-biased overlap shown beside the two lists (top 10 ranks ≈ 86%).
RBO_P = 0.9


@dataclass(frozen=True)
class Movement:
    """One memory's place in ranking A and ranking B."""

    id: str
    """The memory id."""
    rank_a: int | None
    """1-based rank in A, None when A does not hold it."""
    rank_b: int | None
    """1-based rank in B, None when B does not hold it."""
    kind: str
    """`up`, `down`, `same`, `new` (only in B) or `dropped` (only in A)."""
    by: int
    """How many places it moved (0 for same, new and dropped)."""

    @property
    def label(self) -> str:
        """Short text for a column: `▲2`, `▼1`, `=`, `new`, `dropped`."""
        return {"up": f"▲{self.by}", "down": f"▼{self.by}", "same": "="}.get(self.kind, self.kind)


@dataclass(frozen=True)
class RankingDiff:
    """Ranking A against ranking B."""

    a: tuple[str, ...]
    """The ids of A, best first."""
    b: tuple[str, ...]
    """The ids of B, best first."""
    k: int
    """The depth overlap was taken at."""
    movements: tuple[Movement, ...]
    """Every id of B in B's order, then the ids only A holds in A's order."""
    overlap: float
    """Overlap at k: |A[:k] ∩ B[:k]| / k."""
    rbo: float
    """Extrapolated rank-biased overlap of the whole lists (p = RBO_P), 1 = identical."""
    by_id: Mapping[str, Movement] = field(hash=False, compare=False)
    """id -> its movement."""

    def count(self, kind: str) -> int:
        """How many ids moved this way (`up`, `down`, `same`, `new`, `dropped`)."""
        return sum(1 for m in self.movements if m.kind == kind)


def _movement(mid: str, ra: int | None, rb: int | None) -> Movement:
    if ra is None:
        return Movement(mid, None, rb, "new", 0)
    if rb is None:
        return Movement(mid, ra, None, "dropped", 0)
    if rb < ra:
        return Movement(mid, ra, rb, "up", ra - rb)
    if rb > ra:
        return Movement(mid, ra, rb, "down", rb - ra)
    return Movement(mid, ra, rb, "same", 0)


def diff_ids(a: list[str] | tuple[str, ...], b: list[str] | tuple[str, ...],
             k: int | None = None) -> RankingDiff:
    """Diff two id rankings. `k` defaults to the longer list's length (at least 1)."""
    a_ids = tuple(dict.fromkeys(a))
    b_ids = tuple(dict.fromkeys(b))
    depth = k if k is not None else max(len(a_ids), len(b_ids), 1)
    ra = {mid: i for i, mid in enumerate(a_ids, start=1)}
    rb = {mid: i for i, mid in enumerate(b_ids, start=1)}
    moves = [_movement(mid, ra.get(mid), rb[mid]) for mid in b_ids]
    moves += [_movement(mid, ra[mid], None) for mid in a_ids if mid not in rb]
    return RankingDiff(
        a=a_ids,
        b=b_ids,
        k=depth,
        movements=tuple(moves),
        overlap=metrics.overlap_at_k(a_ids, b_ids, depth),
        rbo=metrics.rbo(a_ids, b_ids, RBO_P),
        by_id=MappingProxyType({m.id: m for m in moves}),
    )


def diff_rankings(a: Trace, b: Trace, k: int | None = None) -> RankingDiff:
    """Diff the hits of two traces of the same query (two presets or configurations).

    `k` defaults to the larger of the two traces' k, so a hit beyond the shorter list's end
    still counts against the overlap.
    """
    depth = k if k is not None else max(a.k, b.k, len(a.hits), len(b.hits), 1)
    return diff_ids([h.id for h in a.hits], [h.id for h in b.hits], depth)


def rank_deltas(baseline: Trace, current: Trace) -> dict[str, Movement]:
    """Each current hit's movement against the baseline trace (`new` when the baseline did not
    return it): the tuning pane's delta column. Ids the current run dropped are left out; ask
    `diff_rankings` for those."""
    d = diff_rankings(baseline, current)
    return {h.id: d.by_id[h.id] for h in current.hits}
