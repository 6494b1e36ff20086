"""The index's word vocabulary and query-term correction (the fuzzy channel's `correct` mode).

The `memories_words` FTS5 table (unicode61, diacritics removed, `detail=none`: document lists
only) holds the same text as the trigram table's `content` column. Its `fts5vocab` row table
gives every distinct word and how many memories hold it; `Vocabulary` keeps that list in
memory with a trigram index over the *words* (not the memories), so correcting a query word
costs the few thousand words sharing its trigrams instead of a scan of every memory that
shares one.

`Vocabulary.correct(word)` returns what a word not in the vocabulary stands for:

- corrections: words within `max_edits` (optimal string alignment distance: insertions,
  deletions, substitutions, adjacent transpositions) of it, the closest first, then the most
  frequent;
- completions: words holding it as a substring (a word still being typed, a fragment),
  the most frequent first.

A word in the vocabulary is left alone (the porter sub-query finds it). Headless.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw
import numpy as np

#: The table holding the words (same text as the trigram table's `content` column).
WORDS_TABLE = "memories_words"
#: Shortest query word corrected or completed (shorter words match too much).
MIN_WORD = 3
#: Most candidates (words sharing the most trigrams with it) checked by edit distance per
#: query word: a word one or two edits away shares most of them, so it is among these.
MAX_CHECKED = 500
#: Words added since the last full build, as a share of it, before the next refresh rebuilds.
REBUILD_SHARE = 0.2


@dataclass(frozen=True)
class Correction:
    """What one query word was replaced by."""

    word: str
    """The query word as typed (folded)."""
    corrected: tuple[str, ...]
    """Vocabulary words within the edit budget, closest then most frequent first."""
    completed: tuple[str, ...]
    """Vocabulary words holding `word` as a substring, most frequent first."""
    distance: int = 0
    """Edit distance of the corrections (0 when there are none)."""

    @property
    def terms(self) -> tuple[str, ...]:
        """Every replacement, corrections first."""
        return tuple(dict.fromkeys((*self.corrected, *self.completed)))

    def describe(self) -> str:
        """`postgress→postgres (1 edit)`, `postg→postgres, postgresql (completed)`."""
        parts = []
        if self.corrected:
            edits = "edit" if self.distance == 1 else "edits"
            parts.append(f"{', '.join(self.corrected)} ({self.distance} {edits})")
        if self.completed:
            parts.append(f"{', '.join(self.completed)} (completed)")
        return f"{self.word}→" + "; ".join(parts) if parts else f"{self.word}→(nothing close)"


def osa_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of `a` and `b`, or `limit + 1` when it exceeds
    `limit` (stops early)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            cost = 0 if ai == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ai == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)]


def _grams(word: str) -> list[str]:
    return list(dict.fromkeys(word[i : i + 3] for i in range(len(word) - 2)))


class Vocabulary:
    """Every word of the indexed text with its document count, and a trigram index over the
    words. Built from `fts5vocab` on first use after each change to the index."""

    def __init__(self, terms: list[str], df: list[int]):
        self.terms = terms
        self.df = np.asarray(df, dtype=np.int64)
        self.ids = {t: i for i, t in enumerate(terms)}
        self.lengths = np.fromiter((len(t) for t in terms), dtype=np.int32, count=len(terms))
        # Trigram -> word ids, in one CSR block.
        by_gram: dict[str, list[int]] = {}
        for i, t in enumerate(terms):
            for g in _grams(t):
                lst = by_gram.get(g)
                if lst is None:
                    by_gram[g] = [i]
                else:
                    lst.append(i)
        self._span: dict[str, tuple[int, int]] = {}
        flat: list[int] = []
        for g, lst in by_gram.items():
            self._span[g] = (len(flat), len(flat) + len(lst))
            flat.extend(lst)
        self._flat = np.asarray(flat, dtype=np.int32)
        self.base = len(terms)
        # Words added by `refresh` since the build (their trigrams in lists, kept small).
        self._extra: dict[str, list[int]] = {}

    @staticmethod
    def _read(conn: apsw.Connection) -> tuple[list[str], list[int]]:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{WORDS_TABLE}_vocab_row"
            f" USING fts5vocab(main, {WORDS_TABLE}, row)"
        )
        terms: list[str] = []
        df: list[int] = []
        for term, doc in conn.execute(f"SELECT term, doc FROM temp.{WORDS_TABLE}_vocab_row"):
            if len(term) >= MIN_WORD:
                terms.append(term)
                df.append(doc)
        return terms, df

    @classmethod
    def load(cls, conn: apsw.Connection) -> Vocabulary:
        """Read the words table's vocabulary (one pass over its document lists)."""
        return cls(*cls._read(conn))

    def refresh(self, conn: apsw.Connection) -> Vocabulary:
        """This vocabulary brought up to date after the index changed: new words are added
        (their trigrams indexed on their own), document counts updated; words no memory holds
        any more stay (a correction to one finds nothing). Rebuilt in full when the added
        words pass REBUILD_SHARE of the built ones."""
        terms, df = self._read(conn)
        new = [(t, d) for t, d in zip(terms, df, strict=True) if t not in self.ids]
        if len(self.terms) + len(new) > self.base * (1 + REBUILD_SHARE):
            return Vocabulary(terms, df)
        counts = dict(zip(terms, df, strict=True))
        self.df = np.fromiter((counts.get(t, 0) for t in self.terms), dtype=np.int64,
                              count=len(self.terms))
        if new:
            start = len(self.terms)
            for j, (t, _) in enumerate(new):
                self.ids[t] = start + j
                self.terms.append(t)
                for g in _grams(t):
                    self._extra.setdefault(g, []).append(start + j)
            self.df = np.concatenate([self.df, np.asarray([d for _, d in new], np.int64)])
            self.lengths = np.concatenate(
                [self.lengths, np.asarray([len(t) for t, _ in new], np.int32)]
            )
        return self

    def __len__(self) -> int:
        return len(self.terms)

    def __contains__(self, word: str) -> bool:
        return word in self.ids

    def correct(self, word: str, *, max_edits: int | None = None, max_corrections: int = 3,
                max_completions: int = 3) -> Correction:
        """What `word` (folded) stands for; empty when it is known or too short.

        `max_edits` defaults to 1 for words of up to 5 characters and 2 above.
        """
        if len(word) < MIN_WORD or word in self.ids or not self.terms:
            return Correction(word, (), ())
        if max_edits is None:
            max_edits = 1 if len(word) <= 5 else 2
        grams = _grams(word)
        parts = [self._flat[a:b] for a, b in (self._span[g] for g in grams if g in self._span)]
        parts += [np.asarray(self._extra[g], np.int32) for g in grams if g in self._extra]
        if not parts:
            return Correction(word, (), ())
        counts = np.bincount(np.concatenate(parts), minlength=len(self.terms))
        # Each edit destroys at most 3 of the word's trigrams.
        need = max(1, len(grams) - 3 * max_edits)
        cand = np.flatnonzero(counts >= need)
        near = cand[np.abs(self.lengths[cand] - len(word)) <= max_edits]
        if len(near) > MAX_CHECKED:
            near = near[np.argsort(-counts[near], kind="stable")[:MAX_CHECKED]]
        best = max_edits + 1
        hits: list[int] = []
        for i in near.tolist():
            d = osa_distance(word, self.terms[i], best if hits else max_edits)
            if d < best:
                best, hits = d, [i]
            elif d == best:
                hits.append(i)
        hits.sort(key=lambda i: (-int(self.df[i]), self.terms[i]))
        corrected = tuple(self.terms[i] for i in hits[:max_corrections])
        whole = cand[(counts[cand] == len(grams)) & (self.lengths[cand] > len(word))]
        subs = [i for i in whole.tolist() if word in self.terms[i]]
        subs.sort(key=lambda i: (-int(self.df[i]), self.terms[i]))
        completed = tuple(self.terms[i] for i in subs[:max_completions])
        if completed:  # a fragment: its truncations (`postg` -> `post`) are not typos
            corrected = tuple(t for t in corrected if t not in word)
        return Correction(word, corrected, completed, best if corrected else 0)
