"""The reading snapshot: every memory file's record of one read in one file, for the next
process to read an unchanged vault from (index.md, "The reading cache").

A cached read not served from the process's memo gives every record (the reading cache's
bytes) to a `SnapshotWriter` as it comes; at the end the head (each record's path, memory id,
offsets and CRC-32, the edges, the problems, the whole-vault result, the entity graph's
adjacency as positions) and the vault signature follow, and the file is put in place by an
atomic rename. `load_snapshot` maps it read-only; `Snapshot.build` makes the memories from the
head alone, as `readcache._LazyMemory`s whose fields are decoded on first use. Headless.
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
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from recall_tui.vault.model import Chain, Edge, EntityGraph, Memory, Problem, RelatedLink
from recall_tui.vault.readcache import (
    FileKey,
    Record,
    _edges,
    _LazyMemory,
    _new,
    _set_edges,
    _set_id,
    _set_path,
    _set_record,
    snapshot_path,
)

#: Bump the number when the head's layout changes (a head that does not unpack is ignored
#: anyway; the records themselves are the table's, under the stamp in the vault signature).
_SNAP_MAGIC = b"recall-tui reading snapshot 1\n"
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
        spans = array("q")
        crcs = array("I")
        edges: list[tuple[str, str, str, str]] = []  # every record's, in order
        counts = array("q")  # how many of them each record has
        probs: dict[int, tuple[tuple[str, int | None, str, str], ...]] = {}
        ids: list[str | None] = []
        for i, (rel, (_key, (memory, file_problems))) in enumerate(records.items()):
            start, end, crc = at[rel]
            spans.append(start)
            spans.append(end)
            crcs.append(crc)
            ids.append(None if memory is None else memory.id)
            mine = () if memory is None else memory.edges
            counts.append(len(mine))
            edges.extend([(e.subject, e.relation, e.object, e.memory_id) for e in mine])
            if file_problems:
                probs[i] = _problem_tuples(file_problems)
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
        at_edge = {id(e): i for i, e in enumerate(graph.edges)}
        adjacency = {k: array("q", [at_edge[id(e)] for e in es]).tobytes()
                     for k, es in graph.adjacency.items()}
        head = marshal.dumps((
            tuple(records), tuple(ids), spans.tobytes(), crcs.tobytes(), tuple(edges),
            counts.tobytes(), probs, order.tobytes(), tuple(changed), _problem_tuples(added),
            tuple([c.ids for c in chains]), adjacency,
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
            (rels, ids, spans_b, crcs_b, edges, counts_b, probs, order_b, changed, added,
             chain_ids, adjacency_b) = self._head
            if len(rels) != len(keys) or None in keys.values():
                return None
            spans = array("q")
            spans.frombytes(spans_b)
            crcs = array("I")
            crcs.frombytes(crcs_b)
            order = array("q")
            order.frombytes(order_b)
            counts = array("q")
            counts.frombytes(counts_b)
            every_edge = _edges(edges)
            at = 0
            buf, source = self._buf, (self._root, str(self.path))
            new, set_id, set_path, set_edges, set_record = (
                _new, _set_id, _set_path, _set_edges, _set_record)
            made: list[Memory | None] = []
            append = made.append
            for rel, mid, start, end, crc, n in zip(
                    rels, ids, spans[0::2], spans[1::2], crcs, counts, strict=True):
                if mid is None:
                    append(None)
                    continue
                m = new(_LazyMemory)
                set_id(m, mid)
                set_path(m, rel)
                set_edges(m, every_edge[at: at + n] if n else ())
                at += n
                set_record(m, (buf, start, end, crc, source))
                append(m)
            known = cast("dict[str, FileKey]", keys)  # (no None: checked above)
            records: dict[str, tuple[FileKey, Record]] = {
                rel: (known[rel], (m, [])) for rel, m in zip(rels, made, strict=True)}
            for i, got in probs.items():
                rel = rels[i]
                records[rel] = (records[rel][0], (made[i], [Problem(*p) for p in got]))
            memories: dict[str, Memory] = {}
            for i in order:
                kept = made[i]
                if kept is None:
                    return None
                memories[kept.id] = kept
            for mid, supersedes, superseded_by, related in changed:
                memories[mid] = dataclasses.replace(
                    memories[mid], supersedes=supersedes, superseded_by=superseded_by,
                    related_via=tuple([RelatedLink(*r) for r in related]))
            chains = tuple([Chain(ids) for ids in chain_ids])
            problems = tuple([Problem(*p) for p in added])
            graph_edges = tuple(chain.from_iterable([m.edges for m in memories.values()]))
            edge_at = graph_edges.__getitem__
            adjacency: dict[str, tuple[Edge, ...]] = {}
            for k, positions_b in adjacency_b.items():
                positions = array("q")
                positions.frombytes(positions_b)
                adjacency[k] = tuple(map(edge_at, positions))
            graph = EntityGraph(graph_edges, MappingProxyType(adjacency))
        except Exception:  # (a head this reader cannot use: read the per-file records)
            return None
        return SnapshotRead(memories, records, chains, graph, problems)


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
