"""Each preset reproduces its seed's invariants; presets load, round-trip and are searchable."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import Config, knobs, list_presets, load_preset
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.engine_vaults import mem, write_vault

SEEDS = ["abmind", "bastra", "default", "memoria", "memoryvault", "memoturn"]


@pytest.fixture(scope="module")
def sample():
    return read_vault(SAMPLE_VAULT)


def test_all_presets_present_and_round_trip():
    assert set(SEEDS) <= set(list_presets())
    for name in SEEDS:
        cfg = load_preset(name)
        assert Config.from_toml(cfg.to_toml()) == cfg
        assert cfg.description


def test_unknown_key_and_bad_type_name_the_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[mmr]\nlamda = 0.5\n")
    with pytest.raises(ValueError, match=r"bad.toml: mmr.lamda: unknown setting"):
        load_preset(str(bad))
    bad.write_text("k = \"five\"\n")
    with pytest.raises(ValueError, match=r"bad.toml: k: expected int"):
        load_preset(str(bad))
    with pytest.raises(ValueError, match="unknown preset"):
        load_preset("no-such-preset")


def test_user_presets_are_found(tmp_path, monkeypatch):
    vault_presets = tmp_path / "v" / ".recall" / "presets"
    vault_presets.mkdir(parents=True)
    (vault_presets / "mine.toml").write_text('extends = "memoturn"\nk = 3\n')
    cfg = load_preset("mine", tmp_path / "v")
    assert cfg.k == 3 and cfg.fuse.weights.topic == 2.0 and cfg.vector.skip_types == ("task",)
    assert "mine" in list_presets(tmp_path / "v")


def test_knobs_have_docs():
    ks = list(knobs(Config()))
    assert ("mmr.lam", "float", 0.7) in [(p, t, v) for p, t, v, _ in ks]
    assert all(doc for _, _, _, doc in ks)
    assert Config().with_value("fuse.weights.topic", 3.0).fuse.weights.topic == 3.0


def test_memoturn(sample, tmp_path):
    cfg = load_preset("memoturn")
    assert cfg.k == 8 and cfg.fuse.rrf_k == 60 and cfg.fuse.weights.topic == 2.0
    tr = Engine(sample, None, cfg, preset="memoturn").recall(
        "vegan", now=PINNED_NOW, topic_key="user.diet")
    assert len(tr.hits) <= 8
    dropped = {d.id: d.reason for d in tr.stage("filter").dropped}
    assert all("superseded" in r or "expired" in r or "_archive" in r or "_inbox" in r
               for r in dropped.values())
    # recency tiebreak: two memories that score the same come newest first
    vault = write_vault(tmp_path / "v", dict([
        mem("older", "Tie", "same words here", created="2026-01-01T00:00:00Z"),
        mem("newer", "Tie", "same words here", created="2026-06-01T00:00:00Z"),
        mem("f1", "Other", "x"), mem("f2", "Other two", "y"),
        mem("exp", "Tie", "same words here", expires="2026-11-01T00:00:00Z"),
    ]))
    tr = Engine(vault, None, cfg).recall("same words", now=PINNED_NOW)
    assert [h.id for h in tr.hits] == ["newer", "older"]  # never padded to 8, expired dropped


def test_bastra(sample):
    cfg = load_preset("bastra")
    assert cfg.floor.enabled and cfg.floor.min_score == 30 and cfg.boosts.staleness.enabled
    tr = Engine(sample, None, cfg, preset="bastra").recall("kubectl production", now=PINNED_NOW)
    assert all(h.score >= 30 for h in tr.hits)
    assert all(d.reason.startswith(("score", "rank", "its parent")) for d in tr.stage("floor").dropped)
    assert any(d.reason.startswith("score") for d in tr.stage("floor").dropped)
    direct = [h for h in tr.hits if h.hop is None]
    assert len(direct) <= cfg.k  # hops are appended beyond k
    for h in tr.hits:
        assert [b.name for b in h.explain.boosts] == ["staleness"]
    low = Engine(sample, None, cfg).recall("kubectl production", now=PINNED_NOW,
                                           filters=Filters(min_score=0))
    assert len(low.hits) >= len(tr.hits)


def test_abmind(sample):
    cfg = load_preset("abmind")
    assert cfg.short_circuit.enabled and cfg.mmr.enabled and cfg.mmr.lam == 0.7
    assert cfg.mmr.similarity == "jaccard"
    tr = Engine(sample, None, cfg, preset="abmind").recall("argo-cd deploys billing", now=PINNED_NOW)
    assert not tr.stage("consolidation").skipped
    assert not tr.stage("graph").skipped  # S8 always runs (an entity is named)
    assert all(h.explain.mmr is not None for h in tr.hits)
    names = {b.name for h in tr.hits for b in h.explain.boosts}
    assert {"recency", "trust", "credibility", "tier", "emotion", "cross_channel"} <= names


def test_memoria(sample):
    cfg = load_preset("memoria")
    assert cfg.rerank.enabled and (cfg.rerank.top_n, cfg.rerank.keep) == (30, 10)
    assert cfg.graph.mode == "ppr" and cfg.filter.bitemporal and cfg.k == 10
    tr = Engine(sample, None, cfg, preset="memoria").recall("billing service postgres", now=PINNED_NOW)
    rr = tr.stage("rerank")
    assert rr.skipped and rr.reason == "no cross-encoder configured: truncated the top 30 to 10"
    assert len(tr.hits) <= 10


def test_memoria_with_a_user_reranker(sample):
    class Reverse:
        name = "reverse-title"

        def score(self, query, texts):
            return [-len(t) for t in texts]

    cfg = load_preset("memoria")
    tr = Engine(sample, None, cfg, reranker=Reverse()).recall("billing service postgres", now=PINNED_NOW)
    rr = tr.stage("rerank")
    assert not rr.skipped and len(rr.candidates) == 10
    assert [c.score for c in rr.candidates] == sorted((c.score for c in rr.candidates), reverse=True)
    assert all(h.explain.rerank is not None for h in tr.hits)


def test_memoryvault(sample):
    cfg = load_preset("memoryvault")
    assert cfg.fuse.method == "linear" and cfg.k == 5
    assert (cfg.fuse.linear_similarity, cfg.fuse.linear_keyword) == (0.7, 0.3)
    tr = Engine(sample, None, cfg, preset="memoryvault").recall("inbox dentist router", now=PINNED_NOW)
    for h in tr.hits:
        assert not h.path.startswith(("_inbox/", "_archive/"))
        m = sample.memories[h.id]
        assert m.status == "active"
    inbox = Engine(sample, None, cfg).recall("inbox dentist router", now=PINNED_NOW,
                                             filters=Filters(include_inbox=True))
    assert any(h.path.startswith("_inbox/") for h in inbox.hits)
