"""One index file, several processes: emptying it for a rebuild, and noticing other writers.

`SharedFile` is the part of `Index` that lets other processes (a UI, `query`, `edit`, the
hooks) use the same file at the same time: a rebuild empties it inside the rebuild's own write
transaction (`_clear`), and a `generation` value in meta, changed with every write to memories
or vectors, tells an open index to drop its in-memory caches (`_check_external`). See
docs/data-safety.md. Headless.
"""

from __future__ import annotations

import uuid


class SharedFile:
    """The multi-process part of `Index` (a mixin: it uses the Index's connection and caches)."""

    def _clear(self, what: str) -> None:
        """Empty the index for a rebuild, inside the caller's write transaction: every
        memory, turn, vector, edge and signature; with `what="all"` also the embedding cache
        and the recall statistics (otherwise kept: they cost embedding time and history)."""
        conn = self._conn
        if what != "all":
            self.park_all_vectors()  # vectors once: they wait in the cache for the rebuild
        for table in ("memories", "edges", "turns", "signatures"):
            conn.execute(f"DELETE FROM {table}")
        for fts in ("memories_fts", "memories_trigram", "memories_original"):
            conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('delete-all')")
        conn.execute("DROP TABLE IF EXISTS memory_vectors")
        if what == "all":
            conn.execute("DELETE FROM embed_cache")
            conn.execute("DELETE FROM recall_stats")
        conn.execute(
            "DELETE FROM meta WHERE key NOT IN ('schema_version', 'created')"
        )
        self._meta_cache = self._info_cache = None
        self._row_hashes.clear()
        self._synced = ([], [])
        self._stored = self._novec = None
        self.vector_store.query_cache.clear()
        self._invalidate()

    def _check_external(self) -> None:
        """Drop the in-memory caches when another process changed memories or vectors.

        Those caches (the vector matrix, the bm25 replicas keyed by rowid, signatures) would
        otherwise keep answering from rows another process replaced (a rebuild gives every
        memory a new rowid). `PRAGMA data_version` moves on any other commit (recall stats
        too); the `generation` in meta moves only when memories or vectors change.
        """
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._seen_version:
            return
        self._seen_version = version
        row = self._conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        gen = row[0] if row else None
        if gen != self._generation:
            self._generation = gen
            self._invalidate()

    def _bump_generation(self) -> None:
        """Inside a write transaction that changes memories or vectors: tell other processes'
        `_check_external` to drop their caches."""
        self._generation = uuid.uuid4().hex
        self._conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', ?)", (self._generation,)
        )
        self._meta_cache = self._info_cache = None
