"""floor: the score scale, the floor, min_score per call, truncation to k, never padding."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import Config
from recall_tui.engine.stages.floor import scale
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


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
