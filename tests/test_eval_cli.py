"""`recall-tui eval` end to end on the sample vault: the numbers it prints are the metrics of
the rankings the engine really returns, presets are compared per query, as_of is passed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.tuning import metrics
from tests.conftest import PINNED_NOW, SAMPLE_VAULT

BIN = Path(sys.executable).with_name("recall-tui")
NOW = "2026-11-21T09:00:00Z"


def _eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), "eval", *args], capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("eval") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


@pytest.fixture(scope="module")
def report(vault) -> dict:
    # keyword-only embedder keeps the test fast; the metric plumbing is the same
    r = _eval("--vault", str(vault), "--preset", "default", "--preset", "bastra", "--k", "5",
              "--now", NOW, "--embedder", "none", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_reported_metrics_are_the_metrics_of_the_reported_rankings(report, vault):
    golden = metrics.read_golden(vault / "golden.jsonl")
    assert report["k"] == 5 and report["now"].startswith("2026-11-21T09:00")
    for name in ("default", "bastra"):
        rows = report["presets"][name]["queries"]
        assert [r["query"] for r in rows] == [g.query for g in golden]
        for row, g in zip(rows, golden, strict=True):
            # the ranking is what the engine returned (bastra appends 1-hop neighbours after
            # the cut to k, so it may hold more than k); every metric scores only the top k
            again = metrics.score_query(g.query, row["ranked"], g.relevant, 5)
            assert row["metrics"] == pytest.approx(dict(again.metrics))
            assert row["unjudged"] == [i for i in row["ranked"][:5] if i not in g.relevant]
        means = report["presets"][name]["means"]
        recalls = [r["metrics"]["recall"] for r in rows if r["metrics"]["recall"] is not None]
        assert means["recall"] == pytest.approx(sum(recalls) / len(recalls))
        # the sample vault is built so that recall works: far better than nothing
        assert means["mrr"] > 0.3


def test_rankings_are_the_engines(report, vault):
    from recall_tui.engine import open_engine

    engine = open_engine(vault, preset="default", embedder="none")
    try:
        golden = metrics.read_golden(vault / "golden.jsonl")
        rows = report["presets"]["default"]["queries"]
        for g, row in list(zip(golden, rows, strict=True))[:10]:
            trace = engine.recall(g.query, k=5, now=PINNED_NOW, as_of=g.as_of)
            assert [h.id for h in trace.hits] == row["ranked"]
    finally:
        engine.index.close()


def test_as_of_lines_are_evaluated_as_of_their_date(report):
    rows = report["presets"]["default"]["queries"]
    dated = [r for r in rows if r["as_of"]]
    assert dated, "the sample golden file has as_of queries"
    # an as_of query's target is a memory that is superseded today: found only because the
    # recall ran as of the line's date
    found = [r for r in dated if any(i in r["ranked"] for i, g in r["judged"].items() if g == 3)]
    assert len(found) >= len(dated) // 2


def test_paired_comparison(report):
    (c,) = report["comparisons"]
    assert (c["baseline"], c["candidate"]) == ("default", "bastra")
    d = report["presets"]["default"]["queries"]
    b = report["presets"]["bastra"]["queries"]
    mrr = c["metrics"]["mrr"]
    # off-topic lines have no MRR: the pairs are the on-topic queries
    deltas = [y["metrics"]["mrr"] - x["metrics"]["mrr"] for x, y in zip(d, b, strict=True)
              if x["metrics"]["mrr"] is not None]
    deltas = [0.0 if abs(x) <= 1e-9 else x for x in deltas]
    assert mrr["deltas"] == pytest.approx(deltas)
    assert mrr["wins"] == sum(1 for x in deltas if x > 0)
    assert mrr["losses"] == sum(1 for x in deltas if x < 0)
    assert mrr["wins"] + mrr["losses"] + mrr["ties"] == len(deltas)
    assert mrr["sign_p"] == pytest.approx(metrics.sign_test_p(mrr["wins"], mrr["losses"]))
    assert 0 < mrr["randomisation_p"] <= 1


def test_table_output_and_unknown_ids(vault, tmp_path):
    g = tmp_path / "g.jsonl"
    lines = (vault / "golden.jsonl").read_text().splitlines()[:3]
    lines.append('{"query": "postgres upgrade", "relevant": {"not-a-memory": 3}}')
    g.write_text("\n".join(lines) + "\n")
    r = _eval("--vault", str(vault), "--queries", str(g), "--preset", "default", "--preset", "memoturn",
              "--now", NOW, "--embedder", "none", "--per-query")
    assert r.returncode == 0, r.stderr
    assert "recall@10" in r.stdout and "nDCG@10" in r.stdout
    assert "memoturn vs default" in r.stdout and "sign p" in r.stdout
    assert "per query: memoturn" in r.stdout
    assert f"{g}:4: judged id 'not-a-memory' is not in the vault" in r.stderr


def test_bad_golden_line_names_file_and_line(vault, tmp_path):
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"query": "ok", "relevant": ["a"]}\n{"query": "x", "relevant": {"a": 7}}\n')
    r = _eval("--vault", str(vault), "--queries", str(bad))
    assert r.returncode == 2
    assert f"{bad}:2:" in r.stderr and "0..3" in r.stderr


def test_unknown_preset(vault):
    r = _eval("--vault", str(vault), "--preset", "no-such-preset")
    assert r.returncode == 2 and "unknown preset 'no-such-preset'" in r.stderr


def test_off_topic_queries_abstention_and_evidence_chart(vault, tmp_path):
    """Off-topic lines (empty relevant, or the flag) are scored apart: abstention and the mean
    injected; the --plot chart is drawn from the very numbers --json reports."""
    from recall_tui.tuning.distribution import chart_lines, histogram

    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(o) for o in [
        {"query": "which Postgres version does billing use", "relevant": {"billing-db-postgres16": 3}},
        {"query": "what is the capital of mongolia", "relevant": []},
        {"query": "write a haiku about autumn leaves", "relevant": {}, "category": "off-topic"},
        {"query": "restic forget", "relevant": {}, "off_topic": True},
    ]) + "\n")
    args = ("--vault", str(vault), "--queries", str(q), "--k", "5", "--now", NOW,
            "--embedder", "none")
    r = _eval(*args, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)["presets"]["default"]
    rows = doc["queries"]
    injected = [len(row["ranked"][:5]) for row in rows[1:]]
    assert doc["off_topic"] == {"queries": 3, "abstained": injected.count(0),
                                "abstention": injected.count(0) / 3,
                                "mean_injected": sum(injected) / 3}
    # the ranking means are over the on-topic query only
    assert doc["means"]["recall"] == rows[0]["metrics"]["recall"]
    assert rows[1]["ranked"] == []  # nothing in the sample vault is about mongolia
    dist = doc["evidence"]
    assert dist["floor"] == 0.1  # no embedder: the lexical floor
    for g in dist["groups"].values():
        assert g["histogram"] == histogram(g["values"])
        assert g["below_floor"] == sum(1 for v in g["values"] if v < 0.1)
    assert len(dist["groups"]["off_topic_best"]["values"]) == 3
    plot = _eval(*args, "--plot")
    assert plot.returncode == 0, plot.stderr
    for line in chart_lines(dist):
        assert line in plot.stdout
    assert "abstained on" in plot.stdout


def test_off_topic_flag_with_relevant_ids_is_refused(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps({"query": "x", "relevant": {"a": 2}, "off_topic": True}) + "\n")
    with pytest.raises(metrics.GoldenError, match="g.jsonl:1: \"off_topic\" is true"):
        metrics.read_golden(p)
    p.write_text(json.dumps({"query": "x", "relevant": [], "off_topic": "yes"}) + "\n")
    with pytest.raises(metrics.GoldenError, match="must be true or false"):
        metrics.read_golden(p)
    p.write_text(json.dumps({"query": "x", "relevant": {"a": 0}}) + "\n")
    assert metrics.read_golden(p)[0].off_topic is False  # judged not relevant is a judgement
