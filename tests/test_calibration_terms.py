"""The calibration's term sets (built from one pass over a memory's fields joined) are exactly
the union of `analyze` over each keyword field and the original text, for every memory of
the judged vaults; document frequencies follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_tui.engine.bm25 import FIELDS, KeywordIndex, field_text
from recall_tui.engine.calibration import KeywordTermSets, build
from recall_tui.engine.text import analyze
from recall_tui.vault.reader import read_vault

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("from_keyword_index", [False, True], ids=["analysed", "from-index"])
@pytest.mark.parametrize("name", ["sample-vault", "sample-vault-chat", "sample-vault-turns"])
def test_term_sets_are_the_union_of_each_fields_analysis(name, from_keyword_index):
    """Both ways of getting the term sets (analysing every memory, or reading the keyword
    index's postings plus the translated memories' `original`) give these sets."""
    vault = read_vault(ROOT / name)
    kidx = KeywordIndex(list(vault.memories.values())) if from_keyword_index else None
    cal = build(vault.memories, {}, kidx)
    assert isinstance(cal.terms, KeywordTermSets) == from_keyword_index
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
    if not from_keyword_index:
        # Each term's postings: its memories' positions, strictly ascending (the sorted keys of
        # `TermSets.build` give what a stable argsort by term gave).
        sets, ids = cal.terms, list(cal.terms)
        for term, tid in sets.vocab.items():
            got = sets.docs[sets.offsets[tid]:sets.offsets[tid + 1]].tolist()
            assert got == [i for i, mid in enumerate(ids) if term in expected[mid]], term
    if from_keyword_index:  # the originals take part (sample-vault holds translated memories)
        assert name != "sample-vault" or any(getattr(m, "original", None)
                                             for m in vault.memories.values())
        assert len(cal.doc_freq) == len(df)


def test_keyword_index_with_other_analysis_is_not_used():
    """A keyword index built without stemming or with stop words kept holds other terms: the
    calibration analyses the memories itself then (the same sets as without an index)."""
    vault = read_vault(ROOT / "sample-vault")
    plain = build(vault.memories, {})
    for stem, stop in ((False, True), (True, False)):
        kidx = KeywordIndex(list(vault.memories.values()), stem=stem, stop_words=stop)
        cal = build(vault.memories, {}, kidx)
        assert not isinstance(cal.terms, KeywordTermSets)
        assert dict(cal.doc_freq) == dict(plain.doc_freq)
    # ... and an index over the memories in another order is not used either
    ordered = sorted(vault.memories.values(), key=lambda m: m.id, reverse=True)
    assert not isinstance(build(vault.memories, {}, KeywordIndex(ordered)).terms, KeywordTermSets)


def test_merged_postings_kept_within_their_bound():
    """The merged postings a `KeywordTermSets` keeps are dropped past `KEEP` positions, and
    the answers stay the same."""
    vault = read_vault(ROOT / "sample-vault")
    full = build(vault.memories, {}).doc_freq
    cal = build(vault.memories, {}, KeywordIndex(list(vault.memories.values())))
    assert isinstance(cal.terms, KeywordTermSets)
    cal.terms.KEEP = 50  # this instance's bound, small for the test
    for _ in range(2):
        for term, df in full.items():
            assert cal.doc_freq[term] == df, term
            assert cal.terms._kept <= 50 or len(cal.terms._merged) == 1
