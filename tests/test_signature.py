"""SimHash signatures: deterministic, close for light edits, far for unrelated memories."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from recall_tui.index.rows import embed_text
from recall_tui.index.signature import BITS, from_bytes, hamming_similarity, signature, to_bytes
from recall_tui.vault.reader import read_vault
from tests.conftest import SAMPLE_VAULT


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [embed_text(m) for m in read_vault(SAMPLE_VAULT).memories.values()]


def _light_edit(text: str, rnd: random.Random) -> str:
    """Change about one word in ten: reverse it, drop it, or insert a filler word."""
    words = text.split()
    for _ in range(max(1, len(words) // 10)):
        i = rnd.randrange(len(words))
        op = rnd.random()
        if op < 0.34:
            words[i] = words[i][::-1]
        elif op < 0.67 and len(words) > 1:
            del words[i]
        else:
            words.insert(i, rnd.choice(["also", "note", "updated", "today"]))
    return " ".join(words)


def test_deterministic_across_processes():
    text = "Billing runs Postgres 16 on RDS; upgrades need ANALYZE afterwards."
    code = f"from recall_tui.index.signature import signature; print(signature({text!r}))"
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert int(other) == signature(text)
    assert 0 < signature(text) < 1 << BITS


def test_light_edits_stay_similar(texts):
    rnd = random.Random(7)
    sims = [hamming_similarity(signature(t), signature(_light_edit(t, rnd))) for t in texts]
    assert min(sims) >= 0.65, sorted(sims)[:5]


def test_unrelated_memories_are_not_similar(texts):
    sigs = [signature(t) for t in texts]
    sims = [
        hamming_similarity(sigs[i], sigs[j])
        for i in range(len(sigs))
        for j in range(i + 1, len(sigs))
    ]
    mean = sum(sims) / len(sims)
    over = sum(s >= 0.65 for s in sims) / len(sims)
    assert 0.45 < mean < 0.6, mean
    assert over < 0.01, f"{over:.2%} of memory pairs reach the 0.65 threshold"


def test_features_fold_case_and_diacritics():
    assert signature("Léa's CAFÉ notes") == signature("lea's cafe notes")
    assert signature("") == 0 and signature("the and of") == 0


def test_similarity_and_bytes():
    a, b = signature("postgres upgrade runbook"), signature("oat milk latte")
    assert hamming_similarity(a, a) == 1.0
    assert hamming_similarity(a, a ^ 0b1111) == 1 - 4 / BITS
    assert from_bytes(to_bytes(b)) == b and len(to_bytes(b)) == BITS // 8
    assert signature("x y z", bits=64) < 1 << 64


def _reference_signature(text: str, bits: int = BITS) -> int:
    """The SimHash as first written, feature by feature (the fast path must give exactly this)."""
    import hashlib
    import re
    import unicodedata

    from recall_tui.index.signature import _STOP, WORD_WEIGHT

    folded = "".join(
        c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c)
    )
    feats: dict[str, float] = {}
    for word in re.findall(r"[^\W_]+", folded):
        if word in _STOP:
            continue
        feats["w:" + word] = WORD_WEIGHT
        padded = f"^{word}$"
        for i in range(len(padded) - 2):
            feats.setdefault("g:" + padded[i : i + 3], 1.0)
    nbytes = (bits + 7) // 8
    votes = [0.0] * bits
    for f, w in feats.items():
        digest, counter = b"", 0
        while len(digest) < nbytes:
            size = min(64, nbytes - len(digest))
            digest += hashlib.blake2b(f.encode(), digest_size=size,
                                      salt=counter.to_bytes(8, "little")).digest()
            counter += 1
        h = int.from_bytes(digest, "little")
        for j in range(bits):
            votes[j] += w if (h >> j) & 1 else -w
    return sum(1 << j for j in range(bits) if votes[j] > 0)


ODD_TEXTS = [
    "",
    "the and of",  # only function words
    "Café crème brûlée at the Zoë's naïve coöperative",
    "snake_case_words and CamelCase, digits 1234 and v2.3.1-rc_4",
    "Ελληνικά κείμενα και 日本語のテキスト mixed with ASCII",
    "ﬁne ligatures ① ② and full-width ＡＢＣ",
    "repeat repeat repeat repeat the same word word word",
    "tabs\tand\nnewlines\r\nand\x0bvertical whitespace",
]


@pytest.mark.parametrize("bits", [BITS, 64, 100, 520])
def test_fast_signature_equals_the_feature_by_feature_sum(texts, bits):
    sample = texts[:: max(1, len(texts) // 40)] if bits != BITS else texts
    for text in [*ODD_TEXTS, *sample]:
        assert signature(text, bits) == _reference_signature(text, bits), text[:60]
