"""keyword stage: BM25 per field equals rank_bm25.BM25Okapi (the oracle), weighted sum, matched terms."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from recall_tui.engine import Engine
from recall_tui.engine.bm25 import FIELDS, FieldBM25, KeywordIndex, field_text
from recall_tui.engine.config import Config
from recall_tui.engine.text import analyze
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.engine_vaults import mem, write_vault


@pytest.fixture(scope="module")
def sample():
    return read_vault(SAMPLE_VAULT)


QUERIES = ["postgres upgrade", "what can maya eat", "billing database migration database",
           "kubectl production", "vegan diet", "zzz-unknown-term"]


@pytest.mark.parametrize("query", QUERIES)
def test_each_field_equals_rank_bm25(sample, query):
    mems = list(sample.memories.values())
    idx = KeywordIndex(mems)
    terms = analyze(query)
    for name in FIELDS:
        corpus = [analyze(field_text(m, name)) for m in mems]
        if not any(corpus):
            continue
        oracle = BM25Okapi(corpus).get_scores(terms)
        ours = idx.fields[name].scores(terms)
        np.testing.assert_allclose(ours, oracle, rtol=1e-9, atol=1e-12, err_msg=name)


def test_weighted_sum_of_fields_and_ranking(sample):
    cfg = Config()
    eng = Engine(sample, None, cfg)
    mems = list(sample.memories.values())
    terms = analyze("postgres upgrade")
    expected = np.zeros(len(mems))
    weights = {f: getattr(cfg.keyword, f) for f in FIELDS}
    for name in FIELDS:
        corpus = [analyze(field_text(m, name)) for m in mems]
        expected += weights[name] * BM25Okapi(corpus).get_scores(terms)
    tr = eng.recall("postgres upgrade", now=PINNED_NOW)
    cands = tr.stage("keyword").candidates
    assert cands, "the keyword stage found nothing"
    by_id = {m.id: i for i, m in enumerate(mems)}
    for c in cands:
        assert c.score == pytest.approx(expected[by_id[c.id]], rel=1e-9)
    scores = [c.score for c in cands]
    assert scores == sorted(scores, reverse=True)
    assert [c.rank for c in cands] == list(range(1, len(cands) + 1))


def test_negative_idf_gets_epsilon_floor_like_rank_bm25():
    # "common" is in 3 of 4 docs: negative idf, floored to epsilon x mean idf by rank_bm25.
    docs = [["common", "alpha"], ["common", "beta"], ["common", "gamma", "gamma"], ["delta"]]
    ours = FieldBM25(docs)
    oracle = BM25Okapi(docs)
    for q in (["common"], ["gamma"], ["common", "gamma", "common"], ["nothing"]):
        np.testing.assert_allclose(ours.scores(q), oracle.get_scores(q), rtol=1e-12)
    assert ours.idf["common"] == pytest.approx(oracle.idf["common"])
    assert ours.idf["common"] > 0  # the floor, not the raw negative log


def test_empty_field_everywhere_scores_zero_instead_of_crashing():
    idx = FieldBM25([[], [], []])
    assert list(idx.scores(["x"])) == [0.0, 0.0, 0.0]


def test_matched_terms_per_field(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("pg", "Postgres upgrade plan", "We upgrade the database in December.",
            recall_when=["planning a postgres upgrade"], tags=["database"]),
        mem("cat", "The cat", "Pixel the cat eats wet food."),
    ]))
    eng = Engine(vault, None, Config())
    tr = eng.recall("postgres upgrades database", now=PINNED_NOW)
    kw = tr.stage("keyword")
    assert [c.id for c in kw.candidates] == ["pg"]
    hit = tr.hit("pg")
    fields = {m.field: set(m.terms) for m in hit.explain.matched_terms}
    assert fields["recall_when"] == {"postgres", "upgrades"}
    assert fields["title"] == {"postgres", "upgrades"}
    assert fields["tags"] == {"database"}
    assert fields["summary"] == {"upgrades", "database"}
    assert dict((m.field, m.weight) for m in hit.explain.matched_terms)["recall_when"] == 5.0


def test_field_weight_changes_the_ranking(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("t", "Caddy reverse proxy", "Homelab web server."),
        mem("b", "Homelab web server", "Homelab web server.", body="caddy caddy caddy runs it"),
        # fillers: with 2 documents a term in one of them has idf log(1.5/1.5) = 0
        mem("f1", "Dentist", "Appointment in December."),
        mem("f2", "Running", "Half marathon in April."),
    ]))
    base = Config()
    top = Engine(vault, None, base).recall("caddy", now=PINNED_NOW).stage("keyword").candidates
    assert top[0].id == "t"  # title x4 beats body x1
    cfg = base.with_value("keyword.title", 0.0).with_value("keyword.body", 10.0)
    top = Engine(vault, None, cfg).recall("caddy", now=PINNED_NOW).stage("keyword").candidates
    assert [c.id for c in top] == ["b"]


def test_contributions_made_per_query_term_are_the_doubles_of_one_block(sample):
    """The postings keep term frequencies (2 bytes, not an 8-byte contribution: 48 MB less
    at 100k) and a query makes its terms' contributions: bit for bit what one whole-array
    evaluation over every posting gives, and the scores still equal rank_bm25's."""
    mems = list(sample.memories.values())
    idx = KeywordIndex(mems)
    for name in FIELDS:
        f = idx.fields[name]
        if not len(f.post_docs):
            continue
        assert f.post_tf.itemsize == 2, name
        idf = np.zeros(len(f.post_docs))
        for w, (lo, hi) in f.span.items():
            idf[lo:hi] = f.idf[w]
        tf = f.post_tf.astype(np.float64)
        norm = f.k1 * (1 - f.b + f.b * f.doc_len / f.avgdl)
        whole = idf * ((tf * (f.k1 + 1)) / (tf + norm[f.post_docs]))
        assert f.post_contrib.tobytes() == whole.tobytes(), name
    body = idx.fields["body"]
    terms = analyze("postgres upgrade billing database")
    corpus = [analyze(field_text(m, "body")) for m in mems]
    np.testing.assert_allclose(body.scores(terms), BM25Okapi(corpus).get_scores(terms),
                               rtol=1e-9, atol=1e-12)
