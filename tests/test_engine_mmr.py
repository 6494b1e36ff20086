"""mmr: a hand-built 4-candidate case, every step checked."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.stages.mmr import mmr_order
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault

SIMS = {("a", "b"): 0.9, ("a", "c"): 0.1, ("a", "d"): 0.0, ("b", "c"): 0.2, ("b", "d"): 0.1,
        ("c", "d"): 0.3}


def sim(x: str, y: str) -> float:
    return SIMS[(min(x, y), max(x, y))]


def test_four_candidates_by_hand():
    rel = {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.5}
    steps = mmr_order(["a", "b", "c", "d"], rel, sim, 0.7)
    assert [s.id for s in steps] == ["a", "c", "b", "d"]
    a, c, b, d = steps
    assert a.mmr == pytest.approx(0.7) and a.penalty == 0 and a.closest_id is None
    assert a.runner_up == "b"
    # step 2: c = 0.7*0.8 - 0.3*0.1 = 0.53 beats b = 0.63 - 0.27 = 0.36 and d = 0.35
    assert c.mmr == pytest.approx(0.53) and c.closest_id == "a" and c.penalty == pytest.approx(0.1)
    assert c.runner_up == "b"
    # step 3: b = 0.63 - 0.3*0.9 = 0.36 beats d = 0.35 - 0.3*0.3 = 0.26
    assert b.mmr == pytest.approx(0.36) and b.closest_id == "a" and b.runner_up == "d"
    assert d.mmr == pytest.approx(0.26) and d.closest_id == "c" and d.runner_up is None
    assert [s.step for s in steps] == [1, 2, 3, 4]


def test_lambda_one_keeps_relevance_order():
    rel = {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.5}
    assert [s.id for s in mmr_order(list(rel), rel, sim, 1.0)] == ["a", "b", "c", "d"]


def test_engine_mmr_demotes_a_near_duplicate(tmp_path):
    vault = write_vault(tmp_path / "v", dict([
        mem("pg1", "Postgres upgrade runbook steps", "Postgres upgrade runbook steps for billing"),
        mem("pg2", "Postgres upgrade runbook steps copy", "Postgres upgrade runbook steps for billing"),
        mem("pg3", "Postgres vacuum tuning", "Autovacuum settings differ on the replica"),
        mem("x", "Dentist", "Appointment"), mem("y", "Running", "Marathon"),
    ]))
    cfg = (Config().with_value("mmr.enabled", True).with_value("signature.enabled", False)
           .with_value("hops.enabled", False))
    tr = Engine(vault, None, cfg).recall("postgres upgrade runbook", now=PINNED_NOW, k=2,
                                         why=["pg2"])
    assert tr.hits[0].explain.mmr is not None and tr.hits[0].explain.mmr.step == 1
    ids = [h.id for h in tr.hits]
    assert "pg3" in ids and len(ids) == 2
    w = tr.why_of("pg2")
    assert w.stage == "mmr" and "demoted" in w.reason
