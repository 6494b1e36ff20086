"""Side-by-side ranking diff: movements, overlap@k and RBO on hand-checked cases."""

from __future__ import annotations

import pytest

from recall_tui.engine.trace import TRACE_VERSION, Hit, Trace
from recall_tui.tuning.compare import diff_ids, diff_rankings, rank_deltas


def _trace(ids: list[str], k: int = 4) -> Trace:
    hits = tuple(
        Hit(id=mid, rank=i, score=10.0 - i, title=mid, type="fact", scope="global", summary="",
            topic_path="", channels=("keyword",))
        for i, mid in enumerate(ids, start=1)
    )
    return Trace(TRACE_VERSION, "q", "default", k, "2026-11-21T09:00:00Z", None, "lean", hits, ())


def test_movements_overlap_and_rbo_hand_checked():
    # A = a b c d, B = b a e c (k = 4)
    #   b: A#2 -> B#1  up 1       a: A#1 -> B#2  down 1
    #   e: only in B   new        c: A#3 -> B#4  down 1      d: only in A  dropped
    # overlap@4 = |{a,b,c,d} ∩ {b,a,e,c}| / 4 = 3/4
    # RBO (p = 0.9, equal lengths s = l = 4): X_1 = 0, X_2 = 2, X_3 = 2, X_4 = 3
    #   sum = 0/1·0.9 + 2/2·0.81 + 2/3·0.729 + 3/4·0.6561 = 0.81 + 0.486 + 0.492075 = 1.788075
    #   RBO = (0.1/0.9)·1.788075 + (X_4/4)·0.9^4 = 0.198675 + 0.75·0.6561 = 0.69075
    d = diff_rankings(_trace(["a", "b", "c", "d"]), _trace(["b", "a", "e", "c"]))
    got = {m.id: (m.rank_a, m.rank_b, m.kind, m.by) for m in d.movements}
    assert got == {
        "b": (2, 1, "up", 1),
        "a": (1, 2, "down", 1),
        "e": (None, 3, "new", 0),
        "c": (3, 4, "down", 1),
        "d": (4, None, "dropped", 0),
    }
    assert [m.id for m in d.movements] == ["b", "a", "e", "c", "d"]  # B's order, then A-only
    assert d.k == 4
    assert d.overlap == pytest.approx(0.75)
    assert d.rbo == pytest.approx(0.69075)
    assert (d.count("up"), d.count("down"), d.count("new"), d.count("dropped")) == (1, 2, 1, 1)
    assert [d.by_id[i].label for i in ("b", "a", "e", "d")] == ["▲1", "▼1", "new", "dropped"]


def test_identical_rankings_are_all_same():
    d = diff_ids(["x", "y", "z"], ["x", "y", "z"])
    assert all(m.kind == "same" and m.label == "=" for m in d.movements)
    assert d.overlap == pytest.approx(1.0)
    assert d.rbo == pytest.approx(1.0)


def test_disjoint_rankings_share_nothing():
    d = diff_ids(["a", "b"], ["c", "d"], k=2)
    assert d.overlap == 0.0 and d.rbo == pytest.approx(0.0)
    assert [m.kind for m in d.movements] == ["new", "new", "dropped", "dropped"]


def test_overlap_counts_against_the_larger_k():
    # A returns 2 hits, B 4 (both traces asked for k = 4): overlap@4 = |{a,b} ∩ {a,b,c,d}| / 4 = 2/4
    d = diff_rankings(_trace(["a", "b"]), _trace(["a", "b", "c", "d"]))
    assert d.overlap == pytest.approx(0.5)
    assert d.count("same") == 2 and d.count("new") == 2


def test_rank_deltas_against_the_starting_configuration():
    # baseline p q r s; now r p t: r up 2 (3 -> 1), p down 1 (1 -> 2), t new; q and s dropped
    deltas = rank_deltas(_trace(["p", "q", "r", "s"]), _trace(["r", "p", "t"]))
    assert list(deltas) == ["r", "p", "t"]
    assert (deltas["r"].kind, deltas["r"].by) == ("up", 2)
    assert (deltas["p"].kind, deltas["p"].by) == ("down", 1)
    assert deltas["t"].kind == "new"


def test_a_knob_change_reranks_and_the_deltas_follow_the_traces(session_vault_copy):
    from recall_tui.engine import open_engine
    from tests.conftest import PINNED_NOW

    engine = open_engine(session_vault_copy, embedder="local")
    try:
        q = "how are home-lab backups done"
        start = engine.recall(q, k=10, now=PINNED_NOW)
        tuned = engine.recall(q, k=10, now=PINNED_NOW,
                              config=engine.config.with_value("keyword.recall_when", 0.0))
    finally:
        engine.index.close()
    before = [h.id for h in start.hits]
    after = [h.id for h in tuned.hits]
    assert before != after, "dropping the recall_when weight must re-rank this query"
    deltas = rank_deltas(start, tuned)
    assert list(deltas) == after
    for h in tuned.hits:
        m = deltas[h.id]
        assert m.rank_b == h.rank
        assert m.rank_a == (before.index(h.id) + 1 if h.id in before else None)
    assert any(m.kind != "same" for m in deltas.values())
    d = diff_rankings(start, tuned)
    assert d.overlap == len(set(before) & set(after)) / 10
    assert 0.0 < d.rbo < 1.0
