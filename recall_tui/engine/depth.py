"""The candidate depth of a recall: how many hits every candidate pool is sized for.

Pools sized by the requested k made a memory's rank depend on k (a bigger vector fetch moves
convex fusion's min-max bounds; more hop parents, more fuzzy rows). They are sized by the
configuration's `fuse.depth` instead, so the top n at k = n are the first n at any k up to
the depth; only the floor stage's cut reads the requested k. A recall asking for more than
the depth sizes its pools for its k (and the floor stage says so). Headless.
"""

from __future__ import annotations

from recall_tui.engine.config import Config


def pool_depth(cfg: Config, k: int) -> int:
    """The hits this recall's pools are sized for: `fuse.depth`, or k when k is larger
    (`fuse.depth` 0: always k, the pools then follow every recall's k)."""
    return max(cfg.fuse.depth, k)


def above_depth(cfg: Config, k: int) -> str:
    """The floor stage's note when k exceeds the depth (else "")."""
    if k <= cfg.fuse.depth:
        return ""
    if cfg.fuse.depth <= 0:
        return f"pools sized for k={k} (fuse.depth 0): ranks may differ from smaller k"
    return (f"k={k} is above the pool depth {cfg.fuse.depth}: pools sized for k, ranks may "
            f"differ from smaller k")
