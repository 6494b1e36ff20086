"""floor: the score scale, the floor, min_score per call, truncation to k, never padding."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import Config
from recall_tui.engine.stages.floor import scale
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault

QUERY = "postgres upgrade"


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    return write_vault(tmp_path_factory.mktemp("floor") / "v", dict([
        mem("a", "Caddy reverse proxy", "Caddy serves the homelab."),
        mem("b", "Caddy config", "The caddy file.", type="task", updated="2026-05-01T00:00:00Z",
            created="2026-05-01T00:00:00Z"),
        mem("c", "Dentist", "Appointment."), mem("d", "Running", "Marathon."),
    ]))


def keyword_only() -> Config:
    return (Config().with_value("signature.enabled", False).with_value("graph.enabled", False)
            .with_value("hops.enabled", False))


def test_scales():
    s = {"a": 0.02, "b": 0.01}
    assert scale(s, "raw", 1.0) == s
    assert scale(s, "top", 1.0) == {"a": 100.0, "b": 50.0}
    assert scale(s, "fusion_max", 0.04) == {"a": 50.0, "b": 25.0}


def test_never_pads(vault):
    tr = Engine(vault, None, keyword_only()).recall("caddy", now=PINNED_NOW, k=10)
    assert [h.id for h in tr.hits] == ["a", "b"]
    assert tr.k == 10


def test_floor_drops_stale_hit_and_reports_it(vault):
    cfg = (keyword_only().with_value("boosts.staleness.enabled", True)
           .with_value("floor.enabled", True).with_value("floor.min_score", 30.0))
    tr = Engine(vault, None, cfg).recall("caddy", now=PINNED_NOW, why=["b"])
    # keyword is the only channel: rank 1 = 100; b is rank 2 (61/62 x 100 = 98.4) x expired 0.2
    assert [h.id for h in tr.hits] == ["a"]
    assert tr.hits[0].score == pytest.approx(100.0)
    dropped = {d.id: d.reason for d in tr.stage("floor").dropped}
    assert dropped["b"] == f"score {100 * 61 / 62 * 0.2:.1f} < floor 30"
    assert tr.why_of("b").stage == "floor"


def test_min_score_per_call_overrides(vault):
    tr = Engine(vault, None, keyword_only()).recall("caddy", now=PINNED_NOW,
                                                    filters=Filters(min_score=99.0))
    assert [h.id for h in tr.hits] == ["a"]


def test_cut_at_k_is_reported(vault):
    tr = Engine(vault, None, keyword_only()).recall("caddy", now=PINNED_NOW, k=1, why=["b"])
    assert [h.id for h in tr.hits] == ["a"]
    w = tr.why_of("b")
    assert w.stage == "floor" and w.reason == "rank 2 > k=1"


# --- the calibrated floor (issue 20) ---------------------------------------------------------

def calibrated() -> Config:
    # no index, so no vector evidence: the lexical floor decides
    return (keyword_only().with_value("floor.calibrated", True)
            .with_value("floor.lexical_floor", 0.4))


def test_calibration_by_hand(vault):
    import math

    import numpy as np

    from recall_tui.engine import calibration

    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    s = np.array([math.sqrt(0.5), math.sqrt(0.5)])
    cal = calibration.build(vault.memories, {"a": e1, "b": e2, "c": s})
    # N = 4; "caddy" is in a and b: idf ln(5 / 2.5); a word no memory holds: ln(5 / 0.5)
    assert cal.memories == 4 and cal.doc_freq["caddi"] == 2
    assert cal.idf("caddi") == pytest.approx(math.log(2))
    assert cal.idf("zebra") == pytest.approx(math.log(10))
    # pairwise cosines 0, .7071, .7071: median .7071; nearest neighbours .7071 x 3
    assert cal.background == pytest.approx(math.sqrt(0.5))
    assert cal.near == pytest.approx(math.sqrt(0.5))
    assert cal.vector_standing(0.9) == 0.0  # no span between background and near: no standing
    wide = calibration.Calibration(4, {}, {}, 0.2, 0.6)
    assert wide.vector_standing(0.5) == pytest.approx(0.75)
    assert wide.vector_standing(0.1) == 0.0 and wide.vector_standing(0.9) == 1.0
    qt = calibration.query_terms(cal, ("caddi", "marathon"), ("caddy", "marathon"), {})
    ev = calibration.evidence(cal, qt, "a", None)
    assert ev.lexical == pytest.approx(math.log(2) / (math.log(2) + math.log(5 / 1.5)))
    assert ev.value == ev.lexical and ev.matched == ("caddi",)


def test_floor_decision_by_hand():
    from recall_tui.engine.stages.floor import decision

    assert decision(0.21, 0.34) == (True, "best evidence 0.21 < calibrated floor 0.34: abstained")
    assert decision(0.34, 0.34) == (False, "best evidence 0.34 >= calibrated floor 0.34: kept")
    assert decision(None, 0.34) == (False, "no hit to judge")


def test_calibrated_floor_abstains_and_says_why(vault):
    import math

    eng = Engine(vault, None, calibrated())
    # caddy: idf ln 2 = .693; zebra (no memory has it): ln 10 = 2.303; best L = .693 / 2.996
    tr = eng.recall("caddy zebra", now=PINNED_NOW, why=["a"])
    assert tr.hits == ()
    rec = next(s for s in tr.stages if s.name == "floor")
    info = dict(rec.info)
    best = math.log(2) / (math.log(2) + math.log(10))
    assert info["decision"] == f"best evidence {best:.2f} < calibrated floor 0.40: abstained"
    assert info["calibrated floor"].startswith("0.40: no vector evidence in this recall")
    assert {d.id for d in rec.dropped if "abstained" in d.reason} == {"a", "b"}
    (w,) = tr.why
    assert w.stage == "floor" and "abstained" in w.reason and "lexical 0.23" in w.reason
    assert "floor: evidence 0.23 = lexical 0.23 (matched caddi) + vector 0.00 (no vector)" in w.details
    # marathon: idf ln(5 / 1.5) = 1.204, so d's evidence is 1.204 / 1.897 = .63 >= .4: kept
    tr = eng.recall("caddy marathon", now=PINNED_NOW)
    assert "d" in [h.id for h in tr.hits]
    info = dict(next(s for s in tr.stages if s.name == "floor").info)
    assert info["decision"] == "best evidence 0.63 >= calibrated floor 0.40: kept"
    hit = next(h for h in tr.hits if h.id == "d")
    assert "evidence 0.63 = lexical 0.63 (matched marathon)" in hit.explain.scaling


def test_seed_presets_keep_their_floor():
    from recall_tui.engine.config import load_preset

    assert load_preset("default").floor.calibrated is True
    for name in ("bastra", "abmind", "memoryvault", "memoturn", "memoria"):
        assert load_preset(name).floor.calibrated is False


def test_evidence_scale_means_the_same_in_every_recall(vault):
    import math

    eng = Engine(vault, None, calibrated().with_value("floor.scale", "evidence"))
    tr = eng.recall("caddy marathon", now=PINNED_NOW)
    caddy, marathon = math.log(2), math.log(5 / 1.5)
    scores = {h.id: h.score for h in tr.hits}
    # 50 x E: E of d is marathon's share of the query's IDF mass, of a and b caddy's
    assert scores["d"] == pytest.approx(50 * marathon / (caddy + marathon))
    assert scores["a"] == pytest.approx(50 * caddy / (caddy + marathon))
    hit = next(h for h in tr.hits if h.id == "d")
    assert hit.explain.scaling.startswith("evidence scale: 50 x E = 50 x 0.6346 = 31.73")
    # the same memory matched alone scores 50 x 1: every query term matched
    assert [h.score for h in eng.recall("marathon", now=PINNED_NOW).hits] == [pytest.approx(50.0)]


@pytest.mark.fusion_max
def test_a_score_over_100_is_explained_by_the_scaling_step(engine):
    """A credibility boost x3 for every memory (threshold above any credibility) lifts the
    best hit over 100 on the fusion_max scale; the scaling step must say why."""
    cfg = engine.config
    for path, value in (("boosts.credibility.enabled", True),
                        ("boosts.credibility.threshold", 1e9),
                        ("boosts.credibility.factor", 3.0)):
        cfg = cfg.with_value(path, value)
    trace = engine.recall(QUERY, now=PINNED_NOW, config=cfg)
    over = [h for h in trace.hits if h.score > 100]
    assert over, "x3 on every hit puts the best over 100 (the premise)"
    for h in over:
        assert "over 100" in h.explain.scaling
    for h in trace.hits:
        if h.score <= 100:
            assert "over 100" not in h.explain.scaling
