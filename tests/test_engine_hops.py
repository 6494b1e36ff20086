"""hops: 1-hop related_via neighbours with score parent x link x factor, tagged 1-hop."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    return write_vault(tmp_path_factory.mktemp("hops") / "v", dict([
        mem("incident", "Duplicate invoices incident", "Invoices were sent twice.",
            related_via=[{"id": "lesson", "score": 0.8, "relation": "caused"}]),
        mem("lesson", "Idempotency at the consumer", "Deduplicate events by key."),
        mem("x", "Dentist", "Appointment."), mem("y", "Running", "Marathon."),
    ]))


def cfg() -> Config:
    return Config().with_value("signature.enabled", False).with_value("graph.enabled", False)


def test_neighbour_score_and_tag(vault):
    tr = Engine(vault, None, cfg()).recall("duplicate invoices", now=PINNED_NOW)
    parent, hop = tr.hit("incident"), tr.hit("lesson")
    assert hop is not None and hop.hop == "1-hop" and hop.channels == ()
    assert hop.explain.hop.from_id == "incident" and hop.explain.hop.link_score == 0.8
    assert hop.explain.fused == pytest.approx(parent.explain.fused * 0.8 * 0.5)
    assert [c.id for c in tr.stage("hops").candidates] == ["lesson"]


def test_factor_knob_and_off(vault):
    tr = Engine(vault, None, cfg().with_value("hops.factor", 0.25)).recall("duplicate invoices",
                                                                           now=PINNED_NOW)
    assert tr.hit("lesson").explain.fused == pytest.approx(tr.hit("incident").explain.fused * 0.2)
    tr = Engine(vault, None, cfg().with_value("hops.enabled", False)).recall("duplicate invoices",
                                                                             now=PINNED_NOW)
    assert tr.hit("lesson") is None and tr.stage("hops").skipped


def test_beyond_k_appends_hops(vault):
    c = cfg().with_value("hops.beyond_k", True)
    tr = Engine(vault, None, c).recall("duplicate invoices", now=PINNED_NOW, k=1)
    assert [h.id for h in tr.hits] == ["incident", "lesson"]
