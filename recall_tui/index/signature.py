"""Locality-sensitive bit signatures (SimHash) for the `signature` channel: no model needed.

Each text becomes a 256-bit integer. Every feature (a normalised word, or a character 3-gram
of a word) is hashed with blake2b to 256 bits and votes +w / -w on each bit; the signature keeps
the bits whose vote is positive. Texts sharing most features agree on most bits, so Hamming
similarity approximates their feature overlap.

Why these features: words alone make a one-word typo flip a whole feature, and 3-grams alone
are dominated by the few that every English text shares ("the", "ing", "ion"). Words carry
twice the weight of a 3-gram; a feature counts once however often it repeats (a set, not term
frequencies), so one repeated word cannot swing a whole signature; and a short list of function
words is left out, because they are in every text and would pull unrelated texts together.
Headless, deterministic across runs and machines (no Python `hash`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

#: Signature width used everywhere unless a caller asks otherwise (seed 001: 256 bits).
BITS = 256
#: Weight of a whole-word feature relative to a character 3-gram.
WORD_WEIGHT = 2.0

_WORD = re.compile(r"[^\W_]+")
#: ASCII characters `_WORD` does not match (all but letters and digits) mapped to a space.
_ASCII_SEPARATORS = {
    c: " " for c in range(128) if not _WORD.fullmatch(chr(c))
}
#: Function words present in almost every text; as features they only add shared noise.
_STOP = frozenset(
    "a an and are as at be but by for from has have i in is it its of on or that the this to "
    "was were will with we you our my your not no do does did so if then than there their they "
    "he she his her them what which who when where how all any can".split()
)


def _fold(text: str) -> str:
    """Lower-case and strip diacritics, so `Café` and `cafe` are the same feature."""
    lowered = text.lower()
    if lowered.isascii():  # NFKD leaves ASCII as it is and it has no combining marks
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    if decomposed.isascii():
        return decomposed
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _content_words(text: str) -> list[str]:
    """The distinct content words of `text` (folded, function words left out), in order of
    first use: a repeated word adds no feature."""
    folded = _fold(text)
    if folded.isascii():  # the same words as the pattern finds, by C string methods
        words = folded.translate(_ASCII_SEPARATORS).split()
    else:
        words = _WORD.findall(folded)
    return [w for w in dict.fromkeys(words) if w not in _STOP]


def _make_digest(feature: str, nbytes: int) -> bytes:
    """A deterministic `nbytes`-long hash of one feature."""
    digest = b""
    counter = 0
    while len(digest) < nbytes:  # blake2b gives at most 64 bytes a call
        size = min(64, nbytes - len(digest))
        digest += hashlib.blake2b(
            feature.encode("utf-8"), digest_size=size, salt=counter.to_bytes(8, "little")
        ).digest()
        counter += 1
    return digest


#: 3-gram digests by width, then by feature (a 3-gram recurs across many words); emptied
#: when one holds _DIGESTS_MAX features.
_DIGESTS: dict[int, dict[str, bytes]] = {}
_DIGESTS_MAX = 1 << 17


def _digest(feature: str, nbytes: int) -> bytes:
    """`_make_digest`, remembered."""
    cache = _DIGESTS.setdefault(nbytes, {})
    digest = cache.get(feature)
    if digest is None:
        if len(cache) >= _DIGESTS_MAX:
            cache.clear()
        digest = cache[feature] = _make_digest(feature, nbytes)
    return digest


#: By width, then by word: the digest of its `w:` feature (weight WORD_WEIGHT) and its
#: 3-grams' digests by `g:` feature (weight 1); the vocabulary repeats across a vault, so each
#: word is cut and hashed once. Emptied when one holds _WORDS_MAX words.
_WORD_DIGESTS: dict[int, dict[str, tuple[bytes, dict[str, bytes]]]] = {}
_WORDS_MAX = 1 << 17


def _word_digests(word: str, nbytes: int) -> tuple[bytes, dict[str, bytes]]:
    cache = _WORD_DIGESTS.setdefault(nbytes, {})
    entry = cache.get(word)
    if entry is None:
        padded = f"^{word}$"
        grams: dict[str, bytes] = {}
        for i in range(len(padded) - 2):
            g = "g:" + padded[i : i + 3]
            if g not in grams:
                grams[g] = _digest(g, nbytes)
        if len(cache) >= _WORDS_MAX:
            cache.clear()
        entry = cache[word] = (_make_digest("w:" + word, nbytes), grams)
    return entry


def signature(text: str, bits: int = BITS) -> int:
    """The SimHash of `text` as a `bits`-bit integer (0 for a text with no content words)."""
    words = _content_words(text)
    if not words:
        return 0
    nbytes = (bits + 7) // 8
    # The features: each content word (weight WORD_WEIGHT), then the distinct 3-grams inside
    # them (weight 1); the votes are sums of small integers, so their order changes nothing.
    word_blobs: list[bytes] = []
    gram_blobs: dict[str, bytes] = {}
    for word in words:
        wd, gd = _word_digests(word, nbytes)
        word_blobs.append(wd)
        gram_blobs.update(gd)
    blobs = word_blobs + list(gram_blobs.values())
    n = len(blobs)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    # Bit i of the little-endian hash integer is bit i % 8 of byte i // 8.
    if nbytes * 8 == bits:  # one flat unpack (several times faster than along an axis)
        hbits = np.unpackbits(raw, bitorder="little").reshape(n, bits)
    else:
        hbits = np.unpackbits(raw.reshape(n, nbytes), axis=1, bitorder="little")
        hbits = hbits[:, :bits]
    weights = np.ones(n, dtype=np.float32)
    weights[: len(word_blobs)] = WORD_WEIGHT
    # The vote on bit j is sum_f w_f * (2 * b_fj - 1) = 2 * (w @ b)_j - sum(w). The weights
    # are small integers (2 and 1) and a text under the 1 MiB file limit has far fewer than
    # 2**22 features, so every partial sum is an integer float32 holds exactly: the sign is
    # the one the feature-by-feature sum in float64 gave (float32 halves the product's cost).
    votes = 2.0 * (weights @ hbits.astype(np.float32)) - weights.sum(dtype=np.float64)
    packed = np.packbits(votes > 0, bitorder="little").tobytes()
    return int.from_bytes(packed, "little")


def hamming_similarity(a: int, b: int, bits: int = BITS) -> float:
    """1 - (differing bits / bits): 1.0 for identical signatures, about 0.5 for unrelated ones."""
    return 1.0 - bin((a ^ b) & ((1 << bits) - 1)).count("1") / bits


def to_bytes(sig: int, bits: int = BITS) -> bytes:
    """The signature as a fixed-width little-endian blob (how the index stores it)."""
    return sig.to_bytes((bits + 7) // 8, "little")


def from_bytes(blob: bytes) -> int:
    """Inverse of `to_bytes`."""
    return int.from_bytes(blob, "little")
