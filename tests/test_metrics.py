"""Metrics against hand-computed values (the arithmetic is in the comments)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from recall_tui.tuning import metrics as m

JUDGED = {"a": 3, "b": 2, "c": 1, "z": 0}
RANKED = ["x", "b", "a", "y", "c"]


def test_recall_precision_mrr_at_3():
    # relevant = {a, b, c} (z has grade 0); top 3 = {x, b, a} -> 2 of 3 relevant found
    assert m.recall_at_k(RANKED, JUDGED, 3) == pytest.approx(2 / 3)
    # 2 relevant among 3 slots
    assert m.precision_at_k(RANKED, JUDGED, 3) == pytest.approx(2 / 3)
    # first relevant (b) at rank 2 -> 1/2
    assert m.reciprocal_rank(RANKED, JUDGED, 3) == pytest.approx(0.5)
    # nothing relevant in the top 1 -> 0
    assert m.reciprocal_rank(RANKED, JUDGED, 1) == 0.0
    # all three relevant by rank 5
    assert m.recall_at_k(RANKED, JUDGED, 5) == 1.0


def test_precision_does_not_pad_short_rankings():
    # one relevant hit returned, k = 4 -> 1/4, the three empty slots are misses
    assert m.precision_at_k(["a"], JUDGED, 4) == pytest.approx(0.25)


def test_ndcg_at_3_hand_computed():
    # top-3 grades [0, 2, 3]: DCG = 0/log2(2) + (2^2-1)/log2(3) + (2^3-1)/log2(4)
    #                                = 0 + 3/1.5849625 + 7/2 = 1.8927893 + 3.5 = 5.3927893
    # ideal grades [3, 2, 1]: IDCG = 7/1 + 3/1.5849625 + 1/2 = 7 + 1.8927893 + 0.5 = 9.3927893
    # nDCG@3 = 5.3927893 / 9.3927893 = 0.5741413
    assert m.ndcg_at_k(RANKED, JUDGED, 3) == pytest.approx(5.3927893 / 9.3927893, abs=1e-7)
    assert m.ndcg_at_k(RANKED, JUDGED, 3) == pytest.approx(0.5741413, abs=1e-6)
    # the ideal ranking scores 1
    assert m.ndcg_at_k(["a", "b", "c"], JUDGED, 3) == pytest.approx(1.0)


def test_plain_list_means_grade_one():
    judged = m.normalise_judgements(["p", "q"])
    assert judged == {"p": 1, "q": 1}
    # ranked [q, r, p], k=2: DCG = 1/1 + 0 = 1; IDCG = 1/1 + 1/log2(3) = 1.6309298
    assert m.ndcg_at_k(["q", "r", "p"], judged, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_no_relevant_is_undefined_not_zero():
    r = m.score_query("q", ["z", "x"], {"z": 0}, 3)
    assert all(v is None for v in r.metrics.values())
    # undefined queries are left out of the means
    ok = m.score_query("q2", ["a"], {"a": 1}, 3)
    means = m.mean_metrics([r, ok])
    assert means["recall"] == 1.0 and means["mrr"] == 1.0


def test_score_query_reports_unjudged_and_missed():
    r = m.score_query("q", RANKED + ["x"], JUDGED, 3)
    assert r.ranked == ("x", "b", "a", "y", "c")  # duplicate x dropped
    assert r.unjudged == ("x",)  # x has no judgement; z (grade 0) would be judged
    assert r.missed == ("c",)
    assert r.metrics["recall"] == pytest.approx(2 / 3)


def test_bad_judgements_rejected():
    with pytest.raises(ValueError, match="0..3"):
        m.normalise_judgements({"a": 4})
    with pytest.raises(ValueError, match="0..3"):
        m.normalise_judgements({"a": True})
    with pytest.raises(ValueError):
        m.normalise_judgements("a")


def test_sign_test():
    # 5 wins, 0 losses: two-sided p = 2 * C(5,0)/2^5 = 2/32 = 0.0625
    assert m.sign_test_p(5, 0) == pytest.approx(0.0625)
    # 3 wins, 1 loss: tail = (C(4,0) + C(4,1))/16 = 5/16, p = 10/16 = 0.625
    assert m.sign_test_p(3, 1) == pytest.approx(0.625)
    assert m.sign_test_p(0, 0) == 1.0


def test_randomisation_exact():
    # deltas [1,1,1]: 8 sign patterns, |sum| >= 3 only for +++ and --- -> 2/8
    assert m.randomisation_p([1.0, 1.0, 1.0]) == pytest.approx(0.25)
    # [0.4,0.1,0.1,0.1]: sum = 0.4*s1 + 0.1*(s2+s3+s4); |sum| >= 0.7 only for ++++ and ----
    # -> 2/16 = 0.125
    assert m.randomisation_p([0.4, 0.1, 0.1, 0.1]) == pytest.approx(0.125)
    # zero deltas are left out: [0.5, -0.1, 0]: patterns ±0.5±0.1 all have |sum| >= 0.4 -> 1
    assert m.randomisation_p([0.5, -0.1, 0.0]) == pytest.approx(1.0)
    assert m.randomisation_p([0.0, 0.0]) == 1.0


def test_randomisation_sampled_is_seeded():
    # 20 equal positive deltas: only 2 of 2^20 patterns reach |sum| = 20; the sampled p is
    # (hits + 1) / (20000 + 1), tiny, and identical on every run (fixed seed)
    p1 = m.randomisation_p([1.0] * 20)
    assert p1 == m.randomisation_p([1.0] * 20)
    assert p1 < 0.001


def test_compare_pairs_queries():
    jud = {"a": 1}
    base = [m.score_query(q, r, jud, 3) for q, r in (("q1", ["x", "a"]), ("q2", ["a"]), ("q3", ["x"]))]
    cand = [m.score_query(q, r, jud, 3) for q, r in (("q1", ["a"]), ("q2", ["a"]), ("q3", ["y", "x", "a"]))]
    c = m.compare(base, cand, baseline_name="default", candidate_name="seed")
    mrr = c.metrics["mrr"]
    # q1: 1/2 -> 1 (+0.5), q2: 1 -> 1 (0), q3: 0 -> 1/3 (+1/3)
    assert mrr.deltas == pytest.approx((0.5, 0.0, 1 / 3))
    assert (mrr.wins, mrr.losses, mrr.ties) == (2, 0, 1)
    assert mrr.sign_p == pytest.approx(0.5)  # 2 wins 0 losses: 2 * 1/4
    assert mrr.mean_delta == pytest.approx((0.5 + 1 / 3) / 3)
    assert mrr.baseline_mean == pytest.approx(0.5) and mrr.candidate_mean == pytest.approx(7 / 9)
    with pytest.raises(ValueError, match="out of order"):
        m.compare(base, list(reversed(cand)))


def test_overlap_at_k():
    # top 3: {a,b,c} ∩ {c,a,e} = {a,c} -> 2/3
    assert m.overlap_at_k(["a", "b", "c", "d"], ["c", "a", "e", "f"], 3) == pytest.approx(2 / 3)
    # short lists are not padded: 1 shared over k = 4
    assert m.overlap_at_k(["a"], ["a"], 4) == pytest.approx(0.25)


def test_rbo_equal_lengths():
    assert m.rbo(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert m.rbo(["a", "b"], ["c", "d"]) == 0.0
    # [a,b,c] vs [a,c,b], p=0.9: X = 1,1,3 ; A = X_d/d = 1, 0.5, 1
    # sum = 0.9*1 + 0.81*0.5 + 0.729*1 = 2.034 ; (1-p)/p * sum = 2.034/9 = 0.226
    # + (X_l/l) p^l = 1 * 0.729 -> 0.955
    assert m.rbo(["a", "b", "c"], ["a", "c", "b"]) == pytest.approx(0.955)
    assert m.rbo(["a", "c", "b"], ["a", "b", "c"]) == pytest.approx(0.955)


def test_rbo_unequal_lengths():
    # S=[a,b] (s=2), L=[b,c,a] (l=3), p=0.9
    # X_1 = |{a}∩{b}| = 0, X_2 = |{a,b}∩{b,c}| = 1, X_3 = |{a,b}∩{b,c,a}| = 2 ; X_s=1, X_l=2
    # sum1 = 0*0.9 + (1/2)*0.81 + (2/3)*0.729 = 0.405 + 0.486 = 0.891
    # sum2 = X_s*(3-2)/(2*3) * 0.729 = 0.1215
    # (1-p)/p * (0.891 + 0.1215) = 1.0125/9 = 0.1125
    # ((X_l - X_s)/l + X_s/s) p^l = (1/3 + 1/2) * 0.729 = 0.6075 ; total 0.72
    assert m.rbo(["a", "b"], ["b", "c", "a"]) == pytest.approx(0.72)
    assert m.rbo(["b", "c", "a"], ["a", "b"]) == pytest.approx(0.72)
    # a prefix extrapolates to full agreement: S=[a], L=[a,b]
    # (1-p)/p * (p + p^2/2 + p^2/2) + (0 + 1) p^2 = (1-p)(1+p) + p^2 = 1
    assert m.rbo(["a"], ["a", "b"]) == pytest.approx(1.0)


def test_rbo_edges():
    assert m.rbo([], []) == 1.0
    assert m.rbo([], ["a"]) == 0.0
    with pytest.raises(ValueError):
        m.rbo(["a"], ["a"], p=1.0)
    # a lower p weights the top more: disagreement at rank 1 costs more
    assert m.rbo(["a", "b", "c"], ["b", "a", "c"], p=0.5) < m.rbo(["a", "b", "c"], ["b", "a", "c"], p=0.9)


def test_read_golden(tmp_path):
    f = tmp_path / "golden.jsonl"
    f.write_text(
        "# comment\n"
        '{"query": "postgres failover", "relevant": {"db-ha": 3, "db-old": 1}, "note": "n"}\n'
        "\n"
        '{"query": "where did I live", "relevant": ["home"], "note": "as_of=2025-03-01 old address"}\n'
        '{"query": "x", "relevant": [], "as_of": "2026-01-02T03:04:05Z"}\n',
        encoding="utf-8",
    )
    g = m.read_golden(f)
    assert [q.line for q in g] == [2, 4, 5]
    assert g[0].relevant == {"db-ha": 3, "db-old": 1}
    assert g[1].relevant == {"home": 1}
    assert g[1].as_of == datetime(2025, 3, 1, tzinfo=timezone.utc)
    assert g[2].as_of == datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"relevant": ["a"]}', '"query" must be a non-empty string'),
        ('{"query": "q"}', '"relevant" is missing'),
        ('{"query": "q", "relevant": {"a": 5}}', "integer 0..3"),
        ('{"query": "q", "relevant": ["a"], "as_of": "yesterday"}', "not an ISO-8601"),
    ],
)
def test_read_golden_errors_name_file_and_line(tmp_path, line, reason):
    f = tmp_path / "g.jsonl"
    f.write_text('{"query": "ok", "relevant": ["a"]}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(m.GoldenError) as info:
        m.read_golden(f)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{f}:2: ")
    assert reason in str(info.value)
