"""The index-backed stages on a real index: fuzzy (three sub-queries), signature, short-circuit,
vector (real MiniLM on a tiny vault) and turns."""

from __future__ import annotations

import shutil

import pytest

from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import Config, load_preset
from recall_tui.index import signature as lsh
from recall_tui.index.embed import make_embedder
from recall_tui.index.rows import embed_text
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.engine_vaults import mem, write_vault


@pytest.fixture(scope="module")
def sample_engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("idx") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".recall"))
    vault = read_vault(root)
    index = Index.open(vault, make_embedder("none")[0])
    yield Engine(vault, index, Config())
    index.close()


def test_fuzzy_tolerates_a_typo_and_names_the_subquery(sample_engine):
    tr = sample_engine.recall("postgress upgrade", now=PINNED_NOW)
    fz = tr.stage("fuzzy")
    assert not fz.skipped and fz.candidates
    notes = {c.note for c in fz.candidates}
    # Default `trigram_mode = correct`: "postgress" is not a word any memory has, so it is
    # corrected against the vocabulary and the trace says to what.
    assert notes <= {"porter", "corrected", "original"}
    assert "corrected" in notes
    assert "postgress→postgres" in fz.info_dict()["corrections"]
    assert len({c.id for c in fz.candidates}) == len(fz.candidates)
    assert any("postgres" in sample_engine.vault.memories[c.id].title.lower()
               for c in fz.candidates)


def test_signature_stage_matches_hand_hamming(sample_engine):
    m = next(iter(sample_engine.vault.memories.values()))
    query = m.title + " " + m.summary
    tr = sample_engine.recall(query, now=PINNED_NOW)
    sg = tr.stage("signature")
    assert not sg.skipped
    q = lsh.signature(query)
    sims = {mid: lsh.hamming_similarity(q, lsh.signature(embed_text(mm)))
            for mid, mm in sample_engine.vault.memories.items()}
    expected = sorted((x for x in sims.items() if x[1] >= 0.65), key=lambda x: (-x[1], x[0]))[:5]
    assert [(c.id, round(c.score, 9)) for c in sg.candidates] == \
        [(i, round(s, 9)) for i, s in expected]
    assert len(sg.candidates) <= 5 and all(c.score >= 0.65 for c in sg.candidates)


def test_short_circuit_skips_vector_and_signature(sample_engine):
    cfg = load_preset("abmind")
    tr = sample_engine.recall("billing invoice", now=PINNED_NOW, config=cfg, k=3)
    sc = tr.stage("short-circuit")
    assert ("fired", "yes") in sc.info and not sc.skipped
    for name in ("vector", "signature"):
        st = tr.stage(name)
        assert st.skipped and st.reason.startswith("short-circuit: fuzzy returned")
    assert not tr.stage("consolidation").skipped  # S6 always runs
    assert tr.stage("graph").reason != "short-circuit"


def test_short_circuit_does_not_fire_when_fuzzy_is_short(sample_engine):
    cfg = load_preset("abmind")
    tr = sample_engine.recall("zyxwv qqqq", now=PINNED_NOW, config=cfg)
    assert ("fired", "no") in tr.stage("short-circuit").info
    assert not tr.stage("signature").skipped


def test_vector_skipped_without_embedder(sample_engine):
    tr = sample_engine.recall("what does the user eat", now=PINNED_NOW)
    v = tr.stage("vector")
    assert v.skipped and v.reason == "no embedder"
    t = sample_engine.recall("what does the user eat", now=PINNED_NOW,
                             filters=Filters(include_turns=True))
    assert t.stage("turns").skipped and "no embedder" in t.stage("turns").reason


@pytest.fixture(scope="module")
def tiny_vector_engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("vec") / "v"
    vault = write_vault(root, dict([
        mem("stockholm", "Where Stefan lives", "Stefan is based in Stockholm, Sweden."),
        mem("vegan", "Diet", "Maya eats no animal products at all."),
        mem("caddy", "Reverse proxy", "Caddy terminates TLS for the homelab."),
        mem("run", "Running", "Training for a half marathon in April."),
    ]))
    sessions = root / "sessions"
    sessions.mkdir()
    (sessions / "s-417.jsonl").write_text(
        '{"seq": 1, "role": "user", "text": "I went vegan in January", "at": "2026-01-05T10:00:00Z"}\n'
        '{"seq": 2, "role": "assistant", "text": "Noted, no meat or dairy.", "at": "2026-01-05T10:00:05Z"}\n'
        '{"seq": 3, "role": "user", "text": "Renew the TLS certificate", "at": "2026-01-05T10:01:00Z"}\n')
    vault = read_vault(root)
    emb, _ = make_embedder("local")
    index = Index.open(vault, emb)
    yield Engine(vault, index, Config().with_value("vector.threshold", 0.3))
    index.close()


def test_vector_channel_finds_a_paraphrase(tiny_vector_engine):
    tr = tiny_vector_engine.recall("which city is Stefan's home", now=PINNED_NOW)
    v = tr.stage("vector")
    assert not v.skipped, v.reason
    assert v.candidates[0].id == "stockholm" and v.candidates[0].score >= 0.3
    assert all(c.score >= 0.3 for c in v.candidates)
    tr = tiny_vector_engine.recall("does maya eat meat", now=PINNED_NOW, why=["run"])
    assert tr.hits[0].id == "vegan"
    assert any(d.startswith("vector: similarity") for d in tr.why_of("run").details)


def test_turns_reported_beside_the_ranking(tiny_vector_engine):
    plain = tiny_vector_engine.recall("when did I become vegan", now=PINNED_NOW)
    assert plain.turns == () and plain.stage("turns").skipped
    tr = tiny_vector_engine.recall("when did I become vegan", now=PINNED_NOW,
                                   filters=Filters(include_turns=True))
    st = tr.stage("turns")
    assert not st.skipped, st.reason
    assert tr.turns and tr.turns[0].session_id == "s-417" and tr.turns[0].seq == 1
    assert st.candidates[0].id == "turn:s-417#1"
    assert [h.id for h in tr.hits] == [h.id for h in plain.hits]  # never fused
