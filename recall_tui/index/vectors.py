"""Vectors: sqlite-vec's vec0 table, the numpy kNN over cached vectors, the embedding cache.

`VectorStore` is the part of `Index` that embeds (`_sync_vectors`, `embed_query`) and searches
by meaning (`vector_search`, `vector_search_sqlite`); `knn_like_sqlite_vec` ranks with numpy
exactly as sqlite-vec's cosine kNN does. Headless.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from recall_tui.index.embed import Embedder, EmbedderUnavailable
from recall_tui.index.schema import write_txn
from recall_tui.index.sync import Progress, _sha, embed_text
from recall_tui.vault.model import Vault

#: Texts embedded per call while building, each chunk committed on its own: progress moves,
#: and a failure or a kill loses at most one chunk of embedding work.
EMBED_CHUNK = 32
#: Recent query embeddings kept in memory.
QUERY_CACHE_SIZE = 256
#: Largest vector matrix ranked with numpy (bigger ones are searched by sqlite-vec's kNN).
NUMPY_KNN_MAX_BYTES = 256 * 1024 * 1024


class VectorStore:
    """The vector half of `Index` (a mixin: it uses the Index's connection, lock, meta and
    caches)."""

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
            place = {
                r: (c << 20) - o
                for r, c, o in self._conn.execute(
                    "SELECT rowid, chunk_id, chunk_offset FROM memory_vectors_rowids"
                )
            }
            self._vec_ties = np.array(
                [place.get(r, r) for r in self._vec_rowids.tolist()], dtype=np.int64
            )
        return self._vec_ties

    def _sqmag(self) -> np.ndarray:
        """Each stored vector's squared norm, summed as sqlite-vec sums it (float32, in order)."""
        if self._vec_sqmag is None:
            _, mat = self.vectors()
            self._vec_sqmag = _seq_sum_f32(mat * mat)
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
            rows = self._conn.execute(
                "SELECT m.id, v.distance FROM (SELECT rowid, distance FROM memory_vectors"
                " WHERE embedding MATCH ? AND k = ?) v JOIN memories m ON m.rowid = v.rowid"
                " ORDER BY v.distance",
                (q.tobytes(), min(k, n, 4096)),
            ).fetchall()
            return [(mid, 1.0 - float(d)) for mid, d in rows]

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query's vector (cached for recent queries); None when vectors are off.

        Raises EmbedderUnavailable when the embedder fails (e.g. the Ollama server went away),
        so the caller can say why the vector channel did not run.
        """
        if self.embedder.name == "none" or not self._vectors_usable:
            return None
        with self._lock:
            hit = self._query_cache.get(text)
            if hit is not None:
                self._query_cache.move_to_end(text)
                return hit
        vec = self.embedder.embed([text])[0]  # outside the lock: it may take milliseconds
        vec.setflags(write=False)
        with self._lock:
            self._query_cache[text] = vec
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
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
                else:
                    rows = self._conn.execute(
                        "SELECT m.id, v.embedding, m.rowid FROM memory_vectors v"
                        " JOIN memories m ON m.rowid = v.rowid ORDER BY m.path"
                    ).fetchall()
                    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                    mat = mat.reshape(len(rows), dim)
                    mat.setflags(write=False)
                    self._vectors = ([r[0] for r in rows], mat)
                    self._vec_rowids = np.array([r[2] for r in rows], dtype=np.int64)
            return self._vectors

    def turn_vectors(self) -> tuple[list[str], np.ndarray]:
        """Turn ids (`turn:<session>#<seq>`) with a vector, and their (n, dim) matrix."""
        with self._lock:
            self._check_external()
            if self._turn_vectors is None:
                dim = int(self._meta("embedder_dim") or 0)
                rows = self._conn.execute(
                    "SELECT id, vector FROM turns WHERE vector IS NOT NULL ORDER BY session_id, seq"
                ).fetchall()
                mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                mat = mat.reshape(len(rows), dim)
                mat.setflags(write=False)
                self._turn_vectors = ([r[0] for r in rows], mat)
            return self._turn_vectors

    def _sync_vectors(
        self, vault: Vault, progress: Progress | None
    ) -> tuple[int, int, float, str | None]:
        """Give every memory and turn a vector from the cache or the embedder.

        Returns (embedded, reused, embed ms, error). Vectors made by another embedder or model
        are dropped first; the cache keeps them, so switching back costs no embedding.
        """
        conn = self._conn
        emb = self.embedder
        key = _embedder_key(emb)
        if emb.name == "none":
            with self._lock, write_txn(conn):
                self._drop_vectors()
                self._set_meta(
                    embedder_name="none",
                    embedder_model="",
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error="no embedder: vectors off",
                )
            return 0, 0, 0.0, "no embedder: vectors off"
        try:
            dim = emb.dim
        except EmbedderUnavailable as exc:
            with self._lock, write_txn(conn):
                self._drop_vectors()
                self._set_meta(
                    embedder_name=emb.name,
                    embedder_model=emb.model,
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error=exc.reason,
                )
            return 0, 0, 0.0, exc.reason
        with self._lock, write_txn(conn):
            self._meta_cache = None  # another process may have changed it
            if self._meta("embedder_key") != key or self._meta("embedder_dim") != str(dim):
                self._drop_vectors()
            if not self._has_vec_table():
                conn.execute(
                    f"CREATE VIRTUAL TABLE memory_vectors USING vec0("
                    f"embedding float[{int(dim)}] distance_metric=cosine)"
                )
            self._set_meta(
                embedder_name=emb.name,
                embedder_model=emb.model,
                embedder_dim=str(dim),
                embedder_key=key,
            )
            if self._novec is None:
                need_mem_rows = conn.execute(
                    "SELECT rowid, embed_hash, path FROM memories WHERE rowid NOT IN "
                    "(SELECT rowid FROM memory_vectors)"
                ).fetchall()
            else:
                # The rows without a vector are known (those inserted since the last sync and
                # any it could not embed): no scan of the vec0 table (~15 ms at 10k).
                need_mem_rows = []
                todo_rows = sorted(self._novec)
                for i in range(0, len(todo_rows), 500):
                    part = todo_rows[i : i + 500]
                    need_mem_rows += conn.execute(
                        "SELECT rowid, embed_hash, path FROM memories WHERE rowid IN "
                        f"({','.join('?' * len(part))})",
                        part,
                    ).fetchall()
            need_turn_rows = conn.execute(
                "SELECT rowid, text_hash, text FROM turns WHERE vector IS NULL"
            ).fetchall()
            need_mem = [(r[0], r[1]) for r in need_mem_rows]
            need_turn = [(r[0], r[1]) for r in need_turn_rows]
            self._novec = set()
            if not need_mem and not need_turn:
                self._del_meta("embed_error")
                kept = (
                    self._count_vectors()
                    + self._conn.execute(
                        "SELECT count(*) FROM turns WHERE vector IS NOT NULL"
                    ).fetchone()[0]
                )
                return 0, kept, 0.0, None
            cached = self._cache_lookup(key, dim, {h for _, h in need_mem + need_turn})
        missing = {h for _, h in need_mem + need_turn} - cached.keys()
        # Only the rows without a vector are looked at (not every memory of the vault): the
        # text is rebuilt from the memory at the row's path, the turn's text is stored.
        texts: dict[str, str] = {}
        if missing:
            by_path = {m.path: m for m in vault.memories.values()}
            for _, h, path in need_mem_rows:
                m = by_path.get(path)
                if h in missing and h not in texts and m is not None:
                    t = embed_text(m)
                    if _sha(t) == h:
                        texts[h] = t
            for _, h, text in need_turn_rows:
                if h in missing and h not in texts and _sha(text) == h:
                    texts[h] = text
        todo = list(texts.items())
        new: set[str] = set()
        error: str | None = None
        t0 = time.perf_counter()
        # Vectors from the cache first, then each chunk as soon as it is embedded: every write
        # is its own transaction, so a kill loses at most the chunk being embedded.
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        for side, rows in zip(wanted, (need_mem, need_turn), strict=True):
            for rowid, h in rows:
                side.setdefault(h, []).append(rowid)
        go_on = self._write_vectors(key, dim, cached, False, wanted)
        if progress and todo:
            progress(0, len(todo), "embed")
        for i in range(0, len(todo), EMBED_CHUNK) if go_on else ():
            chunk = todo[i : i + EMBED_CHUNK]
            try:
                vecs = emb.embed([t for _, t in chunk])
            except EmbedderUnavailable as exc:
                error = exc.reason
                break
            made = {h: np.asarray(v, dtype=np.float32) for (h, _), v in zip(chunk, vecs, strict=True)}
            if not self._write_vectors(key, dim, made, True, wanted):
                break  # another process switched the embedder or rebuilt: its vectors win
            new.update(made)
            if progress:
                progress(min(i + EMBED_CHUNK, len(todo)), len(todo), "embed")
        embed_ms = (time.perf_counter() - t0) * 1000
        have = cached.keys() | new
        with self._lock, write_txn(conn):
            self._novec = {rowid for rowid, h in need_mem if h not in have}
            if error:
                self._set_meta(embed_error=error)
            else:
                self._del_meta("embed_error")
            self._invalidate()
            with_vector = (
                self._count_vectors()
                + self._conn.execute(
                    "SELECT count(*) FROM turns WHERE vector IS NOT NULL"
                ).fetchone()[0]
            )
        fresh = sum(1 for _, h in need_mem + need_turn if h in new)
        return len(new), max(0, with_vector - fresh), embed_ms, error

    def _write_vectors(
        self,
        key: str,
        dim: int,
        vecs: dict[str, np.ndarray],
        to_cache: bool,
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]],
    ) -> bool:
        """Commit one batch: `vecs` (by text hash) into the embedding cache when `to_cache`,
        and onto the memories and turns that still need exactly those texts (`wanted`: the
        memory rowids and the turn rowids by the hash of the text they need).

        Checked inside the write lock, since another process may have written since the rows
        were listed: a memory that has a vector already, was re-indexed with another text or
        is gone is left alone (no duplicate key, no vector on the wrong text). False when the
        index no longer holds vectors of this embedder (another process switched or rebuilt),
        and nothing was written.
        """
        if not vecs:
            return True
        conn = self._conn
        with self._lock, write_txn(conn):
            self._meta_cache = None
            if self._meta("embedder_key") != key or not self._has_vec_table():
                return False
            if to_cache:
                conn.executemany(
                    "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
                    " VALUES (?,?,?,?)",
                    [(key, h, dim, v.tobytes()) for h, v in vecs.items()],
                )
            rows = []
            turns = []
            for h, v in vecs.items():
                blob = v.tobytes()
                for rowid in wanted[0].get(h, ()):
                    still = conn.execute(
                        "SELECT 1 FROM memories WHERE rowid=? AND embed_hash=? AND NOT EXISTS"
                        " (SELECT 1 FROM memory_vectors_rowids WHERE rowid=?)",
                        (rowid, h, rowid),
                    ).fetchone()
                    if still is not None:
                        rows.append((rowid, blob))
                turns += [(blob, rowid, h) for rowid in wanted[1].get(h, ())]
            conn.executemany("INSERT INTO memory_vectors(rowid, embedding) VALUES (?, ?)", rows)
            conn.executemany(
                "UPDATE turns SET vector=? WHERE rowid=? AND text_hash=? AND vector IS NULL",
                turns,
            )
            self._invalidate()
            if rows or turns:
                self._bump_generation()
        return True

    def _cache_lookup(self, key: str, dim: int, hashes: set[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        hl = sorted(hashes)
        for i in range(0, len(hl), 500):
            part = hl[i : i + 500]
            q = ",".join("?" * len(part))
            for h, blob in self._conn.execute(
                f"SELECT text_hash, vector FROM embed_cache WHERE model=? AND dim=?"
                f" AND text_hash IN ({q})",
                (key, dim, *part),
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _vectors_complete(self) -> bool:
        """True when a vector sync would embed nothing: the stored vectors are this
        embedder's and every memory and turn has one (cheap: no model is loaded)."""
        with self._lock:
            if self._meta("embedder_key") != _embedder_key(self.embedder):
                return False
            if self.embedder.name == "none":
                return True
            if not self._has_vec_table():
                return False
            if self._novec is not None:
                missing = bool(self._novec)
            else:
                missing = self._conn.execute(
                    "SELECT 1 FROM memories WHERE rowid NOT IN "
                    "(SELECT rowid FROM memory_vectors) LIMIT 1"
                ).fetchone() is not None
            return not missing and self._conn.execute(
                "SELECT 1 FROM turns WHERE vector IS NULL LIMIT 1"
            ).fetchone() is None

    def _drop_vectors(self) -> None:
        self._novec = None
        self._conn.execute("DROP TABLE IF EXISTS memory_vectors")
        self._conn.execute("UPDATE turns SET vector=NULL WHERE vector IS NOT NULL")
        self._query_cache.clear()
        self._invalidate()
        self._bump_generation()


def _seq_sum_f32(products: np.ndarray) -> np.ndarray:
    """Row sums added one element at a time in float32, left to right, as sqlite-vec's
    scalar loop does (`f32 dot += a[i] * b[i]`); BLAS sums in another order, which changes
    the last bits. Returned as float64, the type the C code promotes them to next."""
    if products.shape[1] == 0:
        return np.zeros(products.shape[0], dtype=np.float64)
    return np.cumsum(products, axis=1, dtype=np.float32)[:, -1].astype(np.float64)


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
    dot = _seq_sum_f32(mat[cand] * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = (1 - dot / (np.sqrt(sqmag[cand]) * np.sqrt(qmag))).astype(np.float32)
    order = np.lexsort((ties[cand], dist))[:k]
    return [(ids[cand[i]], 1.0 - float(dist[i])) for i in order.tolist()]


def _embedder_key(emb: Embedder) -> str:
    """What the embedding cache and the stored vectors are keyed by: `name:model`."""
    return f"{emb.name}:{emb.model}"
