"""graph: entity matching, Personalized PageRank checked by hand and by a linear solve,
direct mode, and the skip reason."""

from __future__ import annotations

import numpy as np
import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.stages.graph import find_entities, personalized_pagerank
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


def test_two_nodes_by_hand():
    # r_a = 0.15 + 0.85 r_b, r_b = 0.85 r_a  =>  r_a = 0.15 / (1 - 0.85^2)
    r, it = personalized_pagerank({"a": {"b": 1.0}, "b": {"a": 1.0}}, ["a"], tol=1e-12,
                                  max_iter=1000)
    assert r["a"] == pytest.approx(0.15 / (1 - 0.85 ** 2), abs=1e-9)
    assert r["b"] == pytest.approx(0.85 * 0.15 / (1 - 0.85 ** 2), abs=1e-9)
    assert it < 1000


def test_matches_the_linear_system():
    adj = {"a": {"b": 1.0, "c": 2.0}, "b": {"a": 1.0, "c": 1.0}, "c": {"a": 2.0, "b": 1.0, "d": 1.0},
           "d": {"c": 1.0}, "e": {}}
    nodes = sorted(adj)
    n = len(nodes)
    P = np.zeros((n, n))
    for u, nbs in adj.items():
        tot = sum(nbs.values())
        for v, w in nbs.items():
            P[nodes.index(u), nodes.index(v)] = w / tot
    s = np.zeros(n)
    s[nodes.index("d")] = 1.0
    exact = np.linalg.solve(np.eye(n) - 0.85 * P.T, 0.15 * s)
    r, _ = personalized_pagerank(adj, ["d"], tol=1e-12, max_iter=500)
    for i, node in enumerate(nodes):
        assert r.get(node, 0.0) == pytest.approx(exact[i], abs=1e-9)
    assert sum(r.values()) == pytest.approx(1.0)


def test_stops_at_max_iter():
    _, it = personalized_pagerank({"a": {"b": 1.0}, "b": {"a": 1.0}}, ["a"], tol=0.0, max_iter=7)
    assert it == 7


def test_find_entities_hyphens_and_multiword():
    names = ["argo-cd", "maya okafor", "maya", "billing-db"]
    assert find_entities("How does Argo CD deploy for Maya Okafor?", names) == ["argo-cd", "maya okafor"]
    assert find_entities("billing_db size", names) == ["billing-db"]
    assert find_entities("nothing here", names, hints=["Maya"]) == ["maya"]
    assert find_entities("cargo cdn", names) == []


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    return write_vault(tmp_path_factory.mktemp("graph") / "v", dict([
        mem("m1", "Priya leads checkout", edges=["priya -[leads]-> checkout-team"]),
        mem("m2", "Checkout uses billing", edges=["checkout-team -[depends_on]-> billing-service"]),
        mem("m3", "Billing runs on Postgres", edges=["billing-service -[uses]-> postgres"]),
        mem("m4", "Unrelated cat", "Pixel", edges=["pixel -[is_a]-> cat"]),
    ]))


def test_ppr_stage_ranks_by_distance(vault):
    cfg = Config().with_value("signature.enabled", False)
    tr = Engine(vault, None, cfg).recall("what does priya work on", now=PINNED_NOW)
    g = tr.stage("graph")
    assert not g.skipped and ("entities", "priya") in g.info
    ids = [c.id for c in g.candidates]
    assert ids[:3] == ["m1", "m2", "m3"] and "m4" not in ids
    assert tr.hit("m3") is not None and "graph" in tr.hit("m3").channels


def test_entity_hints_and_direct_mode(vault):
    cfg = (Config().with_value("graph.mode", "direct").with_value("signature.enabled", False))
    tr = Engine(vault, None, cfg).recall("what is there", now=PINNED_NOW, entity_hints=["Postgres"])
    g = tr.stage("graph")
    assert [c.id for c in g.candidates] == ["m3"] and g.candidates[0].score == 0.6


def test_skipped_without_entity(vault):
    tr = Engine(vault, None, Config()).recall("vegan recipes", now=PINNED_NOW)
    g = tr.stage("graph")
    assert g.skipped and g.reason == "no entity of the graph in the query"
