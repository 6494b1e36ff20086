"""BM25 over weighted memory fields, precomputed so that a query only sums postings.

The scores are exactly rank_bm25's `BM25Okapi(corpus_of_the_field).get_scores(query_tokens)`
per field (same idf with its epsilon floor for negative idf, same length normalisation, a
repeated query term counted twice), combined as `sum(weight * field_score)`. Where rank_bm25
divides by zero (a field empty in every document) the field scores 0. Headless.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recall_tui.engine.text import analyze
from recall_tui.vault.model import Memory

#: Keyword fields, in the order the trace lists them.
FIELDS: tuple[str, ...] = ("recall_when", "title", "tags", "keywords", "summary", "topic_path", "body")


def field_text(m: Memory, name: str) -> str:
    """The text of one keyword field of a memory."""
    if name == "recall_when":
        return "\n".join(m.recall_when)
    if name == "title":
        return m.title
    if name == "tags":
        return " ".join(m.tags)
    if name == "keywords":
        return " ".join(m.keywords)
    if name == "summary":
        return m.summary
    if name == "topic_path":
        return m.topic_path.replace("/", " ").replace(".", " ")
    if name == "body":
        return m.body_without_related
    raise KeyError(name)


#: What `FieldBM25.parts()` gives and `FieldBM25.from_parts` takes: (vocabulary in first-met
#: order, df per term, length per document, post_docs, post_tf).
FieldParts = tuple[list[str], list[int], list[int], np.ndarray, np.ndarray]


class FieldBM25:
    """BM25Okapi over one field of every document, with per-term postings of the finished
    per-document contribution `idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`."""

    def __init__(self, docs: Iterable[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25):
        # One pass over the documents (a generator is fine: no token list is kept), each
        # (term, doc, tf) posting in three typed arrays, 12 bytes each; then the CSR block is
        # one stable sort. Terms are numbered in the order rank_bm25's dict would meet them,
        # so the idf average (and its epsilon floor) sums in the same order.
        vocab: dict[str, int] = {}
        t_ids, d_ids, tfs = array("i"), array("i"), array("i")
        lens: list[int] = []
        for i, d in enumerate(docs):
            lens.append(len(d))
            f: dict[str, int] = {}
            for w in d:
                f[w] = f.get(w, 0) + 1
            for w, tf in f.items():
                tid = vocab.get(w)
                if tid is None:
                    tid = vocab[w] = len(vocab)
                t_ids.append(tid)
                d_ids.append(i)
                tfs.append(tf)
        terms = np.frombuffer(t_ids, dtype=np.intc) if len(t_ids) else np.zeros(0, np.intc)
        df = np.bincount(terms, minlength=len(vocab)).tolist()
        if len(terms):
            order = np.argsort(terms, kind="stable")
            tfs_all = np.frombuffer(tfs, dtype=np.intc)
            post_docs = np.frombuffer(d_ids, dtype=np.intc)[order].astype(np.int32)
            tf_type = np.uint16 if int(tfs_all.max()) <= np.iinfo(np.uint16).max else np.int32
            post_tf = tfs_all[order].astype(tf_type)
        else:
            post_docs, post_tf = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)
        self._finish(list(vocab), df, lens, post_docs, post_tf, k1, b, epsilon)

    @classmethod
    def from_parts(cls, vocab: list[str], df: list[int], lens: list[int], post_docs: np.ndarray,
                   post_tf: np.ndarray, k1: float = 1.5, b: float = 0.75,
                   epsilon: float = 0.25) -> FieldBM25:
        """The index of `parts()` kept from an earlier build (`engine/kwstore.py`): the same
        vocabulary order, document frequencies, lengths and postings give the very same
        idf, norms and spans (computed here by the same code as after a build)."""
        self = cls.__new__(cls)
        self._finish(vocab, df, lens, post_docs, post_tf, k1, b, epsilon)
        return self

    def _finish(self, vocab: list[str], df: list[int], lens: list[int], post_docs: np.ndarray,
                post_tf: np.ndarray, k1: float, b: float, epsilon: float) -> None:
        """idf, norms and spans from the analysed parts: `vocab` in first-met order, `df` per
        term, `lens` per document, postings in CSR order (by term, documents ascending)."""
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.n = len(lens)
        self.doc_len = np.array(lens, dtype=np.float64)
        total = float(self.doc_len.sum())
        self.avgdl = total / self.n if self.n else 0.0
        self.idf: dict[str, float] = {}
        if vocab:
            idf_sum = 0.0
            negative = []
            for w, n_w in zip(vocab, df, strict=True):
                idf = math.log(self.n - n_w + 0.5) - math.log(n_w + 0.5)
                self.idf[w] = idf
                idf_sum += idf
                if idf < 0:
                    negative.append(w)
            eps = epsilon * (idf_sum / len(self.idf))
            for w in negative:
                self.idf[w] = eps
        # Postings in one CSR block (term -> slice of doc ids and term frequencies): a query
        # turns its terms' slices into contributions, `idf * tf * (k1 + 1) / (tf + norm)`,
        # the very doubles a precomputed float64 block would hold (each element is computed
        # alone, by the same operations), at 2 bytes a posting instead of 8: 48 MB less at
        # 100k memories, for a few vector operations per query term.
        self.span: dict[str, tuple[int, int]] = {}
        if self.avgdl > 0 and len(post_docs):
            # k1 * (1 - b + b * dl / avgdl) per document, as rank_bm25 computes it.
            self._norm = k1 * (1 - b + b * self.doc_len / self.avgdl)
            self.post_docs = post_docs
            self.post_tf = post_tf
            end = np.cumsum(df).tolist()
            self.span = dict(zip(vocab, zip([e - d for e, d in zip(end, df, strict=True)], end,
                                            strict=True), strict=True))
        else:
            self._norm = np.zeros(self.n)
            self.post_docs = np.zeros(0, dtype=np.int32)
            self.post_tf = np.zeros(0, dtype=np.uint16)

    def parts(self) -> FieldParts:
        """(vocabulary in first-met order, df per term, length per document, post_docs,
        post_tf): what `from_parts` builds the same index from."""
        vocab = list(self.span) if self.span else list(self.idf)
        df = [hi - lo for lo, hi in self.span.values()] if self.span else [0] * len(vocab)
        return vocab, df, self.doc_len.astype(np.int64).tolist(), self.post_docs, self.post_tf

    def contributions(self, term: str) -> np.ndarray:
        """The term's per-document contributions, in `contains(term)` order."""
        sp = self.span.get(term)
        if sp is None:
            return np.zeros(0)
        tf = self.post_tf[sp[0]:sp[1]].astype(np.float64)
        # The same operations, in the same order, as rank_bm25's per-document loop.
        out: np.ndarray = self.idf[term] * (
            (tf * (self.k1 + 1)) / (tf + self._norm[self.post_docs[sp[0]:sp[1]]])
        )
        return out

    @property
    def post_contrib(self) -> np.ndarray:
        """Every posting's contribution, in block order (built on demand: tests, tools)."""
        out = np.zeros(len(self.post_docs))
        for w, (lo, hi) in self.span.items():
            out[lo:hi] = self.contributions(w)
        return out

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """Scores of every document for the query tokens (duplicates count again)."""
        out = np.zeros(self.n)
        for q in query:
            sp = self.span.get(q)
            if sp is not None:
                out[self.post_docs[sp[0]:sp[1]]] += self.contributions(q)
        return out

    def contains(self, term: str) -> np.ndarray:
        """Indices of the documents holding the term."""
        sp = self.span.get(term)
        return self.post_docs[sp[0]:sp[1]] if sp is not None else self.post_docs[:0]


@dataclass(frozen=True)
class KeywordResult:
    """Per-document scores of one query."""

    total: np.ndarray
    """sum(weight * field score) per document."""
    per_field: Mapping[str, np.ndarray]
    """Each weighted field's raw BM25 scores."""
    matched: np.ndarray
    """Boolean mask: the document holds a query term in a weighted field."""


class KeywordIndex:
    """The per-field BM25 indexes of one vault, built once per analysis settings."""

    def __init__(self, memories: Sequence[Memory], *, k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25, stem: bool = True, stop_words: bool = True,
                 parts: Mapping[str, FieldParts] | None = None):
        """With `parts` (each field's `FieldBM25.parts()` from an earlier build over the same
        memories with the same analysis, `engine/kwstore.py`), no memory is analysed again."""
        self.ids = [m.id for m in memories]
        self.pos = {mid: i for i, mid in enumerate(self.ids)}
        self.memories = tuple(memories)
        """The memories indexed, in order (whoever reuses `updated` checks it has these)."""
        self.stem, self.stop_words = stem, stop_words
        # Tie-break keys for ranking: newer `updated` first, then id.
        self.updated = np.array([m.updated.timestamp() for m in memories], dtype=np.float64)
        self.id_rank = np.argsort(np.argsort(np.array(self.ids, dtype=object)))
        self.fields: dict[str, FieldBM25] = {}
        for name in FIELDS:
            if parts is not None:
                self.fields[name] = FieldBM25.from_parts(*parts[name], k1, b, epsilon)
                continue
            docs = (analyze(field_text(m, name), stem=stem, stop_words=stop_words)
                    for m in memories)
            self.fields[name] = FieldBM25(docs, k1, b, epsilon)

    def search(self, terms: Sequence[str], weights: Mapping[str, float]) -> KeywordResult:
        """Score every document; only fields with a non-zero weight take part."""
        n = len(self.ids)
        total = np.zeros(n)
        per_field: dict[str, np.ndarray] = {}
        matched = np.zeros(n, dtype=bool)
        uniq = list(dict.fromkeys(terms))
        for name in FIELDS:
            w = weights.get(name, 0.0)
            if not w:
                continue
            idx = self.fields[name]
            present = [t for t in uniq if t in idx.span]
            if not present:  # no query term in this field: its scores are all 0, adding
                per_field[name] = np.zeros(n)  # `w x 0` to the total changes no bit
                continue
            s = idx.scores(terms)
            per_field[name] = s
            total += w * s
            for t in present:
                matched[idx.contains(t)] = True
        return KeywordResult(total, per_field, matched)

    def ranked(self, res: KeywordResult, limit: int | None = None) -> np.ndarray:
        """Matched documents, best score first; ties: newer `updated`, then id. With `limit`,
        only the first `limit` of that order: the documents scoring at least the limit-th
        best score are selected first (a partition, linear), so a common word matching half
        the vault no longer sorts half the vault."""
        docs = np.flatnonzero(res.matched)
        if limit is not None and len(docs) > limit:
            if limit <= 0:
                return docs[:0]
            s = res.total[docs]
            kth = np.partition(s, len(s) - limit)[len(s) - limit]
            docs = docs[s >= kth]  # ties with the limit-th score stay; the sort settles them
        order = np.lexsort((self.id_rank[docs], -self.updated[docs], -res.total[docs]))
        return docs[order][:limit] if limit is not None else docs[order]

    def scores_of(self, res: KeywordResult) -> KeywordScores:
        """Every matched memory's total score, by id, without building a dict per recall."""
        return KeywordScores(self.pos, res.total, res.matched)

    def matched_masks(self, docs: Sequence[int], terms: Sequence[str],
                      weights: Mapping[str, float]
                      ) -> tuple[list[str], list[str], list[tuple[int, ...]]] | None:
        """What `matched_terms` says, as bits: (the weighted fields, the distinct query terms,
        per doc one mask per field whose bit j says it holds `terms[j]` there). Most of the
        keyword stage's candidates share a few masks, so the stage builds each field's
        matched terms (and each note) once per mask instead of once per candidate. None when
        there are more distinct terms than an int64 holds bits (`matched_terms` then)."""
        uniq = list(dict.fromkeys(terms))
        if len(uniq) > 62:
            return None
        names = [name for name in FIELDS if weights.get(name, 0.0)]
        arr = np.asarray(docs, dtype=np.int64)
        bits = np.zeros((len(names), len(arr)), dtype=np.int64)
        mask = np.zeros(len(self.ids), dtype=bool)
        for fi, name in enumerate(names):
            idx = self.fields[name]
            row = bits[fi]
            for j, t in enumerate(uniq):
                holders = idx.contains(t)
                if not len(holders):
                    continue
                mask[holders] = True
                row |= mask[arr].astype(np.int64) << j
                mask[holders] = False
        return names, uniq, [tuple(r) for r in bits.T.tolist()]

    def matched_terms(self, docs: Sequence[int], terms: Sequence[str],
                      weights: Mapping[str, float]) -> list[dict[str, list[str]]]:
        """For each of `docs`: field -> the query terms it holds there (weighted fields)."""
        out: list[dict[str, list[str]]] = [{} for _ in docs]
        arr = np.asarray(docs, dtype=np.int64)
        mask = np.zeros(len(self.ids), dtype=bool)
        for name in FIELDS:
            if not weights.get(name, 0.0):
                continue
            idx = self.fields[name]
            for t in dict.fromkeys(terms):
                holders = idx.contains(t)
                if not len(holders):
                    continue
                mask[holders] = True
                for i in np.flatnonzero(mask[arr]).tolist():
                    out[i].setdefault(name, []).append(t)
                mask[holders] = False
        return out


class KeywordScores(Mapping[str, float]):
    """id -> keyword total score, for the memories matching a query term (any rank): a view
    over the score array, so the stage does not copy thousands of scores into a dict that
    only a `why` question about a miss ever reads."""

    def __init__(self, pos: Mapping[str, int], total: np.ndarray, matched: np.ndarray):
        self._pos, self._total, self._matched = pos, total, matched

    def __getitem__(self, memory_id: str) -> float:
        i = self._pos.get(memory_id)
        if i is None or not self._matched[i]:
            raise KeyError(memory_id)
        return float(self._total[i])

    def __iter__(self) -> Iterator[str]:
        ids = list(self._pos)
        return iter([ids[i] for i in np.flatnonzero(self._matched).tolist()])

    def __len__(self) -> int:
        return int(np.count_nonzero(self._matched))
