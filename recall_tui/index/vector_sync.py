"""Filling the vectors: every memory and turn gets one, each vector stored once (schema 4).

`VectorSync` is the part of `Index` (`Index.vector_sync`) that gives memories and turns their
vectors after a text sync (`fill`). A vector lives in exactly one place: on its memory (the vec0 table
`memory_vectors`) or turn (`turns.vector`) while one has that text, else in `embed_cache`,
keyed by (embedder, text hash), so an edit and back, a rename, a rebuild or switching the
embedder and back costs no embedding. A vector moves, in the transaction that changes its
row: a memory deleted or re-indexed, a turn replaced, a rebuild (`_clear`) and dropping the
vectors of another embedder park theirs in the cache (`park_*`), and a sync takes a parked
vector back out of the cache when it gives it to a row. Before schema 4 the cache held every
vector ever made and the vec0 table held them all again (220 + 157 MB at 100k).

The sync streams: the rows that need a vector are listed once (ids and hashes, no texts),
then the vectors are taken from storage 500 hashes at a time, and the texts to embed are
built, embedded and committed EMBED_CHUNK at a time, so the build never holds every text or
vector of the vault at once. Every write is its own `BEGIN IMMEDIATE` transaction that
re-checks what it relies on (see docs/data-safety.md). Headless.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, cast

import apsw
import numpy as np

from recall_tui.index.core import IndexCore, Progress
from recall_tui.index.embed import Embedder, EmbedderUnavailable
from recall_tui.index.rows import embed_text, sha
from recall_tui.index.schema import remove_index_files, write_txn
from recall_tui.index.vectors import VectorStore, register_turn_functions, turn_blob
from recall_tui.vault.model import Vault

# apsw types a column as any SQLite value; the casts below name what the schema stores.
_NeedRow = tuple[int, str, str, str]
"""A memory row still without a vector: (rowid, embed_hash, id, path)."""

#: Texts embedded per call while building, each chunk committed on its own: progress moves,
#: and a failure or a kill loses at most one chunk of embedding work. The first chunk has
#: EMBED_CHUNK texts; the next ones are sized to take about CHUNK_SECONDS at the rate the last
#: one went (at most doubling, at most EMBED_CHUNK_MAX): a real model stays near 32 texts a
#: chunk, a fast embedder (the bench's stand-in: ~20 us a text) grows to thousands, so a
#: million turns are not a million / 32 write transactions.
EMBED_CHUNK = 32
EMBED_CHUNK_MAX = 4096
CHUNK_SECONDS = 0.5
#: Hashes looked up (and vectors written) per transaction when taking stored vectors.
TAKE_BATCH = 500

# The embedder the stored vectors belong to, read inside the statement that parks them (never
# from a cache: another process may have switched it since this one last looked).
_OWNER_KEY = "(SELECT value FROM meta WHERE key='embedder_key')"
_OWNER_DIM = "(SELECT CAST(value AS INTEGER) FROM meta WHERE key='embedder_dim')"
# Vectors are parked only while meta names the embedder that made them (always the case when
# a vector exists; the guard keeps a NULL model out of the cache if it ever were not).
_OWNED = f"{_OWNER_KEY} <> '' AND {_OWNER_DIM} > 0"
_PARK_MEMORY = (
    "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
    f" SELECT {_OWNER_KEY}, m.embed_hash, {_OWNER_DIM}, v.embedding"
    f" FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid WHERE {_OWNED}"
)
_PARK_TURN = (
    "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
    f" SELECT {_OWNER_KEY}, text_hash, {_OWNER_DIM}, turn_f32(vector) FROM turns"
    f" WHERE vector IS NOT NULL AND {_OWNED}"
)


# A text another memory or turn still holds a vector of is not parked (it would be stored twice).
_HELD_ELSEWHERE = (
    "EXISTS (SELECT 1 FROM memories o JOIN memory_vectors_rowids r ON r.rowid = o.rowid"
    " WHERE o.embed_hash = {h} AND o.rowid != {mem})"
    " OR EXISTS (SELECT 1 FROM turns t WHERE t.text_hash = {h} AND t.vector IS NOT NULL"
    " AND t.rowid != {turn})"
)


class VectorFill(NamedTuple):
    """What one `VectorSync.fill` did."""

    embedded: int
    """Texts sent to the embedder."""
    reused: int
    """Memories and turns whose vector was kept or taken from storage."""
    embed_ms: float
    """Time spent in the embedder."""
    error: str | None
    """Why some or all vectors are missing, else None."""


class VectorSync:
    """The vector filling part of `Index` (`Index.vector_sync`): given the index's core and
    its vector store (whose caches it empties through `forget_queries` and the core's
    `invalidate`), it owns which memory rows still lack a vector (`note_added`,
    `note_removed`, `forget_missing`)."""

    def __init__(self, core: IndexCore, store: VectorStore) -> None:
        self._core = core
        self._conn = core.conn
        self._lock = core.lock
        self._store = store
        register_turn_functions(self._conn)  # (`_PARK_TURN`: float16 turns, float32 cache)
        self._novec: set[int] | None = None
        """Rowids of memories without a vector after the last sync (None: unknown, ask
        SQLite)."""

    # ------------------------------------------------------------------ the rows lacking one

    def forget_missing(self) -> None:
        """Another process wrote, or a write was rolled back: which rows lack a vector is
        asked of SQLite again."""
        self._novec = None

    def note_added(self, rowid: int) -> None:
        """Memory `rowid` was inserted (it has no vector yet)."""
        if self._novec is not None:
            self._novec.add(rowid)

    def note_removed(self, rowid: int) -> None:
        """Memory `rowid` was deleted."""
        if self._novec is not None:
            self._novec.discard(rowid)

    # ------------------------------------------------------------------ moving vectors

    def park_memory_vector(self, rowid: int) -> None:
        """Inside a write transaction, before memory `rowid` loses its vector row: keep the
        vector in the embedding cache (its text may come back, or another memory have it)."""
        if self._core.has_vec_table():
            held = _HELD_ELSEWHERE.format(h="m.embed_hash", mem="m.rowid", turn="-1")
            self._conn.execute(_PARK_MEMORY + f" AND m.rowid = ? AND NOT ({held})", (rowid,))

    def park_turn_vectors(self, rowids: list[int]) -> None:
        """Inside a write transaction, before turns `rowids` are deleted: cache their vectors."""
        if not rowids:
            return
        held = _HELD_ELSEWHERE.format(h="turns.text_hash", mem="-1", turn="turns.rowid")
        if not self._core.has_vec_table():
            held = held.split(" OR ", 1)[1]
        self._conn.executemany(_PARK_TURN + f" AND rowid = ? AND NOT ({held})",
                               [(r,) for r in rowids])

    def park_all_vectors(self) -> None:
        """Inside a write transaction, before every vector row is dropped (a rebuild, another
        embedder): cache them all, under the embedder that made them."""
        if self._meta_owner() is None:
            return
        if self._core.has_vec_table():
            self._conn.execute(_PARK_MEMORY)
        self._conn.execute(_PARK_TURN)

    def _meta_owner(self) -> tuple[str, int] | None:
        rows = dict(cast("list[tuple[str, str]]", self._conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('embedder_key', 'embedder_dim')"
        ).fetchall()))
        key, dim = rows.get("embedder_key") or "", int(rows.get("embedder_dim") or 0)
        return (key, dim) if key and dim > 0 else None

    def adopt_previous_cache(self, keep: Path) -> None:
        """A new file replacing an older schema's: take the old embedding cache (see
        `schema._keep_old_cache`) into this one, then delete it; the sync that follows moves
        each vector onto its memory (so an upgrade embeds nothing already embedded)."""
        if not keep.exists():
            return
        try:
            self._conn.execute("ATTACH DATABASE ? AS keep", (str(keep),))
            try:
                with write_txn(self._conn):
                    self._conn.execute(
                        "INSERT OR IGNORE INTO embed_cache(model, text_hash, dim, vector)"
                        " SELECT model, text_hash, dim, vector FROM keep.embed_cache")
            finally:
                self._conn.execute("DETACH DATABASE keep")
        except apsw.Error:
            pass  # only a cache: the sync embeds what it lacks
        remove_index_files(keep)

    # ------------------------------------------------------------------ the sync

    def fill(self, vault: Vault, progress: Progress | None,
             turn_rows: Sequence[int] | None = None) -> VectorFill:
        """Give every memory and turn a vector from storage or the embedder. Vectors made by another embedder or model
        are parked in the cache first, so switching back costs no embedding.
        `turn_rows`: the turns a targeted sync inserted (`IndexSync.sync_changed`), the only
        ones looked at unless the last fill left an error (no scan of the turns table; its
        `reused` then counts only the rows filled from storage here).
        """
        conn = self._conn
        emb = self._core.embedder
        key = _embedder_key(emb)
        if emb.name == "none":
            with self._lock, write_txn(conn):
                self._drop_vectors()
                self._core.set_meta(
                    embedder_name="none",
                    embedder_model="",
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error="no embedder: vectors off",
                )
            return VectorFill(0, 0, 0.0, "no embedder: vectors off")
        try:
            dim = emb.dim
        except EmbedderUnavailable as exc:
            with self._lock, write_txn(conn):
                self._drop_vectors()
                self._core.set_meta(
                    embedder_name=emb.name,
                    embedder_model=emb.model,
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error=exc.reason,
                )
            return VectorFill(0, 0, 0.0, exc.reason)
        with self._lock, write_txn(conn):
            self._core.forget_meta()  # another process may have changed it
            if self._core.meta("embedder_key") != key or self._core.meta("embedder_dim") != str(dim):
                self._drop_vectors()
            if not self._core.has_vec_table():
                conn.execute(
                    f"CREATE VIRTUAL TABLE memory_vectors USING vec0("
                    f"embedding float[{int(dim)}] distance_metric=cosine)"
                )
            self._core.set_meta(
                embedder_name=emb.name,
                embedder_model=emb.model,
                embedder_dim=str(dim),
                embedder_key=key,
            )
            # Only ids and hashes (and the path to rebuild a memory's text from): no texts.
            need_mem_rows: list[_NeedRow]
            if self._novec is None:
                need_mem_rows = cast("list[_NeedRow]", conn.execute(
                    "SELECT rowid, embed_hash, id, path FROM memories WHERE rowid NOT IN "
                    "(SELECT rowid FROM memory_vectors_rowids)"  # (the vec0 table's rowid map:
                    # the rowids without reading a vector, 0.04 s against 0.18 s CPU at 100k)
                ).fetchall())
            else:
                # The rows without a vector are known (those inserted since the last sync and
                # any it could not embed): no scan of the vec0 table (~15 ms at 10k).
                need_mem_rows = []
                todo_rows = sorted(self._novec)
                for i in range(0, len(todo_rows), TAKE_BATCH):
                    rows_part = todo_rows[i : i + TAKE_BATCH]
                    need_mem_rows += cast("list[_NeedRow]", conn.execute(
                        "SELECT rowid, embed_hash, id, path FROM memories WHERE rowid IN "
                        f"({','.join('?' * len(rows_part))})",
                        rows_part,
                    ).fetchall())
            if turn_rows is not None and self._core.meta("embed_error"):
                turn_rows = None  # (turns the last fill could not embed: look at all)
            if turn_rows is None:
                need_turns = cast("list[tuple[int, str]]", conn.execute(
                    "SELECT rowid, text_hash FROM turns WHERE vector IS NULL"
                ).fetchall())
            else:
                need_turns = [row for i in range(0, len(turn_rows), TAKE_BATCH) for row in
                              conn.execute("SELECT rowid, text_hash FROM turns WHERE vector IS NULL"
                                           f" AND rowid IN ({','.join('?' * len(turn_rows[i : i + TAKE_BATCH]))})",
                                           turn_rows[i : i + TAKE_BATCH])]
            self._novec = set()
            if not need_mem_rows and not need_turns:
                self._core.del_meta("embed_error")
                return VectorFill(0, self._with_vector() if turn_rows is None else 0, 0.0, None)
        # The rowids that need each text (memories, turns): a vector is written only onto a
        # row that still needs exactly that text (checked again inside each write).
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        # text hash -> the (id, path) of a memory to rebuild the text from
        source: dict[str, tuple[str, str]] = {}
        for rowid, h, mid, path in need_mem_rows:
            wanted[0].setdefault(h, []).append(rowid)
            source.setdefault(h, (mid, path))
        for rowid, h in need_turns:
            wanted[1].setdefault(h, []).append(rowid)
        del need_mem_rows
        hashes = sorted(wanted[0].keys() | wanted[1].keys())
        # Vectors from storage first (parked in the cache, or on another row with the same
        # text), a batch per transaction.
        have: set[str] = set()
        go_on = True
        for i in range(0, len(hashes), TAKE_BATCH):
            got = self._take_stored(key, dim, hashes[i : i + TAKE_BATCH], wanted)
            if got is None:
                go_on = False  # another process switched the embedder or rebuilt
                break
            have |= got
        missing = [h for h in hashes if h not in have] if go_on else []
        new: set[str] = set()
        error: str | None = None
        t0 = time.perf_counter()
        if progress and missing:
            progress(0, len(missing), "embed")
        done = 0
        size, at = EMBED_CHUNK, 0
        while at < len(missing):
            part = missing[at : at + size]
            at += len(part)
            chunk = self._texts(vault, part, source, wanted[1])
            if not chunk:
                continue
            started = time.perf_counter()
            try:
                vecs = emb.embed([t for _, t in chunk])
            except EmbedderUnavailable as exc:
                error = exc.reason
                break
            made = {h: np.asarray(v, dtype=np.float32) for (h, _), v in zip(chunk, vecs, strict=True)}
            if self._write_vectors(key, dim, made, wanted) is None:
                break  # another process switched the embedder or rebuilt: its vectors win
            size = next_chunk_size(size, len(chunk), time.perf_counter() - started)
            new.update(made)
            done += len(chunk)
            if progress:
                progress(done, len(missing), "embed")
        if progress and missing and done < len(missing) and error is None:
            progress(len(missing), len(missing), "embed")  # texts no longer in the vault
        embed_ms = (time.perf_counter() - t0) * 1000
        have |= new
        with self._lock, write_txn(conn):
            self._novec = {r for h, rows in wanted[0].items() if h not in have for r in rows}
            if error:
                self._core.set_meta(embed_error=error)
            else:
                self._core.del_meta("embed_error")
            if wanted[0]:
                self._core.invalidate()
            else:
                # Only turns were filled: the memories' caches (their vector matrix, the bm25
                # replicas, the signatures) still hold; rebuilding them cost seconds at 100k
                # memories after every session appended.
                self._store.forget_turn_vectors()
            with_vector = self._with_vector() if turn_rows is None else None
        fresh = sum(len(wanted[0].get(h, ())) + len(wanted[1].get(h, ())) for h in new)
        if with_vector is None:
            with_vector = fresh + sum(len(wanted[0].get(h, ())) + len(wanted[1].get(h, ()))
                                      for h in have - new)
        return VectorFill(len(new), max(0, with_vector - fresh), embed_ms, error)

    def _with_vector(self) -> int:
        """Memories and turns that have a vector (the turns': all of them less the few in
        the partial index `turns_novec`, never a scan of the vectors)."""
        return self._core.count_vectors() + self._core.scalar(
            "SELECT (SELECT count(*) FROM turns)"
            " - (SELECT count(*) FROM turns WHERE vector IS NULL)"
        )

    def _texts(
        self, vault: Vault, hashes: list[str], source: dict[str, tuple[str, str]],
        turn_rows: dict[str, list[int]],
    ) -> list[tuple[str, str]]:
        """(hash, text) for each of `hashes` whose text is still what the row was indexed
        with: a memory's from the vault's memory of the row's id and path, a turn's read back
        from its row (TAKE_BATCH rows a query)."""
        texts: dict[str, str | None] = {}
        ask: list[tuple[int, str]] = []
        for h in hashes:
            mid, path = source.get(h, ("", ""))
            m = vault.memories.get(mid)
            if m is not None and m.path == path:
                texts[h] = embed_text(m)
            elif h in turn_rows:
                texts[h] = None
                ask.append((turn_rows[h][0], h))
        for i in range(0, len(ask), TAKE_BATCH):
            part = dict(ask[i : i + TAKE_BATCH])
            with self._lock:
                rows = cast("list[tuple[int, str]]", self._conn.execute(
                    f"SELECT rowid, text FROM turns WHERE rowid IN ({','.join('?' * len(part))})",
                    list(part),
                ).fetchall())
            for rowid, text in rows:
                texts[part[rowid]] = text
        return [(h, t) for h, t in texts.items() if t is not None and sha(t) == h]

    def _take_stored(
        self, key: str, dim: int, hashes: list[str],
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]],
    ) -> set[str] | None:
        """One transaction: the vectors of `hashes` already stored (parked in the cache, or on
        a memory or turn with the same text), written onto the rows that want them; returns
        the hashes found, None when the index no longer holds this embedder's vectors."""
        conn = self._conn
        q = ",".join("?" * len(hashes))
        with self._lock, write_txn(conn):
            if not self._still_ours(key):
                return None
            found = dict(cast("list[tuple[str, bytes]]", conn.execute(
                f"SELECT text_hash, vector FROM embed_cache WHERE model=? AND dim=?"
                f" AND text_hash IN ({q})",
                (key, dim, *hashes),
            ).fetchall()))
            rest = [h for h in hashes if h not in found]
            if rest:
                q = ",".join("?" * len(rest))
                found.update(cast("list[tuple[str, bytes]]", conn.execute(
                    "SELECT m.embed_hash, v.embedding FROM memories m JOIN memory_vectors v"
                    f" ON v.rowid = m.rowid WHERE m.embed_hash IN ({q})",
                    rest,
                ).fetchall()))
                rest = [h for h in rest if h not in found]
            # A turn's vector is stored rounded to float16: taken for other turns only, so a
            # memory's vector is always the embedder's float32 (rankings never move with it).
            rest = [h for h in rest if h not in wanted[0]]
            if rest:
                q = ",".join("?" * len(rest))
                found.update(cast("list[tuple[str, bytes]]", conn.execute(
                    f"SELECT text_hash, turn_f32(vector) FROM turns WHERE text_hash IN ({q})"
                    " AND vector IS NOT NULL",
                    rest,
                ).fetchall()))
            self._place(key, found, wanted)
        return set(found)

    def _write_vectors(
        self,
        key: str,
        dim: int,
        vecs: dict[str, np.ndarray],
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]],
    ) -> set[str] | None:
        """Commit one chunk of new vectors (by text hash) onto the memories and turns that
        still need exactly those texts; a vector no row takes (its memory was edited or
        deleted meanwhile) goes to the cache, so the work is kept, unless another row holds
        that text's vector already (another process embedded it too). None when the index no
        longer holds vectors of this embedder (another process switched or rebuilt), and
        nothing was written."""
        if not vecs:
            return set()
        conn = self._conn
        with self._lock, write_txn(conn):
            if not self._still_ours(key):
                return None
            blobs = {h: v.tobytes() for h, v in vecs.items()}
            taken = self._place(key, blobs, wanted)
            held = _HELD_ELSEWHERE.format(h="?1", mem="-1", turn="-1")
            conn.executemany(
                "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
                f" SELECT ?2, ?1, ?3, ?4 WHERE NOT ({held})",
                [(h, key, dim, b) for h, b in blobs.items() if h not in taken],
            )
        return taken

    def _still_ours(self, key: str) -> bool:
        self._core.forget_meta()
        return self._core.meta("embedder_key") == key and self._core.has_vec_table()

    def _place(
        self, key: str, blobs: dict[str, bytes],
        wanted: tuple[dict[str, list[int]], dict[str, list[int]]],
    ) -> set[str]:
        """Inside a write transaction: write each vector onto the memories and turns that
        still need exactly its text, take it out of the cache if one did; the hashes placed.

        Checked inside the write lock, since another process may have written since the rows
        were listed: a memory that has a vector already, was re-indexed with another text or
        is gone is left alone (no duplicate key, no vector on the wrong text)."""
        conn = self._conn
        rows: list[tuple[int, bytes]] = []
        taken: set[str] = set()
        for h, blob in blobs.items():
            for rowid in wanted[0].get(h, ()):
                still = conn.execute(
                    "SELECT 1 FROM memories WHERE rowid=? AND embed_hash=? AND NOT EXISTS"
                    " (SELECT 1 FROM memory_vectors_rowids WHERE rowid=?)",
                    (rowid, h, rowid),
                ).fetchone()
                if still is not None:
                    rows.append((rowid, blob))
                    taken.add(h)
        conn.executemany("INSERT INTO memory_vectors(rowid, embedding) VALUES (?, ?)", rows)
        # The turns that still need exactly these texts, asked TAKE_BATCH rows a query; each
        # then gets its vector (one statement for all, still guarded as the ask was).
        asked = {rowid: h for h in blobs for rowid in wanted[1].get(h, ())}
        order = sorted(asked)
        fits: list[tuple[bytes, int, str]] = []
        for i in range(0, len(order), TAKE_BATCH):
            part = order[i : i + TAKE_BATCH]
            for rowid, h in cast("list[tuple[int, str]]", conn.execute(
                f"SELECT rowid, text_hash FROM turns WHERE rowid IN ({','.join('?' * len(part))})"
                " AND vector IS NULL", part,
            ).fetchall()):
                if asked[rowid] == h:
                    fits.append((turn_blob(blobs[h]), rowid, h))
                    taken.add(h)
        conn.executemany(
            "UPDATE turns SET vector=? WHERE rowid=? AND text_hash=? AND vector IS NULL", fits)
        placed_turns = bool(fits)
        conn.executemany("DELETE FROM embed_cache WHERE model=? AND text_hash=?",
                         [(key, h) for h in taken])
        if rows:
            self._core.invalidate()
        elif placed_turns:
            self._store.forget_turn_vectors()  # (no memory vector moved: see `fill`)
        if rows or placed_turns:
            self._core.bump_generation(memories=False)
        return taken

    def complete(self) -> bool:
        """True when a vector sync would embed nothing: the stored vectors are this
        embedder's and every memory and turn has one (cheap: no model is loaded)."""
        with self._lock:
            if self._core.meta("embedder_key") != _embedder_key(self._core.embedder):
                return False
            if self._core.embedder.name == "none":
                return True
            if not self._core.has_vec_table():
                return False
            if self._novec is not None:
                missing = bool(self._novec)
            else:
                missing = self._conn.execute(
                    "SELECT 1 FROM memories WHERE rowid NOT IN "
                    "(SELECT rowid FROM memory_vectors_rowids) LIMIT 1"
                ).fetchone() is not None
            return not missing and self._conn.execute(
                "SELECT 1 FROM turns WHERE vector IS NULL LIMIT 1"
            ).fetchone() is None

    def _drop_vectors(self) -> None:
        """Inside a write transaction: drop every memory and turn vector, parked in the cache
        under the embedder that made them first (switching back embeds nothing)."""
        self.park_all_vectors()
        self._novec = None
        self._conn.execute("DROP TABLE IF EXISTS memory_vectors")
        self._conn.execute("UPDATE turns SET vector=NULL WHERE vector IS NOT NULL")
        self._store.forget_queries()
        self._core.invalidate()
        self._core.bump_generation(memories=False)


def next_chunk_size(size: int, texts: int, seconds: float) -> int:
    """The next chunk's size after `texts` texts were embedded and written in `seconds`: what
    takes about CHUNK_SECONDS at that rate, at most twice `size`, between EMBED_CHUNK and
    EMBED_CHUNK_MAX."""
    if texts <= 0:
        return size
    fit = CHUNK_SECONDS * texts / seconds if seconds > 0 else float(EMBED_CHUNK_MAX)
    return max(EMBED_CHUNK, min(EMBED_CHUNK_MAX, 2 * size, int(fit)))


def _embedder_key(emb: Embedder) -> str:
    """What the embedding cache and the stored vectors are keyed by: `name:model`."""
    return f"{emb.name}:{emb.model}"
