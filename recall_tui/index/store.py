"""The vault's index: one SQLite file (FTS5, sqlite-vec, embedding cache, signatures, stats).

`Index.open(vault, embedder)` builds the file or brings it up to date incrementally: a memory
is re-indexed only when what the index stores about it changed, and a text is embedded only
when no vector for it (with this model) is in the embedding cache. The file lives at
`VAULT/.recall/index.sqlite` (the only place the tool writes inside a vault), or under the
user's cache folder when the vault is read-only. An index from another schema version, or a
file that is not a sound database, is deleted and rebuilt — never trusted. See docs/index.md.

It goes through apsw rather than the stdlib sqlite3 module because apsw bundles a recent SQLite
(FTS5 with the trigram tokenizer and `remove_diacritics`) and can load the sqlite-vec
extension on every platform. Headless: no textual, no rich.

`Index` is the facade: it owns the connection, the lock, the meta cache and the invalidation
of every cache, and holds three parts it makes with what they need: `keyword` (`fts.py`:
FTS5 porter and trigram search, the in-memory bm25, the vocabulary), `vector_store`
(`vectors.py`: sqlite-vec, the numpy kNN, query vectors), `stats` (`stats.py`: recall
statistics) and `shared` (`sharing.py`: emptying the tables for a rebuild in place, noticing
other processes' writes); its public methods for them delegate. Still mixed in: `sync.py`
(incremental update, `IndexReport`), `vector_sync.py` (filling the vectors, each stored
once, the embedding cache) and `trigram_build.py`. `schema.py` holds the file, its schema and version. This module keeps
opening (and the in-memory fallback), the meta table, signatures and edges, and re-exports
the parts' public names, so `from recall_tui.index.store import ...` keeps working.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import apsw
import numpy as np

from recall_tui.index.embed import Embedder
from recall_tui.index.fts import (
    DEFAULT_FTS_WEIGHTS,
    FTS5_B,
    FTS5_K1,
    FTS_COLD_MAX,
    FTS_COLUMNS,
    FTS_POSTINGS_BUDGET,
    MAX_TRIGRAMS,
    TRIGRAM_COLUMNS,
    Bm25Replica,
    FtsSearch,
    match_any,
    trigram_match,
    trigram_terms,
)
from recall_tui.index.schema import (
    _SCHEMA,
    QUICK_CHECK_MAX_BYTES,
    SCHEMA_VERSION,
    WRITE_FAILURES,
    IndexFileError,
    _cache_index_path,
    _connect,
    _now_iso,
    _open_existing,
    _validate,
    default_index_path,
    memory_fallback_note,
    previous_cache_path,
    remove_index_files,
    resolve_index_path,
    write_txn,
)
from recall_tui.index.sharing import SharedFile
from recall_tui.index.signature import BITS, from_bytes
from recall_tui.index.stats import MAX_RECALL_TIMES, RecallStats, RecallStatsStore
from recall_tui.index.sync import (
    IndexReport,
    IndexSync,
    Progress,
    _row_fields,
    _row_hash,
    embed_text,
    trigram_content,
)
from recall_tui.index.trigram_build import TrigramBuild
from recall_tui.index.vector_sync import EMBED_CHUNK, VectorSync, _embedder_key
from recall_tui.index.vectors import (
    NUMPY_KNN_MAX_BYTES,
    QUERY_CACHE_SIZE,
    VectorStore,
    knn_like_sqlite_vec,
)
from recall_tui.index.vocab import Correction, Vocabulary
from recall_tui.vault.model import Memory, Vault

__all__ = [
    "DEFAULT_FTS_WEIGHTS",
    "EMBED_CHUNK",
    "FTS5_B",
    "FTS5_K1",
    "FTS_COLD_MAX",
    "FTS_COLUMNS",
    "FTS_POSTINGS_BUDGET",
    "MAX_RECALL_TIMES",
    "MAX_TRIGRAMS",
    "NUMPY_KNN_MAX_BYTES",
    "QUERY_CACHE_SIZE",
    "QUICK_CHECK_MAX_BYTES",
    "SCHEMA_VERSION",
    "TRIGRAM_COLUMNS",
    "Bm25Replica",
    "Index",
    "IndexFileError",
    "IndexReport",
    "Progress",
    "RecallStats",
    "default_index_path",
    "embed_text",
    "knn_like_sqlite_vec",
    "match_any",
    "remove_index_files",
    "resolve_index_path",
    "trigram_content",
    "trigram_match",
    "trigram_terms",
]

class Index(VectorSync, IndexSync, TrigramBuild):
    """An open index. Use `Index.open`; every public method is safe to call from any thread.

    It owns the connection, the lock and the meta cache. The keyword searches (`keyword`,
    an `FtsSearch`), the vector searches (`vector_store`, a `VectorStore`) and the recall
    statistics (`stats`, a `RecallStatsStore`) are parts it holds and hands those to; its
    public methods for them delegate."""

    def __init__(self, conn: apsw.Connection, path: str, embedder: Embedder, read_only: bool):
        self._conn = conn
        self.path = path
        self.embedder = embedder
        self.read_only = read_only
        # One connection serves the UI's recall worker, the file watcher's re-index and the
        # main thread. SQLite serialises single calls, but not a multi-statement transaction
        # against a concurrent read, nor this object's in-memory caches; one re-entrant lock
        # around every public method keeps both consistent. Embedding runs outside the lock,
        # so a long re-index does not block queries for its whole duration.
        self._lock = threading.RLock()
        self._sync_lock = threading.Lock()
        self._signatures: dict[str, int] | None = None
        # Caches of what every recall would otherwise ask SQLite again; `_invalidate` (any
        # change to the memories or vectors) and `_set_meta` reset them.
        self._nvec: int | None = None
        self._meta_cache: dict[str, str] | None = None
        self._info_cache: dict | None = None
        self._row_hashes: dict[str, tuple[Memory, str]] = {}
        self._synced: tuple[list[str], list[Memory]] = ([], [])
        self._stored: tuple[int, dict[str, tuple[int, str, float]]] | None = None
        # Rowids of memories without a vector after the last sync (None: unknown, ask SQLite).
        self._novec: set[int] | None = None
        self._vectors_usable = True
        # What other processes did to the file since this one last looked (`SharedFile`).
        self.shared = SharedFile(conn, self._invalidate)
        # Progressive open (`open(defer_vectors=True)`, `fill_vectors`): the vault whose
        # vectors are still to be made, and (done, total) while they are being made.
        self._defer_vectors = False
        self._pending_vault: Vault | None = None
        # The content trigram table is kept up to date (built once by `ensure_trigram`), and
        # the vault of the last sync (what `ensure_trigram` builds from by default).
        self._trigram_on = False
        self._last_vault: Vault | None = None
        self.embedding: tuple[int, int] | None = None
        self.report = IndexReport(path=path)
        self.keyword = FtsSearch(conn, self._lock, check_external=self._check_external,
                                 ensure_trigram=self.ensure_trigram)
        self.stats = RecallStatsStore(conn, self._lock, path)
        self.vector_store = VectorStore(conn, self._lock, embedder, _Facts(self))

    # ------------------------------------------------------------------ the parts' methods

    def fts(
        self, match: str, limit: int, weights: dict[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """`FtsSearch.fts`: memories matching an FTS5 expression on the porter table."""
        return self.keyword.fts(match, limit, weights)

    def fts_any(
        self, words: Sequence[str], limit: int, weights: dict[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """`FtsSearch.fts_any`: memories matching any of `words`, best first."""
        return self.keyword.fts_any(words, limit, weights)

    def fts_trigram(self, text: str, limit: int, column: str = "content") -> list[tuple[str, float]]:
        """`FtsSearch.fts_trigram`: typo- and substring-tolerant matches on a trigram column."""
        return self.keyword.fts_trigram(text, limit, column)

    def fts_trigram_sql(
        self, text: str, limit: int, column: str = "content"
    ) -> list[tuple[str, float]]:
        """`FtsSearch.fts_trigram_sql`: the same by FTS5 itself (the reference)."""
        return self.keyword.fts_trigram_sql(text, limit, column)

    def vocabulary(self) -> Vocabulary:
        """`FtsSearch.vocabulary`: the indexed words and their document counts."""
        return self.keyword.vocabulary()

    def correct_terms(self, words: Sequence[str], *, max_edits: int | None = None,
                      max_corrections: int = 3, max_completions: int = 3) -> list[Correction]:
        """`FtsSearch.correct_terms`: likely corrections of the words the index lacks."""
        return self.keyword.correct_terms(words, max_edits=max_edits,
                                          max_corrections=max_corrections,
                                          max_completions=max_completions)

    def vector_search(self, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """`VectorStore.vector_search`: the `k` memories nearest `qvec` (id, cosine)."""
        return self.vector_store.vector_search(qvec, k)

    def vector_search_sqlite(self, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """`VectorStore.vector_search_sqlite`: the same by sqlite-vec's kNN."""
        return self.vector_store.vector_search_sqlite(qvec, k)

    def embed_query(self, text: str) -> np.ndarray | None:
        """`VectorStore.embed_query`: the query's vector (cached); None when vectors are off."""
        return self.vector_store.embed_query(text)

    def vectors(self) -> tuple[list[str], np.ndarray]:
        """`VectorStore.vectors`: every memory id with a vector, and their matrix."""
        return self.vector_store.vectors()

    def turn_vectors(self) -> tuple[list[str], np.ndarray]:
        """`VectorStore.turn_vectors`: turn ids with a vector, and their matrix."""
        return self.vector_store.turn_vectors()

    def recall_stats(self, memory_id: str) -> RecallStats:
        """`RecallStatsStore.recall_stats`: how often and when `memory_id` was recalled."""
        return self.stats.recall_stats(memory_id)

    def record_recalls(self, ids: Iterable[str], at: datetime) -> None:
        """Count one recall of each id at `at` (`RecallStatsStore.record_recalls`); refused
        on a read-only index."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; recall stats not recorded")
        self.stats.record_recalls(ids, at)

    @property
    def stats_error(self) -> str | None:
        """Why recall statistics could not be recorded, if they could not."""
        return self.stats.error

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        vault: Vault,
        embedder: Embedder,
        *,
        path: str | os.PathLike | None = None,
        progress: Progress | None = None,
        read_only: bool = False,
        rebuild: bool = False,
        drop_cache: bool = False,
        defer_vectors: bool = False,
    ) -> Index:
        """Open the vault's index, building it or bringing it up to date with `vault`.

        `read_only` never writes: an existing sound index is used as it is (`report.stale`
        counts memories changed since), otherwise one is built in memory.

        `rebuild` re-indexes every memory from nothing, in place and in one transaction (other
        processes using the file keep working); the embedding cache and the recall statistics
        are kept, so it re-embeds nothing already embedded, unless `drop_cache` drops them too.

        When the index file cannot be written (read-only vault and cache folder, full disk),
        the index is built in memory for this run and `report.location_note` says so.

        `defer_vectors` indexes the text only (keyword, fuzzy, topic work at once) and leaves
        the vectors to `fill_vectors()`; until it has run, `embedding_progress()` is not None
        and the vector stage is skipped with the reason `embedding N / M`.
        """
        start = time.perf_counter()
        note = ""
        if path is None:
            if read_only:
                target = default_index_path(vault.root)
                if not target.exists():
                    target = _cache_index_path(vault.root)
            else:
                target, note = resolve_index_path(vault.root)
                if target is None:
                    return cls._open_in_memory(vault, embedder, progress, start, note,
                                               defer_vectors)
        else:
            target = Path(path)
        if read_only:
            return cls._open_read_only(vault, embedder, target, progress, start)
        try:
            if path is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
            idx = cls._open_file(vault, embedder, target, progress, start, rebuild, drop_cache,
                                 defer_vectors)
        except WRITE_FAILURES as exc:
            return cls._open_in_memory(
                vault, embedder, progress, start, memory_fallback_note(target, exc),
                defer_vectors,
            )
        rebuilt = idx.report.rebuilt
        if rebuilt is None and rebuild:
            rebuilt = "asked for (--rebuild" + (", --drop-cache)" if drop_cache else ")")
        idx.report = replace(
            idx.report,
            location_note=note,
            rebuilt=rebuilt,
            ms=(time.perf_counter() - start) * 1000,
        )
        return idx

    @classmethod
    def _open_file(
        cls,
        vault: Vault,
        embedder: Embedder,
        target: Path,
        progress: Progress | None,
        start: float,
        rebuild: bool,
        drop_cache: bool,
        defer_vectors: bool = False,
    ) -> Index:
        rebuilt: str | None = None
        conn: apsw.Connection | None = None
        if target.exists():
            conn, rebuilt = _open_existing(target)
        for attempt in (1, 2):
            fresh = conn is None
            if fresh:
                conn = _connect(str(target))
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                idx = cls(conn, str(target), embedder, read_only=False)
                idx._defer_vectors = defer_vectors
                if fresh:
                    idx._create_schema()
                    idx._adopt_previous_cache(previous_cache_path(target))
                clear = None
                if rebuild and not fresh:
                    clear = "all" if drop_cache else "index"
                idx.report = idx._sync(vault, progress, start, clear=clear)
                break
            except (apsw.CorruptError, apsw.NotADBError) as exc:
                # Damage the open-time checks did not reach (see _open_existing): rebuild once.
                if attempt == 2:
                    raise IndexFileError(f"{target}: {type(exc).__name__}: {exc}") from exc
                conn.close()
                remove_index_files(target)
                conn, rebuilt = None, f"{type(exc).__name__}: {exc}"
            except BaseException:
                conn.close()
                raise
        idx._defer_vectors = False
        idx.report = replace(
            idx.report,
            rebuilt=(f"{target}: {rebuilt}; rebuilt from the vault" if rebuilt else None),
        )
        return idx

    @classmethod
    def _open_in_memory(
        cls, vault: Vault, embedder: Embedder, progress: Progress | None, start: float, note: str,
        defer_vectors: bool = False,
    ) -> Index:
        """An index built in memory for this run (nothing is saved): the fallback when the
        index file cannot be written. It takes updates and recall stats like a file would."""
        conn = _connect(":memory:")
        idx = cls(conn, ":memory:", embedder, read_only=False)
        idx._create_schema()
        idx._defer_vectors = defer_vectors
        try:
            idx.report = idx._sync(vault, progress, start)
        finally:
            idx._defer_vectors = False
        idx.report = replace(
            idx.report, location_note=note, ms=(time.perf_counter() - start) * 1000
        )
        return idx

    @classmethod
    def _open_read_only(
        cls, vault: Vault, embedder: Embedder, target: Path, progress, start: float
    ) -> Index:
        why = "no index file" if not target.exists() else None
        conn = None
        if why is None:
            try:
                conn = _connect(str(target), read_only=True)
                why = _validate(conn, target.stat().st_size)
            except apsw.Error as exc:
                why = f"{type(exc).__name__}: {exc}"
            if why is not None and conn is not None:
                conn.close()
        if why is None:
            idx = cls(conn, str(target), embedder, read_only=True)
            idx._vectors_usable = idx._meta("embedder_key") == _embedder_key(embedder)
            rows = {r[0]: r[1] for r in conn.execute("SELECT path, row_hash FROM memories")}
            changed = sum(
                1
                for m in vault.memories.values()
                if rows.pop(m.path, None) != _row_hash(_row_fields(m))
            )
            idx.report = replace(
                idx._summary(),
                unchanged=len(vault.memories) - changed,
                stale=changed + len(rows),
                ms=(time.perf_counter() - start) * 1000,
            )
            return idx
        conn = _connect(":memory:")
        idx = cls(conn, ":memory:", embedder, read_only=False)
        idx._create_schema()
        idx.report = idx._sync(vault, progress, start)
        idx.read_only = True
        idx.report = replace(
            idx.report,
            location_note=f"read-only: {target} not usable ({why}); index built in memory",
            ms=(time.perf_counter() - start) * 1000,
        )
        return idx

    def _create_schema(self) -> None:
        with write_txn(self._conn):
            # Two processes may create the same new file at once: the second one finds the
            # tables made (inside its write lock) and uses them.
            made = self._conn.execute(
                "SELECT 1 FROM sqlite_schema WHERE name='meta'"
            ).fetchone()
            if made is not None:
                return
            self._conn.execute(_SCHEMA)
            now = _now_iso()
            self._set_meta(schema_version=str(SCHEMA_VERSION), created=now, updated=now)

    # ------------------------------------------------------------------ meta

    def _meta(self, key: str) -> str | None:
        if self._meta_cache is None:
            self._meta_cache = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        return self._meta_cache.get(key)

    def _set_meta(self, **values: str) -> None:
        # Only what differs is written, so opening an unchanged index writes nothing.
        current = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        changes = [(k, v) for k, v in values.items() if current.get(k) != v]
        self._meta_cache = self._info_cache = None
        self._conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", changes)

    def _del_meta(self, key: str) -> None:
        self._meta_cache = self._info_cache = None
        self._conn.execute("DELETE FROM meta WHERE key=?", (key,))

    def _has_vec_table(self) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_schema WHERE name='memory_vectors'"
        ).fetchone()
        return row is not None

    @property
    def embedder_info(self) -> dict:
        """The embedder the stored vectors were made with, how many there are, and any problem."""
        with self._lock:
            if self._info_cache is not None:
                return dict(self._info_cache)
            dim = int(self._meta("embedder_dim") or 0)
            vectors = self._count_vectors()
            total = self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            self._info_cache = {
                "name": self._meta("embedder_name") or "none",
                "model": self._meta("embedder_model") or "",
                "dim": dim,
                "vectors": vectors,
                "memories": total,
                "error": self._meta("embed_error") or None,
                "usable": self._vectors_usable and vectors > 0,
            }
            return dict(self._info_cache)

    def _count_vectors(self) -> int:
        # Cached: a count(*) of the vec0 table reads all of it (~2 ms at 10k memories), and
        # every recall asks twice. `_invalidate` resets it whenever vectors change.
        if self._nvec is None:
            self._nvec = (
                self._conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0]
                if self._has_vec_table()
                else 0
            )
        return self._nvec

    def _summary(self) -> IndexReport:
        turns = self._conn.execute("SELECT count(*) FROM turns").fetchone()[0]
        return IndexReport(
            path=self.path,
            vectors=self._count_vectors(),
            turns=turns,
            embed_error=self._meta("embed_error") or None,
            embedder=f"{self._meta('embedder_name') or 'none'} {self._meta('embedder_model') or ''}".strip(),
        )

    # ------------------------------------------------------------------ caches

    def _clear(self, what: str) -> None:
        """Empty the index for a rebuild, inside the caller's write transaction (the tables:
        `SharedFile.clear_tables`), vectors parked first unless `what="all"`, then every
        cache of what the tables held."""
        if what != "all":
            self.park_all_vectors()  # vectors once: they wait in the cache for the rebuild
        self.shared.clear_tables(what)
        self._meta_cache = self._info_cache = None
        self._row_hashes.clear()
        self._synced = ([], [])
        self._stored = self._novec = None
        self.vector_store.query_cache.clear()
        self._invalidate()

    def _check_external(self) -> None:
        """`SharedFile.check_external`: drop the caches when another process wrote."""
        self.shared.check_external()

    def _bump_generation(self) -> None:
        """`SharedFile.bump_generation`, and forget the meta cache it made stale."""
        self.shared.bump_generation()
        self._meta_cache = self._info_cache = None

    def _invalidate(self) -> None:
        self._nvec = None
        self._meta_cache = self._info_cache = None
        self.keyword.reset()
        self.vector_store.reset()
        self._signatures = None

    def signatures(self) -> dict[str, int]:
        """The BITS-bit signature of every memory's embedded text, by id."""
        with self._lock:
            self._check_external()
            if self._signatures is None:
                self._signatures = {
                    mid: from_bytes(blob)
                    for mid, blob in self._conn.execute("SELECT id, signature FROM signatures")
                }
            return dict(self._signatures)

    signature_bits = BITS

    def edges(self) -> list[tuple[str, str, str, str]]:
        """Every stored edge as (subject, relation, object, memory_id)."""
        with self._lock:
            return [
                tuple(r)
                for r in self._conn.execute(
                    "SELECT subject, relation, object, memory_id FROM edges"
                    " ORDER BY memory_id, rowid"
                )
            ]

    # ------------------------------------------------------------------ misc

    def memory_count(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]

    def size_bytes(self) -> int:
        """Bytes on disk of the index file and its WAL (0 for an in-memory index)."""
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    def close(self) -> None:
        """Close the connection (a WAL checkpoint folds the log into the file)."""
        with self._lock:
            if self._conn is not None:
                if not self.read_only:
                    with contextlib.suppress(apsw.Error):
                        # Best effort: with other processes on the file the checkpoint may
                        # have to wait for them; closing must not (they checkpoint later).
                        self._conn.set_busy_timeout(50)
                        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Facts:
    """What the vector part asks its index (`vectors.IndexFacts`), answered by the index
    that owns the meta cache, the vector count and the external-change check."""

    def __init__(self, index: Index) -> None:
        self._index = index

    def meta(self, key: str) -> str | None:
        return self._index._meta(key)

    def has_vec_table(self) -> bool:
        return self._index._has_vec_table()

    def count_vectors(self) -> int:
        return self._index._count_vectors()

    def check_external(self) -> None:
        self._index._check_external()

    @property
    def vectors_usable(self) -> bool:
        return self._index._vectors_usable

