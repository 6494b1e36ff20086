"""Incremental indexing: bringing the index up to date with a vault.

`IndexSync` is the part of `Index` (`Index.sync`) that writes memories and turns (`sync`): a
memory is re-indexed only when its row hash (everything the index stores about it but its
mtime, `rows.RowFields`) changed. It is given the index's core, its vector sync (told which
rows were added or removed, and run after the text) and its vector store (whose turn matrix
and query cache it empties); it owns its bookkeeping of the last sync (the row-hash memo, what
the memories table held) and the progressive open's pending vectors (`fill_vectors`,
`embedding_progress`). `IndexReport` says what one run did. Headless.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import is_not

import apsw

from recall_tui.index.core import IndexCore, Progress
from recall_tui.index.fts import FTS_COLUMNS
from recall_tui.index.rows import (
    RowFields,
    embed_text,
    row_fields,
    row_hash,
    sha,
    trigram_content,
)
from recall_tui.index.schema import TURNS_NOVEC_INDEX, TURNS_TEXT_INDEX, _now_iso, write_txn
from recall_tui.index.signature import signature, to_bytes
from recall_tui.index.synced import record_source, source_matches, vault_source
from recall_tui.index.turn_logs import (
    group_by_log,
    log_entries,
    logs_unchanged,
    patch_entries,
    session_rows,
    stored_logs,
    write_stored_logs,
)
from recall_tui.index.vector_sync import VectorFill, VectorSync
from recall_tui.index.vectors import VectorStore
from recall_tui.vault.model import Memory, Turn, Vault

__all__ = ["IndexReport", "IndexSync", "summary"]

@dataclass(frozen=True)
class IndexReport:
    """What one `open` or `update_files` did."""

    path: str
    """The index file (":memory:" for a read-only vault with no usable index)."""
    location_note: str = ""
    """Why the file is not at `VAULT/.recall/index.sqlite`, when it is not."""
    rebuilt: str | None = None
    """Why the existing file was thrown away and rebuilt; None when it was used."""
    added: int = 0
    """Memories new to the index."""
    updated: int = 0
    """Memories whose indexed content changed."""
    removed: int = 0
    """Memories no longer in the vault, deleted from every table."""
    unchanged: int = 0
    """Memories left as they were."""
    embedded: int = 0
    """Texts (memories and turns) sent to the embedder."""
    reused: int = 0
    """Memories and turns whose vector was kept or taken from the embedding cache."""
    vectors: int = 0
    """Memory vectors in the index after this run."""
    turns: int = 0
    """Transcript turns in the index after this run."""
    stale: int = 0
    """Read-only opens only: memories that changed on disk since the index was written."""
    embed_error: str | None = None
    """Why some or all vectors are missing (embedder none or unavailable), else None."""
    embedder: str = ""
    """`name model` of the embedder the vectors were made with."""
    ms: float = 0.0
    """Wall time of the whole run."""
    embed_ms: float = 0.0
    """Part of `ms` spent in the embedder."""

    @property
    def in_memory(self) -> bool:
        """True when the index lives in memory for this run only (its file could not be
        written, or a read-only open found no usable file): `location_note` says why."""
        return self.path == ":memory:"

    @property
    def total(self) -> int:
        """Memories in the index after this run."""
        return self.added + self.updated + self.unchanged



def _stale_view(root: str, m: Memory) -> bool:
    """True when `m`'s file changed on disk after `m` was read from it. A file that is gone
    is not a stale view (the removal is someone else's to index, or the vault was built in
    memory)."""
    try:
        return os.stat(os.path.join(root, m.path)).st_mtime != m.mtime
    except OSError:
        return False


def summary(core: IndexCore) -> IndexReport:
    """What the index holds now (vectors, turns, the embedder and its error), as a report."""
    return IndexReport(
        path=core.path,
        vectors=core.count_vectors(),
        turns=core.scalar("SELECT count(*) FROM turns"),
        embed_error=core.meta("embed_error") or None,
        embedder=f"{core.meta('embedder_name') or 'none'} {core.meta('embedder_model') or ''}".strip(),
    )


class IndexSync:
    """The incremental update part of `Index`: given the core, the vector sync and the
    vector store; owns the sync lock and what it knows of the last sync."""

    def __init__(self, core: IndexCore, vectors: VectorSync, store: VectorStore) -> None:
        self._core = core
        self._conn = core.conn
        self._lock = core.lock
        self._vectors = vectors
        self._store = store
        # Syncs run one at a time in this process (a sync, a progressive open's embedding).
        self._sync_lock = threading.Lock()
        # Row hashes by memory id, with the Memory object each was computed from.
        self._row_hashes: dict[str, tuple[Memory, str]] = {}
        # Row hashes of the turns of the last sync, by the Turn object's identity (kept with
        # the object): a re-read takes an unchanged session log's Turn objects from the last
        # read, so a sync hashes only the turns that are new.
        self._turn_hashes: dict[int, tuple[Turn, str]] = {}
        # The vault's keys and objects at the last committed sync.
        self._synced: tuple[list[str], list[Memory]] = ([], [])
        # (PRAGMA data_version, path -> (rowid, row hash, mtime)) after the last sync; the
        # rows are None when that sync compared nothing (the vault's source was the recorded
        # one, `synced`): read back on first need (`_prev_rows`).
        self._stored: tuple[int, dict[str, tuple[int, str, float]] | None] | None = None
        self.last_compare = ""
        """How the last `sync` compared the memories: "source" (the vault's read is the one
        the table was synced from: none compared), "objects" (only objects new since this
        process's last sync), "rows" (every memory's row hash)."""
        # Whether the content trigram table is kept up to date (`trigram_built`).
        self._trigram_on = False
        self.last_vault: Vault | None = None
        """The vault of the last sync (what `ensure_trigram` builds from by default)."""
        # Progressive open (`sync(defer_vectors=True)`, `fill_vectors`): the vault whose
        # vectors are still to be made, and (done, total) while they are being made.
        self._pending_vault: Vault | None = None
        self.embedding: tuple[int, int] | None = None
        self.turns_deferred = False
        """The last sync left the turns as they were (`sync(turns=False)`: the progressive
        open reads and indexes them after the memories are usable)."""
        self.turns_error: str | None = None
        """Why the deferred turns were never indexed (the open's turns phase failed)."""

    def row_hash_of(self, m: Memory) -> str:
        """`m`'s row hash, from the memo when the last sync hashed this very object."""
        hit = self._row_hashes.get(m.id)
        return hit[1] if hit is not None and hit[0] is m else row_hash(row_fields(m))

    def _prev_rows(self, version: int) -> dict[str, tuple[int, str, float]] | None:
        """What the memories table holds (path -> (rowid, row hash, mtime)) as this process's
        last committed sync left it, when no other connection has committed since (`version`,
        PRAGMA data_version); None otherwise. Inside the caller's lock. Rows an unchanged open
        did not read (`_stored`'s None) are read now, and the row hashes of the objects it
        synced remembered, which that open's record vouched for."""
        got = self._stored
        if got is None or got[0] != version:
            return None
        if got[1] is not None:
            return got[1]
        rows: dict[str, tuple[int, str, float]] = {
            path: (rowid, rh, mtime)
            for rowid, path, rh, mtime in self._conn.execute(
                "SELECT rowid, path, row_hash, mtime FROM memories")
        }
        memo = self._row_hashes
        for key, m in zip(*self._synced, strict=True):
            hit = rows.get(m.path)
            if hit is not None:
                memo[key] = (m, hit[1])
        self._stored = (version, rows)
        return rows

    def trigram_built(self) -> None:
        """The content trigram table now exists (`ensure_trigram`, inside its write): keep
        it up to date, and forget the stored row hashes (rows were marked for re-indexing)."""
        self._trigram_on = True
        self._stored = None

    def sync(
        self, vault: Vault, progress: Progress | None, clear: str | None = None,
        defer_vectors: bool = False, turns: bool = True,
    ) -> IndexReport:
        """Bring the index up to date with `vault`: the text, then the vectors (unless
        `defer_vectors` leaves them to `fill_vectors`).

        Syncs run one at a time in this process; queries only wait for the lock, which a
        sync holds while it writes. Other processes may sync the same file at the same time:
        every write is a `BEGIN IMMEDIATE` transaction that re-reads what it depends on
        inside the write lock (see docs/data-safety.md). `clear` ("index" or "all") empties
        the index first, in the same transaction (a rebuild, see `_clear`). `turns=False`
        leaves the turns table as it is (`vault` was read without its session logs) and
        sets `turns_deferred` until a sync with the turns runs."""
        with self._sync_lock:
            try:
                return self._sync_locked(vault, progress, clear, defer_vectors, turns)
            except BaseException:
                # A rolled-back write may have left caches describing what was not committed.
                with self._lock:
                    self._core.invalidate()
                    self._stored = None
                    self._vectors.forget_missing()
                raise

    def _sync_locked(
        self, vault: Vault, progress: Progress | None, clear: str | None = None,
        defer_vectors: bool = False, turns: bool = True,
    ) -> IndexReport:
        conn = self._conn
        with self._lock, write_txn(conn):
            if clear:
                self._clear(clear)
            # Whether the content trigram table is kept (`ensure_trigram` built it once): read
            # inside the write lock, as another process may have built it since.
            self._trigram_on = conn.execute(
                "SELECT 1 FROM meta WHERE key='trigram' AND value='1'"
            ).fetchone() is not None
            self.last_vault = vault
            # What the memories table holds, from the last sync when no other connection has
            # committed since (`PRAGMA data_version` moves only for other connections' commits):
            # reading 10k rows back costs ~40 ms, a re-index budget's worth.
            version = self._core.scalar("PRAGMA data_version")
            prev = self._prev_rows(version)
            if self._stored is not None and prev is None:
                # Another process wrote since our last sync: every cache of what the tables
                # hold (vectors, bm25 replicas, signatures) may describe rows it replaced.
                self._core.invalidate()
            self._stored = None
            if prev is None:
                self._vectors.forget_missing()  # someone else wrote: ask the vector table
            # Row hashes by memory id, kept with the Memory object they were computed from:
            # a vault that keeps unchanged memories' objects (the watcher's re-read, the
            # bench) costs a json.dumps + sha256 only for what changed (~25 us each).
            memo = self._row_hashes
            keys = list(vault.memories)
            objs = list(vault.memories.values())
            # The signature of the cached read that made these memories (None when unknown):
            # when the table was synced from that very read and nothing wrote memories since,
            # no memory is compared (`synced`: ~5 s of CPU at 100k in a fresh process).
            source = vault_source(vault)
            skip = (not clear and prev is None and source is not None
                    and source_matches(conn, source))
            if skip:
                todo = []
                for key in memo.keys() - vault.memories.keys():
                    del memo[key]
                stored, after = {}, {}
                unchanged = len(objs)
                self.last_compare = "source"
            elif prev is not None and keys == self._synced[0]:
                # Fast path: the same memories as the last committed sync; an object it saw
                # is stored as it is, so only the other objects are looked at (in C: ~1 ms
                # at 10k instead of ~40 ms for the loop below over every memory).
                todo = list(compress(objs, map(is_not, objs, self._synced[1])))
                new_paths = {m.path for m in todo}
                gone = {memo[m.id][0].path for m in todo if m.id in memo} - new_paths
                stored = {p: prev[p] for p in new_paths | gone if p in prev}
                after = {p: v for p, v in prev.items() if p not in gone} if gone else dict(prev)
                unchanged = len(objs) - len(todo)
                self.last_compare = "objects"
            else:
                todo = objs
                for key in memo.keys() - vault.memories.keys():
                    del memo[key]
                if prev is not None:
                    stored = dict(prev)
                else:
                    stored = {
                        path: (rowid, row_hash, mtime)
                        for rowid, path, row_hash, mtime in conn.execute(
                            "SELECT rowid, path, row_hash, mtime FROM memories"
                        )
                    }
                after = {}
                unchanged = 0
                self.last_compare = "rows"
            changed: list[tuple[Memory, RowFields, str]] = []
            touched: list[tuple[float, int]] = []
            added = updated = deferred = 0
            stale_added = False
            for m in todo:
                hit = memo.get(m.id)
                if hit is not None and hit[0] is m:
                    fields, rh = None, hit[1]
                else:
                    fields = row_fields(m)
                    rh = row_hash(fields)
                    memo[m.id] = (m, rh)
                old = stored.pop(m.path, None)
                if old is not None and old[1] == rh:
                    unchanged += 1
                    if old[2] != m.mtime:
                        touched.append((m.mtime, old[0]))
                    after[m.path] = (old[0], rh, m.mtime)
                    continue
                if old is not None and _stale_view(vault.root, m):
                    # The file changed again after this process read it (another process, e.g.
                    # an edit, is indexing the newer text): never put an older text back.
                    deferred += 1
                    after[m.path] = old
                    continue
                if old is None:
                    added += 1
                    # A rebuild puts every memory back: one whose file changed after this
                    # process read it goes in as read, and is re-read below.
                    if clear and _stale_view(vault.root, m):
                        stale_added = True
                else:
                    updated += 1
                after.pop(m.path, None)
                changed.append((m, fields if fields is not None else row_fields(m), rh))
            removed_rowids = [old[0] for old in stored.values()]
            with conn:
                self._write_memory_rows(changed, removed_rowids, touched, after)
                turns_changed = False
                if turns:
                    with bulk_turns(conn, len(vault.turns)):
                        turns_changed = self._sync_turns(vault.turns, vault.turn_logs)
                if changed or removed_rowids or touched or turns_changed:
                    self._core.set_meta(updated=_now_iso())
                if changed or removed_rowids or turns_changed or clear:
                    # (turns only: the memories table's record is carried, `synced`)
                    self._core.bump_generation(memories=bool(changed or removed_rowids or clear))
                if source is not None and not deferred and record_source(conn, source):
                    self._core.forget_meta()  # (the table now holds exactly these memories)
            if changed or removed_rowids:
                self._core.invalidate()
            if not deferred and self._core.scalar("PRAGMA data_version") == version:
                self._stored = (version, None if skip else after)
                self._synced = (keys, objs)
        if stale_added:
            # The rebuild emptied the rows another process had indexed from newer files: read
            # the vault again and bring those memories up to date before anyone relies on them.
            from recall_tui.vault.reader import read_vault

            vault = read_vault(vault.root)
            again = self._sync_locked(vault, None, None, defer_vectors, turns)
            updated += again.updated
        self.turns_deferred = not turns
        if turns:
            self.turns_error = None
        if defer_vectors and not self._vectors.complete():
            # Progressive open: the text is indexed and usable now; `fill_vectors` embeds.
            # (When every vector already exists nothing is deferred: the sync below finds
            # nothing to embed and `embedding_progress()` stays None.)
            filled = VectorFill(0, 0, 0.0, None)
            self._pending_vault = vault
        else:
            filled = self._vectors.fill(vault, progress)
        with self._lock:
            now = summary(self._core)
        return replace(
            now,
            added=added,
            updated=updated,
            removed=len(removed_rowids),
            unchanged=unchanged + deferred,
            embedded=filled.embedded,
            reused=filled.reused,
            embed_error=filled.error,
            embed_ms=filled.embed_ms,
        )

    def sync_changed(
        self, vault: Vault, memory_ids: Collection[str], sessions: Mapping[str, Sequence[Turn]],
        progress: Progress | None = None,
    ) -> IndexReport:
        """`sync` for a vault patched from the last one synced (the watcher's refresh,
        `vault.patch`): only the memories `memory_ids` (added, changed or removed) and the
        turns of the session logs `sessions` (path -> its turns now) are looked at, then the
        vectors. The same result as `sync(vault)` when nothing else changed; it runs `sync`
        itself when it cannot build on this process's last committed sync (none yet,
        another process wrote since, a memory's file changed again since it was read)."""
        with self._sync_lock:
            try:
                done = self._sync_changed_locked(vault, memory_ids, sessions)
                if done is None:
                    return self._sync_locked(vault, progress)
            except BaseException:
                with self._lock:  # (as `sync`)
                    self._core.invalidate()
                    self._stored = None
                    self._vectors.forget_missing()
                raise
        added, updated, removed, unchanged, turn_rows = done
        filled = self._vectors.fill(vault, progress, turn_rows)
        with self._lock:
            now = summary(self._core)
        return replace(now, added=added, updated=updated, removed=removed,
                       unchanged=unchanged, embedded=filled.embedded, reused=filled.reused,
                       embed_error=filled.error, embed_ms=filled.embed_ms)

    def _sync_changed_locked(
        self, vault: Vault, memory_ids: Collection[str], sessions: Mapping[str, Sequence[Turn]],
    ) -> tuple[int, int, int, int, list[int]] | None:
        """The text part of `sync_changed`: (added, updated, removed, unchanged) memories and
        the rowids of the turns inserted, or None (nothing written) when `sync` must run
        instead."""
        conn = self._conn
        with self._lock, write_txn(conn):
            version = self._core.scalar("PRAGMA data_version")
            prev = self._prev_rows(version)
            if prev is None:
                return None
            memo = self._row_hashes
            todo = [vault.memories[mid] for mid in memory_ids if mid in vault.memories]
            paths = {m.path for m in todo}
            for mid in memory_ids:
                hit = memo.get(mid)
                if hit is not None:
                    paths.add(hit[0].path)  # (where it was: a file renamed, or gone)
                elif mid not in vault.memories:
                    return None  # a memory this process never synced
            stored = {p: prev[p] for p in paths if p in prev}
            after = dict(prev)  # (a copy in C: ~10x a comprehension at 100k)
            for p in stored:
                del after[p]
            changed: list[tuple[Memory, RowFields, str]] = []
            touched: list[tuple[float, int]] = []
            added = updated = unchanged = 0
            for m in todo:
                fields = row_fields(m)
                rh = row_hash(fields)
                old = stored.pop(m.path, None)
                if old is not None and old[1] == rh:
                    unchanged += 1
                    if old[2] != m.mtime:
                        touched.append((m.mtime, old[0]))
                    after[m.path] = (old[0], rh, m.mtime)
                    continue
                if old is not None and _stale_view(vault.root, m):
                    return None  # (`sync` defers it: never put an older text back)
                added += old is None
                updated += old is not None
                changed.append((m, fields, rh))
            self._trigram_on = conn.execute(
                "SELECT 1 FROM meta WHERE key='trigram' AND value='1'"
            ).fetchone() is not None
            self.last_vault = vault
            for mid in memory_ids:
                memo.pop(mid, None)
            for m, _, rh in changed:
                memo[m.id] = (m, rh)
            for m in todo:
                if m.id not in memo:
                    memo[m.id] = (m, after[m.path][1])
            removed_rowids = [old[0] for old in stored.values()]
            with conn:
                self._write_memory_rows(changed, removed_rowids, touched, after)
                turn_rows: list[int] = []
                logs_before = stored_logs(conn) if sessions else None
                gone = [self._sync_session(path, turns, turn_rows)
                        for path, turns in sessions.items()]
                turns_changed = bool(turn_rows) or any(gone)
                if logs_before is not None:
                    # Keep meta `turn_logs` true for the logs synced here, so a fresh
                    # process's next open still skips every unchanged log.
                    logs_after = patch_entries(logs_before, sessions, vault.turn_logs)
                    if logs_after != logs_before:
                        write_stored_logs(conn, logs_after)
                        self._core.forget_meta()
                if changed or removed_rowids or touched or turns_changed:
                    self._core.set_meta(updated=_now_iso())
                if changed or removed_rowids or turns_changed:
                    # (a session appended: the memories table's record is carried, `synced`)
                    self._core.bump_generation(memories=bool(changed or removed_rowids))
            if changed or removed_rowids:
                self._core.invalidate()
            if turns_changed:
                self._store.forget_turn_vectors()
            self._stored = None
            if self._core.scalar("PRAGMA data_version") == version:
                self._stored = (version, after)
                self._synced = (list(vault.memories), list(vault.memories.values()))
        return (added, updated, len(removed_rowids), len(vault.memories) - added - updated,
                turn_rows)

    def _sync_session(self, path: str, turns: Sequence[Turn], inserted: list[int]) -> bool:
        """One session log's turns brought up to date (inside the caller's write): its rows
        found by their ids (`turn:<session>#<seq>`, the unique index), new or changed turns
        inserted (their rowids added to `inserted`), vanished ones deleted with their vectors
        parked; True if any was deleted."""
        conn = self._conn
        session = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        stored = {
            tid: (rowid, rh)
            for rowid, tid, rh, p in conn.execute(
                "SELECT rowid, id, row_hash, path FROM turns WHERE id >= ? AND id < ?",
                (f"turn:{session}#", f"turn:{session}$"))
            if p == path
        }
        for t in turns:
            at = t.at.isoformat() if t.at else None
            rh = sha(json.dumps([t.role, t.text, at, t.path, t.line]))
            self._turn_hashes[id(t)] = (t, rh)
            old = stored.pop(t.id, None)
            if old is not None and old[1] == rh:
                continue
            if old is not None:
                self._vectors.park_turn_vectors([old[0]])
                conn.execute("DELETE FROM turns WHERE rowid=?", (old[0],))
            conn.execute(
                "INSERT INTO turns(id, session_id, seq, role, text, at, path, row_hash, text_hash)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (t.id, t.session_id, t.seq, t.role, t.text, at, t.path, rh, sha(t.text)),
            )
            inserted.append(conn.last_insert_rowid())
        gone = [rowid for rowid, _ in stored.values()]
        self._vectors.park_turn_vectors(gone)
        conn.executemany("DELETE FROM turns WHERE rowid=?", [(r,) for r in gone])
        return bool(gone)

    def fill_vectors(self, vault: Vault | None = None, progress: Progress | None = None
                     ) -> tuple[VectorFill, IndexReport] | None:
        """Embed what a `sync(..., defer_vectors=True)` left without a vector (any thread);
        while it runs, `embedding_progress()` says how far it is. What it did and the index's
        summary after, or None when no vault was left pending and none is given."""
        vault = vault or self._pending_vault
        if vault is None:
            return None
        with self._sync_lock:
            # Until the first batch says how many texts need the embedder: every memory.
            self.embedding = (0, len(vault.memories))

            def track(done: int, total: int, phase: str) -> None:
                self.embedding = (done, total)
                if progress is not None:
                    progress(done, total, phase)

            try:
                filled = self._vectors.fill(vault, track)
            finally:
                self.embedding = None
                self._pending_vault = None
        with self._lock:
            return filled, summary(self._core)

    def embedding_progress(self) -> tuple[int, int] | None:
        """(texts embedded, texts to embed) while vectors are pending or being made after a
        deferred open, None once every vector that can exist does."""
        if self.embedding is not None:
            return self.embedding
        if self._pending_vault is not None:
            return (0, len(self._pending_vault.memories))
        return None

    def _write_memory_rows(
        self, changed: list[tuple[Memory, RowFields, str]], removed_rowids: list[int],
        touched: list[tuple[float, int]], after: dict[str, tuple[int, str, float]],
    ) -> None:
        """Inside the caller's transaction: delete the rows of removed memories and the old
        rows of changed ones, insert the changed memories (their new rowid, hash and mtime go
        to `after`), and set the mtime of rows whose content did not change (`touched`)."""
        conn = self._core.conn
        old_rows = list(removed_rowids)
        for m, _, _ in changed:
            row = conn.execute("SELECT rowid FROM memories WHERE path=?", (m.path,)).fetchone()
            if row is not None:
                old_rows.append(row[0])
        for rowid in old_rows:
            self._delete_memory(rowid)
            self._vectors.note_removed(rowid)
        for m, fields, rh in changed:
            rowid = self._insert_memory(m, fields, rh)
            after[m.path] = (rowid, rh, m.mtime)
            self._vectors.note_added(rowid)
        conn.executemany("UPDATE memories SET mtime=? WHERE rowid=?", touched)

    def _delete_memory(self, rowid: int) -> None:
        conn = self._conn
        row = conn.execute("SELECT id FROM memories WHERE rowid=?", (rowid,)).fetchone()
        if row is None:
            return
        mid = row[0]
        if self._core.has_vec_table():
            self._vectors.park_memory_vector(rowid)  # vectors once: its vector moves to the cache
            conn.execute("DELETE FROM memory_vectors WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_fts WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_trigram WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_original WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_words WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM edges WHERE memory_id=?", (mid,))
        conn.execute("DELETE FROM signatures WHERE id=?", (mid,))

    def _insert_memory(self, m: Memory, fields: RowFields, rh: str) -> int:
        """Insert one memory into every table; returns its rowid."""
        conn = self._conn
        text = embed_text(m)
        mid = fields.id
        # The texts themselves live in the vault (and the reading cache); the FTS5 tables are
        # contentless, so the row keeps only what the sync and the filters compare.
        conn.execute(
            "INSERT INTO memories(id, path, content_hash, row_hash, embed_hash, mtime, role,"
            " status, type, scope, topic_key) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (mid, fields.path, fields.content_hash, rh, sha(text), m.mtime, fields.role,
             fields.status, fields.type, fields.scope, fields.topic_key),
        )
        rowid = conn.last_insert_rowid()
        conn.execute(
            f"INSERT INTO memories_fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?)",
            (
                rowid,
                fields.title,
                fields.recall_when,
                fields.tags,
                fields.keywords,
                fields.summary,
                fields.topic_path,
                m.body_without_related,
            ),
        )
        content = trigram_content(m)
        if self._trigram_on:
            conn.execute(
                "INSERT INTO memories_trigram(rowid, content) VALUES (?,?)", (rowid, content)
            )
        conn.execute(
            "INSERT INTO memories_original(rowid, original) VALUES (?,?)",
            (rowid, fields.original)
        )
        conn.execute("INSERT INTO memories_words(rowid, content) VALUES (?,?)", (rowid, content))
        conn.executemany(
            "INSERT INTO edges(subject, relation, object, memory_id) VALUES (?,?,?,?)",
            [(e.subject, e.relation, e.object, mid) for e in m.edges],
        )
        conn.execute(
            "INSERT INTO signatures(id, signature) VALUES (?, ?)",
            (mid, to_bytes(signature(text))),
        )
        return rowid

    def _sync_turns(self, turns: Sequence[Turn], logs: Mapping[str, str] | None = None) -> bool:
        """Insert new or changed turns, delete vanished ones; True if anything changed.

        A session log whose signature (`logs`, the Vault's `turn_logs`) and turn count are the
        ones stored with its rows (meta `turn_logs`, trusted while the table holds exactly the
        turns it lists: `turn_logs.stored_logs`) is skipped whole; only the other logs' turns
        are compared row by row (with their sessions' rows). Without a trusted meta every turn
        is compared, and the meta is written for the next sync."""
        conn = self._conn
        changed = False
        before = stored_logs(conn)
        if before is not None and logs and logs_unchanged(before, logs, len(turns)):
            self._turn_hashes = {}
            return False  # (every log as stored: not one turn is looked at)
        groups = group_by_log(turns)
        skip: set[str] = set()
        if before is None:
            todo: Sequence[Turn] = turns
            stored = {
                tid: (rowid, rh)
                for rowid, tid, rh in conn.execute("SELECT rowid, id, row_hash FROM turns")
            }
        else:
            logs = logs or {}
            for path, group in groups.items():
                entry = before.get(path)
                if entry is not None and entry[0] == logs.get(path) and entry[1] == len(group):
                    skip.add(path)
            todo = [t for path, group in groups.items() if path not in skip for t in group]
            sessions = {t.session_id for t in todo}
            sessions.update(entry[2] for path, entry in before.items() if path not in groups)
            stored = session_rows(conn, sessions, skip)
        known, hashes = self._turn_hashes, {}
        for t in todo:
            at = t.at.isoformat() if t.at else None
            hit = known.get(id(t))
            rh = (hit[1] if hit is not None and hit[0] is t
                  else sha(json.dumps([t.role, t.text, at, t.path, t.line])))
            hashes[id(t)] = (t, rh)
            old = stored.pop(t.id, None)
            if old is not None and old[1] == rh:
                continue
            changed = True
            if old is not None:
                self._vectors.park_turn_vectors([old[0]])
                conn.execute("DELETE FROM turns WHERE rowid=?", (old[0],))
            conn.execute(
                "INSERT INTO turns(id, session_id, seq, role, text, at, path, row_hash, text_hash)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (t.id, t.session_id, t.seq, t.role, t.text, at, t.path, rh, sha(t.text)),
            )
        self._turn_hashes = hashes
        self._vectors.park_turn_vectors([r for r, _ in stored.values()])
        conn.executemany("DELETE FROM turns WHERE rowid=?", [(r,) for r, _ in stored.values()])
        after = log_entries(groups, logs or {}, before or {}, skip)
        if after != before:
            write_stored_logs(conn, after)
            self._core.forget_meta()
        if changed or stored:
            self._store.forget_turn_vectors()
        return changed or bool(stored)

    def _clear(self, what: str) -> None:
        """Empty the index for a rebuild, inside the caller's write transaction (the tables:
        `SharedFile.clear_tables`), vectors parked first unless `what="all"`, then every
        cache of what the tables held."""
        if what != "all":
            self._vectors.park_all_vectors()  # vectors once: they wait in the cache
        self._core.shared.clear_tables(what)
        self._row_hashes.clear()
        self._turn_hashes = {}
        self._synced = ([], [])
        self._stored = None
        self._vectors.forget_missing()
        self._store.forget_queries()
        self._core.invalidate()


#: Turns loaded into an empty turns table from which on the text-hash index is made after
#: the rows, not kept up to date row by row (~2.7x less CPU for 200k turns: one sort instead
#: of a random B-tree insert each).
BULK_TURNS = 10_000


@contextlib.contextmanager
def bulk_turns(conn: apsw.Connection, incoming: int) -> Iterator[None]:
    """Inside the sync's write transaction: when `incoming` turns (BULK_TURNS or more) go into
    an empty turns table (a first index, a rebuild), drop the turns' text-hash index for the
    load and make it again before the transaction commits, so no reader sees it missing."""
    bulk = incoming >= BULK_TURNS and conn.execute(
        "SELECT 1 FROM turns LIMIT 1").fetchone() is None
    if bulk:
        conn.execute("DROP INDEX IF EXISTS turns_text")
        conn.execute("DROP INDEX IF EXISTS turns_novec")
    yield  # on an error the transaction's rollback brings the indexes back
    if bulk:
        conn.execute(TURNS_TEXT_INDEX)
        conn.execute(TURNS_NOVEC_INDEX)
