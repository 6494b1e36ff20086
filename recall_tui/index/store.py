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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from itertools import compress
from operator import is_not
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

from recall_tui.index.embed import Embedder, EmbedderUnavailable
from recall_tui.index.signature import BITS, from_bytes, signature, to_bytes
from recall_tui.vault.model import Memory, Turn, Vault

#: Bumped whenever the tables change; a file with another version is rebuilt from the vault.
SCHEMA_VERSION = 1
#: Columns of the porter FTS5 table, in order (bm25 weights are given in this order).
FTS_COLUMNS: tuple[str, ...] = (
    "title",
    "recall_when",
    "tags",
    "keywords",
    "summary",
    "topic_path",
    "body",
)
#: Column weights for `fts` when the caller gives none (seed 000; keywords weigh like tags).
DEFAULT_FTS_WEIGHTS: dict[str, float] = {
    "title": 4.0,
    "recall_when": 5.0,
    "tags": 3.0,
    "keywords": 3.0,
    "summary": 1.0,
    "topic_path": 1.0,
    "body": 1.0,
}
#: Columns of the trigram FTS5 table.
TRIGRAM_COLUMNS: tuple[str, ...] = ("content", "original")
#: Texts embedded per call while building, so progress moves and a failure loses little.
EMBED_CHUNK = 64
#: Recent query embeddings kept in memory.
QUERY_CACHE_SIZE = 256
#: Recall times kept per memory.
MAX_RECALL_TIMES = 20
#: Files up to this size get a full `PRAGMA quick_check` on open (about 20 ms per MB).
QUICK_CHECK_MAX_BYTES = 16 * 1024 * 1024
#: Most distinct trigrams put in one fuzzy query (keeps a pasted paragraph cheap).
MAX_TRIGRAMS = 96
#: Postings (row, contribution) pairs kept in memory per FTS5 table for the in-memory bm25
#: (about 12 bytes each); least recently used terms are dropped beyond it.
FTS_POSTINGS_BUDGET = 2_000_000
#: Most postings one query may read for terms not held yet; above it that query is answered by
#: FTS5 itself (reading common terms' postings costs more than FTS5's scan, so a big vault's
#: common trigrams would otherwise make the first sighting slower than SQL and thrash the LRU).
FTS_COLD_MAX = 300_000
#: Largest vector matrix ranked with numpy (bigger ones are searched by sqlite-vec's kNN).
NUMPY_KNN_MAX_BYTES = 256 * 1024 * 1024
#: FTS5's bm25 constants (fts5_aux.c), which the in-memory bm25 must use too.
FTS5_K1 = 1.2
FTS5_B = 0.75
_REQUIRED_TABLES = frozenset(
    {
        "meta",
        "memories",
        "memories_fts",
        "memories_trigram",
        "embed_cache",
        "edges",
        "turns",
        "signatures",
        "recall_stats",
    }
)

Progress = Callable[[int, int, str], None]


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
    def total(self) -> int:
        """Memories in the index after this run."""
        return self.added + self.updated + self.unchanged


@dataclass(frozen=True)
class RecallStats:
    """How often and when a memory was recalled (kept in the index, never in the vault)."""

    count: int = 0
    """Times recalled."""
    last_recalled: datetime | None = None
    """Most recent recall, None if never."""
    times: tuple[datetime, ...] = field(default=())
    """The most recent recall times, oldest first, at most MAX_RECALL_TIMES."""


class IndexFileError(RuntimeError):
    """The index cannot be opened or used; the message says which file and why."""


def embed_text(memory: Memory) -> str:
    """The text a memory's vector (and signature) is made from.

    Title, recall_when phrases, summary and the body without its generated `## Related`
    section: the fields that say what the memory is about. Tags, keywords and paths are left
    to the keyword channels, where exact tokens matter more than meaning.
    """
    parts = [memory.title, *memory.recall_when, memory.summary, memory.body_without_related]
    return "\n".join(p.strip() for p in parts if p and p.strip())


def trigram_content(memory: Memory) -> str:
    """The `content` column of the trigram table: every text field a fuzzy match may hit."""
    parts = [
        memory.title,
        *memory.recall_when,
        *memory.tags,
        *memory.keywords,
        memory.summary,
        memory.body_without_related,
    ]
    return "\n".join(p for p in parts if p)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _row_fields(m: Memory) -> tuple:
    """Everything the index stores about a memory but its mtime (the row hash covers these)."""
    return (
        m.id,
        m.path,
        m.content_hash,
        m.role.value,
        m.status,
        m.type,
        m.scope,
        m.topic_key or "",
        m.title,
        "\n".join(m.recall_when),
        "\n".join(m.tags),
        "\n".join(m.keywords),
        m.summary,
        m.topic_path,
        m.body,
        m.original or "",
        tuple((e.subject, e.relation, e.object) for e in m.edges),
    )


def _row_hash(fields: tuple) -> str:
    # The reader resolves some fields from more than the file's bytes (defaults, links checked
    # against the rest of the vault), so comparing what is stored is safer than the file hash.
    # The mtime is left out: touching a file must not re-index it.
    return _sha(json.dumps(fields, default=str, ensure_ascii=False))


def match_any(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression matching any of `terms`, each quoted (safe for user text)."""
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms if t.strip()]
    return " OR ".join(quoted)


def _fold(text: str) -> str:
    """Lower-case, diacritics stripped, as the trigram tokenizer sees text."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def trigram_match(text: str) -> str:
    """A MATCH for the trigram table: any trigram of any word of `text` (typo tolerant).

    A quoted phrase would need the whole text as an exact substring; OR-ing the trigrams lets
    `postgress` still find `postgres` (most trigrams shared) and bm25 ranks by how many rare
    trigrams match. Words under 3 characters cannot be matched by a trigram index and are
    dropped; the result is "" when nothing is left.
    """
    return match_any(trigram_terms(text))


def trigram_terms(text: str) -> list[str]:
    """The distinct trigrams `trigram_match` ORs, in order, at most MAX_TRIGRAMS."""
    grams: list[str] = []
    seen: set[str] = set()
    for word in _fold(text).split():
        word = "".join(c for c in word if c.isalnum())
        for i in range(len(word) - 2):
            g = word[i : i + 3]
            if g not in seen:
                seen.add(g)
                grams.append(g)
    return grams[:MAX_TRIGRAMS]


def default_index_path(vault_root: str | os.PathLike) -> Path:
    """Where the index of a vault lives when the vault is writable."""
    return Path(vault_root) / ".recall" / "index.sqlite"


def _cache_index_path(vault_root: str | os.PathLike) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(os.path.realpath(vault_root).encode()).hexdigest()[:16]
    return Path(base) / "recall-tui" / digest / "index.sqlite"


def resolve_index_path(vault_root: str | os.PathLike) -> tuple[Path, str]:
    """The index path for a vault, and a note when it had to fall back to the cache folder."""
    path = default_index_path(vault_root)
    try:
        path.parent.mkdir(exist_ok=True)
        if not os.access(path.parent, os.W_OK):
            raise PermissionError(f"{path.parent} is not writable")
        probe = path.parent / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return path, ""
    except OSError as exc:
        fallback = _cache_index_path(vault_root)
        fallback.parent.mkdir(parents=True, exist_ok=True)
        reason = exc.strerror or str(exc)
        return fallback, f"the vault is not writable ({reason}); index kept in {fallback}"


def _connect(path: str, *, read_only: bool = False) -> apsw.Connection:
    flags = (
        apsw.SQLITE_OPEN_READONLY
        if read_only
        else (apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
    )
    conn = apsw.Connection(path, flags=flags)
    conn.set_busy_timeout(5000)
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
            return f"schema version {row[0]}, this recall-tui uses {SCHEMA_VERSION}"
        if size <= QUICK_CHECK_MAX_BYTES:
            check = conn.execute("PRAGMA quick_check(1)").fetchone()
            if not check or check[0] != "ok":
                return f"integrity check failed: {check[0] if check else 'no answer'}"
    except apsw.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _open_existing(path: Path) -> tuple[apsw.Connection | None, str | None]:
    """Open an existing index file: (connection, None) if sound, else (None, why) after
    deleting it."""
    conn = None
    try:
        conn = _connect(str(path))
        why = _validate(conn, path.stat().st_size)
    except apsw.Error as exc:
        why = f"{type(exc).__name__}: {exc}"
    if why is None:
        return conn, None
    if conn is not None:
        conn.close()
    remove_index_files(path)
    return None, why


def remove_index_files(path: Path) -> None:
    """Delete an index file and its WAL/shared-memory/journal companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()


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
    topic_key TEXT NOT NULL,
    title TEXT NOT NULL,
    recall_when TEXT NOT NULL,
    tags TEXT NOT NULL,
    keywords TEXT NOT NULL,
    summary TEXT NOT NULL,
    topic_path TEXT NOT NULL,
    body TEXT NOT NULL,
    original TEXT NOT NULL
);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    {", ".join(FTS_COLUMNS)}, content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE memories_trigram USING fts5(
    content, original, content='', contentless_delete=1,
    tokenize='trigram remove_diacritics 1');
CREATE TABLE embed_cache(
    model TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY(model, text_hash)) WITHOUT ROWID;
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
CREATE TABLE signatures(id TEXT PRIMARY KEY, signature BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE recall_stats(
    id TEXT PRIMARY KEY, count INTEGER NOT NULL, last_recalled TEXT, times TEXT NOT NULL
) WITHOUT ROWID;
"""


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints of an FTS5 record (docsize and averages blobs)."""
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        v = 0
        while True:
            x = blob[i]
            i += 1
            v = (v << 7) | (x & 0x7F)
            if not x & 0x80:
                break
        out.append(v)
    return out


class Bm25Replica:
    """FTS5's `bm25()` over one contentless FTS5 table, computed in memory from that table's
    own index, so an OR query costs the postings of its terms instead of a scan of every row
    that matches one of them.

    Why: `ORDER BY bm25 LIMIT n` makes FTS5 score every matching row, and a query of common
    words or trigrams matches nearly all of them (60 ms at 10k memories). The formula is
    fts5_aux.c's, operation for operation, so the scores are the same doubles: per phrase
    idf = log((N - n + 0.5) / (n + 0.5)) (1e-6 when not positive), where n counts the rows
    holding the phrase (in the filtered column, if any); per row, in phrase order,
    score += idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)), with f the phrase's
    instances weighted by column and D the row's tokens in all columns. N, the token totals
    and D come from the table's averages record and docsize table; a term's rows and
    instance counts from an `fts5vocab` instance table (made in the temp schema, so a
    read-only index works too). Ties keep rowid order. The caller falls back to SQL when a
    phrase is not exactly one token or a column weight is not a whole number (whole weights
    make the weighted sum exact in any order). Not thread-safe: the Index lock guards it.
    """

    def __init__(self, conn: apsw.Connection, table: str, columns: Sequence[str],
                 tokenizer: tuple[str, list[str]]):
        self._conn = conn
        self.table = table
        self.columns = tuple(columns)
        self.tokenizer = conn.fts5_tokenizer(tokenizer[0], tokenizer[1])
        self._vocab = f"temp.{table}_vocab_instance"
        self._vocab_rows = f"temp.{table}_vocab_row"
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._vocab}"
            f" USING fts5vocab(main, {table}, instance)"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._vocab_rows}"
            f" USING fts5vocab(main, {table}, row)"
        )
        row = conn.execute(f"SELECT block FROM {table}_data WHERE id=1").fetchone()
        averages = _varints(row[0]) if row is not None else [0]
        self.nrow = averages[0]
        ntok = sum(averages[1:])
        self.avgdl = ntok / self.nrow if self.nrow else 0.0
        sizes = conn.execute(f"SELECT id, sz FROM {table}_docsize ORDER BY id").fetchall()
        self.rowids = np.array([r[0] for r in sizes], dtype=np.int64)
        doclen = np.array([sum(_varints(r[1])) for r in sizes], dtype=np.float64)
        k1, b = FTS5_K1, FTS5_B
        # k1 * (1 - b + b * D / avgdl), evaluated in fts5_aux.c's order.
        self._norm = k1 * (1 - b + b * doclen / self.avgdl) if self.avgdl else doclen
        self._postings: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._held = 0

    def token(self, phrase: str) -> str | None:
        """The phrase's single token as the table's tokenizer makes it, None otherwise."""
        toks = self.tokenizer(phrase.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
        return toks[0][2] if len(toks) == 1 else None

    def _load(self, terms: list[str], column: str | None, weights: tuple[float, ...] | None
              ) -> None:
        """Fetch the postings of `terms` (not yet held) and turn them into contributions."""
        q = ",".join("?" * len(terms))
        sql = f"SELECT term, doc, col, count(*) FROM {self._vocab} WHERE term IN ({q})"
        args: list = list(terms)
        if column is not None:
            sql += " AND col=?"
            args.append(column)
        sql += " GROUP BY term, doc, col ORDER BY term, doc"
        col_w = dict(zip(self.columns, weights or (1.0,) * len(self.columns), strict=True))
        per_term: dict[str, tuple[list[int], list[float]]] = {t: ([], []) for t in terms}
        for term, doc, col, count in self._conn.execute(sql, args):
            docs, freqs = per_term[term]
            f = count * col_w[col]
            if docs and docs[-1] == doc:
                freqs[-1] += f
            else:
                docs.append(doc)
                freqs.append(f)
        k1 = FTS5_K1
        for term, (docs, freqs) in per_term.items():
            pos = np.searchsorted(self.rowids, np.array(docs, dtype=np.int64)).astype(np.int32)
            n = len(docs)
            idf = math.log((self.nrow - n + 0.5) / (n + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            f = np.array(freqs, dtype=np.float64)
            contrib = idf * ((f * (k1 + 1.0)) / (f + self._norm[pos]))
            self._postings[(term, column, weights)] = (pos, contrib)
            self._held += n
        while self._held > FTS_POSTINGS_BUDGET and len(self._postings) > len(terms):
            _, (pos, _c) = self._postings.popitem(last=False)
            self._held -= len(pos)

    def top(self, tokens: Sequence[str], limit: int, column: str | None = None,
            weights: tuple[float, ...] | None = None) -> list[tuple[int, float]] | None:
        """The `limit` best (rowid, -bm25) for the OR of `tokens` (one phrase each, in
        order), best first, ties in rowid order: what `ORDER BY -bm25 DESC LIMIT` returns.
        None when the terms not held yet have more than FTS_COLD_MAX postings (or would not
        fit the budget): the caller asks FTS5 instead."""
        if not tokens or limit <= 0 or not self.nrow:
            return []
        keys = [(t, column, weights) for t in tokens]
        missing = list(dict.fromkeys(k[0] for k in keys if k not in self._postings))
        if missing:
            q = ",".join("?" * len(missing))
            cold = self._conn.execute(
                f"SELECT coalesce(sum(doc), 0) FROM {self._vocab_rows} WHERE term IN ({q})",
                missing,
            ).fetchone()[0]
            if cold > min(FTS_COLD_MAX, FTS_POSTINGS_BUDGET // 2):
                return None
            self._load(missing, column, weights)
        n = len(self.rowids)
        score = np.zeros(n, dtype=np.float64)
        hit = np.zeros(n, dtype=bool)
        for k in keys:
            pos, contrib = self._postings[k]
            self._postings.move_to_end(k)
            score[pos] += contrib
            hit[pos] = True
        cand = np.flatnonzero(hit)
        if len(cand) > limit:
            s = score[cand]
            kth = np.partition(s, len(s) - limit)[len(s) - limit]
            cand = cand[s >= kth]
        order = np.lexsort((self.rowids[cand], -score[cand]))[:limit]
        sel = cand[order]
        return list(zip(self.rowids[sel].tolist(), score[sel].tolist(), strict=True))


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Index:
    """An open index. Use `Index.open`; every public method is safe to call from any thread."""

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
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._vectors: tuple[list[str], np.ndarray] | None = None
        self._turn_vectors: tuple[list[str], np.ndarray] | None = None
        self._signatures: dict[str, int] | None = None
        # Caches of what every recall would otherwise ask SQLite again; `_invalidate` (any
        # change to the memories or vectors) and `_set_meta` reset them.
        self._vec_rowids: np.ndarray | None = None
        self._vec_ties: np.ndarray | None = None
        self._vec_sqmag: np.ndarray | None = None
        self._nvec: int | None = None
        self._meta_cache: dict[str, str] | None = None
        self._info_cache: dict | None = None
        self._row_hashes: dict[str, tuple[Memory, str]] = {}
        self._synced: tuple[list[str], list[Memory]] = ([], [])
        self._stored: tuple[int, dict[str, tuple[int, str, float]]] | None = None
        # Rowids of memories without a vector after the last sync (None: unknown, ask SQLite).
        self._novec: set[int] | None = None
        self._replicas: dict[str, Bm25Replica | None] = {}
        self._vectors_usable = True
        self.report = IndexReport(path=path)

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
    ) -> Index:
        """Open the vault's index, building it or bringing it up to date with `vault`.

        `read_only` never writes: an existing sound index is used as it is (`report.stale`
        counts memories changed since), otherwise one is built in memory.
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
        else:
            target = Path(path)
            if not read_only:
                target.parent.mkdir(parents=True, exist_ok=True)
        if read_only:
            return cls._open_read_only(vault, embedder, target, progress, start)
        rebuilt: str | None = None
        conn: apsw.Connection | None = None
        if target.exists():
            conn, rebuilt = _open_existing(target)
        for attempt in (1, 2):
            fresh = conn is None
            if fresh:
                conn = _connect(str(target))
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            idx = cls(conn, str(target), embedder, read_only=False)
            try:
                if fresh:
                    idx._create_schema()
                idx.report = idx._sync(vault, progress, start)
                break
            except (apsw.CorruptError, apsw.NotADBError) as exc:
                # Damage the open-time checks did not reach (see _open_existing): rebuild once.
                if attempt == 2:
                    raise IndexFileError(f"{target}: {type(exc).__name__}: {exc}") from exc
                conn.close()
                remove_index_files(target)
                conn, rebuilt = None, f"{type(exc).__name__}: {exc}"
        idx.report = replace(
            idx.report,
            location_note=note,
            rebuilt=(f"{target}: {rebuilt}; rebuilt from the vault" if rebuilt else None),
            ms=(time.perf_counter() - start) * 1000,
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
        with self._conn:
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

    # ------------------------------------------------------------------ syncing

    def update_files(self, vault: Vault, progress: Progress | None = None) -> IndexReport:
        """Re-index what changed in `vault` since the last sync (the file watcher calls this)."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; cannot update")
        start = time.perf_counter()
        self.report = replace(
            self._sync(vault, progress, start), ms=(time.perf_counter() - start) * 1000
        )
        return self.report

    def _sync(self, vault: Vault, progress: Progress | None, start: float) -> IndexReport:
        # Syncs run one at a time (two threads embedding the same rows would both insert
        # them); queries only wait for `_lock`, which a sync holds while it writes.
        with self._sync_lock:
            try:
                return self._sync_locked(vault, progress)
            except BaseException:
                # A rolled-back write may have left caches describing what was not committed.
                with self._lock:
                    self._invalidate()
                    self._stored = self._novec = None
                raise

    def _sync_locked(self, vault: Vault, progress: Progress | None) -> IndexReport:
        conn = self._conn
        with self._lock:
            # What the memories table holds, from the last sync when no other connection has
            # committed since (`PRAGMA data_version` moves only for other connections' commits):
            # reading 10k rows back costs ~40 ms, a re-index budget's worth.
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            prev = self._stored[1] if self._stored and self._stored[0] == version else None
            self._stored = None
            if prev is None:
                self._novec = None  # someone else wrote: ask the vector table again
            # Row hashes by memory id, kept with the Memory object they were computed from:
            # a vault that keeps unchanged memories' objects (the watcher's re-read, the
            # bench) costs a json.dumps + sha256 only for what changed (~25 us each).
            memo = self._row_hashes
            keys = list(vault.memories)
            objs = list(vault.memories.values())
            if prev is not None and keys == self._synced[0]:
                # Fast path: the same memories as the last committed sync; an object it saw
                # is stored as it is, so only the other objects are looked at (in C: ~1 ms
                # at 10k instead of ~40 ms for the loop below over every memory).
                todo = list(compress(objs, map(is_not, objs, self._synced[1])))
                new_paths = {m.path for m in todo}
                gone = {memo[m.id][0].path for m in todo if m.id in memo} - new_paths
                stored = {p: prev[p] for p in new_paths | gone if p in prev}
                after = {p: v for p, v in prev.items() if p not in gone} if gone else dict(prev)
                unchanged = len(objs) - len(todo)
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
            changed: list[tuple[Memory, tuple, str]] = []
            touched: list[tuple[float, int]] = []
            added = updated = 0
            for m in todo:
                hit = memo.get(m.id)
                if hit is not None and hit[0] is m:
                    fields, rh = None, hit[1]
                else:
                    fields = _row_fields(m)
                    rh = _row_hash(fields)
                    memo[m.id] = (m, rh)
                old = stored.pop(m.path, None)
                if old is not None and old[1] == rh:
                    unchanged += 1
                    if old[2] != m.mtime:
                        touched.append((m.mtime, old[0]))
                    after[m.path] = (old[0], rh, m.mtime)
                    continue
                if old is None:
                    added += 1
                else:
                    updated += 1
                after.pop(m.path, None)
                changed.append((m, fields if fields is not None else _row_fields(m), rh))
            removed_rowids = [old[0] for old in stored.values()]
            changed_paths = [m.path for m, _, _ in changed]
            with conn:
                old_rows = list(removed_rowids)
                for p in changed_paths:
                    row = conn.execute("SELECT rowid FROM memories WHERE path=?", (p,)).fetchone()
                    if row is not None:
                        old_rows.append(row[0])
                for rowid in old_rows:
                    self._delete_memory(rowid)
                    if self._novec is not None:
                        self._novec.discard(rowid)
                for m, fields, rh in changed:
                    rowid = self._insert_memory(m, fields, rh)
                    after[m.path] = (rowid, rh, m.mtime)
                    if self._novec is not None:
                        self._novec.add(rowid)
                conn.executemany("UPDATE memories SET mtime=? WHERE rowid=?", touched)
                turns_changed = self._sync_turns(vault.turns)
                if changed or removed_rowids or touched or turns_changed:
                    self._set_meta(updated=_now_iso())
            if changed or removed_rowids:
                self._invalidate()
            if conn.execute("PRAGMA data_version").fetchone()[0] == version:
                self._stored = (version, after)
                self._synced = (keys, objs)
        embedded, reused, embed_ms, error = self._sync_vectors(vault, progress)
        with self._lock:
            summary = self._summary()
        return replace(
            summary,
            added=added,
            updated=updated,
            removed=len(removed_rowids),
            unchanged=unchanged,
            embedded=embedded,
            reused=reused,
            embed_error=error,
            embed_ms=embed_ms,
        )

    def _delete_memory(self, rowid: int) -> None:
        conn = self._conn
        row = conn.execute("SELECT id FROM memories WHERE rowid=?", (rowid,)).fetchone()
        if row is None:
            return
        mid = row[0]
        conn.execute("DELETE FROM memories WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_fts WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM memories_trigram WHERE rowid=?", (rowid,))
        conn.execute("DELETE FROM edges WHERE memory_id=?", (mid,))
        conn.execute("DELETE FROM signatures WHERE id=?", (mid,))
        if self._has_vec_table():
            conn.execute("DELETE FROM memory_vectors WHERE rowid=?", (rowid,))

    def _insert_memory(self, m: Memory, fields: tuple, row_hash: str) -> int:
        """Insert one memory into every table; returns its rowid."""
        conn = self._conn
        text = embed_text(m)
        (
            mid,
            path,
            chash,
            role,
            status,
            mtype,
            scope,
            topic_key,
            title,
            recall_when,
            tags,
            keywords,
            summary,
            topic_path,
            body,
            original,
            _edges,
        ) = fields
        conn.execute(
            "INSERT INTO memories(id, path, content_hash, row_hash, embed_hash, mtime, role,"
            " status, type, scope, topic_key, title, recall_when, tags, keywords, summary,"
            " topic_path, body, original) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                mid,
                path,
                chash,
                row_hash,
                _sha(text),
                m.mtime,
                role,
                status,
                mtype,
                scope,
                topic_key,
                title,
                recall_when,
                tags,
                keywords,
                summary,
                topic_path,
                body,
                original,
            ),
        )
        rowid = conn.last_insert_rowid()
        conn.execute(
            f"INSERT INTO memories_fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?)",
            (
                rowid,
                title,
                recall_when,
                tags,
                keywords,
                summary,
                topic_path,
                m.body_without_related,
            ),
        )
        conn.execute(
            "INSERT INTO memories_trigram(rowid, content, original) VALUES (?,?,?)",
            (rowid, trigram_content(m), original),
        )
        conn.executemany(
            "INSERT INTO edges(subject, relation, object, memory_id) VALUES (?,?,?,?)",
            [(e.subject, e.relation, e.object, mid) for e in m.edges],
        )
        conn.execute(
            "INSERT INTO signatures(id, signature) VALUES (?, ?)",
            (mid, to_bytes(signature(text))),
        )
        return rowid

    def _sync_turns(self, turns: Sequence[Turn]) -> bool:
        """Insert new or changed turns, delete vanished ones; True if anything changed."""
        conn = self._conn
        changed = False
        stored = {
            tid: (rowid, rh)
            for rowid, tid, rh in conn.execute("SELECT rowid, id, row_hash FROM turns")
        }
        for t in turns:
            at = t.at.isoformat() if t.at else None
            rh = _sha(json.dumps([t.role, t.text, at, t.path, t.line]))
            old = stored.pop(t.id, None)
            if old is not None and old[1] == rh:
                continue
            changed = True
            if old is not None:
                conn.execute("DELETE FROM turns WHERE rowid=?", (old[0],))
            conn.execute(
                "INSERT INTO turns(id, session_id, seq, role, text, at, path, row_hash, text_hash)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (t.id, t.session_id, t.seq, t.role, t.text, at, t.path, rh, _sha(t.text)),
            )
        conn.executemany("DELETE FROM turns WHERE rowid=?", [(r,) for r, _ in stored.values()])
        if changed or stored:
            self._turn_vectors = None
        return changed or bool(stored)

    def _sync_vectors(
        self, vault: Vault, progress: Progress | None
    ) -> tuple[int, int, float, str | None]:
        """Give every memory and turn a vector from the cache or the embedder.

        Returns (embedded, reused, embed ms, error). Vectors made by another embedder or model
        are dropped first; the cache keeps them, so switching back costs no embedding.
        """
        conn = self._conn
        emb = self.embedder
        key = _embedder_key(emb)
        if emb.name == "none":
            with self._lock, conn:
                self._drop_vectors()
                self._set_meta(
                    embedder_name="none",
                    embedder_model="",
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error="no embedder: vectors off",
                )
            return 0, 0, 0.0, "no embedder: vectors off"
        try:
            dim = emb.dim
        except EmbedderUnavailable as exc:
            with self._lock, conn:
                self._drop_vectors()
                self._set_meta(
                    embedder_name=emb.name,
                    embedder_model=emb.model,
                    embedder_dim="0",
                    embedder_key=key,
                    embed_error=exc.reason,
                )
            return 0, 0, 0.0, exc.reason
        with self._lock, conn:
            if self._meta("embedder_key") != key or self._meta("embedder_dim") != str(dim):
                self._drop_vectors()
            if not self._has_vec_table():
                conn.execute(
                    f"CREATE VIRTUAL TABLE memory_vectors USING vec0("
                    f"embedding float[{int(dim)}] distance_metric=cosine)"
                )
            self._set_meta(
                embedder_name=emb.name,
                embedder_model=emb.model,
                embedder_dim=str(dim),
                embedder_key=key,
            )
            if self._novec is None:
                need_mem_rows = conn.execute(
                    "SELECT rowid, embed_hash, path FROM memories WHERE rowid NOT IN "
                    "(SELECT rowid FROM memory_vectors)"
                ).fetchall()
            else:
                # The rows without a vector are known (those inserted since the last sync and
                # any it could not embed): no scan of the vec0 table (~15 ms at 10k).
                need_mem_rows = []
                todo_rows = sorted(self._novec)
                for i in range(0, len(todo_rows), 500):
                    part = todo_rows[i : i + 500]
                    need_mem_rows += conn.execute(
                        "SELECT rowid, embed_hash, path FROM memories WHERE rowid IN "
                        f"({','.join('?' * len(part))})",
                        part,
                    ).fetchall()
            need_turn_rows = conn.execute(
                "SELECT rowid, text_hash, text FROM turns WHERE vector IS NULL"
            ).fetchall()
            need_mem = [(r[0], r[1]) for r in need_mem_rows]
            need_turn = [(r[0], r[1]) for r in need_turn_rows]
            self._novec = set()
            if not need_mem and not need_turn:
                self._del_meta("embed_error")
                kept = (
                    self._count_vectors()
                    + self._conn.execute(
                        "SELECT count(*) FROM turns WHERE vector IS NOT NULL"
                    ).fetchone()[0]
                )
                return 0, kept, 0.0, None
            cached = self._cache_lookup(key, dim, {h for _, h in need_mem + need_turn})
        missing = {h for _, h in need_mem + need_turn} - cached.keys()
        # Only the rows without a vector are looked at (not every memory of the vault): the
        # text is rebuilt from the memory at the row's path, the turn's text is stored.
        texts: dict[str, str] = {}
        if missing:
            by_path = {m.path: m for m in vault.memories.values()}
            for _, h, path in need_mem_rows:
                m = by_path.get(path)
                if h in missing and h not in texts and m is not None:
                    t = embed_text(m)
                    if _sha(t) == h:
                        texts[h] = t
            for _, h, text in need_turn_rows:
                if h in missing and h not in texts and _sha(text) == h:
                    texts[h] = text
        todo = list(texts.items())
        new: dict[str, np.ndarray] = {}
        error: str | None = None
        t0 = time.perf_counter()
        if progress and todo:
            progress(0, len(todo), "embed")
        for i in range(0, len(todo), EMBED_CHUNK):
            chunk = todo[i : i + EMBED_CHUNK]
            try:
                vecs = emb.embed([t for _, t in chunk])
            except EmbedderUnavailable as exc:
                error = exc.reason
                break
            for (h, _), v in zip(chunk, vecs, strict=True):
                new[h] = np.asarray(v, dtype=np.float32)
            if progress:
                progress(min(i + EMBED_CHUNK, len(todo)), len(todo), "embed")
        embed_ms = (time.perf_counter() - t0) * 1000
        have = {**cached, **new}
        with self._lock, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
                " VALUES (?,?,?,?)",
                [(key, h, dim, v.tobytes()) for h, v in new.items()],
            )
            conn.executemany(
                "INSERT INTO memory_vectors(rowid, embedding) VALUES (?, ?)",
                [(rowid, have[h].tobytes()) for rowid, h in need_mem if h in have],
            )
            conn.executemany(
                "UPDATE turns SET vector=? WHERE rowid=?",
                [(have[h].tobytes(), rowid) for rowid, h in need_turn if h in have],
            )
            self._novec = {rowid for rowid, h in need_mem if h not in have}
            if error:
                self._set_meta(embed_error=error)
            else:
                self._del_meta("embed_error")
            self._invalidate()
            with_vector = (
                self._count_vectors()
                + self._conn.execute(
                    "SELECT count(*) FROM turns WHERE vector IS NOT NULL"
                ).fetchone()[0]
            )
        fresh = sum(1 for _, h in need_mem + need_turn if h in new)
        return len(new), with_vector - fresh, embed_ms, error

    def _cache_lookup(self, key: str, dim: int, hashes: set[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        hl = sorted(hashes)
        for i in range(0, len(hl), 500):
            part = hl[i : i + 500]
            q = ",".join("?" * len(part))
            for h, blob in self._conn.execute(
                f"SELECT text_hash, vector FROM embed_cache WHERE model=? AND dim=?"
                f" AND text_hash IN ({q})",
                (key, dim, *part),
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _drop_vectors(self) -> None:
        self._novec = None
        self._conn.execute("DROP TABLE IF EXISTS memory_vectors")
        self._conn.execute("UPDATE turns SET vector=NULL WHERE vector IS NOT NULL")
        self._query_cache.clear()
        self._invalidate()

    def _invalidate(self) -> None:
        self._vectors = None
        self._vec_rowids = None
        self._vec_ties = None
        self._vec_sqmag = None
        self._nvec = None
        self._meta_cache = self._info_cache = None
        self._replicas = {}
        self._turn_vectors = None
        self._signatures = None

    # ------------------------------------------------------------------ searching

    def fts(
        self, match: str, limit: int, weights: dict[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """Memories matching an FTS5 expression on the porter table, best first.

        Score = -bm25 with per-column `weights` (DEFAULT_FTS_WEIGHTS), so higher is better.
        A malformed expression raises ValueError naming it; build user text with `match_any`.
        """
        if not match.strip() or limit <= 0:
            return []
        w = {**DEFAULT_FTS_WEIGHTS, **(weights or {})}
        wargs = ", ".join(repr(float(w[c])) for c in FTS_COLUMNS)
        sql = (
            f"SELECT m.id, -bm25(memories_fts, {wargs}) AS s FROM memories_fts"
            " JOIN memories m ON m.rowid = memories_fts.rowid"
            " WHERE memories_fts MATCH ? ORDER BY s DESC LIMIT ?"
        )
        with self._lock:
            try:
                return [(r[0], float(r[1])) for r in self._conn.execute(sql, (match, limit))]
            except apsw.SQLError as exc:
                raise ValueError(f"bad FTS5 query {match!r}: {exc}") from None

    def fts_any(
        self, words: Sequence[str], limit: int, weights: dict[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """`fts(match_any(words), limit, weights)`, the same rows and scores, computed by the
        in-memory bm25 (`Bm25Replica`) whenever it can be exact, else by SQL."""
        words = [w for w in words if w.strip()]
        if not words or limit <= 0:
            return []
        w = {**DEFAULT_FTS_WEIGHTS, **(weights or {})}
        wt = tuple(float(w[c]) for c in FTS_COLUMNS)
        with self._lock:
            rep = self._replica("memories_fts") if all(x == int(x) for x in wt) else None
            tokens = [rep.token(x) for x in words] if rep is not None else [None]
            rows = rep.top(tokens, limit, None, wt) if rep and None not in tokens else None
            if rows is not None:
                return self._ids_of(rows)
        return self.fts(match_any(words), limit, weights)

    def _replica(self, table: str) -> Bm25Replica | None:
        """The in-memory bm25 of an FTS5 table (built on first use after each change); None
        when this SQLite lacks what it needs, so callers use SQL."""
        if table not in self._replicas:
            columns, tok = (
                (FTS_COLUMNS, ("porter", ["unicode61", "remove_diacritics", "2"]))
                if table == "memories_fts"
                else (TRIGRAM_COLUMNS, ("trigram", ["remove_diacritics", "1"]))
            )
            try:
                self._replicas[table] = Bm25Replica(self._conn, table, columns, tok)
            except apsw.Error:
                self._replicas[table] = None
        return self._replicas[table]

    def _ids_of(self, rows: list[tuple[int, float]]) -> list[tuple[str, float]]:
        """(rowid, score) -> (memory id, score), order kept."""
        if not rows:
            return []
        q = ",".join("?" * len(rows))
        ids = dict(
            self._conn.execute(
                f"SELECT rowid, id FROM memories WHERE rowid IN ({q})", [r for r, _ in rows]
            ).fetchall()
        )
        return [(ids[r], s) for r, s in rows if r in ids]

    def fts_trigram(
        self, text: str, limit: int, column: str = "content"
    ) -> list[tuple[str, float]]:
        """Typo- and substring-tolerant matches of user `text` on one trigram column.

        `column` is "content" (title, recall_when, tags, keywords, summary, body) or "original"
        (the memory in its original language). Score = -bm25, higher is better. Computed by the
        in-memory bm25 (`Bm25Replica`, the same scores and order) when every trigram is one
        token, else by SQL (`fts_trigram_sql`).
        """
        if column not in TRIGRAM_COLUMNS:
            raise ValueError(f"fts_trigram column must be one of {TRIGRAM_COLUMNS}, not {column!r}")
        grams = trigram_terms(text)
        if not grams or limit <= 0:
            return []
        with self._lock:
            rep = self._replica("memories_trigram")
            tokens = [rep.token(g) for g in grams] if rep is not None else [None]
            rows = rep.top(tokens, limit, column) if rep and None not in tokens else None
            if rows is not None:
                return self._ids_of(rows)
        return self.fts_trigram_sql(text, limit, column)

    def fts_trigram_sql(
        self, text: str, limit: int, column: str = "content"
    ) -> list[tuple[str, float]]:
        """`fts_trigram` by FTS5 itself: the reference the in-memory bm25 is tested against."""
        if column not in TRIGRAM_COLUMNS:
            raise ValueError(f"fts_trigram column must be one of {TRIGRAM_COLUMNS}, not {column!r}")
        match = trigram_match(text)
        if not match or limit <= 0:
            return []
        sql = (
            "SELECT m.id, -bm25(memories_trigram) AS s FROM memories_trigram"
            " JOIN memories m ON m.rowid = memories_trigram.rowid"
            " WHERE memories_trigram MATCH ? ORDER BY s DESC LIMIT ?"
        )
        with self._lock:
            return [
                (r[0], float(r[1]))
                for r in self._conn.execute(sql, (f"{column} : ({match})", limit))
            ]

    def vector_search(self, qvec, k: int) -> list[tuple[str, float]]:
        """The `k` memories nearest `qvec`, as (id, cosine similarity): what sqlite-vec's kNN
        returns, computed with numpy over the cached `vectors()` matrix while that matrix
        is at most NUMPY_KNN_MAX_BYTES (sqlite-vec's kNN is a full scan costing about 10x
        numpy's), else by sqlite-vec (`vector_search_sqlite`).

        Empty when the index holds no vectors; ValueError when `qvec` has another dimension
        than the stored vectors (a vector from a different model cannot be compared).
        """
        with self._lock:
            if k <= 0 or not self._has_vec_table() or not self._vectors_usable:
                return []
            n = self._count_vectors()
            dim = int(self._meta("embedder_dim") or 0)
            if n * dim * 4 > NUMPY_KNN_MAX_BYTES:
                return self.vector_search_sqlite(qvec, k)
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            if q.shape[0] != dim:
                raise ValueError(
                    f"query vector has dimension {q.shape[0]}, the index holds {dim}-d vectors "
                    f"({self._meta('embedder_model')})"
                )
            if n == 0:
                return []
            ids, mat = self.vectors()
            return knn_like_sqlite_vec(ids, mat, self._tie_order(), self._sqmag(), q,
                                       min(k, n, 4096))

    def _tie_order(self) -> np.ndarray:
        """Per `vectors()` row, a key ordering exact ties as sqlite-vec's kNN does: chunks in
        chunk_id order (later chunks lose ties when merged), and within a chunk the higher
        offset first (its `min_idx` keeps the last of equal distances)."""
        if self._vec_ties is None:
            self.vectors()
            place = {
                r: (c << 20) - o
                for r, c, o in self._conn.execute(
                    "SELECT rowid, chunk_id, chunk_offset FROM memory_vectors_rowids"
                )
            }
            self._vec_ties = np.array(
                [place.get(r, r) for r in self._vec_rowids.tolist()], dtype=np.int64
            )
        return self._vec_ties

    def _sqmag(self) -> np.ndarray:
        """Each stored vector's squared norm, summed as sqlite-vec sums it (float32, in order)."""
        if self._vec_sqmag is None:
            _, mat = self.vectors()
            self._vec_sqmag = _seq_sum_f32(mat * mat)
        return self._vec_sqmag

    def vector_search_sqlite(self, qvec, k: int) -> list[tuple[str, float]]:
        """`vector_search` by sqlite-vec's kNN over the vec0 table (big vaults, and the
        reference the numpy path is tested against)."""
        with self._lock:
            if k <= 0 or not self._has_vec_table() or not self._vectors_usable:
                return []
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            dim = int(self._meta("embedder_dim") or 0)
            if q.shape[0] != dim:
                raise ValueError(
                    f"query vector has dimension {q.shape[0]}, the index holds {dim}-d vectors "
                    f"({self._meta('embedder_model')})"
                )
            n = self._count_vectors()
            if n == 0:
                return []
            rows = self._conn.execute(
                "SELECT m.id, v.distance FROM (SELECT rowid, distance FROM memory_vectors"
                " WHERE embedding MATCH ? AND k = ?) v JOIN memories m ON m.rowid = v.rowid"
                " ORDER BY v.distance",
                (q.tobytes(), min(k, n, 4096)),
            ).fetchall()
            return [(mid, 1.0 - float(d)) for mid, d in rows]

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query's vector (cached for recent queries); None when vectors are off.

        Raises EmbedderUnavailable when the embedder fails (e.g. the Ollama server went away),
        so the caller can say why the vector channel did not run.
        """
        if self.embedder.name == "none" or not self._vectors_usable:
            return None
        with self._lock:
            hit = self._query_cache.get(text)
            if hit is not None:
                self._query_cache.move_to_end(text)
                return hit
        vec = self.embedder.embed([text])[0]  # outside the lock: it may take milliseconds
        vec.setflags(write=False)
        with self._lock:
            self._query_cache[text] = vec
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vec

    def vectors(self) -> tuple[list[str], np.ndarray]:
        """All memory ids with a vector, and their (n, dim) float32 matrix, in path order."""
        with self._lock:
            if self._vectors is None:
                dim = int(self._meta("embedder_dim") or 0)
                if not self._has_vec_table():
                    self._vectors = ([], np.zeros((0, dim), dtype=np.float32))
                    self._vec_rowids = np.zeros(0, dtype=np.int64)
                else:
                    rows = self._conn.execute(
                        "SELECT m.id, v.embedding, m.rowid FROM memory_vectors v"
                        " JOIN memories m ON m.rowid = v.rowid ORDER BY m.path"
                    ).fetchall()
                    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                    mat = mat.reshape(len(rows), dim)
                    mat.setflags(write=False)
                    self._vectors = ([r[0] for r in rows], mat)
                    self._vec_rowids = np.array([r[2] for r in rows], dtype=np.int64)
            return self._vectors

    def turn_vectors(self) -> tuple[list[str], np.ndarray]:
        """Turn ids (`turn:<session>#<seq>`) with a vector, and their (n, dim) matrix."""
        with self._lock:
            if self._turn_vectors is None:
                dim = int(self._meta("embedder_dim") or 0)
                rows = self._conn.execute(
                    "SELECT id, vector FROM turns WHERE vector IS NOT NULL ORDER BY session_id, seq"
                ).fetchall()
                mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                mat = mat.reshape(len(rows), dim)
                mat.setflags(write=False)
                self._turn_vectors = ([r[0] for r in rows], mat)
            return self._turn_vectors

    def signatures(self) -> dict[str, int]:
        """The BITS-bit signature of every memory's embedded text, by id."""
        with self._lock:
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

    # ------------------------------------------------------------------ recall stats

    def recall_stats(self, memory_id: str) -> RecallStats:
        """How often `memory_id` was recalled; zero counts for a memory never recalled."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count, last_recalled, times FROM recall_stats WHERE id=?", (memory_id,)
            ).fetchone()
        if row is None:
            return RecallStats()
        times = tuple(datetime.fromisoformat(t) for t in json.loads(row[2]))
        last = datetime.fromisoformat(row[1]) if row[1] else None
        return RecallStats(count=int(row[0]), last_recalled=last, times=times)

    def record_recalls(self, ids: Iterable[str], at: datetime) -> None:
        """Count one recall of each id at `at` (timezone-aware; naive is taken as UTC)."""
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only; recall stats not recorded")
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
        stamp = at.isoformat()
        with self._lock, self._conn:
            for mid in dict.fromkeys(ids):
                row = self._conn.execute(
                    "SELECT count, last_recalled, times FROM recall_stats WHERE id=?", (mid,)
                ).fetchone()
                count, last, times = (
                    (0, None, []) if row is None else (row[0], row[1], json.loads(row[2]))
                )
                times = sorted([*times, stamp], key=datetime.fromisoformat)[-MAX_RECALL_TIMES:]
                if last is None or datetime.fromisoformat(last) < at:
                    last = stamp
                self._conn.execute(
                    "INSERT OR REPLACE INTO recall_stats(id, count, last_recalled, times)"
                    " VALUES (?,?,?,?)",
                    (mid, count + 1, last, json.dumps(times)),
                )

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
                        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _seq_sum_f32(products: np.ndarray) -> np.ndarray:
    """Row sums added one element at a time in float32, left to right, as sqlite-vec's
    scalar loop does (`f32 dot += a[i] * b[i]`); BLAS sums in another order, which changes
    the last bits. Returned as float64, the type the C code promotes them to next."""
    if products.shape[1] == 0:
        return np.zeros(products.shape[0], dtype=np.float64)
    return np.cumsum(products, axis=1, dtype=np.float32)[:, -1].astype(np.float64)


#: How far (in cosine) BLAS's similarity may be from sqlite-vec's and still be re-checked:
#: float32 rounding over a few thousand dimensions stays orders of magnitude below it.
_KNN_MARGIN = 1e-3


def knn_like_sqlite_vec(ids: Sequence[str], mat: np.ndarray, ties: np.ndarray,
                        sqmag: np.ndarray, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The `k` rows of `mat` nearest `q` with the very similarities and order sqlite-vec's
    cosine kNN gives: a BLAS product finds the candidates (the k best and every row within
    _KNN_MARGIN of the k-th), then their distances are recomputed the way sqlite-vec's
    `distance_cosine_float` does (float32 sums, double sqrt and division, rounded to a float32
    distance); exact ties are ordered by `ties` (ascending), sqlite-vec's scan order."""
    n = len(ids)
    k = min(k, n)
    if k <= 0:
        return []
    qmag = float(_seq_sum_f32((q * q)[None, :])[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = (mat @ q) / np.sqrt(sqmag * qmag)
    approx = np.nan_to_num(approx, nan=-np.inf)
    kth = np.partition(approx, n - k)[n - k]
    cand = np.flatnonzero(approx >= kth - _KNN_MARGIN)
    dot = _seq_sum_f32(mat[cand] * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = (1 - dot / (np.sqrt(sqmag[cand]) * np.sqrt(qmag))).astype(np.float32)
    order = np.lexsort((ties[cand], dist))[:k]
    return [(ids[cand[i]], 1.0 - float(dist[i])) for i in order.tolist()]


def _embedder_key(emb: Embedder) -> str:
    """What the embedding cache and the stored vectors are keyed by: `name:model`."""
    return f"{emb.name}:{emb.model}"
