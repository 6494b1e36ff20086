"""What every part of an `Index` shares: `IndexCore`.

The index file is one apsw connection, used by the UI's recall worker, the file watcher's
re-index and the main thread at once. `IndexCore` holds that connection, the one re-entrant
lock around it, the meta table (read once, cached) and the invalidation of every in-memory
cache. `Index` (store.py) makes one and hands it to each of its parts (keyword search,
vectors, vector sync, sync, trigram build, stats); a part uses the core's public methods and
never another part's state. A part that keeps a cache of what the tables hold registers its
`reset` with `on_invalidate`, and any part that changes memories or vectors calls
`invalidate()`: the one way a cache is emptied. `shared` (`SharedFile`) belongs to the core
because noticing another process's write is what triggers that invalidation. Headless.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import apsw

from recall_tui.index.embed import Embedder
from recall_tui.index.schema import scalar
from recall_tui.index.sharing import SharedFile
from recall_tui.index.synced import carried_source, carry_source

Progress = Callable[[int, int, str], None]
"""A build's progress callback: (done, total, phase)."""


class IndexCore:
    """The connection, the lock, the meta cache and cache invalidation of one open index."""

    def __init__(self, conn: apsw.Connection, path: str, embedder: Embedder,
                 read_only: bool) -> None:
        self.conn = conn
        self.path = path
        """The index file, or ":memory:"."""
        self.embedder = embedder
        self.read_only = read_only
        # SQLite serialises single calls, but not a multi-statement transaction against a
        # concurrent read, nor the parts' in-memory caches: one re-entrant lock around every
        # public method keeps both consistent. Embedding runs outside it, so a long re-index
        # does not block queries for its whole duration.
        self.lock = threading.RLock()
        self.vectors_usable = True
        """Whether the stored vectors were made by `embedder` (False only for a read-only
        index whose vectors are another embedder's)."""
        self.closed = False
        # Caches of what every recall would otherwise ask SQLite again: `invalidate` (any
        # change to the memories or vectors) and `forget_meta` (any meta write) reset them.
        self._meta_cache: dict[str, str] | None = None
        self._info_cache: dict[str, Any] | None = None
        self._nvec: int | None = None
        self._nmem: int | None = None
        self._on_invalidate: list[Callable[[], None]] = []
        # What other processes did to the file since this one last looked.
        self.shared = SharedFile(conn, self.invalidate)

    # ------------------------------------------------------------------ invalidation

    def on_invalidate(self, reset: Callable[[], None]) -> None:
        """Have `invalidate` call `reset` (a part's: it empties that part's caches)."""
        self._on_invalidate.append(reset)

    def invalidate(self) -> None:
        """The memories or vectors changed (here or in another process): forget every cache
        of what the tables hold, the core's and each registered part's."""
        self._nvec = self._nmem = None
        self.forget_meta()
        for reset in self._on_invalidate:
            reset()

    def forget_meta(self) -> None:
        """Forget the meta cache (read again on next use): another process may have written
        meta, or this one is about to."""
        self._meta_cache = self._info_cache = None

    def check_external(self) -> None:
        """`SharedFile.check_external`: invalidate when another process wrote."""
        self.shared.check_external()

    def bump_generation(self, *, memories: bool = True) -> None:
        """Inside a write transaction that changes memories or vectors:
        `SharedFile.bump_generation`, and forget the meta cache it made stale.
        `memories=False` (a write of vectors only, no memory row changed) carries the record
        of what the memories table was synced from to the new generation (`synced`)."""
        source = None if memories else carried_source(self.conn)
        self.shared.bump_generation()
        carry_source(self.conn, source)
        self.forget_meta()

    # ------------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        """A value of the meta table (cached)."""
        if self._meta_cache is None:
            self._meta_cache = {
                str(k): str(v) for k, v in self.conn.execute("SELECT key, value FROM meta")
            }
        return self._meta_cache.get(key)

    def set_meta(self, **values: str) -> None:
        """Write meta values; only what differs is written, so opening an unchanged index
        writes nothing."""
        current = {str(k): str(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}
        changes = [(k, v) for k, v in values.items() if current.get(k) != v]
        self.forget_meta()
        self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", changes)

    def del_meta(self, key: str) -> None:
        """Delete one meta value."""
        self.forget_meta()
        self.conn.execute("DELETE FROM meta WHERE key=?", (key,))

    # ------------------------------------------------------------------ facts

    def has_vec_table(self) -> bool:
        """Whether the vec0 table exists (it is made with the first vector)."""
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_schema WHERE name='memory_vectors'"
        ).fetchone()
        return row is not None

    def count_vectors(self) -> int:
        """Memory vectors stored: the rows of the vec0 table's rowid map (a count(*) of the
        vec0 table itself reads every vector: 0.06 s CPU at 100k). Cached, as every recall
        asks twice; `invalidate` resets it."""
        if self._nvec is None:
            self._nvec = self.scalar("SELECT count(*) FROM memory_vectors_rowids") \
                if self.has_vec_table() else 0
        return self._nvec

    def _count_memories(self) -> int:
        """Memory rows (cached as `count_vectors`: a meta write, e.g. a session's turns
        appended, forgets `embedder_info` but not this; ~25 ms at 100k memories)."""
        if self._nmem is None:
            self._nmem = self.scalar("SELECT count(*) FROM memories")
        return self._nmem

    def scalar(self, sql: str) -> int:
        """`schema.scalar` on this connection: a count, a sum, a PRAGMA value."""
        return scalar(self.conn, sql)

    def embedder_info(self) -> dict[str, Any]:
        """The embedder the stored vectors were made with, how many there are, and any
        problem (cached until the meta or the vectors change)."""
        with self.lock:
            if self._info_cache is not None:
                return dict(self._info_cache)
            dim = int(self.meta("embedder_dim") or 0)
            vectors = self.count_vectors()
            self._info_cache = {
                "name": self.meta("embedder_name") or "none",
                "model": self.meta("embedder_model") or "",
                "dim": dim,
                "vectors": vectors,
                "memories": self._count_memories(),
                "error": self.meta("embed_error") or None,
                "usable": self.vectors_usable and vectors > 0,
            }
            return dict(self._info_cache)

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Close the connection (a WAL checkpoint folds the log into the file); once."""
        with self.lock:
            if self.closed:
                return
            if not self.read_only:
                with contextlib.suppress(apsw.Error):
                    # Best effort: with other processes on the file the checkpoint may have to
                    # wait for them; closing must not (they checkpoint later).
                    self.conn.set_busy_timeout(50)
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.close()
            self.closed = True
