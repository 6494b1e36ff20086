"""Text analysis shared by every lexical stage: folding, tokenising, stop words, stemming.

One analyser for the keyword index, the query, the consolidation matcher and the MMR word sets,
so a term matched in one place is the same term everywhere. The stemmer is the original Porter
(1980) algorithm, written out here so the project needs no NLP dependency. Headless.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: English stop words: function words that carry no topic (a short, conservative list, so
#: that words such as "not" or "never" that change a memory's meaning are kept).
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t d ll m re ve
    """.split()
)

_WORD = re.compile(r"[0-9a-z]+(?:['’][a-z]+)?")
_APOS = re.compile(r"['’]")
_LIGATURES = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "þ": "th"})


def fold(text: str) -> str:
    """Lower-case and strip diacritics (`Café Zürich` -> `cafe zurich`), so accents never
    decide whether a term matches."""
    if text.isascii():  # the common case, and 50x faster than decomposing
        return text.lower()
    text = text.lower().translate(_LIGATURES)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The folded word tokens of `text`, apostrophe suffixes dropped (`maya's` -> `maya`)."""
    return [_APOS.split(w, maxsplit=1)[0] if ("'" in w or "’" in w) else w
            for w in _WORD.findall(fold(text))]


def analyze(text: str, *, stem: bool = True, stop_words: bool = True) -> list[str]:
    """Tokens as the keyword index sees them: folded words, stop words removed, stemmed.
    Order and duplicates are kept (BM25 counts term frequency, and a repeated query term
    counts twice, as in rank_bm25)."""
    ws = words(text)
    if stop_words:
        ws = [w for w in ws if w not in STOP_WORDS]
    return [porter_stem(w) for w in ws] if stem else ws


def word_set(text: str) -> frozenset[str]:
    """Lower-cased word tokens for Jaccard similarity (MMR): no stemming, stop words kept out."""
    return frozenset(w for w in words(text) if w not in STOP_WORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 0 for two empty sets."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


# --- Porter stemmer (M.F. Porter, "An algorithm for suffix stripping", 1980) -----------------

_VOWELS = frozenset("aeiou")


def _is_cons(w: str, i: int) -> bool:
    c = w[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _is_cons(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    m = 0
    prev_vowel = False
    for i in range(len(stem)):
        cons = _is_cons(stem, i)
        if cons and prev_vowel:
            m += 1
        prev_vowel = not cons
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_cons(stem, i) for i in range(len(stem)))


def _ends_double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _is_cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant where the last consonant is not w, x or y."""
    if len(w) < 3:
        return False
    n = len(w)
    return (
        _is_cons(w, n - 3)
        and not _is_cons(w, n - 2)
        and _is_cons(w, n - 1)
        and w[-1] not in "wxy"
    )


def _replace(w: str, suffix: str, repl: str, min_m: int) -> str | None:
    """If w ends with suffix: replace it when the stem's measure > min_m; return the result
    (unchanged w when the condition fails) — or None when the suffix does not match."""
    if not w.endswith(suffix):
        return None
    stem = w[: len(w) - len(suffix)]
    return stem + repl if _measure(stem) > min_m else w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)


@lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case word (`connections` -> `connect`, `relational` ->
    `relat`). Words of one or two letters and words with digits are returned unchanged."""
    w = word
    if len(w) <= 2 or not w.isalpha():
        return w
    # Step 1a
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("ss"):
        pass
    elif w.endswith("s"):
        w = w[:-1]
    # Step 1b
    extra = False
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w, extra = w[:-2], True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w, extra = w[:-3], True
    if extra:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _ends_double_cons(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _measure(w) == 1 and _cvc(w):
            w += "e"
    # Step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    # Step 2
    for suf, rep in _STEP2:
        r = _replace(w, suf, rep, 0)
        if r is not None:
            w = r
            break
    # Step 3
    for suf, rep in _STEP3:
        r = _replace(w, suf, rep, 0)
        if r is not None:
            w = r
            break
    # Step 4
    for suf in _STEP4:
        if w.endswith(suf):
            stem = w[: len(w) - len(suf)]
            if _measure(stem) > 1 and (suf != "ion" or stem.endswith(("s", "t"))):
                w = stem
            break
    # Step 5a
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    # Step 5b
    if _measure(w) > 1 and _ends_double_cons(w) and w.endswith("l"):
        w = w[:-1]
    return w
