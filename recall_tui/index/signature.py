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

import functools
import hashlib
import re
import unicodedata

import numpy as np

#: Signature width used everywhere unless a caller asks otherwise (seed 001: 256 bits).
BITS = 256
#: Weight of a whole-word feature relative to a character 3-gram.
WORD_WEIGHT = 2.0

_WORD = re.compile(r"[^\W_]+")
#: Function words present in almost every text; as features they only add shared noise.
_STOP = frozenset(
    "a an and are as at be but by for from has have i in is it its of on or that the this to "
    "was were will with we you our my your not no do does did so if then than there their they "
    "he she his her them what which who when where how all any can".split()
)


def _fold(text: str) -> str:
    """Lower-case and strip diacritics, so `Café` and `cafe` are the same feature."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def features(text: str) -> dict[str, float]:
    """The weighted features of `text`: its content words and the 3-grams inside them."""
    out: dict[str, float] = {}
    for word in _WORD.findall(_fold(text)):
        if word in _STOP:
            continue
        out["w:" + word] = WORD_WEIGHT
        padded = f"^{word}$"
        for i in range(len(padded) - 2):
            out.setdefault("g:" + padded[i : i + 3], 1.0)
    return out


@functools.lru_cache(maxsize=1 << 16)
def _digest(feature: str, nbytes: int) -> bytes:
    """A deterministic `nbytes`-long hash of one feature (3-grams repeat, so it is cached)."""
    digest = b""
    counter = 0
    while len(digest) < nbytes:  # blake2b gives at most 64 bytes a call
        size = min(64, nbytes - len(digest))
        digest += hashlib.blake2b(
            feature.encode("utf-8"), digest_size=size, salt=counter.to_bytes(8, "little")
        ).digest()
        counter += 1
    return digest


def signature(text: str, bits: int = BITS) -> int:
    """The SimHash of `text` as a `bits`-bit integer (0 for a text with no content words)."""
    feats = features(text)
    if not feats:
        return 0
    nbytes = (bits + 7) // 8
    raw = np.frombuffer(b"".join(_digest(f, nbytes) for f in feats), dtype=np.uint8)
    # Bit i of the little-endian hash integer is bit i % 8 of byte i // 8.
    hbits = np.unpackbits(raw.reshape(len(feats), nbytes), axis=1, bitorder="little")[:, :bits]
    weights = np.fromiter(feats.values(), dtype=np.float64, count=len(feats))
    votes = weights @ (hbits.astype(np.float64) * 2.0 - 1.0)
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
