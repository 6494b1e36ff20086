"""The index file: its schema and version, where it lives, opening and checking it.

`resolve_index_path` picks `VAULT/.recall/index.sqlite` or, for a read-only vault, a file
under the user's cache folder; `_open_existing` keeps a sound file of this SCHEMA_VERSION and
deletes anything else (it is rebuilt from the vault, never trusted). Headless.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

import apsw
import sqlite_vec

from recall_tui.index.fts import FTS_COLUMNS
from recall_tui.index.sidefiles import remove_sides
from recall_tui.vault.recalldir import keep_out_of_git

#: Bumped whenever the tables change; a file with another version is rebuilt from the vault.
SCHEMA_VERSION = 5
#: What changed in each version, said when an older file is rebuilt.
SCHEMA_CHANGES = {
    2: "the memories table no longer stores texts; embed_cache became a rowid table",
    3: "the content trigram table is built on first need",
    4: "each vector is stored once (embed_cache keeps only vectors no memory or turn has)",
    5: "turn vectors are stored as float16 (half the disk; the vectors made are kept), and"
       " the turns without one are indexed",
}
#: How long a write waits for another process's write transaction before giving up (ms). Write
#: transactions are short (embedding runs outside them), so this is only reached when something
#: is badly stuck; waiting long beats failing with "database is locked".
BUSY_TIMEOUT_MS = 60_000
#: Files up to this size get a full `PRAGMA quick_check` on open (about 20 ms per MB).
QUICK_CHECK_MAX_BYTES = 16 * 1024 * 1024
_REQUIRED_TABLES = frozenset(
    {
        "meta",
        "memories",
        "memories_fts",
        "memories_trigram",
        "memories_original",
        "memories_words",
        "embed_cache",
        "edges",
        "turns",
        "signatures",
        "recall_stats",
    }
)


class IndexFileError(RuntimeError):
    """The index cannot be opened or used; the message says which file and why."""


def default_index_path(vault_root: str | os.PathLike) -> Path:
    """Where the index of a vault lives when the vault is writable."""
    return Path(vault_root) / ".recall" / "index.sqlite"


def _cache_index_path(vault_root: str | os.PathLike) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(os.path.realpath(vault_root).encode()).hexdigest()[:16]
    return Path(base) / "recall-tui" / digest / "index.sqlite"


def _writable_dir(folder: Path, *, parents: bool) -> None:
    """Make `folder` if needed and prove a file can be written in it; OSError if not."""
    folder.mkdir(parents=parents, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise PermissionError(13, "not writable", str(folder))
    probe = folder / f".write-probe-{os.getpid()}-{threading.get_ident()}"
    probe.write_bytes(b"")
    probe.unlink()


def resolve_index_path(vault_root: str | os.PathLike) -> tuple[Path | None, str]:
    """The index path for a vault, and a note when it is not `VAULT/.recall/index.sqlite`.

    A vault whose `.recall/` cannot be written (read-only folder, `.recall` a file, full disk)
    falls back to a file under the user's cache folder; when that cannot be written either,
    the path is None: the caller keeps the index in memory for this run.
    """
    path = default_index_path(vault_root)
    try:
        _writable_dir(path.parent, parents=False)
        keep_out_of_git(path.parent)  # .recall/ never goes into the vault's git
        return path, ""
    except OSError as exc:
        reason = _os_reason(exc, path.parent)
    fallback = _cache_index_path(vault_root)
    try:
        _writable_dir(fallback.parent, parents=True)
    except OSError as exc:
        return None, (
            f"{path.parent} cannot be written ({reason}) nor can the cache folder "
            f"({_os_reason(exc, fallback.parent)}): the index is kept in memory for this run, "
            "nothing is saved"
        )
    return fallback, f"the vault is not writable ({reason}); index kept in {fallback}"


def _os_reason(exc: OSError, folder: Path) -> str:
    what = exc.strerror or str(exc)
    where = exc.filename or folder
    return f"{where}: {what}"


def memory_fallback_note(target: Path | str, exc: BaseException) -> str:
    """What to say when writing the index file failed and the index is kept in memory."""
    return (
        f"{target} cannot be written ({type(exc).__name__}: {exc}): the index is kept in "
        "memory for this run, nothing is saved"
    )


#: Errors that mean the index file cannot be written (read-only file system, full disk,
#: permissions): the index falls back to memory instead of failing.
WRITE_FAILURES: tuple[type[BaseException], ...] = (
    apsw.ReadOnlyError,
    apsw.FullError,
    apsw.IOError,
    apsw.CantOpenError,
    apsw.PermissionsError,
    OSError,
)


@contextlib.contextmanager
def write_txn(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """A write transaction that takes the write lock up front (`BEGIN IMMEDIATE`).

    A deferred transaction that reads and then writes fails at once with "database is locked"
    (SQLITE_BUSY_SNAPSHOT) when another process committed between its read and its write; an
    immediate one waits (busy timeout) for the lock, then reads what is current, so checks
    made inside it hold until the commit. Nested use becomes a savepoint.
    """
    if conn.in_transaction:
        with conn:
            yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        with contextlib.suppress(apsw.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def scalar(conn: apsw.Connection, sql: str, params: Sequence[object] = ()) -> int:
    """The integer in the one row `sql` returns (a count, a sum, a PRAGMA value)."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None and isinstance(row[0], int), sql
    return row[0]


def _connect(path: str, *, read_only: bool = False) -> apsw.Connection:
    flags = (
        apsw.SQLITE_OPEN_READONLY
        if read_only
        else (apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
    )
    conn = apsw.Connection(path, flags=flags)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def _validate(conn: apsw.Connection, size: int = 0) -> str | None:
    """None if the file is a sound index of this schema version, else why not.

    `PRAGMA quick_check` reads every page, about 20 ms per MB: it runs on files up to
    QUICK_CHECK_MAX_BYTES, so opening a big index stays fast. Damage in a bigger file is found
    by SQLite when a page is read (a CorruptError), and `Index.open` rebuilds then.
    """
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
        missing = _REQUIRED_TABLES - tables
        if missing:
            return f"missing tables {', '.join(sorted(missing))}"
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            return "no schema_version in meta"
        if str(row[0]) != str(SCHEMA_VERSION):
            return _version_reason(str(row[0]))
        if size <= QUICK_CHECK_MAX_BYTES:
            check = conn.execute("PRAGMA quick_check(1)").fetchone()
            if not check or check[0] != "ok":
                return f"integrity check failed: {check[0] if check else 'no answer'}"
    except (apsw.BusyError, apsw.LockedError):
        raise
    except apsw.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _version_reason(found: str) -> str:
    """Why a file of schema version `found` is rebuilt: the versions apart and what changed."""
    why = f"schema version {found}, this recall-tui uses {SCHEMA_VERSION}"
    if found.isdigit() and int(found) < SCHEMA_VERSION:
        changes = [SCHEMA_CHANGES[v] for v in range(int(found) + 1, SCHEMA_VERSION + 1)
                   if v in SCHEMA_CHANGES]
        if changes:
            why += " (" + "; ".join(changes) + ")"
    return why


def _open_existing(path: Path) -> tuple[apsw.Connection | None, str | None]:
    """Open an existing index file: (connection, None) if sound, else (None, why) after
    deleting it."""
    conn = None
    try:
        conn = _connect(str(path))
        why = _validate(conn, path.stat().st_size)
    except (apsw.BusyError, apsw.LockedError):
        # Another process holds the file: it is in use, not damaged. Never delete it.
        if conn is not None:
            conn.close()
        raise
    except apsw.Error as exc:
        why = f"{type(exc).__name__}: {exc}"
    if why is None:
        return conn, None
    if conn is not None:
        _keep_old_cache(conn, path)
        conn.close()
    remove_index_files(path)
    return None, why


def previous_cache_path(path: Path) -> Path:
    """Where an older index's embedding cache waits for the rebuild that replaces it."""
    return Path(str(path) + ".previous-cache")


def _keep_old_cache(conn: apsw.Connection, path: Path) -> None:
    """Before an index of an older schema version (2 or 3: their `embed_cache` held every
    vector ever made; 4: each vector once, on its memory or turn, as float32) is deleted, copy
    its vectors to an embedding cache at `previous_cache_path`, so the rebuild takes the
    vectors from it instead of embedding every text again (`VectorSync.adopt_previous_cache`).
    Best effort: a damaged or locked file keeps nothing."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or str(row[0]) not in ("2", "3", "4"):
            return
        keep = previous_cache_path(path)
        remove_index_files(keep)
        conn.execute("ATTACH DATABASE ? AS keep", (str(keep),))
        try:
            conn.execute("CREATE TABLE keep.embed_cache AS SELECT model, text_hash, dim, vector"
                         " FROM main.embed_cache")
            if str(row[0]) == "4":
                _keep_held_vectors(conn)
        finally:
            conn.execute("DETACH DATABASE keep")
    except apsw.Error:
        remove_index_files(previous_cache_path(path))


def _keep_held_vectors(conn: apsw.Connection) -> None:
    """Schema 4 (vectors once): the vectors held by memories (vec0) and turns (float32) go
    into the kept cache too, under the embedder meta names."""
    owner = ("(SELECT value FROM main.meta WHERE key='embedder_key'),",
             "(SELECT CAST(value AS INTEGER) FROM main.meta WHERE key='embedder_dim')")
    turns = (f"INSERT INTO keep.embed_cache SELECT {owner[0]} text_hash, {owner[1]}, vector"
             " FROM main.turns WHERE vector IS NOT NULL")
    memories = (f"INSERT INTO keep.embed_cache SELECT {owner[0]} m.embed_hash, {owner[1]},"
                " v.embedding FROM main.memories m JOIN main.memory_vectors v"
                " ON v.rowid = m.rowid")
    for sql in (turns, memories):  # (no vec0 table without an embedder: nothing to keep)
        with contextlib.suppress(apsw.SQLError):
            conn.execute(sql)


def remove_index_files(path: Path) -> None:
    """Delete an index file and its WAL/shared-memory/journal companions, and the caches kept
    beside it (`sidefiles`)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()
    remove_sides(path)


#: The turns' text-hash index, also dropped and made again around a bulk load of turns
#: (`sync.bulk_turns`).
TURNS_TEXT_INDEX = "CREATE INDEX turns_text ON turns(text_hash)"
#: The turns still without a vector (schema 5), a partial index: the vector sync's "which
#: turns need one", `complete()` and the count of turns with a vector read it instead of
#: scanning every turn's row (0.5-0.7 s each at 200k turns, on every sync). Also made after a
#: bulk load.
TURNS_NOVEC_INDEX = "CREATE INDEX turns_novec ON turns(text_hash) WHERE vector IS NULL"

_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE memories(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL,
    row_hash TEXT NOT NULL,
    embed_hash TEXT NOT NULL,
    mtime REAL NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    type TEXT NOT NULL,
    scope TEXT NOT NULL,
    topic_key TEXT NOT NULL
);
CREATE INDEX memories_embed ON memories(embed_hash);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    {", ".join(FTS_COLUMNS)}, content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE memories_trigram USING fts5(
    content, content='', contentless_delete=1,
    tokenize='trigram remove_diacritics 1');
CREATE VIRTUAL TABLE memories_original USING fts5(
    original, content='', contentless_delete=1,
    tokenize='trigram remove_diacritics 1');
CREATE VIRTUAL TABLE memories_words USING fts5(
    content, content='', contentless_delete=1, detail=none,
    tokenize='unicode61 remove_diacritics 2');
CREATE TABLE embed_cache(
    model TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,
    UNIQUE(model, text_hash));
CREATE TABLE edges(
    subject TEXT NOT NULL, relation TEXT NOT NULL, object TEXT NOT NULL,
    memory_id TEXT NOT NULL);
CREATE INDEX edges_subject ON edges(subject);
CREATE INDEX edges_object ON edges(object);
CREATE INDEX edges_memory ON edges(memory_id);
CREATE TABLE turns(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    at TEXT,
    path TEXT NOT NULL,
    row_hash TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB);
{TURNS_TEXT_INDEX};
{TURNS_NOVEC_INDEX};
CREATE TABLE signatures(id TEXT PRIMARY KEY, signature BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE recall_stats(
    id TEXT PRIMARY KEY, count INTEGER NOT NULL, last_recalled TEXT, times TEXT NOT NULL
) WITHOUT ROWID;
"""


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
