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

`Index` is a facade over parts it makes explicitly (none is a mixin, none reaches another's
private state). `IndexCore` (`core.py`) holds what they share: the connection, the lock, the
meta cache, and `invalidate()`, the one way every cache is emptied (each part that keeps one
registers its `reset`); `SharedFile` (`sharing.py`), which notices other processes' writes,
belongs to it. The parts: `keyword` (`fts.py`: FTS5 porter and trigram search, the in-memory
bm25, the vocabulary), `vector_store` (`vectors.py`: sqlite-vec, the numpy kNN, query
vectors), `vector_sync` (`vector_sync.py`: filling the vectors, each stored once),
`sync` (`sync.py`: the incremental update, `IndexReport`), `trigram` (`trigram_build.py`:
the content trigram table on first need) and `stats` (`stats.py`: recall statistics).
`rows.py` holds what is stored about a memory, `schema.py` the file, its schema and version.
This module keeps opening (and the in-memory fallback), signatures and edges, and the public
methods that delegate to the parts; the parts' own names are imported from their modules.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from recall_tui.index.core import IndexCore, Progress
from recall_tui.index.embed import Embedder
from recall_tui.index.fts import (
    FtsSearch,
)
from recall_tui.index.rows import row_fields, row_hash
from recall_tui.index.schema import (
    _SCHEMA,
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
from recall_tui.index.signature import from_bytes
from recall_tui.index.stats import RecallStats, RecallStatsStore
from recall_tui.index.sync import IndexReport, IndexSync, summary
from recall_tui.index.trigram_build import TrigramBuild
from recall_tui.index.turn_codes import SIDE_SUFFIX as TURN_CODES_SUFFIX
from recall_tui.index.turn_codes import TurnCodes
from recall_tui.index.vector_sync import VectorSync, _embedder_key
from recall_tui.index.vectors import (
    VectorStore,
)
from recall_tui.index.vocab import Correction, Vocabulary
from recall_tui.vault.model import Turn, Vault

__all__ = ["Index"]


class Index:
    """An open index. Use `Index.open`; every public method is safe to call from any thread.

    A facade: `core` (an `IndexCore`) holds the connection, the lock, the meta cache and the
    invalidation of every cache; the parts are made with it (or with what they need of it)
    and with each other, explicitly: `keyword` (`FtsSearch`), `vector_store` (`VectorStore`),
    `vector_sync` (`VectorSync`), `sync` (`IndexSync`), `trigram` (`TrigramBuild`) and
    `stats` (`RecallStatsStore`). The public methods the rest of the code calls delegate."""

    def __init__(self, conn: apsw.Connection, path: str, embedder: Embedder, read_only: bool):
        # One connection serves the UI's recall worker, the file watcher's re-index and the
        # main thread: the core's re-entrant lock is held around every public method.
        self.core = core = IndexCore(conn, path, embedder, read_only)
        self.report = IndexReport(path=path)
        self._signatures: dict[str, int] | None = None
        self.vector_store = VectorStore(conn, core.lock, embedder, core)
        self.vector_sync = VectorSync(core, self.vector_store)
        self.sync = IndexSync(core, self.vector_sync, self.vector_store)
        self.trigram = TrigramBuild(core, self.sync)
        self.keyword = FtsSearch(conn, core.lock, check_external=core.check_external,
                                 ensure_trigram=self.trigram.ensure_trigram)
        self.stats = RecallStatsStore(conn, core.lock, path)
        # Every cache of what the tables hold is emptied by `core.invalidate()`.
        core.on_invalidate(self.keyword.reset)
        core.on_invalidate(self.vector_store.reset)
        core.on_invalidate(self._forget_signatures)

    # ------------------------------------------------------------------ the core's handles

    @property
    def path(self) -> str:
        """The index file, or ":memory:"."""
        return self.core.path

    @property
    def embedder(self) -> Embedder:
        return self.core.embedder

    @property
    def read_only(self) -> bool:
        """True when this index never writes (`open(read_only=True)`)."""
        return self.core.read_only

    @property
    def shared(self) -> SharedFile:
        """The multi-process part (`SharedFile`), which the core owns."""
        return self.core.shared

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

    def turn_codes(self) -> TurnCodes:
        """`VectorStore.turn_codes`: the sign-bit codes of the turns with a vector."""
        return self.vector_store.turn_codes()

    def turn_rows(self, rowids: Sequence[int]
                  ) -> tuple[list[str], list[str], list[int], np.ndarray]:
        """`VectorStore.turn_rows`: ids, sessions, seqs and vectors of turns `rowids`."""
        return self.vector_store.turn_rows(rowids)

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

    def update_files(self, vault: Vault, progress: Progress | None = None) -> IndexReport:
        """Re-index what changed in `vault` since the last sync (the file watcher calls this)."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; cannot update")
        start = time.perf_counter()
        self.report = replace(
            self.sync.sync(vault, progress), ms=(time.perf_counter() - start) * 1000
        )
        return self.report

    def update_changed(self, vault: Vault, memory_ids: Collection[str],
                       sessions: Mapping[str, Sequence[Turn]]) -> IndexReport:
        """`update_files` for a vault patched from the last one (`IndexSync.sync_changed`:
        only those memories and session logs are looked at)."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; cannot update")
        start = time.perf_counter()
        self.report = replace(self.sync.sync_changed(vault, memory_ids, sessions),
                              ms=(time.perf_counter() - start) * 1000)
        return self.report

    def fill_vectors(self, vault: Vault | None = None, progress: Progress | None = None
                     ) -> IndexReport:
        """Embed what an `Index.open(..., defer_vectors=True)` left without a vector (any
        thread; the progressive open runs it in the background). While it runs,
        `embedding_progress()` says how far it is; `report` gets the vector counts after."""
        start = time.perf_counter()
        done = self.sync.fill_vectors(vault, progress)
        if done is None:
            return self.report
        filled, now = done
        self.report = replace(
            self.report,
            embedded=filled.embedded,
            reused=filled.reused,
            vectors=now.vectors,
            embed_error=filled.error,
            embedder=now.embedder,
            embed_ms=filled.embed_ms,
            ms=self.report.ms + (time.perf_counter() - start) * 1000,
        )
        return self.report

    def index_turns(self, vault: Vault, progress: Progress | None = None) -> IndexReport:
        """Bring the turns up to date with `vault` after an `open(..., defer_turns=True)`
        (the progressive open, once the engine is usable; `vault` read with its session
        logs). The memories synced from the same objects cost nothing; the vectors of the new
        turns are left to `fill_vectors()` (`embedding_progress()` says so)."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; cannot update")
        start = time.perf_counter()
        done = self.sync.sync(vault, progress, defer_vectors=True)
        self.report = replace(
            self.report, turns=done.turns, vectors=done.vectors,
            ms=self.report.ms + (time.perf_counter() - start) * 1000,
        )
        return self.report

    def turns_pending(self) -> bool:
        """True while the turns table was left as it was by an `open(..., defer_turns=True)`
        and `index_turns` has not run yet (the turn stage says the turns are being indexed)."""
        return self.sync.turns_deferred

    def turns_failed(self, reason: str) -> None:
        """The progressive open could not read or index the session logs: the turn stage
        says so with `reason` from now on, not that the turns are still being indexed."""
        self.sync.turns_deferred = False
        self.sync.turns_error = reason

    def turns_error(self) -> str | None:
        """Why the deferred turns were never indexed, if they were not (`turns_failed`)."""
        return self.sync.turns_error

    def embedding_progress(self) -> tuple[int, int] | None:
        """`IndexSync.embedding_progress`: (texts embedded, texts to embed) while vectors
        are pending or being made after a deferred open, None once they are all made."""
        return self.sync.embedding_progress()

    def ensure_trigram(self, vault: Vault | None = None) -> float | None:
        """`TrigramBuild.ensure_trigram`: build the content trigram table on first need; the
        ms it took, or None when it was there already."""
        return self.trigram.ensure_trigram(vault)

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
        defer_turns: bool = False,
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

        `defer_turns` leaves the turns table as it is (`vault` was read without its session
        logs, `read_vault(sessions=False)`) until `index_turns(vault)`; meanwhile
        `turns_pending()` is True. Not with `read_only` (which writes nothing anyway).
        """
        start = time.perf_counter()
        note = ""
        if path is None:
            if read_only:
                target = default_index_path(vault.root)
                if not target.exists():
                    target = _cache_index_path(vault.root)
            else:
                found, note = resolve_index_path(vault.root)
                if found is None:
                    return cls._open_in_memory(vault, embedder, progress, start, note,
                                               defer_vectors, defer_turns)
                target = found
        else:
            target = Path(path)
        if read_only:
            return cls._open_read_only(vault, embedder, target, progress, start)
        try:
            if path is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
            idx = cls._open_file(vault, embedder, target, progress, start, rebuild, drop_cache,
                                 defer_vectors, defer_turns)
        except WRITE_FAILURES as exc:
            return cls._open_in_memory(
                vault, embedder, progress, start, memory_fallback_note(target, exc),
                defer_vectors, defer_turns,
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
        defer_turns: bool = False,
    ) -> Index:
        rebuilt: str | None = None
        conn: apsw.Connection | None = None
        if target.exists():
            conn, rebuilt = _open_existing(target)
        for attempt in (1, 2):
            fresh = conn is None
            if conn is None:
                conn = _connect(str(target))
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                idx = cls(conn, str(target), embedder, read_only=False)
                if fresh:
                    idx._create_schema()
                    idx.vector_sync.adopt_previous_cache(previous_cache_path(target))
                clear = None
                if rebuild and not fresh:
                    clear = "all" if drop_cache else "index"
                idx.report = idx.sync.sync(vault, progress, clear=clear,
                                           defer_vectors=defer_vectors, turns=not defer_turns)
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
        idx.report = replace(
            idx.report,
            rebuilt=(f"{target}: {rebuilt}; rebuilt from the vault" if rebuilt else None),
        )
        return idx

    @classmethod
    def _open_in_memory(
        cls, vault: Vault, embedder: Embedder, progress: Progress | None, start: float, note: str,
        defer_vectors: bool = False, defer_turns: bool = False,
    ) -> Index:
        """An index built in memory for this run (nothing is saved): the fallback when the
        index file cannot be written. It takes updates and recall stats like a file would."""
        conn = _connect(":memory:")
        idx = cls(conn, ":memory:", embedder, read_only=False)
        idx._create_schema()
        idx.report = idx.sync.sync(vault, progress, defer_vectors=defer_vectors,
                                   turns=not defer_turns)
        idx.report = replace(
            idx.report, location_note=note, ms=(time.perf_counter() - start) * 1000
        )
        return idx

    @classmethod
    def _open_read_only(
        cls, vault: Vault, embedder: Embedder, target: Path, progress: Progress | None,
        start: float,
    ) -> Index:
        why = "no index file" if not target.exists() else None
        conn: apsw.Connection | None = None
        if why is None:
            try:
                conn = _connect(str(target), read_only=True)
                why = _validate(conn, target.stat().st_size)
            except apsw.Error as exc:
                why = f"{type(exc).__name__}: {exc}"
            if why is not None and conn is not None:
                conn.close()
        if why is None and conn is not None:
            idx = cls(conn, str(target), embedder, read_only=True)
            idx.core.vectors_usable = idx.core.meta("embedder_key") == _embedder_key(embedder)
            rows = {r[0]: r[1] for r in conn.execute("SELECT path, row_hash FROM memories")}
            changed = sum(
                1
                for m in vault.memories.values()
                if rows.pop(m.path, None) != row_hash(row_fields(m))
            )
            idx.report = replace(
                summary(idx.core),
                unchanged=len(vault.memories) - changed,
                stale=changed + len(rows),
                ms=(time.perf_counter() - start) * 1000,
            )
            return idx
        conn = _connect(":memory:")
        idx = cls(conn, ":memory:", embedder, read_only=False)
        idx._create_schema()
        idx.report = idx.sync.sync(vault, progress)
        idx.core.read_only = True
        idx.report = replace(
            idx.report,
            location_note=f"read-only: {target} not usable ({why}); index built in memory",
            ms=(time.perf_counter() - start) * 1000,
        )
        return idx

    def _create_schema(self) -> None:
        conn = self.core.conn
        with write_txn(conn):
            # Two processes may create the same new file at once: the second one finds the
            # tables made (inside its write lock) and uses them.
            made = conn.execute("SELECT 1 FROM sqlite_schema WHERE name='meta'").fetchone()
            if made is not None:
                return
            conn.execute(_SCHEMA)
            now = _now_iso()
            self.core.set_meta(schema_version=str(SCHEMA_VERSION), created=now, updated=now)

    # ------------------------------------------------------------------ what it holds

    @property
    def embedder_info(self) -> dict[str, Any]:
        """The embedder the stored vectors were made with, how many there are, and any problem."""
        return self.core.embedder_info()

    def _forget_signatures(self) -> None:
        self._signatures = None

    def signatures(self) -> dict[str, int]:
        """The BITS-bit signature of every memory's embedded text, by id."""
        with self.core.lock:
            self.core.check_external()
            if self._signatures is None:
                self._signatures = {
                    str(mid): from_bytes(blob)
                    for mid, blob in self.core.conn.execute("SELECT id, signature FROM signatures")
                }
            return dict(self._signatures)

    def edges(self) -> list[tuple[str, str, str, str]]:
        """Every stored edge as (subject, relation, object, memory_id)."""
        with self.core.lock:
            return [
                (str(s), str(r), str(o), str(m))
                for s, r, o, m in self.core.conn.execute(
                    "SELECT subject, relation, object, memory_id FROM edges"
                    " ORDER BY memory_id, rowid"
                )
            ]

    def memory_count(self) -> int:
        with self.core.lock:
            return self.core.scalar("SELECT count(*) FROM memories")

    def size_bytes(self) -> int:
        """Bytes on disk of the index file, its WAL and the turn codes kept beside it (0 for
        an in-memory index)."""
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal",
                                                 self.path + TURN_CODES_SUFFIX)
                   if os.path.exists(p))

    def close(self) -> None:
        """Close the connection (a WAL checkpoint folds the log into the file)."""
        self.core.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
