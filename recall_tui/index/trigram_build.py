"""The content trigram table, built on first need (schema 3, issue 13).

Only `fuzzy.trigram_mode = "scan"` (abmind's preset) reads `memories_trigram`, and it was a
third of the index on disk, so a sync fills it only once `ensure_trigram` has built it (the
`trigram` flag in `meta`). `TrigramBuild` is a mixin of `Index`. Headless.
"""

from __future__ import annotations

import time

from recall_tui.index.schema import IndexFileError, write_txn
from recall_tui.index.sync import _row_fields, _row_hash, trigram_content
from recall_tui.vault.model import Vault


class TrigramBuild:
    """`ensure_trigram` (a mixin: it uses the Index's connection, locks and caches)."""

    def ensure_trigram(self, vault: Vault | None = None) -> float | None:
        """Build the content trigram table if it is not there yet; the ms it took, or None
        when it was there already. Only `fuzzy.trigram_mode = "scan"` reads it (issue 13: it
        is a third of the index on disk), so it is made on first need, from `vault` (default:
        the vault of the last sync), and kept up to date by every sync after that. One
        `BEGIN IMMEDIATE` transaction that re-checks inside the lock (another process may have
        built it); a row whose stored text is not the one in `vault` is marked for re-indexing
        (its `row_hash` emptied), so the next sync, by any process, gives it its trigrams."""
        with self._lock:
            if self._meta("trigram") == "1":
                return None
        if self.read_only:
            raise IndexFileError(f"{self.path}: the trigram index (fuzzy scan mode) is not "
                                 "built and this index is opened read-only")
        vault = vault or self._last_vault
        if vault is None:
            raise IndexFileError(f"{self.path}: no vault to build the trigram index from")
        start = time.perf_counter()
        conn = self._conn
        # Not under `_sync_lock`: a progressive open's embedding holds it for minutes; the
        # writes of syncs and vector batches hold `_lock`, which serialises this with them.
        with self._lock, write_txn(conn):
            if conn.execute(
                "SELECT 1 FROM meta WHERE key='trigram' AND value='1'"
            ).fetchone() is not None:
                self._meta_cache = None
                return None
            conn.execute("INSERT INTO memories_trigram(memories_trigram) VALUES ('delete-all')")
            by_path = {m.path: m for m in vault.memories.values()}
            memo = self._row_hashes
            stale: list[tuple[int]] = []
            for rowid, path, stored in conn.execute(
                "SELECT rowid, path, row_hash FROM memories"
            ).fetchall():
                m = by_path.get(path)
                hit = memo.get(m.id) if m is not None else None
                rh = hit[1] if hit is not None and hit[0] is m else (
                    _row_hash(_row_fields(m)) if m is not None else None)
                if rh != stored:
                    stale.append((rowid,))
                    continue
                conn.execute("INSERT INTO memories_trigram(rowid, content) VALUES (?,?)",
                             (rowid, trigram_content(m)))
            conn.executemany("UPDATE memories SET row_hash='' WHERE rowid=?", stale)
            self._set_meta(trigram="1")
            self._bump_generation()
            self._trigram_on = True
            self._stored = None  # the row hashes changed
            self._invalidate()
        return (time.perf_counter() - start) * 1000
