"""The calibration's term sets (built from one pass over a memory's fields joined) are exactly
the union of `analyze` over each keyword field and the original text, for every memory of
the judged vaults; document frequencies follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_tui.engine.bm25 import FIELDS, field_text
from recall_tui.engine.calibration import build
from recall_tui.engine.text import analyze
from recall_tui.vault.reader import read_vault

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["sample-vault", "sample-vault-chat", "sample-vault-turns"])
def test_term_sets_are_the_union_of_each_fields_analysis(name):
    vault = read_vault(ROOT / name)
    cal = build(vault.memories, {})
    expected = {
        mid: frozenset(t for f in [*(field_text(m, f) for f in FIELDS),
                                   getattr(m, "original", None) or ""] for t in analyze(f))
        for mid, m in vault.memories.items()
    }
    assert list(cal.terms) == list(expected)
    for mid, terms in expected.items():
        assert cal.terms[mid] == terms, mid
    df: dict[str, int] = {}
    for terms in expected.values():
        for t in terms:
            df[t] = df.get(t, 0) + 1
    assert dict(cal.doc_freq) == df
    # Each term's postings: its memories' positions, strictly ascending (the sorted keys of
    # `TermSets.build` give what a stable argsort by term gave).
    sets, ids = cal.terms, list(cal.terms)
    for term, tid in sets.vocab.items():
        got = sets.docs[sets.offsets[tid]:sets.offsets[tid + 1]].tolist()
        assert got == [i for i, mid in enumerate(ids) if term in expected[mid]], term
