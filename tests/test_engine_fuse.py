"""fuse: weighted RRF, the convex combination of min-max normalised scores and MemoryVault's
linear merge, against hand computation."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.stages.fuse import convex, linear, rrf
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


def test_rrf_hand_computed():
    rankings = {
        "keyword": [("a", 9.0, 1), ("b", 5.0, 2), ("c", 1.0, 3)],
        "vector": [("b", 0.9, 1), ("a", 0.8, 2)],
        "topic": [("c", 1.0, 1)],
    }
    out = rrf(rankings, {"keyword": 1.0, "vector": 1.0, "topic": 2.0}, 60)
    assert out["a"][0] == pytest.approx(1 / 61 + 1 / 62)
    assert out["b"][0] == pytest.approx(1 / 62 + 1 / 61)
    assert out["c"][0] == pytest.approx(1 / 63 + 2 / 61)
    parts = {p.channel: p for p in out["c"][1]}
    assert parts["topic"].contribution == pytest.approx(2 / 61)
    assert parts["topic"].weight == 2.0 and parts["keyword"].rank == 3


def test_convex_hand_computed():
    rankings = {
        "keyword": [("a", 9.0, 1), ("b", 5.0, 2), ("c", 1.0, 3)],
        "vector": [("b", 0.62, 1), ("a", 0.45, 2), ("d", 0.30, 3)],
        "topic": [("c", 1.0, 1)],
    }
    out = convex(rankings, {"keyword": 1.0, "vector": 4.0, "topic": 2.0})
    # keyword: (raw - 1) / (9 - 1); vector: (raw - 0.30) / (0.62 - 0.30); topic: one score -> 1
    assert out["a"][0] == pytest.approx(1.0 + 4 * (0.45 - 0.30) / 0.32)
    assert out["b"][0] == pytest.approx((5 - 1) / 8 + 4 * 1.0)
    assert out["c"][0] == pytest.approx(0.0 + 2 * 1.0)
    assert out["d"][0] == pytest.approx(0.0)
    parts = {p.channel: p for p in out["a"][1]}
    assert parts["vector"].raw == 0.45 and parts["vector"].rank == 2 and parts["vector"].weight == 4
    # unlike RRF, the size of the gap counts: b's clear vector lead outweighs a's keyword lead
    assert out["b"][0] > out["a"][0]
    assert rrf(rankings, {"keyword": 1.0, "vector": 1.0}, 60)["a"][0] == pytest.approx(
        rrf(rankings, {"keyword": 1.0, "vector": 1.0}, 60)["b"][0])


def test_engine_convex_explains_every_number(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("a", "Postgres upgrade", "Planned the postgres upgrade."),
        mem("b", "Postgres", "Database."),
        mem("c", "Dentist", "Appointment."),
    ]))
    eng = Engine(vault, None, Config().with_value("fuse.method", "convex"))
    tr = eng.recall("postgres upgrade", now=PINNED_NOW)
    fuse = tr.stage("fuse")
    info = dict(fuse.info)
    assert info["method"] == "convex" and info["ranges"].startswith("keyword ")
    top, second = tr.hits[0], tr.hits[1]
    assert top.id == "a"
    for hit in (top, second):
        assert hit.explain.fused == pytest.approx(sum(c.contribution for c in hit.explain.channels))
        rule, terms = hit.explain.fusion.split("; ")
        assert rule.startswith("convex: Σ w x (raw - worst) / (best - worst)")
        assert terms.endswith(f"= {hit.explain.fused:.4g}")
    assert "[keyword]" in top.explain.fusion
    # the best keyword candidate brings its full weight, the worst none
    assert [c.contribution for c in top.explain.channels if c.channel == "keyword"] == [1.0]
    assert [c.contribution for c in second.explain.channels if c.channel == "keyword"] == [0.0]
    # the floor's scale: 100 = the best candidate of every channel that ran (Σ w)
    assert "Σ w" in top.explain.scaling


def test_linear_merge_hand_computed():
    rankings = {"keyword": [("a", 3.0, 1), ("b", 1.0, 2)], "vector": [("b", 0.8, 1), ("c", 0.6, 2)]}
    shares = {"a": 1.0, "b": 0.5}
    out = linear(rankings, shares, {}, 0.7, 0.3)
    assert out["a"][0] == pytest.approx(0.3 * 1.0)
    assert out["b"][0] == pytest.approx(0.7 * 0.8 + 0.3 * 0.5)
    assert out["c"][0] == pytest.approx(0.7 * 0.6)


def test_engine_rrf_contributions_sum_to_fused(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("diet", "Vegan since 2026", "Maya is vegan.", topic_key="user.diet", keywords=["food"]),
        mem("old", "Vegetarian", "Maya was vegetarian.", keywords=["food"]),
        mem("x", "Caddy", "Reverse proxy."),
        mem("y", "Dentist", "Appointment."),
    ]))
    eng = Engine(vault, None, Config())
    tr = eng.recall("vegan food", now=PINNED_NOW, topic_key="user.diet")
    hit = tr.hit("diet")
    assert set(hit.channels) >= {"keyword", "topic"}
    assert hit.explain.fused == pytest.approx(sum(c.contribution for c in hit.explain.channels))
    topic = [c for c in hit.explain.channels if c.channel == "topic"][0]
    assert topic.contribution == pytest.approx(2.0 / 61)


def test_engine_linear_keyword_share(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("a", "Postgres upgrade", "Planned."),
        mem("b", "Postgres", "Database."),
        mem("c", "Dentist", "Appointment."),
        mem("d", "Running", "Marathon."),
    ]))
    cfg = Config().with_value("fuse.method", "linear").with_value("signature.enabled", False)
    tr = Engine(vault, None, cfg).recall("postgres upgrade", now=PINNED_NOW)
    # no embedder: score = 0.3 x matched share; reported on the 0-100 scale of 0.3
    assert tr.hit("a").explain.fused == pytest.approx(0.3 * 1.0)
    assert tr.hit("b").explain.fused == pytest.approx(0.3 * 0.5)
    assert tr.hit("a").score == pytest.approx(100.0)
    assert tr.hit("b").score == pytest.approx(50.0)
    info = dict(tr.stage("fuse").info)
    assert "divisors" in info and "share [keyword]" in tr.hit("b").explain.fusion


def test_linear_formula_names_each_divisor():
    """Issue 22: a linear-merge term of another channel is `w x raw / its best raw`, and the
    best raw (the divisor) is written in the formula and the stage info, so it adds up by hand."""
    from recall_tui.engine.config_sections import FuseConfig
    from recall_tui.engine.stages.fuse import formula, linear_divisors

    rankings = {"keyword": [("a", 3.0, 1)], "fuzzy": [("b", 8.98, 1), ("a", 5.28, 2)]}
    out = linear(rankings, {"a": 1.0}, {"fuzzy": 1.0}, 0.7, 0.3)
    assert linear_divisors(rankings)["fuzzy"] == 8.98
    fuzzy = [p for p in out["a"][1] if p.channel == "fuzzy"][0]
    assert fuzzy.contribution == pytest.approx(0.3 * 5.28 / 8.98)
    text = formula(FuseConfig(method="linear"), out["a"][1], out["a"][0],
                   divisors=linear_divisors(rankings))
    rule, terms = text.split("; ")
    assert "best raw" in rule
    assert "0.3 x 1 share [keyword]" in terms and "0.3 x 5.28/8.98 [fuzzy" in terms
    assert terms.endswith(f"= {out['a'][0]:.4g}")
