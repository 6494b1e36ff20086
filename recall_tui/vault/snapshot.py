"""The reading snapshot: every memory file's record of one read in one file, for the next
process to read an unchanged vault from (index.md, "The reading cache").

A cached read not served from the process's memo gives every record (the reading cache's
bytes) to a `SnapshotWriter` as it comes; at the end the head (each memory's id, record
offsets and CRC-32, the edges as columns, the problems, the whole-vault result, the entity
graph's adjacency as positions; the paths only when they are not the signature's) and the
vault signature follow, and the file is put in place by an atomic rename. `load_snapshot`
maps it read-only; `Snapshot.build` makes the memories from the head alone, in C loops, as
`readcache._LazyMemory`s whose fields are decoded on first use. Headless.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import mmap
import os
import struct
import threading
import weakref
import zlib
from array import array
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate, chain, repeat
from itertools import count as _count
from operator import attrgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from recall_tui.vault.model import Chain, Edge, EntityGraph, Memory, Problem, RelatedLink
from recall_tui.vault.readcache import (
    FileKey,
    Record,
    _LazyMemory,
    _new,
    _set_edges,
    _set_id,
    _set_path,
    _set_record,
    snapshot_path,
    vault_signature,
)

#: Bump the number when the head's layout changes (a head that does not unpack is ignored
#: anyway; the records themselves are the table's, under the stamp in the vault signature).
_SNAP_MAGIC = b"recall-tui reading snapshot 2\n"
_SNAP_TAIL = struct.Struct("<QQ32s")  # head offset, head length, the vault signature


class SnapshotWriter:
    """Writes a read's records, as they come, to a new snapshot file; `finish` adds the head
    (what the read made of them) and puts the file in place by an atomic rename, so a
    process reading the old one (it maps it) or opening the path sees a whole file. Best
    effort: any OS error drops the snapshot, never the read."""

    def __init__(self, path: Path):
        self.path = path
        self._tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        self._at: dict[str, tuple[int, int, int]] = {}  # rel -> start, end, crc32
        self._pos = len(_SNAP_MAGIC)
        try:
            self._fh: Any = open(self._tmp, "wb", buffering=1 << 20)
            self._fh.write(_SNAP_MAGIC)
        except OSError:
            self._fh = None
        # A read that raises or drops the writer unfinished leaves no temporary file.
        self._left = weakref.finalize(self, _discard, self._fh, self._tmp)

    def add(self, rel: str, blob: bytes) -> None:
        """Keep one memory file's record (a `dumps` blob)."""
        if self._fh is None:
            return
        try:
            self._fh.write(blob)
        except OSError:
            self.abort()
            return
        self._at[rel] = (self._pos, self._pos + len(blob), zlib.crc32(blob))
        self._pos += len(blob)

    def finish(
        self,
        sig: bytes | None,
        records: dict[str, tuple[FileKey, Record]],
        memories: dict[str, Memory],
        chains: tuple[Chain, ...],
        graph: EntityGraph,
        added: tuple[Problem, ...],
    ) -> None:
        """Write the head (what the read made of the records: see `Snapshot.build`) and put
        the file in place. Nothing is written when a record is missing (a file without a
        key, or a record not given to `add`)."""
        if self._fh is None:
            return
        at = self._at
        if sig is None or len(at) < len(records) or any(rel not in at for rel in records):
            self.abort()
            return
        index = {rel: i for i, rel in enumerate(records)}
        spans = array("q")  # each memory's record: start, end
        crcs = array("I")
        at_memory = array("q")  # the positions (in `records`) of the files with a memory
        ids: list[str] = []
        edges: list[Edge] = []  # every memory's, in order
        counts = array("q")  # how many of them each memory has
        probs: dict[int, tuple[tuple[str, int | None, str, str], ...]] = {}
        for i, (rel, (_key, (memory, file_problems))) in enumerate(records.items()):
            if file_problems:
                probs[i] = _problem_tuples(file_problems)
            if memory is None:
                continue
            start, end, crc = at[rel]
            spans.append(start)
            spans.append(end)
            crcs.append(crc)
            at_memory.append(i)
            ids.append(memory.id)
            counts.append(len(memory.edges))
            edges.extend(memory.edges)
        order = array("q")
        changed = []
        for mid, m in memories.items():
            i = index[m.path]
            order.append(i)
            if records[m.path][1][0] is not m:  # (the whole-vault steps dropped or set links)
                changed.append((mid, m.supersedes, m.superseded_by,
                                tuple([(r.id, r.score, r.relation) for r in m.related_via])))
        # The entity graph's adjacency as positions in its edges (the memories' edges in
        # order), so a re-read makes no dict of lists.
        # (C loops: `map` over the edges; a comprehension per entity was ~0.2 s at 100k)
        at_edge = dict(zip(map(id, graph.edges), _count()))
        where = at_edge.__getitem__
        adjacency = {k: array("q", map(where, map(id, es))).tobytes()
                     for k, es in graph.adjacency.items()}
        # The edges as four columns: a re-read sets each slot of every Edge in one C loop.
        # The last (each edge's memory id) is left out when it is the memory's own: the
        # reader repeats each id by the memory's count (a sixth of the head's decoding).
        columns: list[tuple[str, ...] | None] = [
            tuple(map(attrgetter(name), edges)) for name in _EDGE_FIELDS]
        if columns[-1] == tuple(chain.from_iterable(map(repeat, ids, counts))):
            columns[-1] = None
        # The paths are left out when they are the signature's, in its order (always, as
        # both follow the walk): the reader then takes its own keys' paths.
        in_order = vault_signature({rel: key for rel, (key, _) in records.items()}) == sig
        head = marshal.dumps((
            None if in_order else tuple(records), at_memory.tobytes(), tuple(ids), spans.tobytes(), crcs.tobytes(),
            columns, counts.tobytes(), probs, order.tobytes(), tuple(changed),
            _problem_tuples(added), tuple([c.ids for c in chains]), adjacency,
        ))
        try:
            self._fh.write(head)
            self._fh.write(_SNAP_TAIL.pack(self._pos, len(head), sig))
            self._fh.write(_SNAP_MAGIC)
            self._fh.close()
            self._fh = None
            os.replace(self._tmp, self.path)
            self._left.detach()
        except OSError:
            self.abort()

    def abort(self) -> None:
        self._fh = None
        self._left()


def _discard(fh: Any, tmp: str) -> None:
    if fh is not None:
        with contextlib.suppress(OSError):
            fh.close()
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _problem_tuples(problems: Iterable[Problem]) -> tuple[tuple[str, int | None, str, str], ...]:
    return tuple([(p.path, p.line, p.reason, p.severity) for p in problems])


@dataclasses.dataclass(frozen=True)
class SnapshotRead:
    """What `Snapshot.build` gives: the memory files' part of the read that wrote it."""

    memories: dict[str, Memory]
    records: dict[str, tuple[FileKey, Record]]
    chains: tuple[Chain, ...]
    graph: EntityGraph
    problems: tuple[Problem, ...]
    """The memory files' problems: each file's in order, then the whole-vault steps'."""


class Snapshot:
    """A snapshot file, mapped, with its head decoded (see `load_snapshot`)."""

    def __init__(self, path: Path, sig: bytes, head: Any, buf: mmap.mmap, root: str):
        self.path, self.sig, self._head, self._buf, self._root = path, sig, head, buf, root

    def build(self, keys: dict[str, FileKey | None]) -> SnapshotRead | None:
        """The memories (lazy: a record is decoded on first use), records (with `keys`),
        chains, entity graph and problems of the read that wrote the snapshot; None when
        its files are not exactly those of `keys` (the caller checks the signature too)."""
        try:
            (rels, at_memory_b, ids, spans_b, crcs_b, columns, counts_b, probs, order_b,
             changed, added, chain_ids, adjacency_b) = self._head
            if None in keys.values():
                return None
            known = cast("dict[str, FileKey]", keys)  # (no None: checked above)
            key_list: Iterable[FileKey]
            if rels is None:  # (the signature's paths, in its order: `keys`', as the caller
                rels = tuple(known)  # checked the signature; the walk's strings, shared)
                key_list = known.values()
            elif len(rels) == len(known) and all(rel in known for rel in rels):
                key_list = [known[rel] for rel in rels]
            else:
                return None
            n = len(rels)
            at_memory = _ints(at_memory_b)
            spans = _ints(spans_b)
            crcs = array("I")
            crcs.frombytes(crcs_b)
            counts = _ints(counts_b)
            if columns[-1] is None:
                columns = (*columns[:-1], tuple(chain.from_iterable(map(repeat, ids, counts))))
            every_edge = _edge_objects(columns)
            # Every memory made and its slots set in C loops (map over the columns), not
            # ~10 Python operations per memory: half of building 100k of them.
            count = len(ids)
            ends = list(accumulate(counts))
            if not (len(at_memory) == len(crcs) == len(counts) == count
                    and len(spans) == 2 * count and (ends[-1] if ends else 0) == len(every_edge)):
                return None
            every = len(at_memory) == n  # (every file has a memory: the common case)
            paths = rels if every else [rels[i] for i in at_memory]
            lazy = type("_LazyMemory", (_LazyMemory,), {
                "__slots__": (), "_records": _Records(self._buf, spans, crcs,
                                                      (self._root, str(self.path)))})
            made: list[Memory] = list(map(_new, repeat(lazy, count)))
            for set_slot, values in (
                (_set_id, ids),
                (_set_path, paths),
                (_set_edges, map(every_edge.__getitem__, map(slice, chain((0,), ends), ends))),
                (_set_record, range(count)),  # (`_Records`: a position, not a tuple each)
            ):
                deque(map(set_slot, made, values), 0)
            by_file: list[Memory | None] = cast("list[Memory | None]", made)
            if not every:
                by_file = [None] * n
                for i, m in zip(at_memory, made, strict=True):
                    by_file[i] = m
            records: dict[str, tuple[FileKey, Record]] = dict(
                zip(rels, zip(key_list, zip(by_file, map(list, repeat((), n)), strict=True),
                              strict=True), strict=True))
            for i, got in probs.items():
                rel = rels[i]
                records[rel] = (records[rel][0], (by_file[i], [Problem(*p) for p in got]))
            memories: dict[str, Memory]
            if order_b == at_memory_b:  # (no duplicate id: every memory, in file order)
                memories = dict(zip(ids, made, strict=True))
                graph_edges = every_edge
            else:
                memories = {}
                for i in _ints(order_b):
                    kept = by_file[i]
                    if kept is None:
                        return None
                    memories[kept.id] = kept
                graph_edges = tuple(chain.from_iterable([m.edges for m in memories.values()]))
            for mid, supersedes, superseded_by, related in changed:
                memories[mid] = dataclasses.replace(
                    memories[mid], supersedes=supersedes, superseded_by=superseded_by,
                    related_via=tuple([RelatedLink(*r) for r in related]))
            chains = tuple([Chain(ids) for ids in chain_ids])
            problems = tuple([Problem(*p) for p in added])
            if not isinstance(adjacency_b, dict):
                return None
            graph = EntityGraph(graph_edges, MappingProxyType(_Adjacency(graph_edges, adjacency_b)))
        except Exception:  # (a head this reader cannot use: read the per-file records)
            return None
        return SnapshotRead(memories, records, chains, graph, problems)


_EDGE_FIELDS = tuple(f.name for f in dataclasses.fields(Edge))
_EDGE_SETTERS = tuple(vars(Edge)[name].__set__ for name in _EDGE_FIELDS)


def _ints(b: bytes) -> array[int]:
    out = array("q")
    out.frombytes(b)
    return out


class _Records:
    """The record of a snapshot's memory by its position: (map, start, end, CRC-32,
    source), what `readcache._fill_from_record` reads."""

    def __init__(self, buf: mmap.mmap, spans: array[int], crcs: array[int],
                 source: tuple[str, str]):
        self._buf, self._spans, self._crcs, self._source = buf, spans, crcs, source

    def __call__(self, i: int) -> tuple[Any, ...]:
        spans = self._spans
        return (self._buf, spans[2 * i], spans[2 * i + 1], self._crcs[i], self._source)


class _Adjacency(Mapping[str, tuple[Edge, ...]]):
    """The entity graph's adjacency from a snapshot: every entity is there, and its edges
    are made into a tuple when first asked for (a recall looks up a few entities; making
    all ~5k tuples of 270k positions was a tenth of a 100k re-read). Equal to the dict
    `EntityGraph.build` makes (a Mapping compares by items)."""

    def __init__(self, edges: tuple[Edge, ...], positions: dict[str, bytes]):
        self._edges, self._positions = edges, positions
        self._made: dict[str, tuple[Edge, ...]] = {}

    def __getitem__(self, entity: str) -> tuple[Edge, ...]:
        got = self._made.get(entity)
        if got is None:
            # (two threads may both make it: equal tuples of the same edges either way)
            got = self._made[entity] = tuple(map(self._edges.__getitem__,
                                                 _ints(self._positions[entity])))
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)

    def __contains__(self, entity: object) -> bool:
        return entity in self._positions


def _edge_objects(columns: tuple[tuple[str, ...], ...]) -> tuple[Edge, ...]:
    """Edge objects from their fields as columns, without `__init__`: each slot of every
    edge set by its own setter in one C loop (map), not a Python loop per edge."""
    edges = tuple(map(_new, repeat(Edge, len(columns[0]))))
    for set_slot, values in zip(_EDGE_SETTERS, columns, strict=True):
        deque(map(set_slot, edges, values), 0)
    return edges


def load_snapshot(root: str, cache_file: Path) -> Snapshot | None:
    """The snapshot beside the reading cache at `cache_file`, mapped read-only (the records
    are decoded from the map on first use) with its head decoded; None when there is none or
    it is damaged or foreign (never an error). The caller compares its `sig` with the vault's
    before using it."""
    path = snapshot_path(cache_file)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        tail = _SNAP_TAIL.size + len(_SNAP_MAGIC)
        if size < len(_SNAP_MAGIC) + tail:
            return None
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    try:
        if mm[: len(_SNAP_MAGIC)] != _SNAP_MAGIC or mm[size - len(_SNAP_MAGIC):] != _SNAP_MAGIC:
            raise ValueError("not a snapshot")
        start, length, sig = _SNAP_TAIL.unpack(mm[size - tail: size - len(_SNAP_MAGIC)])
        if start + length > size - tail:
            raise ValueError("damaged")
        head = marshal.loads(mm[start: start + length])
    except Exception:  # (a damaged or foreign file: read the per-file records)
        mm.close()
        return None
    return Snapshot(path, sig, head, mm, root)
