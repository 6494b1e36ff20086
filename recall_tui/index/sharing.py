"""One index file, several processes: emptying it for a rebuild, and noticing other writers.

`SharedFile` is the part of `Index` (`Index.shared`, held by its `IndexCore`) that lets other
processes (a UI, `query`, `edit`, the hooks) use the same file at the same time: a rebuild
empties the tables inside the rebuild's own write transaction (`clear_tables`), and a
`generation` value in meta, changed with every write to memories or vectors
(`bump_generation`), tells an open index to drop its in-memory caches (`check_external`,
which calls `IndexCore.invalidate`). It owns what it last saw of the file (`seen_version`,
`generation`); the core and the parts own their caches.
See docs/data-safety.md. Headless.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import apsw

from recall_tui.index.schema import scalar


class SharedFile:
    """The multi-process part of `Index`: made with the connection and the core's
    `invalidate` (called when another process changed memories or vectors)."""

    def __init__(self, conn: apsw.Connection, on_external_change: Callable[[], None]) -> None:
        self._conn = conn
        self._on_external_change = on_external_change
        #: `PRAGMA data_version` when this process last looked (moves on any other commit).
        self.seen_version: int | None = None
        #: The meta `generation` this process last saw or wrote.
        self.generation: str | None = None

    def clear_tables(self, what: str) -> None:
        """Empty the index for a rebuild, inside the caller's write transaction: every
        memory, turn, vector, edge and signature; with `what="all"` also the embedding cache
        and the recall statistics (otherwise kept: they cost embedding time and history).
        The caller parks the vectors first and empties its caches after."""
        conn = self._conn
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

    def check_external(self) -> None:
        """Tell the index to drop its in-memory caches when another process changed memories
        or vectors.

        Those caches (the vector matrix, the bm25 replicas keyed by rowid, signatures) would
        otherwise keep answering from rows another process replaced (a rebuild gives every
        memory a new rowid). `PRAGMA data_version` moves on any other commit (recall stats
        too); the `generation` in meta moves only when memories or vectors change.
        """
        version = scalar(self._conn, "PRAGMA data_version")
        if version == self.seen_version:
            return
        self.seen_version = version
        row = self._conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        gen = row[0] if row else None
        if gen != self.generation:
            self.generation = gen
            self._on_external_change()

    def bump_generation(self) -> None:
        """Inside a write transaction that changes memories or vectors: tell other processes'
        `check_external` to drop their caches (the caller forgets its meta cache).

        When the generation stored is not the one this process last saw, another process
        wrote since this one last looked (its `check_external` may not have run since): this
        process's caches are dropped first, as `check_external` would have done, since the
        new value written here would hide that write from it for good."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        if (row[0] if row else None) != self.generation:
            self._on_external_change()
        self.generation = uuid.uuid4().hex
        self._conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', ?)", (self.generation,)
        )
