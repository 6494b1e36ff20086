"""The content trigram table, built on first need (schema 3, issue 13).

Only `fuzzy.trigram_mode = "scan"` (abmind's preset) reads `memories_trigram`, and it was a
third of the index on disk, so a sync fills it only once `ensure_trigram` has built it (the
`trigram` flag in `meta`). `TrigramBuild` is the part of `Index` (`Index.trigram`) that builds
it: given the index's core and its sync (the vault of the last sync, its row-hash memo, and
`trigram_built` to keep the table up to date from then on). Headless.
"""

from __future__ import annotations

import time

from recall_tui.index.core import IndexCore
from recall_tui.index.rows import trigram_content
from recall_tui.index.schema import IndexFileError, write_txn
from recall_tui.index.sync import IndexSync
from recall_tui.vault.model import Vault


class TrigramBuild:
    """`ensure_trigram`, over the index's core and its sync."""

    def __init__(self, core: IndexCore, sync: IndexSync) -> None:
        self._core = core
        self._sync = sync

    def ensure_trigram(self, vault: Vault | None = None) -> float | None:
        """Build the content trigram table if it is not there yet; the ms it took, or None
        when it was there already. Only `fuzzy.trigram_mode = "scan"` reads it (issue 13: it
        is a third of the index on disk), so it is made on first need, from `vault` (default:
        the vault of the last sync), and kept up to date by every sync after that. One
        `BEGIN IMMEDIATE` transaction that re-checks inside the lock (another process may have
        built it); a row whose stored text is not the one in `vault` is marked for re-indexing
        (its `row_hash` emptied), so the next sync, by any process, gives it its trigrams."""
        core = self._core
        with core.lock:
            if core.meta("trigram") == "1":
                return None
        if core.read_only:
            raise IndexFileError(f"{core.path}: the trigram index (fuzzy scan mode) is not "
                                 "built and this index is opened read-only")
        vault = vault or self._sync.last_vault
        if vault is None:
            raise IndexFileError(f"{core.path}: no vault to build the trigram index from")
        start = time.perf_counter()
        conn = core.conn
        # Not under the sync lock: a progressive open's embedding holds it for minutes; the
        # writes of syncs and vector batches hold the core's lock, which serialises this
        # with them.
        with core.lock, write_txn(conn):
            if conn.execute(
                "SELECT 1 FROM meta WHERE key='trigram' AND value='1'"
            ).fetchone() is not None:
                core.forget_meta()
                return None
            conn.execute("INSERT INTO memories_trigram(memories_trigram) VALUES ('delete-all')")
            by_path = {m.path: m for m in vault.memories.values()}
            stale: list[tuple[object]] = []
            for rowid, path, stored in conn.execute(
                "SELECT rowid, path, row_hash FROM memories"
            ).fetchall():
                m = by_path.get(str(path))
                if m is None or self._sync.row_hash_of(m) != stored:
                    stale.append((rowid,))
                    continue
                conn.execute("INSERT INTO memories_trigram(rowid, content) VALUES (?,?)",
                             (rowid, trigram_content(m)))
            conn.executemany("UPDATE memories SET row_hash='' WHERE rowid=?", stale)
            core.set_meta(trigram="1")
            # (no row marked: every memory row is as it was, so the record of what the
            # memories table was synced from stays true, `synced`)
            core.bump_generation(memories=bool(stale))
            self._sync.trigram_built()
            core.invalidate()
        return (time.perf_counter() - start) * 1000
