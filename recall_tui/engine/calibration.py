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

import contextlib
import functools
import hashlib
import json
import math
import zlib
from array import array
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recall_tui.engine import probe_vectors
from recall_tui.engine.bm25 import FIELDS, field_text
from recall_tui.engine.text import STOP_WORDS, analyze, porter_stem
from recall_tui.engine.text import words as _words
from recall_tui.index.sidefiles import side_path, write_side


class TermSets(Mapping[str, frozenset[str]]):
    """memory id -> its analysed terms, kept as postings (per term, the sorted positions of
    the memories holding it) rather than one frozenset per memory: at 100k memories the sets
    took several hundred MB, the postings a few tens. A query's terms become one boolean mask
    over the memories each (`holders`), so the evidence of any memory is a lookup."""

    def __init__(self, ids: list[str], vocab: dict[str, int], offsets: np.ndarray,
                 docs: np.ndarray):
        self.ids = ids
        self.pos = {mid: i for i, mid in enumerate(ids)}
        self.vocab = vocab
        self.offsets = offsets
        self.docs = docs
        self._terms = list(vocab)

    @staticmethod
    def build(sets: Iterator[tuple[str, frozenset[str]]]) -> TermSets:
        ids: list[str] = []
        vocab: dict[str, int] = {}
        tids, held = array("i"), array("i")
        add = vocab.setdefault
        for mid, ts in sets:
            ids.append(mid)
            # a new term's id is the vocabulary's size before it is added
            tids.extend([add(t, len(vocab)) for t in ts])
            held.append(len(ts))
        tid_arr = np.frombuffer(tids, dtype=np.intc) if tids else np.zeros(0, dtype=np.intc)
        counts = np.bincount(tid_arr, minlength=len(vocab))
        offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # Postings by term, positions ascending within a term: one int64 key per posting
        # (term * memories + position; unique, as a memory holds a term once) sorted in
        # place, then the position taken back. The same order as a stable argsort by term
        # over the positions in memory order, without its int64 index array, its workspace
        # and the gathered copy (~70 MB less at the peak at 100k memories).
        n = max(len(ids), 1)
        key = tid_arr.astype(np.int64)
        del tid_arr, tids
        key *= n
        key += np.repeat(np.arange(len(ids), dtype=np.intc),
                         np.frombuffer(held, dtype=np.intc) if held else 0)
        key.sort()
        np.remainder(key, n, out=key)
        return TermSets(ids, vocab, offsets, key.astype(np.int32))

    def df(self, term: str) -> int:
        """How many memories hold `term`."""
        tid = self.vocab.get(term)
        return 0 if tid is None else int(self.offsets[tid + 1] - self.offsets[tid])

    def terms(self) -> Collection[str]:
        """Every term some memory holds."""
        return self.vocab.keys()

    def holders(self, terms: frozenset[str] | set[str]) -> np.ndarray:
        """Boolean mask over the memories (in `ids` order): holds any of `terms`."""
        mask = np.zeros(len(self.ids), dtype=bool)
        for t in terms:
            tid = self.vocab.get(t)
            if tid is not None:
                mask[self.docs[self.offsets[tid]:self.offsets[tid + 1]]] = True
        return mask

    def __getitem__(self, memory_id: str) -> frozenset[str]:
        i = self.pos[memory_id]
        at = np.flatnonzero(self.docs == i)  # a scan: only tools and tests ask for a set
        tids = np.searchsorted(self.offsets, at, side="right") - 1
        return frozenset(self._terms[t] for t in tids.tolist())

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self.pos

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


class DocFreq(Mapping[str, int]):
    """Analysed term -> number of memories holding it: a view over `TermSets`' postings."""

    def __init__(self, sets: TermSets):
        self._sets = sets

    def __getitem__(self, term: str) -> int:
        df = self._sets.df(term)
        if not df:  # a term of the vocabulary is held by one memory at least
            raise KeyError(term)
        return df

    def __iter__(self) -> Iterator[str]:
        return iter(self._sets.terms())

    def __len__(self) -> int:
        return len(self._sets.terms())


class KeywordTermSets(TermSets):
    """`TermSets` read from the engine's keyword index instead of analysing every memory
    again: the index analysed each keyword field of every memory with the calibration's own
    settings (stemmed, stop words out), so a memory holds a term when one of the fields'
    postings lists it, or its `original` text (a translated memory's; not a keyword field,
    analysed here) does. Opening a vault paid that analysis twice (the calibration's term
    sets were most of the first recall: ~8 s of CPU at 20k memories under load). A term's
    positions are the union of the fields' slices, kept for the terms asked (the probes'
    and the queries')."""

    #: Positions of merged postings kept at most (16 MB; all are dropped when full).
    KEEP = 4_000_000

    def __init__(self, kidx: Any, originals: Mapping[str, Sequence[int]]):
        self.ids = kidx.ids
        self.pos = kidx.pos
        self._fields = [f for f in kidx.fields.values() if f.span]
        self._originals = {t: np.asarray(p, dtype=np.int32) for t, p in originals.items()}
        self._merged: dict[str, np.ndarray] = {}
        self._kept = 0
        self._all: Collection[str] | None = None

    def postings(self, term: str) -> np.ndarray:
        """The sorted positions of the memories holding `term`."""
        got = self._merged.get(term)
        if got is None:
            parts = [f.post_docs[sp[0]:sp[1]] for f in self._fields
                     if (sp := f.span.get(term)) is not None]
            if term in self._originals:
                parts.append(self._originals[term])
            got = (self._union(parts) if len(parts) > 1 else
                   parts[0] if parts else np.zeros(0, dtype=np.int32))
            if self._kept + len(got) > self.KEEP:
                self._merged.clear()
                self._kept = 0
            self._merged[term] = got
            self._kept += len(got)
        return got

    def _union(self, parts: list[np.ndarray]) -> np.ndarray:
        """The sorted distinct positions of `parts`: `np.unique` of their concatenation, by
        a mask over the memories when they are many (np.unique hashed a common word's 200k
        positions in ~120 ms at 100k memories, on the keystroke that first typed it)."""
        joined = np.concatenate(parts)
        if len(joined) < len(self.ids) // 32:
            return np.unique(joined)
        mask = np.zeros(len(self.ids), dtype=bool)
        mask[joined] = True
        return np.flatnonzero(mask).astype(joined.dtype)

    def df(self, term: str) -> int:
        return len(self.postings(term))

    def holders(self, terms: frozenset[str] | set[str]) -> np.ndarray:
        mask = np.zeros(len(self.ids), dtype=bool)
        for t in terms:
            mask[self.postings(t)] = True
        return mask

    def terms(self) -> Collection[str]:
        if self._all is None:
            every: set[str] = set(self._originals)
            for f in self._fields:
                every.update(f.span)
            self._all = every
        return self._all

    def __getitem__(self, memory_id: str) -> frozenset[str]:
        i = self.pos[memory_id]  # scans: only tools and tests ask for a set
        out = {t for t, p in self._originals.items() if i in p}
        for f in self._fields:
            at = np.flatnonzero(f.post_docs == i)
            if len(at):
                starts = [(lo, t) for t, (lo, hi) in f.span.items() if hi > lo]
                los = np.array([lo for lo, _ in starts])
                for k in np.searchsorted(los, at, side="right").tolist():
                    out.add(starts[k - 1][1])
        return frozenset(out)

    @staticmethod
    def usable(kidx: Any, memories: Mapping[str, Any]) -> bool:
        """True when `kidx` (a `KeywordIndex`) analysed the memories as the calibration does,
        in the same order."""
        return bool(kidx.stem and kidx.stop_words and kidx.ids == list(memories))


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


def build(memories: Mapping[str, Any], vectors: Mapping[str, np.ndarray],
          keyword: Any = None) -> Calibration:
    """The calibration of a vault: term statistics over `memories` (id -> Memory) and the
    vector scale over `vectors` (id -> unit vector). With `keyword` (the engine's
    `KeywordIndex` over the same memories, stemmed and without stop words), the term sets
    are read from its postings (`KeywordTermSets`): the same sets, not analysed again."""
    def sets() -> Iterator[tuple[str, frozenset[str]]]:
        # The set of `analyze` over each field, computed once over the fields joined by a
        # line break (no token spans one, folding is per character): each distinct word is
        # stemmed once, not once a field and occurrence (~2x less CPU at 100k memories).
        for mid, m in memories.items():
            text = "\n".join([field_text(m, f) for f in FIELDS]
                             + [getattr(m, "original", None) or ""])
            yield mid, frozenset([porter_stem(w) for w in set(_words(text))
                                  if w not in STOP_WORDS])

    terms: TermSets
    if keyword is not None and KeywordTermSets.usable(keyword, memories):
        originals: dict[str, list[int]] = {}
        for i, m in enumerate(memories.values()):
            text = getattr(m, "original", None)
            if text:
                for t in set(analyze(text)):
                    originals.setdefault(t, []).append(i)
        terms = KeywordTermSets(keyword, originals)
    else:
        terms = TermSets.build(sets())
    df = DocFreq(terms)
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
    return Calibration(len(memories), df, terms, background, near)


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
            memo = (vecs, build(engine.vault.memories, vecs, _keyword_index(engine)))
        engine._derived["calibration"] = memo
    cal: Calibration = memo[1]
    return cal


def _keyword_index(engine: Any) -> Any:
    """One of the engine's keyword indexes analysed as the calibration analyses (stemmed, no
    stop words), or None (the keyword channel off, or other analysis settings)."""
    for kidx in getattr(engine, "_kw", {}).values():
        if kidx.stem and kidx.stop_words:
            return kidx
    return None


def _same_matrix(a: tuple[list[str], np.ndarray], b: tuple[list[str], np.ndarray]) -> bool:
    """True when two (ids, vectors) pairs hold the same ids in the same order and equal rows."""
    if a[0] is b[0] and a[1] is b[1]:  # the index's very matrix (kept through a swap)
        return True
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
    cosine, empty without vectors)."""
    if qt.held is not None and isinstance(cal.terms, TermSets):
        cos = np.full(len(cal.terms.ids), np.nan)
        pos = cal.terms.pos
        for mid, c in sims.items():
            i = pos.get(mid)
            if i is not None:
                cos[i] = c
        return best_evidence_array(cal, qt, cos)
    return max((evidence(cal, qt, mid, sims.get(mid)).value for mid in cal.terms), default=0.0)


def best_evidence_array(cal: Calibration, qt: QueryTerms, cos: np.ndarray) -> float:
    """`best_evidence` over every memory at once: `cos` holds each memory's cosine in
    `TermSets.ids` order (NaN: none). The same float operations in the same order as
    `evidence` (the matched IDF weights summed in query-term order, divided by the total,
    plus the clipped vector standing), so the result is the same number."""
    assert isinstance(cal.terms, TermSets) and qt.held is not None
    n = len(cal.terms.ids)
    if n == 0:
        return 0.0
    lex = np.zeros(n)
    for t in qt.accept:
        lex = np.where(qt.held[t], lex + qt.weight[t], lex)
    lex = lex / qt.total if qt.total > 0 else np.zeros(n)
    vec = np.zeros(n)
    if cal.background is not None and cal.near is not None:
        span = cal.near - cal.background
        if span > 0:
            ok = ~np.isnan(cos)
            vec[ok] = np.minimum(1.0, np.maximum(0.0, (cos[ok] - cal.background) / span))
    return float(np.max(lex + vec))


def probe_bests(engine: Any) -> tuple[float, ...]:
    """Each probe's best evidence in the engine's vault, sorted; memoised with the
    calibration (one query embedding per probe, through the index's cache)."""
    cal = for_engine(engine)
    memo = engine._derived.get("probe_bests")
    if memo is not None and memo[0] is cal:
        cached: tuple[float, ...] = memo[1]
        return cached
    vecs = engine.memory_vectors()
    kept_at = _kept_bests_at(engine)
    if kept_at is not None:
        got = _load_bests(*kept_at)
        if got is not None:
            engine._derived["probe_bests"] = (cal, got)
            return got
    ids = [i for i in vecs if i in cal.terms]
    mat = _matrix(engine, vecs, ids)
    ready = _shipped_for(engine.index) if mat is not None else None
    at = np.array([cal.terms.pos[i] for i in ids], dtype=np.int64) if isinstance(
        cal.terms, TermSets) else None
    out = []
    for n, text in enumerate(PROBES):
        words = list(dict.fromkeys(w for w in _words(text)))
        qt = query_terms(cal, tuple(analyze(text)), tuple(words),
                         one_edit_corrections(engine, words))
        q = None
        if mat is not None and engine.index is not None:
            if ready is not None:
                q = ready[n]
            else:
                try:
                    q = engine.index.embed_query(text)
                except Exception:  # no embedder at hand: lexical evidence only
                    q = None
            if q is not None and q.shape[-1] != mat.shape[1]:
                q = None
        if at is not None and qt.held is not None:  # every memory at once (TermSets)
            cos = np.full(len(cal.terms), np.nan)
            if q is not None and mat is not None:
                cos[at] = (mat @ q).astype(np.float64)
            out.append(best_evidence_array(cal, qt, cos))
            continue
        sims: dict[str, float] = {}
        if q is not None and mat is not None:
            sims = dict(zip(ids, (mat @ q).tolist(), strict=True))
        out.append(best_evidence(cal, qt, sims))
    result = tuple(sorted(out))
    engine._derived["probe_bests"] = (cal, result)
    if kept_at is not None and not getattr(engine.index, "read_only", False):
        _save_bests(*kept_at, result)
    return result


#: Bump when what `_kept_bests_at` keys on, or the file it writes, changes.
KEPT_FORMAT = 1


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """SHA-256 of every source the probes' best evidence depends on: the engine, the index
    (vocabulary, corrections, vectors) and the vault reader (read once per process)."""
    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"kept bests {KEPT_FORMAT}\n".encode())
    for sub in ("engine", "engine/stages", "index", "vault"):
        for f in sorted((pkg / sub).glob("*.py")):
            with contextlib.suppress(OSError):
                h.update(f"{sub}/{f.name}".encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _kept_bests_at(engine: Any) -> tuple[Path, str] | None:
    """(file, key) of the probes' best evidence kept beside the engine's index file: a
    re-open of an unchanged vault takes them from there instead of scoring the 24 probes
    against every memory again (24 products with the whole vector matrix, the probes'
    term postings and corrections: ~1 s of CPU at 100k memories). The key covers what they
    are computed from: the code (`_code_digest`), every memory (the engine's fingerprint and
    paths), the keyword index the term sets come from, the embedder, and the vector matrix
    itself (its ids, shape and a CRC-32 of its bytes: ~0.05 s at 100k x 384). None without
    an index file or the matrix (`Engine.memory_vectors` read it)."""
    target = side_path(getattr(engine.index, "path", None), ".probe-bests")
    held = engine._derived.get("vector_matrix")
    if target is None or held is None:
        return None
    ids, mat = held
    kidx = _keyword_index(engine)
    info = dict(getattr(engine.index, "embedder_info", None) or {})
    h = hashlib.sha256(f"{_code_digest()}\0{engine.fingerprint}\0{probes_digest()}\0"
                       f"{kidx is not None}\0{info.get('name')}\0{info.get('model')}\0"
                       f"{info.get('dim')}\0{mat.shape}\0{mat.dtype.str}\0".encode())
    h.update("\0".join([m.path for m in engine.vault.memories.values()]).encode(
        "utf-8", "surrogateescape"))
    h.update(b"\1" + "\0".join(ids).encode("utf-8", "surrogateescape"))
    h.update(zlib.crc32(np.ascontiguousarray(mat).data).to_bytes(4, "little"))
    return target, h.hexdigest()


def _load_bests(target: Path, key: str) -> tuple[float, ...] | None:
    """The kept bests when `target` holds them under `key` (floats written exactly)."""
    try:
        rec = json.loads(target.read_text(encoding="utf-8"))
        if rec.get("key") != key or len(rec["bests"]) != len(PROBES):
            return None
        return tuple(float.fromhex(x) for x in rec["bests"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _save_bests(target: Path, key: str, bests: tuple[float, ...]) -> None:
    """Keep `bests` under `key` (written aside, then renamed into place; best effort)."""
    data = json.dumps({"key": key, "bests": [b.hex() for b in bests]}).encode("utf-8")
    write_side(target, lambda fh: fh.write(data))


def _matrix(engine: Any, vecs: Mapping[str, np.ndarray], ids: list[str]) -> np.ndarray | None:
    """The rows of `ids` as one matrix: the matrix `Engine.memory_vectors` took `vecs` from
    when it holds exactly those rows in that order (the usual case: no 150 MB copy at 100k
    memories, and no second read of the index), else a stacked copy."""
    if not ids:
        return None
    held = engine._derived.get("vector_matrix")
    if held is not None and len(ids) == len(vecs) and list(held[0]) == ids:
        return np.ascontiguousarray(held[1])
    return np.stack([vecs[i] for i in ids])


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


@functools.lru_cache(maxsize=8)
def _median(bests: tuple[float, ...]) -> float:
    """`quantile(bests, 0.5)`, once per vault's probe results (numpy's quantile costs about
    as much as a whole stage, and the floor asks on every recall)."""
    return quantile(bests, 0.5)


def floor_for(engine: Any, minimum: float, margin: float) -> tuple[float, str]:
    """The calibrated floor of the engine's vault: `margin` x the median of the probes' best
    evidence (what a typical off-topic query finds here), never under `minimum`; and how it
    was reached, for the trace."""
    bests = probe_bests(engine)
    median = _median(bests)
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
    held: Mapping[str, np.ndarray] | None = None
    """Query term -> boolean mask over the calibration's memories (`TermSets.ids` order):
    holds one of its accepted terms. None when the calibration keeps plain sets (tests)."""


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
    held = ({t: cal.terms.holders(acc) for t, acc in accept.items()}
            if isinstance(cal.terms, TermSets) else None)
    return QueryTerms(accept, weight, sum(weight.values()), held)


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
    if qt.held is not None and isinstance(cal.terms, TermSets):
        i = cal.terms.pos.get(memory_id)
        matched = () if i is None else tuple(t for t in qt.accept if qt.held[t][i])
    else:
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


__all__ = ["PROBES", "Calibration", "Evidence", "QueryTerms", "best_evidence", "build",
           "evidence", "floor_for", "for_engine", "one_edit_corrections", "probe_bests",
           "quantile", "query_terms"]
