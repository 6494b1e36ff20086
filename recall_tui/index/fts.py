"""Keyword search: the FTS5 porter and trigram tables, and their in-memory bm25.

`FtsSearch` is the part of `Index` that searches (`fts`, `fts_any`, `fts_trigram`,
`fts_trigram_sql`, `correct_terms`): it is given the index's connection and lock and two
callbacks, and owns its caches (the replicas and the vocabulary); `Bm25Replica` answers OR queries with FTS5's very scores from postings
held in memory. Match expressions for user text: `match_any`, `trigram_match`. Headless.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import cast

import apsw
import numpy as np

from recall_tui.index.vocab import Correction, Vocabulary

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
#: Columns of the trigram FTS5 tables.
TRIGRAM_COLUMNS: tuple[str, ...] = ("content", "original")
#: The trigram FTS5 table of each column: `original` (small: few memories have one) is always
#: built; `content` only on first use by `fuzzy.trigram_mode = "scan"` (`ensure_trigram`).
TRIGRAM_TABLES: dict[str, str] = {"content": "memories_trigram", "original": "memories_original"}
#: Most distinct trigrams put in one fuzzy query (keeps a pasted paragraph cheap).
MAX_TRIGRAMS = 96
#: Postings (row, contribution) pairs kept in memory per FTS5 table for the in-memory bm25
#: (about 12 bytes each); least recently used terms are dropped beyond it.
FTS_POSTINGS_BUDGET = 2_000_000
#: Most postings one query may read for terms not held yet; above it that query is answered by
#: FTS5 itself (reading common terms' postings costs more than FTS5's scan, so a big vault's
#: common trigrams would otherwise make the first sighting slower than SQL and thrash the LRU).
FTS_COLD_MAX = 300_000
#: Postings `FtsSearch.warm` loads ahead of the first queries (the most frequent terms'):
#: half the budget, so the queries' own terms still fit.
FTS_WARM_POSTINGS = FTS_POSTINGS_BUDGET // 2
#: FTS5's bm25 constants (fts5_aux.c), which the in-memory bm25 must use too.
FTS5_K1 = 1.2
FTS5_B = 0.75


#: Column slots in `_load`'s instance code (`doc * _COL_SLOTS + column index`).
_COL_SLOTS = 8


def _sql_text(value: str) -> str:
    """`value` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


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
        if len(self.columns) > _COL_SLOTS:
            raise ValueError(f"{table}: more than {_COL_SLOTS} columns")
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
        averages = _varints(cast(bytes, row[0])) if row is not None else [0]
        self.nrow = averages[0]
        ntok = sum(averages[1:])
        self.avgdl = ntok / self.nrow if self.nrow else 0.0
        sizes = cast("list[tuple[int, bytes]]",
                     conn.execute(f"SELECT id, sz FROM {table}_docsize ORDER BY id").fetchall())
        self.rowids = np.array([r[0] for r in sizes], dtype=np.int64)
        doclen = np.array([sum(_varints(r[1])) for r in sizes], dtype=np.float64)
        k1, b = FTS5_K1, FTS5_B
        # k1 * (1 - b + b * D / avgdl), evaluated in fts5_aux.c's order.
        self._norm = k1 * (1 - b + b * doclen / self.avgdl) if self.avgdl else doclen
        self._postings: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._held = 0

    def token(self, phrase: str) -> str | None:
        """The phrase's single token as the table's tokenizer makes it, None otherwise."""
        # (start, end, token, *colocated) per token: offsets and colocated are included.
        toks = cast("list[tuple[int, int, str]]",
                    self.tokenizer(phrase.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None))
        return toks[0][2] if len(toks) == 1 else None

    def _load(self, terms: list[str], column: str | None, weights: tuple[float, ...] | None
              ) -> None:
        """Fetch the postings of `terms` (not yet held) and turn them into contributions.

        One statement per term hands back its instances as one text of `doc * 8 + column`
        (`group_concat`, in the vocabulary table's order: by doc), parsed by numpy; each doc's
        weighted count is the sum of its instances' column weights. A row per (term, doc,
        column) through Python cost ~1 us each: a word in most memories of a 100k vault
        (tens of thousands of rows) took 100-300 ms on its first query. Whole weights (the
        caller's condition) make the sums exact in any order, so the contributions are the
        same doubles as before."""
        where = "term = ?" + (" AND col = ?" if column is not None else "")
        code = " ".join(f"WHEN {_sql_text(c)} THEN {i}" for i, c in enumerate(self.columns))
        sql = (f"SELECT group_concat(doc * {_COL_SLOTS} + CASE col {code} ELSE 0 END)"
               f" FROM {self._vocab} WHERE {where}")
        col_w = np.asarray(weights or (1.0,) * len(self.columns), dtype=np.float64)
        k1 = FTS5_K1
        for term in terms:
            args: list[object] = [term] if column is None else [term, column]
            (text,) = cast("tuple[str | None]", self._conn.execute(sql, args).fetchone())
            inst = (np.fromstring(text, dtype=np.int64, sep=",") if text
                    else np.zeros(0, dtype=np.int64))
            docs = inst // _COL_SLOTS
            if len(docs) > 1 and bool(np.any(docs[1:] < docs[:-1])):
                order = np.argsort(docs, kind="stable")
                inst, docs = inst[order], docs[order]
            first = np.ones(len(docs), dtype=bool)
            first[1:] = docs[1:] != docs[:-1]
            starts = np.flatnonzero(first)  # each doc's first instance
            f = (np.add.reduceat(col_w[inst % _COL_SLOTS], starts) if len(starts)
                 else np.zeros(0, dtype=np.float64))
            pos = np.searchsorted(self.rowids, docs[starts]).astype(np.int32)
            n = len(pos)
            idf = math.log((self.nrow - n + 0.5) / (n + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            contrib = idf * ((f * (k1 + 1.0)) / (f + self._norm[pos]))
            self._postings[(term, column, weights)] = (pos, contrib)
            self._held += n
        while self._held > FTS_POSTINGS_BUDGET and len(self._postings) > len(terms):
            _, (pos, _c) = self._postings.popitem(last=False)
            self._held -= len(pos)

    def hold(self, terms: Sequence[str], column: str | None = None,
             weights: tuple[float, ...] | None = None) -> None:
        """Load the postings of those of `terms` (tokens) not held yet."""
        missing = [t for t in dict.fromkeys(terms) if (t, column, weights) not in self._postings]
        if missing:
            self._load(missing, column, weights)

    def frequent(self, postings: int) -> list[str]:
        """The most frequent terms (most rows first) whose postings together stay within
        `postings`: the ones whose first load costs most."""
        out: list[str] = []
        for term, rows in self._conn.execute(
                f"SELECT term, doc FROM {self._vocab_rows} ORDER BY doc DESC, term"):
            postings -= int(rows)
            if postings < 0:
                break
            out.append(str(term))
        return out

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
            (cold,) = cast("tuple[int]", self._conn.execute(
                f"SELECT coalesce(sum(doc), 0) FROM {self._vocab_rows} WHERE term IN ({q})",
                missing,
            ).fetchone())
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


class FtsSearch:
    """The keyword searches of an index (a part of `Index`). It is given the connection and
    the lock, `check_external` (drop the caches when another process changed the file: the
    index calls `reset` then) and `ensure_trigram` (build the content trigram table on first
    need); it owns the in-memory bm25 replicas and the vocabulary."""

    def __init__(self, conn: apsw.Connection, lock: threading.RLock, *,
                 check_external: Callable[[], None],
                 ensure_trigram: Callable[[], object]) -> None:
        self._conn = conn
        self._lock = lock
        self._check_external = check_external
        self._ensure_trigram = ensure_trigram
        self.replicas: dict[str, Bm25Replica | None] = {}
        """table -> its in-memory bm25 (None: this SQLite cannot make one); emptied by `reset`."""
        self._vocabulary: Vocabulary | None = None
        self._vocab_current = False

    def reset(self) -> None:
        """The memories changed: forget the replicas (rebuilt on next use) and mark the
        vocabulary for a refresh (new words added, not rebuilt from nothing)."""
        self.replicas = {}
        self._vocab_current = False

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
            known = [t for t in tokens if t is not None]
            rows = rep.top(known, limit, None, wt) if rep and len(known) == len(tokens) else None
            if rows is not None:
                return self._ids_of(rows)
        return self.fts(match_any(words), limit, weights)

    def _replica(self, table: str) -> Bm25Replica | None:
        """The in-memory bm25 of an FTS5 table (built on first use after each change); None
        when this SQLite lacks what it needs, so callers use SQL."""
        self._check_external()
        if table not in self.replicas:
            columns, tok = (
                (FTS_COLUMNS, ("porter", ["unicode61", "remove_diacritics", "2"]))
                if table == "memories_fts"
                else ((table == "memories_trigram" and "content" or "original",),
                      ("trigram", ["remove_diacritics", "1"]))
            )
            try:
                self.replicas[table] = Bm25Replica(self._conn, table, columns, tok)
            except apsw.Error:
                self.replicas[table] = None
        return self.replicas[table]

    def warm(self, postings: int = FTS_WARM_POSTINGS) -> int:
        """Make now what the fuzzy channel's first queries would make while the user waits:
        the vocabulary, the porter table's in-memory bm25 and the postings (default column
        weights, what `fts_any` asks for) of its most frequent terms, up to `postings` of
        them. A word in most memories took 50-300 ms of CPU to load on its first query at
        100k memories; a word being typed is completed to such words (`loo` -> `looks`).
        Term by term, each under the lock (a recall waits for one term at most). The terms
        loaded; 0 when this SQLite cannot make the replica."""
        self.vocabulary()
        wt = tuple(float(DEFAULT_FTS_WEIGHTS[c]) for c in FTS_COLUMNS)
        with self._lock:
            rep = self._replica("memories_fts")
            terms = rep.frequent(postings) if rep is not None else []
        loaded = 0
        for term in terms:
            with self._lock:
                if self.replicas.get("memories_fts") is not rep:  # the index changed
                    break
                assert rep is not None
                rep.hold([term], None, wt)
                loaded += 1
        return loaded

    def vocabulary(self) -> Vocabulary:
        """The indexed words and their document counts (`vocab.Vocabulary`), read once after
        each change to the index."""
        with self._lock:
            vocab = self._vocabulary
            if vocab is None or not self._vocab_current:
                # `reset` (any change) marks it stale; it is refreshed (new words added),
                # not rebuilt from nothing.
                try:
                    vocab = vocab.refresh(self._conn) if vocab else Vocabulary.load(self._conn)
                except apsw.Error:  # an index without the words table: nothing to correct
                    vocab = Vocabulary([], [])
                self._vocabulary = vocab
                self._vocab_current = True
            return vocab

    def correct_terms(self, words: Sequence[str], *, max_edits: int | None = None,
                      max_corrections: int = 3, max_completions: int = 3) -> list[Correction]:
        """For each distinct query word (folded) missing from the index's vocabulary: the
        indexed words it is probably a typo or a fragment of (`Vocabulary.correct`)."""
        vocab = self.vocabulary()
        out = []
        for w in dict.fromkeys(words):
            c = vocab.correct(w, max_edits=max_edits, max_corrections=max_corrections,
                              max_completions=max_completions)
            if w not in vocab and len(w) >= 3:
                out.append(c)
        return out

    def _ids_of(self, rows: list[tuple[int, float]]) -> list[tuple[str, float]]:
        """(rowid, score) -> (memory id, score), order kept."""
        if not rows:
            return []
        q = ",".join("?" * len(rows))
        ids = dict(cast("list[tuple[int, str]]",
            self._conn.execute(
                f"SELECT rowid, id FROM memories WHERE rowid IN ({q})", [r for r, _ in rows]
            ).fetchall()
        ))
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
        if column == "content":
            self._ensure_trigram()
        with self._lock:
            rep = self._replica(TRIGRAM_TABLES[column])
            tokens = [rep.token(g) for g in grams] if rep is not None else [None]
            known = [t for t in tokens if t is not None]
            rows = rep.top(known, limit, column) if rep and len(known) == len(tokens) else None
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
        if column == "content":
            self._ensure_trigram()
        table = TRIGRAM_TABLES[column]
        sql = (
            f"SELECT m.id, -bm25({table}) AS s FROM {table}"
            f" JOIN memories m ON m.rowid = {table}.rowid"
            f" WHERE {table} MATCH ? ORDER BY s DESC LIMIT ?"
        )
        with self._lock:
            return [
                (r[0], float(r[1]))
                for r in self._conn.execute(sql, (f"{column} : ({match})", limit))
            ]
