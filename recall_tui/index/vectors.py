"""Vectors: sqlite-vec's vec0 table and the numpy kNN over the cached vector matrix.

`VectorStore` is the part of `Index` that embeds queries (`embed_query`) and searches
by meaning (`vector_search`, `vector_search_sqlite`): it is given the connection, the lock,
the embedder and what it asks the index (`IndexFacts`, the core), and owns its caches (the vector
matrices, their tie order and norms, the recent query vectors); `knn_like_sqlite_vec` ranks with numpy
exactly as sqlite-vec's cosine kNN does. Filling the vectors is `vector_sync.py`. Headless.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import apsw
import numpy as np

from recall_tui.index.embed import Embedder
from recall_tui.index.sidefiles import side_path, write_side
from recall_tui.index.turn_codes import SIDE_SUFFIX, TurnCodes

#: Recent query embeddings kept in memory.
QUERY_CACHE_SIZE = 256
#: Largest vector matrix ranked with numpy (bigger ones are searched by sqlite-vec's kNN).
NUMPY_KNN_MAX_BYTES = 256 * 1024 * 1024
#: Rows per block when summing the stored vectors' squared norms (bounds the temporaries).
SQMAG_BLOCK = 4096
#: Turn vectors read per block while their codes are made (bounds the float32 held at once).
TURN_CODE_BLOCK = 4096
#: Rowids per `IN (...)` list when turns are read by rowid.
ROWID_CHUNK = 500
#: How a turn's vector is stored (`turns.vector`, schema 5): float16, half the bytes of the
#: float32 the embedder gives (at a million turns of 384 dimensions: 0.77 GB instead of 1.5).
#: Every other vector (memories, the embedding cache, queries) stays float32; a turn's is
#: widened to float32 when read (`turn_vector`), and narrowed once when written
#: (`turn_blob`), so a turn's cosine is the float32 product with its float16-rounded vector.
TURN_DTYPE = np.float16


def turn_blob(vector32: bytes) -> bytes:
    """A float32 vector's bytes as a turn stores them (TURN_DTYPE)."""
    return np.frombuffer(vector32, dtype=np.float32).astype(TURN_DTYPE).tobytes()


def turn_vector(blob: bytes) -> np.ndarray:
    """A stored turn vector (TURN_DTYPE bytes) widened to float32."""
    return np.frombuffer(blob, dtype=TURN_DTYPE).astype(np.float32)


def turn_vector_bytes(blob: bytes) -> bytes:
    """A stored turn vector as float32 bytes (the embedding cache's form): SQL's
    `turn_f32(vector)`, which `register_turn_functions` makes."""
    return turn_vector(blob).tobytes()


def register_turn_functions(conn: apsw.Connection) -> None:
    """Give `conn` the SQL function `turn_f32(blob)` (`turn_vector_bytes`), with which a
    turn's vector is parked in the float32 embedding cache by SQL alone."""
    conn.create_scalar_function("turn_f32", _sql_turn_f32, 1, deterministic=True)


def _sql_turn_f32(*values: Any) -> bytes | None:
    """`turn_f32(blob)` in SQL: `turn_vector_bytes`, NULL for NULL."""
    return None if values[0] is None else turn_vector_bytes(bytes(values[0]))


class IndexFacts(Protocol):
    """What the vector searches ask the index they are a part of (`IndexCore` implements it)."""

    def meta(self, key: str) -> str | None:
        """A value of the index's meta table (cached by the index)."""
        ...

    def has_vec_table(self) -> bool:
        """Whether the vec0 table exists (it is made with the first vector)."""
        ...

    def count_vectors(self) -> int:
        """How many memory vectors are stored (cached by the index)."""
        ...

    def check_external(self) -> None:
        """Drop the caches (this part's `reset` included) if another process changed the file."""
        ...

    @property
    def vectors_usable(self) -> bool:
        """Whether the stored vectors were made by this index's embedder."""
        ...


class VectorStore:
    """The vector searches of an index (a part of `Index`): given the connection, the lock,
    the embedder and the index's facts, it owns the caches `reset` empties."""

    def __init__(self, conn: apsw.Connection, lock: threading.RLock, embedder: Embedder,
                 facts: IndexFacts) -> None:
        self._conn = conn
        self._lock = lock
        self.embedder = embedder
        self._facts = facts
        self._meta: Callable[[str], str | None] = facts.meta
        self._has_vec_table: Callable[[], bool] = facts.has_vec_table
        self._count_vectors: Callable[[], int] = facts.count_vectors
        self._check_external: Callable[[], None] = facts.check_external
        self.query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        """Recent query vectors (at most QUERY_CACHE_SIZE), by query text."""
        self._vectors: tuple[list[str], np.ndarray] | None = None
        self._turn_vectors: tuple[list[str], np.ndarray] | None = None
        self._turn_codes: TurnCodes | None = None
        self._turn_seen: _TurnsSeen | None = None
        self._turn_codes_stale = False
        self._kept_n = 0
        """How many turn codes the file beside the index holds (`_keep_codes`)."""
        self._vec_rowids: np.ndarray | None = None
        self._vec_ties: np.ndarray | None = None
        self._vec_sqmag: np.ndarray | None = None

    def reset(self) -> None:
        """The memories or vectors changed: forget the matrices (read again on next use)."""
        self._vectors = None
        self._vec_rowids = None
        self._vec_ties = None
        self._vec_sqmag = None
        self.forget_turn_vectors()

    def forget_queries(self) -> None:
        """The embedder or every vector changed: forget the recent query vectors."""
        self.query_cache.clear()

    def forget_turn_vectors(self) -> None:
        """The turns changed: forget their matrix, and check the turn codes on next use
        (`turn_codes`: when rows were only added, only those are read)."""
        self._turn_vectors = None
        self._turn_codes_stale = True

    @property
    def _vectors_usable(self) -> bool:
        return self._facts.vectors_usable

    def vector_search(self, qvec, k: int) -> list[tuple[str, float]]:
        """The `k` memories nearest `qvec`, as (id, cosine similarity): what sqlite-vec's kNN
        returns, computed with numpy over the cached `vectors()` matrix while that matrix
        is at most NUMPY_KNN_MAX_BYTES (sqlite-vec's kNN is a full scan costing about 10x
        numpy's), else by sqlite-vec (`vector_search_sqlite`).

        Empty when the index holds no vectors; ValueError when `qvec` has another dimension
        than the stored vectors (a vector from a different model cannot be compared).
        """
        with self._lock:
            if k <= 0 or not self._has_vec_table() or not self._vectors_usable:
                return []
            n = self._count_vectors()
            dim = int(self._meta("embedder_dim") or 0)
            if n * dim * 4 > NUMPY_KNN_MAX_BYTES:
                return self.vector_search_sqlite(qvec, k)
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            if q.shape[0] != dim:
                raise ValueError(
                    f"query vector has dimension {q.shape[0]}, the index holds {dim}-d vectors "
                    f"({self._meta('embedder_model')})"
                )
            if n == 0:
                return []
            ids, mat = self.vectors()
            return knn_like_sqlite_vec(ids, mat, self._tie_order(), self._sqmag(), q,
                                       min(k, n, 4096))

    def _tie_order(self) -> np.ndarray:
        """Per `vectors()` row, a key ordering exact ties as sqlite-vec's kNN does: chunks in
        chunk_id order (later chunks lose ties when merged), and within a chunk the higher
        offset first (its `min_idx` keeps the last of equal distances)."""
        if self._vec_ties is None:
            self.vectors()
            vec_rowids = self._vec_rowids
            assert vec_rowids is not None  # `vectors()` sets it with the matrix
            # Into arrays as the rows come (no dict of every rowid): sorted by rowid, then
            # each vector's rowid is looked up by binary search; a rowid the shadow table
            # lacks keeps itself as its key.
            n = len(vec_rowids)
            rowids = np.empty(n, dtype=np.int64)
            keys = np.empty(n, dtype=np.int64)
            i = 0
            for r, c, o in self._conn.execute(
                "SELECT rowid, chunk_id, chunk_offset FROM memory_vectors_rowids ORDER BY rowid"
            ):
                if i == len(rowids):
                    rowids = np.concatenate([rowids, np.empty(max(n, 1), np.int64)])
                    keys = np.concatenate([keys, np.empty(max(n, 1), np.int64)])
                rowids[i], keys[i] = r, (c << 20) - o
                i += 1
            rowids, keys = rowids[:i], keys[:i]
            at = np.minimum(np.searchsorted(rowids, vec_rowids), max(i - 1, 0))
            found = (rowids[at] == vec_rowids) if i else np.zeros(n, dtype=bool)
            self._vec_ties = np.where(found, keys[at] if i else 0, vec_rowids)
        return self._vec_ties

    def _sqmag(self) -> np.ndarray:
        """Each stored vector's squared norm, summed as sqlite-vec sums it (float32, in order)."""
        if self._vec_sqmag is None:
            _, mat = self.vectors()
            # In blocks of rows: `mat * mat` and its running sum at once would be two more
            # matrices the size of `mat` (each row's sum is the same either way).
            out = np.empty(len(mat), dtype=np.float64)
            for i in range(0, len(mat), SQMAG_BLOCK):
                part = mat[i : i + SQMAG_BLOCK]
                out[i : i + SQMAG_BLOCK] = _seq_sum_f32(part * part)
            self._vec_sqmag = out
        return self._vec_sqmag

    def vector_search_sqlite(self, qvec, k: int) -> list[tuple[str, float]]:
        """`vector_search` by sqlite-vec's kNN over the vec0 table (big vaults, and the
        reference the numpy path is tested against)."""
        with self._lock:
            if k <= 0 or not self._has_vec_table() or not self._vectors_usable:
                return []
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            dim = int(self._meta("embedder_dim") or 0)
            if q.shape[0] != dim:
                raise ValueError(
                    f"query vector has dimension {q.shape[0]}, the index holds {dim}-d vectors "
                    f"({self._meta('embedder_model')})"
                )
            n = self._count_vectors()
            if n == 0:
                return []
            rows = cast("list[tuple[str, float]]", self._conn.execute(
                "SELECT m.id, v.distance FROM (SELECT rowid, distance FROM memory_vectors"
                " WHERE embedding MATCH ? AND k = ?) v JOIN memories m ON m.rowid = v.rowid"
                " ORDER BY v.distance",
                (q.tobytes(), min(k, n, 4096)),
            ).fetchall())
            return [(mid, 1.0 - float(d)) for mid, d in rows]

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query's vector (cached for recent queries); None when vectors are off.

        Raises EmbedderUnavailable when the embedder fails (e.g. the Ollama server went away),
        so the caller can say why the vector channel did not run.
        """
        if self.embedder.name == "none" or not self._vectors_usable:
            return None
        with self._lock:
            hit = self.query_cache.get(text)
            if hit is not None:
                self.query_cache.move_to_end(text)
                return hit
        vec = self.embedder.embed([text])[0]  # outside the lock: it may take milliseconds
        vec.setflags(write=False)
        with self._lock:
            self.query_cache[text] = vec
            while len(self.query_cache) > QUERY_CACHE_SIZE:
                self.query_cache.popitem(last=False)
        return vec

    def vectors(self) -> tuple[list[str], np.ndarray]:
        """All memory ids with a vector, and their (n, dim) float32 matrix, in path order."""
        with self._lock:
            self._check_external()
            if self._vectors is None:
                dim = int(self._meta("embedder_dim") or 0)
                if not self._has_vec_table():
                    self._vectors = ([], np.zeros((0, dim), dtype=np.float32))
                    self._vec_rowids = np.zeros(0, dtype=np.int64)
                elif (got := self._vectors_from_chunks(dim)) is not None:
                    self._vectors, self._vec_rowids, self._vec_ties = got
                else:
                    # Filled row by row into one preallocated matrix: holding every row's
                    # blob and then their join would double the peak (2 x 154 MB at 100k).
                    n = self._count_vectors()
                    mat = np.empty((n, dim), dtype=np.float32)
                    ids: list[str] = []
                    rowids = np.empty(n, dtype=np.int64)
                    i = 0
                    for mid, blob, rowid in self._conn.execute(
                        "SELECT m.id, v.embedding, m.rowid FROM memory_vectors v"
                        " JOIN memories m ON m.rowid = v.rowid ORDER BY m.path"
                    ):
                        if i == n:  # more rows than counted: grow (cannot happen in a txn)
                            mat = np.concatenate([mat, np.empty((n or 1, dim), np.float32)])
                            rowids = np.concatenate([rowids, np.empty(n or 1, np.int64)])
                            n = len(mat)
                        mat[i] = np.frombuffer(blob, dtype=np.float32)
                        rowids[i] = rowid
                        ids.append(sys.intern(mid))  # the Vault's own id string when interned
                        i += 1
                    mat = mat[:i]
                    mat.setflags(write=False)
                    self._vectors = (ids, mat)
                    self._vec_rowids = rowids[:i]
            return self._vectors

    def _vectors_from_chunks(self, dim: int
                             ) -> tuple[tuple[list[str], np.ndarray], np.ndarray, np.ndarray] | None:
        """`vectors()`, the rows' rowids and their `_tie_order` keys, read from the vec0
        table's own storage: its chunks (one blob of up to 1024 vectors each) and its rowid
        -> (chunk, offset) map, instead of one virtual-table row per vector: the same float32
        bytes, ~7x less CPU (20k memories: 0.44 -> 0.06 s); the map read here gives the tie
        keys too (no second scan of it). None when that storage is not as expected (another
        sqlite-vec layout, a count that disagrees): the caller reads the rows then."""
        try:
            rows = cast("list[tuple[str, int, int, int]]", self._conn.execute(
                "SELECT m.id, m.rowid, r.chunk_id, r.chunk_offset FROM memories m"
                " JOIN memory_vectors_rowids r ON r.rowid = m.rowid ORDER BY m.path"
            ).fetchall())
            n = len(rows)
            if n != self._count_vectors():
                return None
            ids = [sys.intern(r[0]) for r in rows]  # the Vault's own id string when interned
            rowids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
            chunk = np.fromiter((r[2] for r in rows), dtype=np.int64, count=n)
            offset = np.fromiter((r[3] for r in rows), dtype=np.int64, count=n)
            del rows
            mat = np.empty((n, dim), dtype=np.float32)
            order = np.argsort(chunk, kind="stable")
            bounds = np.flatnonzero(np.diff(chunk[order])) + 1
            groups = {int(chunk[g[0]]): g for g in np.split(order, bounds) if len(g)}
            filled = 0
            # One chunk's blob at a time (a few MB), never all of them at once.
            for cid, blob in self._conn.execute(
                "SELECT rowid, vectors FROM memory_vectors_vector_chunks00"
            ):
                at = groups.get(int(cid))
                if at is None:
                    continue
                block = np.frombuffer(blob, dtype=np.float32)
                if len(block) % dim or int(offset[at].max()) >= len(block) // dim:
                    return None
                mat[at] = block.reshape(-1, dim)[offset[at]]
                filled += len(at)
            if filled != n:
                return None
        except apsw.Error:
            return None
        mat.setflags(write=False)
        return (ids, mat), rowids, (chunk << 20) - offset  # `_tie_order`'s key, every row found

    def turn_vectors(self) -> tuple[list[str], np.ndarray]:
        """Turn ids (`turn:<session>#<seq>`) with a vector, and their (n, dim) matrix."""
        with self._lock:
            self._check_external()
            if self._turn_vectors is None:
                dim = int(self._meta("embedder_dim") or 0)
                # Filled row by row into one preallocated matrix, as `vectors` does: every
                # row's blob held and then joined took three times the matrix (4.7 GB peak
                # with a million turns).
                n = int(cast("list[tuple[int]]", self._conn.execute(
                    "SELECT count(*) FROM turns WHERE vector IS NOT NULL").fetchall())[0][0])
                mat = np.empty((n, dim), dtype=np.float32)
                ids: list[str] = []
                i = 0
                for tid, blob in self._conn.execute(
                    "SELECT id, vector FROM turns WHERE vector IS NOT NULL ORDER BY session_id, seq"
                ):
                    if i == n:  # more rows than counted: grow (cannot happen in a txn)
                        mat = np.concatenate([mat, np.empty((n or 1, dim), np.float32)])
                        n = len(mat)
                    mat[i] = np.frombuffer(blob, dtype=TURN_DTYPE)
                    ids.append(tid)
                    i += 1
                mat = mat[:i]
                mat.setflags(write=False)
                self._turn_vectors = (ids, mat)
            return self._turn_vectors

    def turn_codes(self) -> TurnCodes:
        """The sign-bit codes of every turn with a vector (`turn_codes.TurnCodes`), made from
        the vectors read in blocks: no float32 matrix is kept. After `forget_turn_vectors`
        (or `reset`) they are checked first: when turns were only added (rows above the last
        rowid seen, the count of rows agreeing) or turns seen without a vector got one, only
        those rows are read and coded; anything else reads them all again."""
        with self._lock:
            self._check_external()
            if self._turn_codes is not None and self._turn_codes_stale:
                if not self._extend_turn_codes():
                    self._turn_codes = None
            self._turn_codes_stale = False
            if self._turn_codes is None:
                dim = int(self._meta("embedder_dim") or 0)
                if not self._adopt_kept_codes(dim):
                    codes, seen = TurnCodes(dim), _TurnsSeen(self._turn_key())
                    self._code_rows(codes, seen, self._conn.execute(
                        "SELECT rowid, session_id, vector, row_hash FROM turns ORDER BY rowid"),
                        in_order=True)
                    self._turn_codes, self._turn_seen = codes, seen
                    self._keep_codes()
            elif self._turn_codes.n - self._kept_n > max(KEPT_AGAIN, self._turn_codes.n // 10):
                self._keep_codes()  # many turns added since they were kept: keep them again
            got = self._turn_codes
            assert got is not None  # read, adopted or kept above
            return got

    def _codes_file(self) -> Path | None:
        """Where this index's turn codes are kept between processes (none in memory)."""
        return side_path(getattr(self._facts, "path", None), SIDE_SUFFIX)

    def _keep_codes(self) -> None:
        """Write the turn codes and what they were made from (`_TurnsSeen`) beside the index
        (atomically: a temporary file renamed over it), so the next process reads ~60 bytes a
        turn instead of every turn's vector. Best effort: a read-only index or folder keeps
        nothing, and the next process codes the vectors again."""
        side, codes, seen = self._codes_file(), self._turn_codes, self._turn_seen
        if (side is None or codes is None or seen is None or codes.n < KEPT_MIN
                or getattr(self._facts, "read_only", False)):
            return
        facts = {"version": KEPT_VERSION, "key": list(seen.key), "max_rowid": seen.max_rowid,
                 "anchor": seen.anchor, "rows": seen.rows, "last_coded": seen.last_coded}
        self._kept_n = codes.n  # (also when the write fails: not tried again on every recall)
        arrays: dict[str, Any] = {
            **codes.to_arrays(), "pending": np.array(sorted(seen.pending), dtype=np.int64),
            "seen": np.frombuffer(json.dumps(facts).encode(), np.uint8)}
        write_side(side, lambda fh: np.savez(fh, **arrays))

    def _adopt_kept_codes(self, dim: int) -> bool:
        """Take the turn codes `_keep_codes` left beside the index when they are this index's:
        made under the same embedder, a spot check of KEPT_CHECK codes against the vectors
        they came from agreeing, then brought up to date as `_extend_turn_codes` does (turns
        added since read and coded; anything else changed: False, and all are read again)."""
        side = self._codes_file()
        if side is None or not os.path.exists(side):
            return False
        try:
            with np.load(side, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            facts = json.loads(bytes(arrays["seen"]).decode())
            if facts.get("version") != KEPT_VERSION:
                return False
            codes = TurnCodes.from_arrays(dim, arrays)
            seen = _TurnsSeen((str(facts["key"][0]), str(facts["key"][1])),
                              int(facts["max_rowid"]), facts["anchor"], int(facts["rows"]),
                              set(arrays["pending"].tolist()), int(facts["last_coded"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError,
                zipfile.BadZipFile):
            return False
        if seen.key != self._turn_key() or not self._spot_check(codes):
            return False
        self._turn_codes, self._turn_seen, self._kept_n = codes, seen, codes.n
        if not self._extend_turn_codes():
            self._turn_codes = self._turn_seen = None
            return False
        return True

    def _spot_check(self, codes: TurnCodes) -> bool:
        """Whether KEPT_CHECK codes spread over `codes` (the first and last included) are the
        codes of those rowids' stored vectors, of the same sessions."""
        if codes.n == 0:
            return True
        pos = np.unique(np.linspace(0, codes.n - 1, min(codes.n, KEPT_CHECK)).astype(np.intp))
        want = codes.rowids[pos].tolist()
        rows = {int(r): (sid, blob) for r, sid, blob in self._conn.execute(
            "SELECT rowid, session_id, vector FROM turns WHERE vector IS NOT NULL AND rowid IN"
            f" ({','.join('?' * len(want))})", want)}
        if len(rows) != len(want):
            return False
        got = [rows[r] for r in want]
        mat = np.stack([turn_vector(b) for _s, b in got])
        return codes.agrees(pos, [s for s, _b in got], mat)

    def turn_rows(self, rowids: Sequence[int]
                  ) -> tuple[list[str], list[str], list[int], np.ndarray]:
        """(ids, sessions, seqs, (k, dim) vectors, widened to float32) of the turns `rowids`
        that still have a vector, in rowid order: what the turn channel re-scores its shortlist with."""
        with self._lock:
            want = sorted({int(r) for r in rowids})
            ids: list[str] = []
            sessions: list[str] = []
            seqs: list[int] = []
            blobs: list[bytes] = []
            for i in range(0, len(want), ROWID_CHUNK):
                part = want[i : i + ROWID_CHUNK]
                for tid, sid, seq, blob in self._conn.execute(
                    "SELECT id, session_id, seq, vector FROM turns WHERE vector IS NOT NULL"
                    f" AND rowid IN ({','.join('?' * len(part))}) ORDER BY rowid", part
                ):
                    ids.append(tid)
                    sessions.append(sid)
                    seqs.append(int(seq))
                    blobs.append(blob)
            dim = int(self._meta("embedder_dim") or 0)
            mat = (np.frombuffer(b"".join(blobs), dtype=TURN_DTYPE).reshape(len(blobs), dim)
                   .astype(np.float32) if blobs else np.zeros((0, dim), dtype=np.float32))
            return ids, sessions, seqs, mat

    def _turn_key(self) -> tuple[str, str]:
        """What the turn codes were made under: the embedder's key and dimension."""
        return (self._meta("embedder_key") or "", self._meta("embedder_dim") or "")

    def _code_rows(self, codes: TurnCodes, seen: _TurnsSeen,
                   rows: Iterable[tuple[int, str, bytes | None, str]], in_order: bool) -> int:
        """Code `rows` (rowid, session, vector, row_hash) in blocks of TURN_CODE_BLOCK; with
        `in_order` they are every turn above `seen.max_rowid` in rowid order, and `seen`
        notes them (the last rowid and its hash, the count, the ones without a vector).
        Returns how many rows came."""
        buf = np.empty((TURN_CODE_BLOCK, codes.dim), dtype=np.float32)
        rowids = np.empty(TURN_CODE_BLOCK, dtype=np.int64)
        sessions: list[str] = []
        count = 0
        for rowid, session, blob, row_hash in rows:
            count += 1
            if in_order:
                seen.max_rowid, seen.anchor = rowid, row_hash
            if blob is None:
                seen.pending.add(rowid)
                continue
            k = len(sessions)
            buf[k] = np.frombuffer(blob, dtype=TURN_DTYPE)
            rowids[k] = rowid
            sessions.append(session)
            if k + 1 == TURN_CODE_BLOCK:
                codes.add(rowids, sessions, buf)
                sessions = []
        if sessions:
            codes.add(rowids[: len(sessions)], sessions, buf[: len(sessions)])
        if in_order:
            seen.rows += count
        if codes.n:
            seen.last_coded = int(codes.rowids[-1])
        return count

    def _extend_turn_codes(self) -> bool:
        """Bring the turn codes up to date by reading only what was added; False when the
        turns changed otherwise (a row deleted or replaced, the vectors dropped, another
        embedder), and they must all be read again.

        Sound because the index only ever adds a turn (a new rowid above every other, unless
        the highest row was deleted, which its hash shows), deletes one (the count shows it),
        sets a vector where there was none (`seen.pending`) or drops every vector at once
        (`seen.last_coded` shows it)."""
        codes, seen = self._turn_codes, self._turn_seen
        if codes is None or seen is None or self._turn_key() != seen.key:
            return False
        if len(seen.pending) > max(PENDING_MAX, codes.n):
            return False  # mostly unembedded: reading all of it costs no more
        conn = self._conn
        with conn:  # one snapshot for the checks and the reads
            if seen.max_rowid and _first(conn, "SELECT row_hash FROM turns WHERE rowid=?",
                                         seen.max_rowid) != seen.anchor:
                return False
            if seen.last_coded and not _first(
                    conn, "SELECT vector IS NOT NULL FROM turns WHERE rowid=?", seen.last_coded):
                return False
            total = _first(conn, "SELECT count(*) FROM turns")
            pend = sorted(seen.pending)
            got: list[tuple[int, str, bytes | None, str]] = []
            for i in range(0, len(pend), ROWID_CHUNK):
                part = pend[i : i + ROWID_CHUNK]
                got += cast("list[tuple[int, str, bytes | None, str]]", conn.execute(
                    "SELECT rowid, session_id, vector, row_hash FROM turns WHERE vector IS NOT"
                    f" NULL AND rowid IN ({','.join('?' * len(part))})", part).fetchall())
            seen.pending.difference_update(r[0] for r in got)
            self._code_rows(codes, seen, got, in_order=False)
            self._code_rows(codes, seen, conn.execute(
                "SELECT rowid, session_id, vector, row_hash FROM turns WHERE rowid > ?"
                " ORDER BY rowid", (seen.max_rowid,)), in_order=True)
        return seen.rows == total


#: Turns seen without a vector that `_extend_turn_codes` looks up by rowid (more: read all).
PENDING_MAX = 20000
#: The kept turn codes' format (`VectorStore._keep_codes`).
KEPT_VERSION = 1
#: Fewer turn codes than this are not kept (reading their vectors again costs < 0.1 s).
KEPT_MIN = 20_000
#: Kept codes checked against their vectors before they are taken.
KEPT_CHECK = 32
#: Codes added since they were last kept beyond which they are kept again (and a tenth).
KEPT_AGAIN = 50_000


@dataclass
class _TurnsSeen:
    """What the turn codes were made from, for `VectorStore._extend_turn_codes`."""

    key: tuple[str, str]
    """The embedder key and dimension (`VectorStore._turn_key`)."""
    max_rowid: int = 0
    """The highest turn rowid read (with a vector or not)."""
    anchor: str | None = None
    """That row's row_hash."""
    rows: int = 0
    """Turn rows read (all of them at or below `max_rowid`)."""
    pending: set[int] = field(default_factory=set)
    """Rowids read without a vector (not embedded yet)."""
    last_coded: int = 0
    """The rowid of a coded turn (its vector is gone only if every vector was dropped)."""


def _first(conn: apsw.Connection, sql: str, *args: object) -> object:
    """The first column of the first row `sql` returns, None when there is none."""
    for row in conn.execute(sql, args):
        return row[0]
    return None


def _seq_sum_f32(products: np.ndarray) -> np.ndarray:
    """Row sums added one element at a time in float32, left to right, as sqlite-vec's
    scalar loop does (`f32 dot += a[i] * b[i]`); BLAS sums in another order, which changes
    the last bits. Returned as float64, the type the C code promotes them to next."""
    if products.shape[1] == 0:
        return np.zeros(products.shape[0], dtype=np.float64)
    return np.cumsum(products, axis=1, dtype=np.float32)[:, -1].astype(np.float64)


def _seq_dots_f32(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`_seq_sum_f32(rows * q)`, the same float32 sums, 2-3x cheaper: the products are laid
    out one dimension per row (`(dim, n)`, C order) and added row after row by `add.reduce`
    over axis 0, which adds element-wise in order (a sum along the contiguous axis, as
    `cumsum` or a reduce over axis 1 would need, is slower or pairwise). With fewer than two
    rows that reduce would run along the contiguous axis (pairwise): the cumsum then."""
    if rows.shape[0] < 2 or rows.shape[1] == 0:
        return _seq_sum_f32(rows * q)
    products = np.multiply(rows.T, q[:, None], order="C")
    return np.add.reduce(products, axis=0, dtype=np.float32).astype(np.float64)


#: How far (in cosine) BLAS's similarity may be from sqlite-vec's and still be re-checked:
#: float32 rounding over a few thousand dimensions stays orders of magnitude below it.
_KNN_MARGIN = 1e-3


def knn_like_sqlite_vec(ids: Sequence[str], mat: np.ndarray, ties: np.ndarray,
                        sqmag: np.ndarray, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The `k` rows of `mat` nearest `q` with the very similarities and order sqlite-vec's
    cosine kNN gives: a BLAS product finds the candidates (the k best and every row within
    _KNN_MARGIN of the k-th), then their distances are recomputed the way sqlite-vec's
    `distance_cosine_float` does (float32 sums, double sqrt and division, rounded to a float32
    distance); exact ties are ordered by `ties` (ascending), sqlite-vec's scan order."""
    n = len(ids)
    k = min(k, n)
    if k <= 0:
        return []
    qmag = float(_seq_sum_f32((q * q)[None, :])[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = (mat @ q) / np.sqrt(sqmag * qmag)
    approx = np.nan_to_num(approx, nan=-np.inf)
    kth = np.partition(approx, n - k)[n - k]
    cand = np.flatnonzero(approx >= kth - _KNN_MARGIN)
    dot = _seq_dots_f32(mat[cand], q)
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = (1 - dot / (np.sqrt(sqmag[cand]) * np.sqrt(qmag))).astype(np.float32)
    order = np.lexsort((ties[cand], dist))[:k]
    return [(ids[cand[i]], 1.0 - float(dist[i])) for i in order.tolist()]
