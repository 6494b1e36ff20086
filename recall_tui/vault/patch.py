"""Patching a vault with the few files that changed, instead of reading the whole folder again.

The file watcher knows which files changed. `patch_vault(old, files)` builds the `Vault` a
full `read_vault` of the folder would give now from `old` and those files alone: each listed
file that exists is parsed again (a memory, a session log, a digest, a misplaced file's
warning), a listed file that is gone drops what it gave, and the whole-vault steps run again
only when a memory file changed (unknown links, supersession, chains, status warnings and the
entity graph: the reader's own functions, over the records already parsed; no file is read
again). A session log or a digest changed leaves every memory, chain and the graph as the
same objects, so the index and the engines keep all they built from them.

It works from what the last cached read of the folder in this process kept (`note_read`,
called by `read_vault(root, cache=True)`; the records are the reading cache's memo of the
same read, `readcache.remember`), and only for the vault that read (or a patch) returned.
It returns None, and the caller reads the whole vault, whenever it cannot be sure of giving
the same result: no such basis, more than `PATCH_MAX_FILES` files, a listed path that is not
a regular file (a symlink, a folder; a name without a dot that is gone, most likely a folder
moved or removed), a path reached through a linked folder, or a vault whose
walk reported anything (its symlinks and unreadable folders are the walk's to judge).
`tests/test_incremental_refresh.py` compares a patched vault with a fresh read after each
kind of change.
"""

from __future__ import annotations

import bisect
import gc
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, groupby
from operator import attrgetter
from types import MappingProxyType
from typing import Protocol, TypeVar

from recall_tui.vault.chains import (
    _build_chains,
    _drop_unknown_links,
    _status_warnings,
    _supersession_links,
)
from recall_tui.vault.digests import _read_digest, _read_turns
from recall_tui.vault.model import Chain, DigestParagraph, EntityGraph, Memory, Problem, Turn, Vault
from recall_tui.vault.patchbasis import Spans, basis_of, note_read
from recall_tui.vault.readcache import FileKey, Record, file_key, remember, remembered
from recall_tui.vault.reader import (
    DIGEST_PERIODS,
    DIGESTS_DIR,
    SESSIONS_DIR,
    _not_read,
    _problem_order,
    _read_memory,
)
from recall_tui.vault.walk import _File

#: More changed files than this in one batch (a checkout, a rename storm): read the vault.
PATCH_MAX_FILES = 64


class _InFile(Protocol):
    @property
    def path(self) -> str: ...


_T = TypeVar("_T")
_P = TypeVar("_P", bound=_InFile)


@dataclass(frozen=True)
class Patched:
    """A patched vault and what changed in it."""

    vault: Vault
    memory_ids: frozenset[str]
    """Ids of the memories added, removed or given a new object (a file changed, or the
    whole-vault steps changed its links): the index looks at these only."""
    sessions: Mapping[str, tuple[Turn, ...]]
    """Each listed session log's turns now (empty when it is gone)."""


def _route(rel: str) -> str | None:
    """What `read_vault`'s loop does with the file at `rel`: "memory", "digest", "session",
    "misplaced" (a `.md` where it is not read: a warning) or None (not read)."""
    parts = rel.split("/")
    if parts[0] == DIGESTS_DIR and len(parts) > 1:
        if len(parts) == 3 and parts[1] in DIGEST_PERIODS and parts[2].endswith(".md"):
            return "digest"
        return "misplaced" if rel.endswith(".md") else None
    if parts[0] == SESSIONS_DIR and len(parts) > 1:
        if len(parts) == 2 and parts[1].endswith(".jsonl"):
            return "session"
        return "misplaced" if rel.endswith(".md") else None
    return "memory" if rel.endswith(".md") else None


def patch_vault(old: Vault, files: Iterable[str], *,
                max_files: int = PATCH_MAX_FILES) -> Patched | None:
    """`old` with the listed files (relative to its root) read again, as `read_vault` would
    give the folder now; None when it cannot be patched (see the module's docstring)."""
    # As in `read_vault`: many new objects (a million turns' tuple) and no reference cycles;
    # the cyclic collector's full passes over the vault were most of a patch's time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _patch(old, files, max_files)
    finally:
        if collecting:
            gc.enable()


def _patch(old: Vault, files: Iterable[str], max_files: int) -> Patched | None:
    wanted = sorted(set(files))
    if not wanted or len(wanted) > max_files:
        return None
    basis = basis_of(old)
    if basis is None or basis.walk_problems:
        return None
    root = old.root
    real_root = os.path.realpath(root)
    memory_files: dict[str, tuple[FileKey, Record] | None] = {}
    turns_of: dict[str, tuple[Turn, ...]] = {}
    digests_of: dict[str, tuple[DigestParagraph, ...]] = {}
    problems_of: dict[str, tuple[Problem, ...]] = {}
    logs = dict(old.turn_logs)  # session log -> its signature (the index sync's, see model.Vault)
    for rel in wanted:
        parts = rel.split("/")
        if any(not p or p.startswith(".") or p == ".." for p in parts):
            continue  # never walked (a dot-name), or not a path the watcher gives
        kind = _route(rel)
        path = os.path.join(root, rel)
        if kind is None:
            if os.path.isdir(path) or ("." not in parts[-1] and not os.path.lexists(path)):
                return None  # a folder (made, moved or removed): the walk finds what it holds
            continue
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None and not stat.S_ISREG(st.st_mode):
            return None  # a symlink, a folder, a device: the walk's rules decide
        if os.path.realpath(os.path.dirname(path)) != os.path.join(real_root, *parts[:-1]):
            return None  # reached through a linked folder
        f = _File(rel, path)
        mine: list[Problem] = []
        if kind == "memory":
            if st is None:
                memory_files[rel] = None
                continue
            try:
                key = file_key(os.stat(path))
            except OSError:
                return None  # gone again since: read the vault
            memory = _read_memory(f, mine)
            memory_files[rel] = (key, (memory, mine))
            continue
        if st is not None:
            if kind == "session":
                logs.pop(rel, None)  # (a log that cannot be read now has none)
                turns_of[rel] = tuple(_read_turns(f, mine, None, logs))
            elif kind == "digest":
                digests_of[rel] = tuple(_read_digest(f, parts[1], mine))
            else:
                mine.append(_not_read(rel, "digests live in consolidation/{daily,weekly,quarterly}/"
                                      if parts[0] == DIGESTS_DIR else
                                      "sessions/ holds transcripts (<session_id>.jsonl)"))
        elif kind == "session":
            logs.pop(rel, None)
            turns_of[rel] = ()
        elif kind == "digest":
            digests_of[rel] = ()
        problems_of[rel] = tuple(mine)

    records = basis.records
    memories: Mapping[str, Memory] = old.memories
    chains, graph = old.chains, old.graph
    memory_problems = basis.memory_problems
    changed_ids: set[str] = set()
    if memory_files:
        records = _patched_records(records, memory_files)
        memories, chains, graph, memory_problems, changed_ids = _memories(old, records)
    spans = dict(basis.spans)
    turns = old.turns
    if turns_of:
        turns, spans["turns"] = _spliced(basis.spans.get("turns"), old.turns, turns_of)
    digests = old.digests
    if digests_of:
        digests, spans["digests"] = _spliced(basis.spans.get("digests"), old.digests, digests_of)
    other = basis.other_problems
    if problems_of:
        groups: dict[str, list[Problem]] = {}
        for p in other:
            groups.setdefault(p.path, []).append(p)
        for rel, found in problems_of.items():
            groups[rel] = list(found)
        other = tuple(p for rel in sorted(groups) for p in groups[rel])
    problems = sorted(chain(basis.walk_problems, other, memory_problems), key=_problem_order)
    vault = Vault(root=root, memories=memories, problems=tuple(problems), digests=digests,
                  turns=turns, chains=chains, graph=graph, turn_logs=MappingProxyType(logs))
    if memory_files:
        remember(root, vault, records)
    else:
        memo = remembered(root)
        if memo is not None and memo.records is records:
            remember(root, vault, records, memo.whole)
    note_read(vault, basis.walk_problems, other, memory_problems, records, spans)
    return Patched(vault, frozenset(changed_ids), MappingProxyType(turns_of))


def _patched_records(
    records: dict[str, tuple[FileKey, Record]],
    changes: Mapping[str, tuple[FileKey, Record] | None],
) -> dict[str, tuple[FileKey, Record]]:
    """The memory files' records with `changes` made, still in path order."""
    if all(rel in records and rec is not None for rel, rec in changes.items()):
        out = dict(records)  # (the same paths: the order stays)
        for rel, rec in changes.items():
            out[rel] = _got(rec)
        return out
    paths = list(records)
    for rel, rec in changes.items():
        at = bisect.bisect_left(paths, rel)
        present = at < len(paths) and paths[at] == rel
        if rec is None and present:
            del paths[at]
        elif rec is not None and not present:
            paths.insert(at, rel)
    return {rel: _got(changes[rel]) if rel in changes else records[rel] for rel in paths}


def _got(rec: _T | None) -> _T:
    assert rec is not None  # (only present paths are asked for)
    return rec


def _memories(
    old: Vault,
    records: dict[str, tuple[FileKey, Record]],
) -> tuple[Mapping[str, Memory], tuple[Chain, ...], EntityGraph, tuple[Problem, ...], set[str]]:
    """The memories, chains, graph and memory problems `read_vault` gives from `records`
    (as its loop and `_whole_vault` do, with the reader's functions), each memory equal to
    its old object kept as that object; and the ids whose object is not the old one."""
    raw: dict[str, Memory] = {}
    problems: list[Problem] = []
    for _key, (memory, file_problems) in records.values():
        problems.extend(file_problems)
        if memory is None:
            continue
        first = raw.get(memory.id)
        if first is not None:
            problems.append(Problem(
                memory.path, memory.key_lines.get("id"),
                f"duplicate id '{memory.id}' (first used by {first.path}); file skipped"))
            continue
        raw[memory.id] = memory
    memories = _drop_unknown_links(raw, problems)
    links, memories = _supersession_links(memories, problems)
    chains = _build_chains(links, {mid: i for i, mid in enumerate(memories)})
    _status_warnings(memories, links, problems)
    before = old.memories
    changed: set[str] = set(before.keys() - memories.keys())
    for mid, m in memories.items():
        was = before.get(mid)
        if was is m:
            continue
        if was is not None and was == m:
            memories[mid] = was  # (the whole-vault steps made an equal copy)
            continue
        changed.add(mid)
    edged = any(before[mid].edges for mid in changed if mid in before) or any(
        memories[mid].edges for mid in changed if mid in memories)
    graph = (EntityGraph.build(tuple(e for m in memories.values() for e in m.edges))
             if edged else old.graph)
    return MappingProxyType(memories), chains, graph, tuple(problems), changed


def _spliced(spans: Spans | None, items: tuple[_P, ...],
             new: Mapping[str, tuple[_P, ...]]) -> tuple[tuple[_P, ...], Spans]:
    """`items` (turns or digest paragraphs: each file's contiguous, files in path order) with
    the listed files' replaced by `new`, and each file's slice of the result. `spans` are
    the slices in `items` (made here when None)."""
    if spans is None:  # (each file's items are contiguous: one pass over their paths, in C)
        spans = {}
        start = 0
        for path, same in groupby(map(attrgetter("path"), items)):
            end = start + len(list(same))
            spans[path] = (start, end)
            start = end
    parts: list[tuple[_P, ...]] = []
    after: Spans = {}
    at = 0
    for rel in sorted(spans.keys() | new.keys()):
        part = new[rel] if rel in new else items[spans[rel][0]:spans[rel][1]]
        if part:
            after[rel] = (at, at + len(part))
            at += len(part)
            parts.append(part)
    return tuple(chain.from_iterable(parts)), after
