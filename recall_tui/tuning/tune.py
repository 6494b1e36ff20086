"""Search the pipeline's knobs with k-fold cross-validation over one or more judged vaults.

    tune(vaults, base, *, base_name, budget, folds, seed, k, now, knobs, progress, cancel)
        -> TuneResult

`vaults` is a list of `TuneVault(engine, queries, label)`: one open engine per vault (its index
stays open; only the `Config` passed to `Engine.recall` varies, with the recall cache and
recall tracking switched off so configurations never meet in the cache and nothing is written).

The procedure, all deterministic for a seed:

1. **Pool.** Without looking at any judgement, a pool of `budget` configurations is drawn: the
   base, then every single-knob change of `search_space(base)` in a seeded order, then random
   combinations of 2-3 changes while the budget lasts. `knobs` (glob patterns on the dotted
   knob names, e.g. `fuse.*`) restricts the search to the matching knobs: the pool, and so
   every selection below, holds no other change. Each configuration recalls every judged
   query once; its per-query recall@k and MRR are kept.
2. **Folds.** The judged queries of each vault are split into `folds` groups (stratified per
   vault: every vault is spread over every fold; the same query text is always in one fold, so
   folds never share a query).
3. **Selection, per fold, on the training queries only.** The pool configuration with the best
   training objective wins (ties: fewer changes, then pool order); then, greedily, the best
   single changes (by training objective) are added to it one at a time while the training
   objective improves (at most `COMBINE` steps); last, a change whose removal does not lower
   the training objective is dropped. The objective is the mean over vaults of
   `(1 - w) x mean (recall@k + MRR) / 2 over the on-topic queries + w x mean quiet over the
   off-topic ones`, where an off-topic query (`GoldenQuery.off_topic`: nothing is relevant)
   scores `quiet = 1 - hits / k` (1 when the recall abstained) and `w` is `off_topic_weight`
   (0.25; a vault without off-topic queries has only the first part), so a large vault does
   not outvote a small one and a configuration that injects junk pays for it.
4. **Held-out figures.** The fold's winner is scored on the fold's held-out queries, next to the
   base on the same queries. Every query is held out exactly once, so the held-out scores of all
   folds pair query by query with the base's: `metrics.compare` gives the paired sign test and
   randomisation test (as ranx does) on them, overall and per vault.
5. **The result.** The same selection on all queries, among every configuration run so far
   (with nothing held out, the folds' combinations may compete too), gives the configuration
   to save; its figures are in-sample and reported as such, never alone.

Headless: no textual, no rich. A UI passes `progress(done, total, what)` and `cancel()`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from recall_tui.engine.config import Config
from recall_tui.tuning import metrics
from recall_tui.tuning.golden import score_queries
from recall_tui.tuning.metrics import Comparison, GoldenQuery, QueryResult
from recall_tui.tuning.tune_space import (
    Changes,
    apply_changes,
    canon,
    describe,
    knob_patterns,
    make_pool,
    restrict,
    search_space,
)

#: Greedy steps that add a single change to a fold's winner.
COMBINE = 4
#: The metrics the objective averages (each a per-query value in 0..1).
OBJECTIVE = ("recall", "mrr")
#: The weight of the off-topic queries' quiet (1 - hits / k) in the objective, by default.
OFF_TOPIC_WEIGHT = 0.25
#: Improvements smaller than this are ties.
EPS = 1e-9
Progress = Callable[[int, int, str], None]


# --------------------------------------------------------------------------------------------
# folds


@dataclass(frozen=True)
class TuneVault:
    """One judged vault to tune on: an open engine and its judged queries."""

    engine: Any
    """An `Engine` over the vault, its index open (reused for every configuration)."""
    queries: Sequence[GoldenQuery]
    """The judged queries (off-topic ones count through their quiet; those whose every
    judgement is 0 are left out of tuning)."""
    label: str
    """How reports name the vault (its folder name)."""


def make_folds(vault_queries: Sequence[Sequence[str]], folds: int, seed: int) -> list[list[int]]:
    """Fold number per query, per vault: `out[v][i]` is the fold of query i of vault v.

    Queries with the same text (after stripping and lower-casing) form one group and always
    share a fold. Each vault's groups are shuffled (seeded) and dealt round-robin, starting
    where the previous vault stopped, so every vault is spread over the folds and the folds
    are as even as possible."""
    if folds < 2:
        raise ValueError("folds must be at least 2")
    rng = np.random.default_rng(seed)
    out: list[list[int]] = []
    start = 0
    for texts in vault_queries:
        groups: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            groups.setdefault(" ".join(t.lower().split()), []).append(i)
        keys = list(groups)
        assign = [0] * len(texts)
        for j, gi in enumerate(rng.permutation(len(keys))):
            f = (start + j) % folds
            for i in groups[keys[int(gi)]]:
                assign[i] = f
        start = (start + len(keys)) % folds
        out.append(assign)
    total_groups = sum(len({" ".join(t.lower().split()) for t in texts}) for texts in vault_queries)
    if total_groups < folds:
        raise ValueError(f"{folds} folds need at least {folds} distinct judged queries, "
                         f"got {total_groups}")
    return out


# --------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class FoldResult:
    """One fold: the configuration chosen on its training queries, scored on its held-out ones."""

    index: int
    """Fold number, from 1."""
    train: int
    """Training queries."""
    test: int
    """Held-out queries."""
    changes: Changes
    """The chosen configuration, as changes to the base."""
    train_objective: float
    """Its objective on the training queries."""
    base_train_objective: float
    """The base's objective on the same training queries."""
    heldout: dict[str, float | None]
    """Metric -> mean over the held-out queries (all vaults), chosen configuration."""
    base: dict[str, float | None]
    """Metric -> mean over the same held-out queries, base."""
    per_vault: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    """Vault label -> {"heldout": means, "base": means} on that vault's held-out queries."""


@dataclass(frozen=True)
class Scored:
    """One evaluated configuration, scored on every judged query (in-sample for a fixed config)."""

    changes: Changes
    objective: float
    means: dict[str, float | None]
    per_vault: dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class TuneResult:
    """What `tune` found. Held-out figures come first; in-sample ones are labelled so."""

    base_name: str
    base: Config
    best: Config
    """The configuration chosen on all queries (cache and tracking as in the base)."""
    changes: Changes
    """`best` as changes to the base."""
    k: int
    folds: tuple[FoldResult, ...]
    seed: int
    budget: int
    evaluated: int
    """Configurations recalled over every query (the pool plus the greedy steps)."""
    vaults: tuple[dict[str, Any], ...]
    """Per vault: label, root, queries, scored (tuned on), skipped (no relevant id)."""
    heldout: dict[str, float | None]
    """Metric -> mean over every query's held-out score (each query held out once)."""
    heldout_base: dict[str, float | None]
    """The base on the same queries."""
    fold_mean: dict[str, float | None]
    """Metric -> mean of the per-fold held-out means."""
    fold_mean_base: dict[str, float | None]
    comparison: Comparison
    """Held-out (candidate) vs base, paired per query: sign and randomisation tests."""
    per_vault: dict[str, dict[str, Any]]
    """Vault label -> {"heldout", "base": means, "comparison": Comparison}."""
    insample: dict[str, float | None]
    """`best` on all queries (in-sample: the queries chose it)."""
    insample_base: dict[str, float | None]
    leaderboard: tuple[Scored, ...]
    """The best evaluated configurations by objective on all queries (in-sample), best first."""
    knobs: tuple[str, ...] = ()
    """The `knobs` glob patterns the search was restricted to (empty: not restricted)."""
    off_topic_weight: float = OFF_TOPIC_WEIGHT
    """w: the weight of the off-topic queries' quiet in the objective."""
    off_topic: dict[str, dict[str, Any]] = field(default_factory=dict)
    """"heldout" / "base": `metrics.off_topic_summary` over every vault's off-topic queries
    (each held out once), chosen configurations vs the base."""
    searched: tuple[str, ...] = ()
    """The knobs the search could change (those of `search_space(base)` matching `knobs`)."""

    def to_json(self) -> dict[str, Any]:
        """Plain data (for `recall-tui tune --json` and the UI)."""
        def cmp(c: Comparison) -> dict[str, Any]:
            return {m: {"baseline_mean": mc.baseline_mean, "candidate_mean": mc.candidate_mean,
                        "mean_delta": mc.mean_delta, "wins": mc.wins, "losses": mc.losses,
                        "ties": mc.ties, "sign_p": mc.sign_p, "randomisation_p": mc.randomisation_p}
                    for m, mc in c.metrics.items()}

        def ch(c: Changes) -> list[dict[str, Any]]:
            return [{"knob": p, "value": v} for p, v in c]

        return {
            "base": self.base_name, "k": self.k, "seed": self.seed, "budget": self.budget,
            "evaluated": self.evaluated, "vaults": list(self.vaults),
            "knobs": list(self.knobs) or None, "searched_knobs": list(self.searched),
            "objective": (f"mean over vaults of (1 - {self.off_topic_weight:g}) x mean (recall@k "
                          f"+ MRR) / 2 on-topic + {self.off_topic_weight:g} x mean (1 - hits / k) "
                          "off-topic"),
            "off_topic_weight": self.off_topic_weight, "off_topic": self.off_topic,
            "heldout": self.heldout, "heldout_base": self.heldout_base,
            "fold_mean": self.fold_mean, "fold_mean_base": self.fold_mean_base,
            "comparison": cmp(self.comparison),
            "per_vault": {v: {"heldout": d["heldout"], "base": d["base"],
                              "comparison": cmp(d["comparison"])} for v, d in self.per_vault.items()},
            "folds": [{"fold": f.index, "train": f.train, "test": f.test, "changes": ch(f.changes),
                       "train_objective": f.train_objective,
                       "base_train_objective": f.base_train_objective,
                       "heldout": f.heldout, "base": f.base, "per_vault": f.per_vault}
                      for f in self.folds],
            "chosen": {"changes": ch(self.changes), "insample": self.insample,
                       "insample_base": self.insample_base},
            "leaderboard": [{"changes": ch(c.changes), "objective": c.objective, "means": c.means,
                             "per_vault": c.per_vault} for c in self.leaderboard],
        }


# --------------------------------------------------------------------------------------------
# the search


class _Runner:
    """Evaluates configurations over every query once, caching by change set."""

    def __init__(self, base: Config, vaults: Sequence[TuneVault], k: int, now: datetime,
                 cancel: Callable[[], bool] | None, off_topic_weight: float = OFF_TOPIC_WEIGHT,
                 ) -> None:
        self.base = base
        self.w = off_topic_weight
        self.off = [np.array([q.off_topic for q in tv.queries], dtype=bool) for tv in vaults]
        self.vaults = vaults
        self.k = k
        self.now = now
        self.cancel = cancel
        self.cache: dict[Changes, list[list[QueryResult]]] = {}
        # matrices: changes -> (n_vault_queries, len(OBJECTIVE)) per vault
        self.mat: dict[Changes, list[np.ndarray]] = {}

    def config(self, changes: Changes) -> Config:
        cfg = apply_changes(self.base, changes)
        return cfg.with_value("cache.enabled", False).with_value("tracking.enabled", False)

    def _recall(self, tv: TuneVault, q: GoldenQuery, cfg: Config) -> QueryResult:
        # the shared scoring loop, one query at a time: cancel is checked before the recall
        # and between its stages
        return score_queries(tv.engine, [q], k=self.k, now=self.now, config=cfg,
                             cancel=self.cancel)[0]

    def _store(self, key: Changes, per_vault: list[list[QueryResult]]) -> None:
        self.cache[key] = per_vault
        # on-topic rows: recall, MRR (quiet nan); off-topic rows: quiet = 1 - hits / k
        self.mat[key] = [np.array([[np.nan if r.metrics[m] is None else r.metrics[m]
                                    for m in OBJECTIVE] + [_quiet(r, off)]
                                   for r, off in zip(rs, offs, strict=True)], dtype=float)
                         .reshape(len(rs), len(OBJECTIVE) + 1)
                         for rs, offs in zip(per_vault, self.off, strict=True)]

    def run(self, changes: Changes) -> list[list[QueryResult]]:
        """Every query under one configuration (cached by its set of changes)."""
        key = canon(changes)
        got = self.cache.get(key)
        if got is None:
            cfg = self.config(key)
            self._store(key, [[self._recall(tv, q, cfg) for q in tv.queries] for tv in self.vaults])
            got = self.cache[key]
        return got

    def run_many(self, pool: Sequence[Changes], on_query: Callable[[int, str], None]) -> None:
        """Every query under every configuration of `pool`, query by query (all configurations
        of one query in a row, so its embedding is computed once whatever the size of the
        index's query-vector cache). `on_query(recalls, query)` after each query."""
        keys = [c for c in dict.fromkeys(canon(c) for c in pool) if c not in self.cache]
        cfgs = [self.config(c) for c in keys]
        out: dict[Changes, list[list[QueryResult]]] = {c: [] for c in keys}
        for tv in self.vaults:
            for c in keys:
                out[c].append([])
            for q in tv.queries:
                for c, cfg in zip(keys, cfgs, strict=True):
                    out[c][-1].append(self._recall(tv, q, cfg))
                on_query(len(keys), q.query)
        for c in keys:
            self._store(c, out[c])

    def objective(self, changes: Changes, masks: Sequence[np.ndarray]) -> float:
        """Mean over vaults (with at least one selected query) of (1 - w) x the mean of
        OBJECTIVE over the selected on-topic queries + w x the mean quiet of the selected
        off-topic ones (each part alone when the other has no query)."""
        mats = self.mat[canon(changes)]
        vals = []
        for m, mask, off in zip(mats, masks, self.off, strict=True):
            on_rows, off_rows = m[mask & ~off], m[mask & off]
            on = float(on_rows[:, : len(OBJECTIVE)].mean()) if len(on_rows) else None
            quiet = float(off_rows[:, len(OBJECTIVE)].mean()) if len(off_rows) else None
            if on is not None and quiet is not None:
                vals.append((1 - self.w) * on + self.w * quiet)
            elif on is not None:
                vals.append(on)
            elif quiet is not None:
                vals.append(quiet)
        return float(np.mean(vals)) if vals else 0.0


def _select(runner: _Runner, pool: Sequence[Changes], masks: Sequence[np.ndarray],
            tick: Callable[[str], None]) -> tuple[Changes, float]:
    """The pool's best on the selected queries, then greedy single additions, then pruning:
    a change whose removal does not lower the objective goes (a random combination can carry
    a knob that does nothing, e.g. a linear-fusion weight under RRF)."""
    scored = [(runner.objective(c, masks), i, c) for i, c in enumerate(pool)]
    best_obj, _i, best = min(scored, key=lambda t: (-round(t[0], 9), len(t[2]), t[1]))
    base_obj = runner.objective((), masks)
    singles = sorted((t for t in scored if len(t[2]) == 1 and t[0] > base_obj + EPS),
                     key=lambda t: (-t[0], t[1]))
    steps = 0
    for _o, _i, single in singles:
        if steps >= COMBINE:
            break
        path = single[0][0]
        if any(p == path for p, _v in best):
            continue
        cand = canon(best + single)
        steps += 1
        tick(describe(cand))
        runner.run(cand)
        obj = runner.objective(cand, masks)
        if obj > best_obj + EPS:
            best, best_obj = cand, obj
    for change in list(best):
        if len(best) <= 1:
            break
        cand = tuple(c for c in best if c != change)
        tick(describe(cand))
        runner.run(cand)
        obj = runner.objective(cand, masks)
        if obj >= best_obj - EPS:
            best, best_obj = cand, max(obj, best_obj)
    return best, best_obj


def _quiet(r: QueryResult, off_topic: bool) -> float:
    """An off-topic query's quiet, 1 - hits / k (1: it abstained); nan for an on-topic one."""
    return 1.0 - min(len(r.ranked), r.k) / r.k if off_topic and r.k else float("nan")


def _means(results: Sequence[QueryResult]) -> dict[str, float | None]:
    return metrics.mean_metrics(results)


def tune(vaults: Sequence[TuneVault], base: Config, *, base_name: str = "base", budget: int = 80,
         folds: int = 5, seed: int = 0, k: int = 10, now: datetime,
         knobs: Sequence[str] = (), progress: Progress | None = None,
         cancel: Callable[[], bool] | None = None,
         off_topic_weight: float = OFF_TOPIC_WEIGHT) -> TuneResult:
    """Cross-validated knob search (see the module docstring). `knobs`: glob patterns
    restricting the knobs searched (`knob_patterns` splits comma lists). Raises ValueError for
    a bad budget, fold count, a query set too small for the folds or a `knobs` pattern that
    matches no knob; `Cancelled` when `cancel()` turns True between recalls."""
    knobs = knob_patterns(knobs)
    searched = tuple(p for p, _v in restrict(search_space(base), knobs))
    if not vaults:
        raise ValueError("tune needs at least one vault")
    if k < 1:
        raise ValueError("k must be at least 1")
    given = list(vaults)
    if not 0.0 <= off_topic_weight <= 1.0:
        raise ValueError(f"off_topic_weight must be in 0..1, got {off_topic_weight:g}")
    vaults = [dataclasses.replace(tv, queries=[q for q in tv.queries
                                               if q.off_topic
                                               or any(g > 0 for g in q.relevant.values())])
              for tv in given]
    skipped = [len(orig.queries) - len(tv.queries) for orig, tv in zip(given, vaults, strict=True)]
    assign = make_folds([[q.query for q in tv.queries] for tv in vaults], folds, seed)
    pool = make_pool(base, budget, seed, knobs)
    runner = _Runner(base, vaults, k, now, cancel, off_topic_weight)
    nq = sum(len(tv.queries) for tv in vaults)
    # progress counts recalls: the pool, then per selection (one per fold, one on all
    # queries) up to COMBINE greedy configurations and about as many pruning ones
    total = (len(pool) + 2 * COMBINE * (folds + 1)) * nq
    done = 0

    def report(n: int, what: str) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(min(done, total), total, what)

    runner.run_many(pool, lambda n, query: report(n, f"pool of {len(pool)}: {query}"))

    def tick(what: str) -> None:
        report(nq, what)

    fold_arr = [np.array(a, dtype=int) for a in assign]
    fold_results: list[FoldResult] = []
    heldout_rs: list[list[QueryResult | None]] = [[None] * len(tv.queries) for tv in vaults]
    for f in range(folds):
        train = [a != f for a in fold_arr]
        test = [a == f for a in fold_arr]
        chosen, obj = _select(runner, pool, train,
                              lambda what, f=f: tick(f"fold {f + 1} of {folds}: {what}"))
        done = max(done, (len(pool) + 2 * COMBINE * (f + 1)) * nq)
        res = runner.run(chosen)
        base_res = runner.run(())
        held, held_base, pv = [], [], {}
        for vi, tv in enumerate(vaults):
            idx = np.flatnonzero(test[vi])
            vr = [res[vi][i] for i in idx]
            vb = [base_res[vi][i] for i in idx]
            for i in idx:
                heldout_rs[vi][i] = res[vi][i]
            held += vr
            held_base += vb
            pv[tv.label] = {"heldout": _means(vr), "base": _means(vb)}
        fold_results.append(FoldResult(
            f + 1, int(sum(int(t.sum()) for t in train)), len(held), chosen, obj,
            runner.objective((), train), _means(held), _means(held_base), pv))

    everything = [np.ones(len(tv.queries), dtype=bool) for tv in vaults]
    # no query is held out any more, so every configuration run so far may compete (the folds'
    # greedy and pruned ones too); within a fold only the pool does, built blind to judgements
    best, _obj = _select(runner, list(runner.cache), everything,
                         lambda what: tick(f"all queries: {what}"))
    if progress is not None:
        progress(total, total, "done")

    base_res = runner.run(())
    best_res = runner.run(best)
    flat_held = [r for vr in heldout_rs for r in vr if r is not None]
    flat_base = [r for vr in base_res for r in vr]
    flat_q = [q for tv in vaults for q in tv.queries]
    comparison = metrics.compare(flat_base, flat_held, baseline_name=base_name,
                                 candidate_name="tuned (held-out)")
    per_vault: dict[str, dict[str, Any]] = {}
    for vi, tv in enumerate(vaults):
        hv = [r for r in heldout_rs[vi] if r is not None]
        per_vault[tv.label] = {
            "heldout": _means(hv), "base": _means(base_res[vi]),
            "comparison": metrics.compare(base_res[vi], hv, baseline_name=base_name,
                                          candidate_name="tuned (held-out)"),
        }

    def fold_mean(key: str) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for m in metrics.METRIC_NAMES:
            vals = [getattr(fr, key)[m] for fr in fold_results if getattr(fr, key)[m] is not None]
            out[m] = float(np.mean(vals)) if vals else None
        return out

    board = []
    for c in runner.cache:
        pv = {tv.label: _means(runner.cache[c][vi]) for vi, tv in enumerate(vaults)}
        board.append(Scored(c, runner.objective(c, everything),
                               _means([r for vr in runner.cache[c] for r in vr]), pv))
    order = {c: i for i, c in enumerate(runner.cache)}
    board.sort(key=lambda cd: (-round(cd.objective, 9), len(cd.changes), order[cd.changes]))

    best_cfg = apply_changes(base, best)
    return TuneResult(
        base_name=base_name, base=base, best=best_cfg, changes=best, k=k,
        folds=tuple(fold_results), seed=seed, budget=budget, evaluated=len(runner.cache),
        vaults=tuple({"label": tv.label, "root": str(getattr(tv.engine.vault, "root", "")),
                      "queries": len(tv.queries) + s, "scored": len(tv.queries), "skipped": s}
                     for tv, s in zip(vaults, skipped, strict=True)),
        heldout=_means(flat_held), heldout_base=_means(flat_base),
        fold_mean=fold_mean("heldout"), fold_mean_base=fold_mean("base"),
        comparison=comparison, per_vault=per_vault,
        insample=_means([r for vr in best_res for r in vr]), insample_base=_means(flat_base),
        leaderboard=tuple(board[:10]), knobs=knobs, searched=searched,
        off_topic_weight=off_topic_weight,
        off_topic={"heldout": metrics.off_topic_summary(flat_q, flat_held),
                   "base": metrics.off_topic_summary(flat_q, flat_base)},
    )
