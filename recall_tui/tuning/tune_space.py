"""The knobs `recall-tui tune` searches, and the pool of configurations it tries.

`SPACE` lists every knob and the values tried; `search_space(base)` keeps those the base
configuration has, without the base's own values; `restrict` keeps the knobs whose dotted names
match given glob patterns (`recall-tui tune --knobs`); `make_pool` draws the pool (the base, every
single change in a seeded order, then random 2-3 change combinations) without reading any
judgement; `apply_changes` turns a set of changes into a `Config` through
`recall_tui.engine.config` (`Config.with_value`, `knobs`), so it follows the knob names
wherever the sections live. Headless.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

import numpy as np

from recall_tui.engine.config import Config, knobs

#: The pseudo-knob that switches off every boost the base switches on.
ALL_BOOSTS = "boosts.*.enabled"

_W = (0.0, 0.5, 1.0, 2.0, 4.0)
_FIELD = (0.0, 1.0, 2.0, 4.0, 6.0)
_ONOFF = (True, False)

#: The knobs searched and the values tried (a value equal to the base's is skipped; a knob
#: the configuration does not have is left out).
SPACE: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("fuse.method", ("rrf", "linear", "convex")),
    ("fuse.rrf_k", (10, 30, 60, 120)),
    ("fuse.weights.keyword", _W),
    ("fuse.weights.fuzzy", _W),
    ("fuse.weights.vector", _W),
    ("fuse.weights.topic", (0.0, 1.0, 2.0)),
    ("fuse.weights.graph", (0.0, 1.0, 2.0)),
    ("fuse.linear_similarity", (0.5, 0.7, 0.9)),
    ("fuse.linear_keyword", (0.1, 0.3, 0.5)),
    ("vector.threshold", (0.0, 0.15, 0.25, 0.35, 0.5)),
    ("keyword.recall_when", _FIELD),
    ("keyword.title", _FIELD),
    ("keyword.tags", _FIELD),
    ("keyword.summary", _FIELD),
    ("keyword.topic_path", (0.0, 1.0, 2.0)),
    ("keyword.body", _FIELD),
    ("keyword.keywords", (0.0, 1.0, 2.0)),
    ("fuzzy.enabled", _ONOFF),
    ("vector.enabled", _ONOFF),
    ("topic.enabled", _ONOFF),
    ("graph.enabled", _ONOFF),
    ("hops.enabled", _ONOFF),
    ("hops.factor", (0.25, 0.5, 0.75)),
    (ALL_BOOSTS, (False,)),
    ("boosts.staleness.enabled", _ONOFF),
    ("boosts.recency.enabled", _ONOFF),
    ("consolidation.enabled", _ONOFF),
    ("floor.enabled", _ONOFF),
    ("speaker.enabled", _ONOFF),
    ("speaker.when_weight", (0.0, 0.25, 0.5)),
    ("window.enabled", _ONOFF),
    ("window.weight", (0.25, 0.5, 1.0)),
    ("window.size", (1, 2)),
    ("hop2.enabled", _ONOFF),
    ("hop2.factor", (0.15, 0.3, 0.5)),
)

Change = tuple[str, Any]
Changes = tuple[Change, ...]


def _boost_paths(cfg: Config) -> list[str]:
    return [p for p, _t, _v, _d in knobs(cfg) if p.startswith("boosts.") and p.endswith(".enabled")]


def search_space(base: Config) -> list[tuple[str, tuple[Any, ...]]]:
    """(knob path, values to try) for every knob of SPACE the configuration has, values equal
    to the base's left out, knobs with nothing left to try dropped."""
    have = {p: v for p, _t, v, _d in knobs(base)}
    out: list[tuple[str, tuple[Any, ...]]] = []
    for path, values in SPACE:
        if path == ALL_BOOSTS:
            if any(have[p] for p in _boost_paths(base)):
                out.append((path, values))
            continue
        if path not in have:
            continue
        cur = have[path]
        vals = tuple(v for v in values if not _same(v, cur))
        if vals:
            out.append((path, vals))
    return out


def knob_patterns(specs: Sequence[str] | None) -> tuple[str, ...]:
    """The glob patterns of `--knobs` values (each may list several, comma-separated), blanks
    dropped, duplicates kept once, order kept."""
    out: list[str] = []
    for spec in specs or ():
        for pat in spec.split(","):
            pat = pat.strip()
            if pat and pat not in out:
                out.append(pat)
    return tuple(out)


def restrict(space: Sequence[tuple[str, tuple[Any, ...]]],
             patterns: Sequence[str]) -> list[tuple[str, tuple[Any, ...]]]:
    """The knobs of `space` whose dotted name matches at least one glob pattern (`fnmatch`
    rules, case-sensitive; `*` also crosses dots, so `fuse.*` takes `fuse.weights.vector`).
    No patterns: all of `space`. Raises ValueError naming a pattern that matches no knob,
    with the knob names it could have matched."""
    if not patterns:
        return list(space)
    names = [p for p, _v in space]
    for pat in patterns:
        if not any(fnmatchcase(n, pat) for n in names):
            raise ValueError(f"knob pattern {pat!r} matches no knob tune searches from this "
                             f"base; the knobs are: {', '.join(names)}")
    return [(p, v) for p, v in space if any(fnmatchcase(p, pat) for pat in patterns)]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b))
    return a == b


def apply_changes(base: Config, changes: Changes) -> Config:
    """`base` with every change applied in order (ALL_BOOSTS switches every boost off)."""
    cfg = base
    for path, value in changes:
        if path == ALL_BOOSTS:
            for p in _boost_paths(cfg):
                cfg = cfg.with_value(p, bool(value) and cfg.get(p))
        else:
            cfg = cfg.with_value(path, value)
    return cfg


def canon(changes: Changes) -> Changes:
    """One order per set of changes (by knob path), so equal sets share one evaluation."""
    return tuple(sorted(changes, key=lambda c: (c[0], repr(c[1]))))


def describe(changes: Changes) -> str:
    """`keyword.title=1.0, hops.enabled=False`, or `(base)`."""
    return ", ".join(f"{p}={v!r}" if isinstance(v, str) else f"{p}={v}" for p, v in changes) or "(base)"


def make_pool(base: Config, budget: int, seed: int,
              knobs: Sequence[str] = ()) -> list[Changes]:
    """The base, then single changes in a seeded order, then random 2-3 change combinations,
    `budget` configurations in all (fewer when the space is smaller), over the knobs matching
    `knobs` (glob patterns; none: every knob of `search_space`). Reads no judgement."""
    if budget < 1:
        raise ValueError("budget must be at least 1")
    space = restrict(search_space(base), knobs)
    rng = np.random.default_rng(seed)
    singles: list[Changes] = [((p, v),) for p, vals in space for v in vals]
    order = rng.permutation(len(singles))
    pool: list[Changes] = [()]
    pool += [singles[i] for i in order[: budget - 1]]
    seen = {canon(c) for c in pool}
    tries = 0
    while len(pool) < budget and len(space) >= 2 and tries < budget * 20:
        tries += 1
        n = int(rng.integers(2, min(3, len(space)) + 1))
        picks = rng.choice(len(space), size=n, replace=False)
        combo = canon(tuple((space[i][0], space[i][1][int(rng.integers(len(space[i][1])))])
                             for i in sorted(int(x) for x in picks)))
        if combo not in seen:
            seen.add(combo)
            pool.append(combo)
    return pool
