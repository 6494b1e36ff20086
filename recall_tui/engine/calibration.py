"""The per-vault calibration of the floor's relevance decision, and the evidence of one hit.

A fused or min-max normalised score says how a memory ranks against the other candidates of
one recall, not whether anything matched: the best of weak candidates still gets 100. The
evidence here is measured against the vault itself, so it means the same for every query:

- lexical `L` (0..1): the query's distinct analysed terms (matched against every keyword
  field and the `original` text of a translated memory), each weighted by its IDF over the
  vault's memories (`ln((N + 1) / (df + 0.5))`; a word no memory holds gets the largest IDF,
  `ln(2N + 2)`), and `L` is the IDF mass of the terms the memory holds over the query's total
  IDF mass. A query word missing from the vault that the index corrects by exactly one edit
  (words of 5 letters or more) counts as its correction: typos keep their evidence, while
  unknown names (which the corrector maps two edits away to unrelated words) do not.
- vector `V` (0..1): the memory's cosine to the query, placed between the vault's background
  and its near-duplicate level: `V = clip((cos - b) / (h - b), 0, 1)`, where `b` is the median
  cosine between two memories of the vault (what two unrelated texts of this vault share)
  and `h` the 10th percentile of each memory's nearest-neighbour cosine (what two texts on the
  same subject share). Both adapt to the vault and to the embedder.

A hit's evidence is `E = L + V` (0..2). The floor stage abstains when the best hit's evidence
is under the calibrated floor: `floor.probe_margin` x the median best evidence that PROBES
(typical queries about nothing a vault holds) find in this vault, never under
`floor.evidence_floor`. A vault whose texts resemble any question (chat observations about
people) gets a higher floor than one whose texts are specific (project notes). `Calibration` holds the vault's part (document
frequencies, every memory's term set, `b` and `h`), computed once per vault and vector
generation from the engine's memories and the index's public `vectors()`. Headless.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recall_tui.engine import probe_vectors
from recall_tui.engine.bm25 import FIELDS, field_text
from recall_tui.engine.text import analyze
from recall_tui.engine.text import words as _words

#: At most this many memories enter the pairwise cosine sample (an evenly spaced sample of
#: the ids in sorted order, so the calibration is deterministic).
PAIR_SAMPLE = 1500


@dataclass(frozen=True)
class Calibration:
    """What the floor's evidence is measured against, computed from the vault."""

    memories: int
    """N: memories in the vault."""
    doc_freq: Mapping[str, int]
    """Analysed term -> number of memories holding it in any keyword field."""
    terms: Mapping[str, frozenset[str]]
    """Memory id -> its analysed terms (every keyword field)."""
    background: float | None
    """b: the median cosine between two memories; None without vectors."""
    near: float | None
    """h: the 10th percentile of the memories' nearest-neighbour cosine; None without vectors."""
    holders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Analysed term -> the memories holding it (the inverse of `terms`), so a query's best
    evidence visits only the memories holding one of its terms."""

    def idf(self, term: str) -> float:
        """`ln((N + 1) / (df + 0.5))`: largest for a term no memory holds."""
        return math.log((self.memories + 1) / (self.doc_freq.get(term, 0) + 0.5))

    def vector_standing(self, cos: float | None) -> float:
        """V: the cosine between the vault's background (0) and its near level (1), clipped."""
        if cos is None or self.background is None or self.near is None:
            return 0.0
        span = self.near - self.background
        if span <= 0:
            return 0.0
        return min(1.0, max(0.0, (cos - self.background) / span))

    def describe(self) -> str:
        """One line for the trace: N and the vector scale."""
        vec = ("no vectors" if self.background is None or self.near is None else
               f"vector background b {self.background:.3f} (median memory-memory cosine), "
               f"near h {self.near:.3f} (10th pct nearest-neighbour cosine)")
        return f"{self.memories} memories; {vec}"


def build(memories: Mapping[str, Any], vectors: Mapping[str, np.ndarray]) -> Calibration:
    """The calibration of a vault: term statistics over `memories` (id -> Memory) and the
    vector scale over `vectors` (id -> unit vector)."""
    terms: dict[str, frozenset[str]] = {}
    holders: dict[str, list[str]] = {}
    for mid, m in memories.items():
        text = [field_text(m, f) for f in FIELDS] + [getattr(m, "original", None) or ""]
        ts = frozenset(t for chunk in text for t in analyze(chunk))
        terms[mid] = ts
        for t in ts:
            got = holders.get(t)
            if got is None:
                holders[t] = [mid]
            else:
                got.append(mid)
    df = {t: len(ids) for t, ids in holders.items()}
    background = near = None
    ids = sorted(i for i in vectors if i in memories)
    if len(ids) >= 3:
        if len(ids) > PAIR_SAMPLE:
            step = len(ids) / PAIR_SAMPLE
            ids = [ids[int(i * step)] for i in range(PAIR_SAMPLE)]
        mat = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
        sims = mat @ mat.T
        n = len(ids)
        background = float(np.median(sims[np.triu_indices(n, 1)]))
        np.fill_diagonal(sims, -2.0)
        near = float(np.percentile(sims.max(axis=1), 10))
    return Calibration(len(memories), df, terms, background, near,
                       {t: tuple(ids) for t, ids in holders.items()})


def for_engine(engine: Any) -> Calibration:
    """The engine's calibration, memoised per vault (the engine's derived structures are
    reset on a vault change) and per vector generation (a progressive open that finishes
    embedding gives new vectors)."""
    vecs = engine.memory_vectors()
    memo = engine._derived.get("calibration")
    if memo is None or memo[0] is not vecs:
        kept = engine._derived.pop("calibration_kept", None)
        now = engine._derived.get("vector_matrix")
        if kept is not None and now is not None and _same_matrix(kept[0], now):
            # A refresh that left every memory as it was (`Engine.set_vault`), and the index
            # holds the same vectors for them: the same calibration (and probe bests).
            memo = (vecs, kept[1])
            if kept[2] is not None and kept[2][0] is kept[1]:
                engine._derived["probe_bests"] = kept[2]
        else:
            memo = (vecs, build(engine.vault.memories, vecs))
        engine._derived["calibration"] = memo
    cal: Calibration = memo[1]
    return cal


def _same_matrix(a: tuple[list[str], np.ndarray], b: tuple[list[str], np.ndarray]) -> bool:
    """True when two (ids, vectors) pairs hold the same ids in the same order and equal rows."""
    return a[0] == b[0] and a[1].shape == b[1].shape and bool(np.array_equal(a[1], b[1]))


#: Typical queries about nothing a memory vault is likely to hold: questions about invented
#: people, general knowledge, everyday requests and coding prompts. Their best evidence in a
#: vault (over every memory) is what an off-topic query finds there by chance; the floor is
#: set a margin above their median (`floor.probe_margin`). None of them is a judged query.
PROBES: tuple[str, ...] = (
    "What is Kwame's favourite colour?", "When did Ana and Pieter get married?",
    "Where does Mehmet's brother live now?", "What did Yuki study at university?",
    "How old is Bogdan's daughter?", "Which city did Chiara move to last spring?",
    "Who taught Farida to play the violin?", "What car does Emeka drive?",
    "how tall is the eiffel tower", "what year did the titanic sink",
    "what is the population of canada", "how do volcanoes form",
    "give me a recipe for banana bread", "what should I pack for a beach holiday",
    "how do I sort a dictionary by value in python", "explain what a closure is in javascript",
    "write a bash one-liner that counts lines in all files",
    "what is the difference between tcp and udp", "summarise the plot of hamlet",
    "suggest a name for a pet goldfish", "how many bones are in the human body",
    "what is a good stretching routine", "how do I convert celsius to fahrenheit",
    "list three facts about octopuses",
)


def best_evidence(cal: Calibration, qt: QueryTerms, sims: Mapping[str, float]) -> float:
    """The largest evidence any memory of the vault has for the query (`sims`: memory id ->
    cosine, empty without vectors): `evidence(...).value` of every memory, maximised."""
    return max((evidence(cal, qt, mid, sims.get(mid)).value for mid in cal.terms), default=0.0)


def best_evidence_fast(cal: Calibration, qt: QueryTerms, ids: Sequence[str],
                       cos: np.ndarray | None) -> float:
    """`best_evidence` for `ids` (the memories with a vector, in the order of the rows of
    `cos`, their cosines to the query; None without vectors), computed without visiting every
    memory: V for all of them at once, and L only for the memories holding a query term
    (from `holders`). Every value is computed with the same float64 operations in the same
    order as `evidence`, so the result is the same number (tests/test_fast_paths.py)."""
    if not cal.terms:
        return 0.0
    standing: dict[str, float] = {}
    best_v = 0.0  # a memory with no vector (or no vector scale) has V = 0
    if (cos is not None and len(ids) and cal.background is not None and cal.near is not None
            and cal.near - cal.background > 0):
        span = cal.near - cal.background
        v = np.minimum(1.0, np.maximum(0.0, (cos.astype(np.float64) - cal.background) / span))
        best_v = max(best_v, float(v.max()))
        matched_any = {mid for acc in qt.accept.values() for t in acc
                       for mid in cal.holders.get(t, ())}
        if matched_any:
            pos = {mid: i for i, mid in enumerate(ids)}
            standing = {mid: float(v[pos[mid]]) for mid in matched_any if mid in pos}
    if qt.total <= 0:
        return best_v
    held_by: dict[str, list[str]] = {}
    for t, acc in qt.accept.items():
        for a in acc:
            for mid in cal.holders.get(a, ()):
                got = held_by.setdefault(mid, [])
                if not got or got[-1] != t:
                    got.append(t)
    best = best_v
    for mid, matched in held_by.items():
        lex = sum(qt.weight[t] for t in matched) / qt.total
        e = lex + standing.get(mid, 0.0)
        if e > best:
            best = e
    return best


def probe_bests(engine: Any) -> tuple[float, ...]:
    """Each probe's best evidence in the engine's vault, sorted; memoised with the
    calibration (one query embedding per probe, through the index's cache)."""
    cal = for_engine(engine)
    memo = engine._derived.get("probe_bests")
    if memo is not None and memo[0] is cal:
        cached: tuple[float, ...] = memo[1]
        return cached
    vecs = engine.memory_vectors()
    ids = [i for i in vecs if i in cal.terms]
    mat = np.stack([vecs[i] for i in ids]) if ids else None
    ready = _shipped_for(engine.index) if mat is not None else None
    out = []
    for n, text in enumerate(PROBES):
        words = list(dict.fromkeys(w for w in _words(text)))
        qt = query_terms(cal, tuple(analyze(text)), tuple(words),
                         one_edit_corrections(engine, words))
        cos: np.ndarray | None = None
        if mat is not None and engine.index is not None:
            if ready is not None:
                q = ready[n]
            else:
                try:
                    q = engine.index.embed_query(text)
                except Exception:  # no embedder at hand: lexical evidence only
                    q = None
            if q is not None and q.shape[-1] == mat.shape[1]:
                cos = mat @ q
        out.append(best_evidence_fast(cal, qt, ids, cos))
    result = tuple(sorted(out))
    engine._derived["probe_bests"] = (cal, result)
    return result


def probes_digest() -> str:
    """SHA-256 of the probe texts, which the shipped probe vectors are checked against."""
    return hashlib.sha256("\n".join(PROBES).encode("utf-8")).hexdigest()


def _shipped_for(index: Any) -> tuple[np.ndarray, ...] | None:
    """The shipped probe vectors when the index embeds queries with the model they were made
    by and its stored vectors are usable (`probe_vectors.shipped`); None otherwise."""
    embedder = getattr(index, "embedder", None)
    if embedder is None or getattr(embedder, "name", "") != "local":
        return None
    return probe_vectors.shipped(str(getattr(embedder, "model", "")), probes_digest())


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of sorted `values`, linear between order statistics (numpy's default);
    0 for no values."""
    if not values:
        return 0.0
    return float(np.quantile(np.asarray(values, dtype=float), min(1.0, max(0.0, q))))


def floor_for(engine: Any, minimum: float, margin: float) -> tuple[float, str]:
    """The calibrated floor of the engine's vault: `margin` x the median of the probes' best
    evidence (what a typical off-topic query finds here), never under `minimum`; and how it
    was reached, for the trace."""
    bests = probe_bests(engine)
    median = quantile(bests, 0.5)
    level = margin * median
    floor = max(minimum, level)
    how = (f"{margin:g} x {median:.2f}, the median best evidence of {len(bests)} off-topic "
           f"probes in this vault"
           f"{'' if level >= minimum else f' = {level:.2f}, raised to the minimum {minimum:g}'}")
    return floor, how


@dataclass(frozen=True)
class QueryTerms:
    """The query's terms as the evidence weighs them."""

    accept: Mapping[str, frozenset[str]]
    """Query term -> the terms a memory may hold to match it (itself, or its one-edit
    correction)."""
    weight: Mapping[str, float]
    """Query term -> its IDF weight."""
    total: float
    """The query's total IDF mass."""


def query_terms(cal: Calibration, terms: Sequence[str], words: Sequence[str],
                corrections: Mapping[str, Sequence[str]]) -> QueryTerms:
    """Weigh the query's distinct terms; `corrections`: folded word -> its one-edit
    corrections (only used for words the vault does not hold)."""
    accept: dict[str, frozenset[str]] = {}
    weight: dict[str, float] = {}
    for t in dict.fromkeys(terms):
        accept[t] = frozenset((t,))
        weight[t] = cal.idf(t)
    for w in words:
        stems = analyze(w)
        if len(stems) != 1 or stems[0] not in accept:
            continue
        t = stems[0]
        if cal.doc_freq.get(t, 0) == 0 and corrections.get(w):
            alts = frozenset(a for c in corrections[w] for a in analyze(c))
            if alts:
                accept[t] = alts
                weight[t] = max(cal.idf(a) for a in alts)
    return QueryTerms(accept, weight, sum(weight.values()))


@dataclass(frozen=True)
class Evidence:
    """One memory's evidence for one query."""

    lexical: float
    """L: matched IDF mass / the query's IDF mass (0..1)."""
    vector: float
    """V: the cosine's standing between the vault's background and near level (0..1)."""
    cosine: float | None
    """The raw cosine to the query (None without vectors)."""
    matched: tuple[str, ...]
    """The query terms the memory holds."""
    inherited: float = 0.0
    """For a 1-hop neighbour: its parent's evidence x link score x hop factor, when that is
    more than its own L + V (0 otherwise)."""
    via: str | None = None
    """The parent the evidence was inherited from."""

    @property
    def value(self) -> float:
        """E = L + V (0..2), or the inherited evidence of a 1-hop neighbour when larger."""
        return max(self.lexical + self.vector, self.inherited)

    def describe(self) -> str:
        cos = "no vector" if self.cosine is None else f"cosine {self.cosine:.3f}"
        own = (f"lexical {self.lexical:.2f} (matched {', '.join(self.matched) or 'no query term'})"
               f" + vector {self.vector:.2f} ({cos})")
        if self.via is not None:
            return (f"evidence {self.value:.2f} inherited from {self.via} (parent evidence x "
                    f"link x factor; its own: {own})")
        return f"evidence {self.value:.2f} = {own}"


def evidence(cal: Calibration, qt: QueryTerms, memory_id: str, cos: float | None) -> Evidence:
    """E of one memory."""
    held = cal.terms.get(memory_id, frozenset())
    matched = tuple(t for t, acc in qt.accept.items() if acc & held)
    lex = sum(qt.weight[t] for t in matched) / qt.total if qt.total > 0 else 0.0
    return Evidence(lex, cal.vector_standing(cos), cos, matched)


def one_edit_corrections(engine: Any, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Folded query word -> its one-edit corrections from the index's vocabulary (words of
    5 letters or more that the vocabulary lacks); empty without an index."""
    if engine.index is None or not words:
        return {}
    try:
        fixes = engine.index.correct_terms(list(words), max_completions=0)
    except Exception:  # a damaged index must not fail the recall: no corrections
        return {}
    return {c.word: tuple(c.corrected) for c in fixes
            if c.distance == 1 and len(c.word) >= 5 and c.corrected}


__all__ = ["PROBES", "Calibration", "Evidence", "QueryTerms", "best_evidence",
           "best_evidence_fast", "build",
           "evidence", "floor_for", "for_engine", "one_edit_corrections", "probe_bests",
           "quantile", "query_terms"]
