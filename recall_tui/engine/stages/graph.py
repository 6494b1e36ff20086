"""graph: entities named in the query (plus entity hints) seed the entity graph.

`direct` mode (abmind S8): memories whose edges touch a matched entity, fixed score.
`ppr` mode (Memoria): Personalized PageRank from the matched entities over the undirected
entity graph (edge weight = number of edges between two entities), then each memory scores
the PPR mass of the distinct entities its edges mention.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import words
from recall_tui.engine.trace import Candidate
from recall_tui.vault.model import EntityGraph


def normalise_entity(name: str) -> str:
    """Entity names and queries compare as folded words joined by spaces, so `pg-bouncer`,
    `pg_bouncer` and `PG Bouncer` are one name."""
    return " ".join(words(name.replace("_", " ")))


def find_entities(query_text: str, names: Iterable[str], hints: Iterable[str] = ()) -> list[str]:
    """Graph entities named in the query (longest names first, so `maya okafor` wins over
    `maya` at the same place), then the hints that are known entities; query order kept."""
    by_norm: dict[str, str] = {}
    for n in names:
        norm = normalise_entity(n)
        if norm:
            by_norm.setdefault(norm, n)
    q = f" {normalise_entity(query_text)} "
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for norm in sorted(by_norm, key=len, reverse=True):
        start = q.find(f" {norm} ")
        while start != -1:
            span = (start, start + len(norm) + 1)
            if not any(a < span[1] and span[0] < b for a, b in taken):
                taken.append(span)
                found.append((start, by_norm[norm]))
                break
            start = q.find(f" {norm} ", start + 1)
    out = [n for _, n in sorted(found)]
    for h in hints:
        known = by_norm.get(normalise_entity(h))
        if known is not None and known not in out:
            out.append(known)
    return out


def weighted_adjacency(graph: EntityGraph) -> dict[str, dict[str, float]]:
    """Undirected neighbour weights: how many edges join two entities (self-loops left out)."""
    adj: dict[str, dict[str, float]] = {e: {} for e in graph.adjacency}
    for e in graph.edges:
        if e.subject == e.object:
            continue
        adj[e.subject][e.object] = adj[e.subject].get(e.object, 0.0) + 1.0
        adj[e.object][e.subject] = adj[e.object].get(e.subject, 0.0) + 1.0
    return adj


class PPRGraph:
    """The entity graph as arrays for fast power iteration: node list, and for every
    directed half of an undirected edge its source, target and transition probability."""

    def __init__(self, adj: Mapping[str, Mapping[str, float]]):
        self.nodes = sorted(adj)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        src, dst, prob = [], [], []
        self.dangling = np.ones(len(self.nodes), dtype=bool)
        for u, nbs in adj.items():
            total = sum(nbs.values())
            if total <= 0:
                continue
            self.dangling[self.index[u]] = False
            for v, w in nbs.items():
                src.append(self.index[u])
                dst.append(self.index[v])
                prob.append(w / total)
        self.src = np.array(src, dtype=np.int64)
        self.dst = np.array(dst, dtype=np.int64)
        self.prob = np.array(prob, dtype=np.float64)


def personalized_pagerank(adj: Mapping[str, Mapping[str, float]] | PPRGraph,
                          seeds: Iterable[str], alpha: float = 0.85, tol: float = 1e-6,
                          max_iter: int = 50) -> tuple[dict[str, float], int]:
    """Power iteration of r = (1 - alpha) s + alpha (P^T r + dangling mass x s), with s
    uniform over the seeds and P the row-normalised adjacency. Stops when the L1 change is
    under tol or after max_iter iterations. Returns (non-zero scores, which sum to 1;
    iterations run)."""
    g = adj if isinstance(adj, PPRGraph) else PPRGraph(adj)
    idx = [g.index[x] for x in dict.fromkeys(seeds) if x in g.index]
    if not idx:
        return {}, 0
    n = len(g.nodes)
    s = np.zeros(n)
    s[idx] = 1.0 / len(idx)
    r = s.copy()
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        spread = np.bincount(g.dst, weights=r[g.src] * g.prob, minlength=n)
        nxt = (1 - alpha) * s + alpha * spread + alpha * r[g.dangling].sum() * s
        delta = float(np.abs(nxt - r).sum())
        r = nxt
        if delta < tol:
            break
    return {g.nodes[i]: float(r[i]) for i in np.nonzero(r)[0]}, iterations


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.graph
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    graph = engine.vault.graph
    if not graph.adjacency:
        return Out(skipped=True, reason="the vault has no entity graph")
    ents = find_entities(st.query.text, graph.adjacency, st.entity_hints)
    if not ents:
        return Out(skipped=True, reason="no entity of the graph in the query")
    if cfg.first_match_only:
        ents = ents[:1]
    out = Out(info=[("entities", ", ".join(ents)), ("mode", cfg.mode)])
    scored: dict[str, tuple[float, str]] = {}
    if cfg.mode == "direct":
        for ent in ents:
            for e in graph.adjacency.get(ent, ()):
                if e.memory_id and e.memory_id not in scored:
                    scored[e.memory_id] = (cfg.direct_score, str(e))
    else:
        mass, iters = personalized_pagerank(engine.ppr_graph(), ents, cfg.alpha,
                                            cfg.tol, cfg.max_iter)
        out.info.append(("ppr_iterations", str(iters)))
        top = sorted(mass.items(), key=lambda kv: -kv[1])[:5]
        out.info.append(("ppr_top", ", ".join(f"{n} {v:.3f}" for n, v in top)))
        # `ments` is sorted: the float sum, and the first of equal masses `max` keeps, are
        # the same in every process (never a set's order, which PYTHONHASHSEED changes).
        for mid, ments in engine.memory_entities().items():
            score = sum(mass.get(e, 0.0) for e in ments)
            if score > 0:
                best = max(ments, key=lambda e: mass.get(e, 0.0))
                scored[mid] = (score, f"via {best} ({mass.get(best, 0.0):.3f})")
    ranked = [(mid, v) for mid, v in scored.items() if mid in engine.vault.memories]
    ranked.sort(key=lambda x: (-x[1][0], x[0]))
    for rank, (mid, (score, note)) in enumerate(ranked[: cfg.limit], 1):
        out.candidates.append(Candidate(mid, score, rank, note))
    out.info.append(("memories", str(len(ranked))))
    return out
