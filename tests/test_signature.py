"""SimHash signatures: deterministic, close for light edits, far for unrelated memories."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from recall_tui.index.signature import BITS, from_bytes, hamming_similarity, signature, to_bytes
from recall_tui.index.store import embed_text
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
