"""Links between memories: unknown ids dropped, supersession resolved, chains built."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from recall_tui.vault.model import Chain, Memory, Problem

# --------------------------------------------------------------------------------------------
# Links between memories: unknown ids, supersession, chains
# --------------------------------------------------------------------------------------------


def _drop_unknown_links(memories: dict[str, Memory], problems: list[Problem]) -> dict[str, Memory]:
    """Links to ids that are not in the vault (or to the memory itself) are dropped."""
    out: dict[str, Memory] = {}
    for mid, m in memories.items():
        if not m.supersedes and m.superseded_by is None and not m.related_via:
            out[mid] = m  # no links (most memories): nothing to check
            continue
        changes: dict[str, Any] = {}

        def report(key: str, target: str, m: Memory = m) -> None:
            why = "links to itself" if target == m.id else f"unknown id '{target}'"
            problems.append(Problem(m.path, m.key_lines.get(key), f"{key}: {why}; link dropped"))

        sup = []
        for target in m.supersedes:
            if target in memories or target == m.id:  # self-links are reported as cycles
                sup.append(target)
            else:
                report("supersedes", target)
        if len(sup) != len(m.supersedes):
            changes["supersedes"] = tuple(sup)
        if m.superseded_by is not None and m.superseded_by not in memories:
            report("superseded_by", m.superseded_by)
            changes["superseded_by"] = None
        rel = []
        for link in m.related_via:
            if link.id in memories and link.id != m.id:
                rel.append(link)
            else:
                report("related_via", link.id)
        if len(rel) != len(m.related_via):
            changes["related_via"] = tuple(rel)
        out[mid] = replace(m, **changes) if changes else m
    return out


@dataclass
class _Link:
    """One supersession link older -> newer and who declared it."""

    older: str
    newer: str
    by_newer: bool = False
    """Declared as `supersedes` on the newer memory."""
    by_older: bool = False
    """Declared as `superseded_by` on the older memory."""


def _supersession_links(
    memories: dict[str, Memory], problems: list[Problem]
) -> tuple[dict[tuple[str, str], _Link], dict[str, Memory]]:
    """Collect the links from both ends, resolve contradictions, break cycles.

    Returns the surviving links and the memories with every dropped declaration removed, so
    a memory's `supersedes`/`superseded_by` always agree with the chains.
    """
    links: dict[tuple[str, str], _Link] = {}
    for m in memories.values():
        for older_id in m.supersedes:
            links.setdefault((older_id, m.id), _Link(older_id, m.id)).by_newer = True
        if m.superseded_by is not None:
            links.setdefault((m.id, m.superseded_by), _Link(m.id, m.superseded_by)).by_older = True

    dropped: list[_Link] = []
    # An explicit `superseded_by` names the one successor; another memory claiming to supersede
    # the same older memory contradicts it, and the explicit end wins.
    for key, link in sorted(links.items()):
        older = memories[link.older]
        if link.by_older or older.superseded_by is None or link.older == link.newer:
            continue
        newer = memories[link.newer]
        problems.append(
            Problem(
                newer.path,
                newer.key_lines.get("supersedes"),
                f"supersedes: '{older.id}' but '{older.id}' says superseded_by: "
                f"'{older.superseded_by}'; link dropped",
            )
        )
        dropped.append(links.pop(key))

    for key in [k for k in sorted(links) if k[0] == k[1]]:
        link = links.pop(key)
        m = memories[link.older]
        k = "supersedes" if link.by_newer else "superseded_by"
        problems.append(
            Problem(m.path, m.key_lines.get(k), f"{k}: '{m.id}' supersedes itself; link dropped")
        )
        dropped.append(link)

    while True:
        cycle = _find_cycle(links)
        if cycle is None:
            break
        pairs = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        older_id, newer_id = min(
            pairs,
            key=lambda p: (memories[p[1]].created - memories[p[0]].created, p[0], p[1]),
        )
        link = links.pop((older_id, newer_id))
        declarer, k = (
            (memories[newer_id], "supersedes")
            if link.by_newer
            else (memories[older_id], "superseded_by")
        )
        shown = " -> ".join([*cycle, cycle[0]])
        problems.append(
            Problem(
                declarer.path,
                declarer.key_lines.get(k),
                f"supersession cycle {shown} (each superseded by the next); "
                f"dropped the link {older_id} -> {newer_id}",
            )
        )
        dropped.append(link)

    if dropped:
        memories = dict(memories)
        for link in dropped:
            if link.by_newer:
                m = memories[link.newer]
                memories[m.id] = replace(
                    m, supersedes=tuple(x for x in m.supersedes if x != link.older)
                )
            if link.by_older:
                m = memories[link.older]
                memories[m.id] = replace(m, superseded_by=None)
    return links, memories


def _find_cycle(links: Iterable[tuple[str, str]]) -> list[str] | None:
    """One cycle in the link graph (nodes in order), found deterministically, or None."""
    succ: dict[str, list[str]] = {}
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
    for targets in succ.values():
        targets.sort()
    colour: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in sorted(succ):
        if colour.get(start):
            continue
        path = [start]
        iters = [iter(succ.get(start, ()))]
        colour[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                iters.pop()
                continue
            state = colour.get(nxt, 0)
            if state == 1:
                return path[path.index(nxt) :]
            if state == 0:
                colour[nxt] = 1
                path.append(nxt)
                iters.append(iter(succ.get(nxt, ())))
    return None


def _build_chains(links: Iterable[tuple[str, str]], order: dict[str, int]) -> tuple[Chain, ...]:
    """Chains as linear paths through the (acyclic) supersession graph.

    Per connected group the longest path is taken first (ties: members earlier in path
    order), then the longest among the memories left, and so on, so each memory is in at
    most one chain. Paths of one memory are not chains.
    """
    succ: dict[str, list[str]] = {}
    pred: dict[str, list[str]] = {}
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
        pred.setdefault(newer, []).append(older)
    nodes = sorted(set(succ) | set(pred), key=order.__getitem__)
    # connected groups
    group: dict[str, int] = {}
    groups: list[list[str]] = []
    for start in nodes:
        if start in group:
            continue
        members, todo = [], [start]
        group[start] = len(groups)
        while todo:
            n = todo.pop()
            members.append(n)
            for other in succ.get(n, []) + pred.get(n, []):
                if other not in group:
                    group[other] = len(groups)
                    todo.append(other)
        groups.append(sorted(members, key=order.__getitem__))

    chains: list[Chain] = []
    for members in groups:
        topo = _topological(members, succ, pred, order)
        left = set(members)
        while len(left) > 1:
            best: dict[str, int] = {}
            back: dict[str, str | None] = {}
            for n in topo:
                if n not in left:
                    continue
                best[n], back[n] = 1, None
                for p in sorted(pred.get(n, ()), key=order.__getitem__):
                    if p in left and best[p] + 1 > best[n]:
                        best[n], back[n] = best[p] + 1, p
            end = min(best, key=lambda n: (-best[n], order[n]))
            if best[end] < 2:
                break
            path: list[str] = []
            cur: str | None = end
            while cur is not None:
                path.append(cur)
                cur = back[cur]
            path.reverse()
            chains.append(Chain(tuple(path)))
            left.difference_update(path)
    chains.sort(key=lambda c: order[c.head])
    return tuple(chains)


def _topological(
    members: list[str],
    succ: dict[str, list[str]],
    pred: dict[str, list[str]],
    order: dict[str, int],
) -> list[str]:
    """Members oldest first (Kahn's algorithm; ties in path order, so the result is stable)."""
    indegree = {n: len(pred.get(n, ())) for n in members}
    ready = [(order[n], n) for n in members if indegree[n] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        n = heapq.heappop(ready)[1]
        out.append(n)
        for s in succ.get(n, ()):
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (order[s], s))
    return out


def _status_warnings(
    memories: dict[str, Memory], links: Iterable[tuple[str, str]], problems: list[Problem]
) -> None:
    """An older memory still `active`, or a newest one marked `superseded`, is suspicious."""
    succ: dict[str, list[str]] = {}
    has_pred: set[str] = set()
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
        has_pred.add(newer)
    for m in memories.values():
        line = m.key_lines.get("status")
        if m.id in succ and m.status == "active":
            newer = ", ".join(f"'{x}'" for x in sorted(succ[m.id]))
            problems.append(
                Problem(
                    m.path,
                    line,
                    f"status is active but {newer} supersedes it; it will still be recalled",
                    "warning",
                )
            )
        if m.id in has_pred and m.id not in succ and m.status == "superseded":
            problems.append(
                Problem(
                    m.path,
                    line,
                    "status is superseded but it is the newest in its chain; nothing replaces it",
                    "warning",
                )
            )
