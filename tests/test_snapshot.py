"""Snapshots, diffs and the regression gate (`recall-tui snapshot`, `diff`, `gate`).

The diff is checked on two hand-built snapshots whose gains, losses, moves, overlaps and
verdicts are worked out by hand; the commands run end to end on a copy of the sample vault
(keyword channels only, so it is quick): a snapshot holds exactly what the engine returned,
the gate fails on a planted regression (a preset that turns the keyword channels off) and
passes on itself and on noise."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.engine import open_engine
from recall_tui.tuning import metrics
from recall_tui.tuning import snapshot as S
from tests.conftest import SAMPLE_VAULT

BIN = Path(sys.executable).with_name("recall-tui")
NOW = "2026-11-21T09:00:00Z"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=600,
                          check=False)


def _snap(entries: list[S.Entry], *, k: int = 3, preset: str = "p") -> S.Snapshot:
    return S.Snapshot(preset=preset, config_hash="h" + preset, k=k, now=NOW, embedder="none",
                      vault="v", queries_file="q", queries_sha256="x", created=NOW,
                      entries=tuple(entries))


def _e(query: str, ids: str, relevant: dict[str, int] | None = None) -> S.Entry:
    return S.Entry(query, 1, tuple((i, 1.0) for i in ids.split()), relevant)


# --------------------------------------------------------------------------------------------
# the diff, by hand


def test_diff_of_two_known_snapshots():
    a = _snap([_e("q1", "a b c d", {"c": 1}), _e("q2", "x y z", None),
               _e("off", "", {}), _e("only-a", "a")])
    b = _snap([_e("q1", "c a e", {"c": 1}), _e("q2", "x y z", None),
               _e("off", "m n", {}), _e("only-b", "a")], preset="r")
    d = S.diff(a, b)
    assert d.k == 3 and d.only_a == ("only-a",) and d.only_b == ("only-b",)
    q1, q2, off = d.queries
    # top 3: A = a b c, B = c a e
    assert q1.gained == ("e",) and q1.lost == ("b",)
    assert q1.moved == (("c", 3, 1), ("a", 1, 2))
    assert q1.jaccard == pytest.approx(2 / 4)
    assert q1.rbo == pytest.approx(metrics.rbo(["a", "b", "c"], ["c", "a", "e"]))
    # c is relevant: rank 3 -> 1, so MRR 1/3 -> 1 and nDCG rises: better
    assert q1.verdict == "better"
    assert q1.deltas["mrr"] == pytest.approx(1 - 1 / 3)
    assert q2.verdict == "unjudged" and not q2.changed and q2.jaccard == 1.0 and q2.rbo == 1.0
    # a query judged as needing no memory: 0 hits -> 2 hits is worse
    assert off.off_topic and off.verdict == "worse" and off.hits_a == 0 and off.hits_b == 2
    s = d.summary()
    assert (s["queries"], s["changed"], s["better"], s["worse"], s["unjudged"]) == (3, 2, 1, 1, 1)


def test_diff_compares_at_the_smaller_depth_and_says_so():
    a = _snap([_e("q", "a b c d e", {"e": 1})], k=5)
    b = _snap([_e("q", "a b c", {"e": 1})], k=3)
    d = S.diff(a, b)
    assert d.k == 3
    assert any("k=5 and k=3" in n for n in d.notes)
    assert d.queries[0].lost == () and d.queries[0].verdict == "same"


def test_snapshot_file_round_trip_and_bad_files(tmp_path):
    snap = _snap([_e("q1", "a b", {"a": 2}), _e("q2", "", None)])
    path = tmp_path / "s.json"
    S.save(snap, path)
    assert S.load(path) == snap
    # top 3 of q1: a (judged) and b (not); q2 is unjudged
    assert snap.coverage() == (1, 2)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(S.SnapshotError, match="bad.json: not a recall-tui snapshot"):
        S.load(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(S.SnapshotError, match="bad.json: not JSON"):
        S.load(bad)
    with pytest.raises(S.SnapshotError, match="no such file"):
        S.load(tmp_path / "missing.json")


def test_query_set_reads_judged_unjudged_and_plain_lines(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text('# a comment\n{"query": "judged", "relevant": ["a"]}\n'
                 '{"query": "needs nothing", "relevant": []}\n{"query": "unjudged"}\n'
                 "just text\n", encoding="utf-8")
    qs = S.read_query_set(f)
    assert [q.query for q in qs] == ["judged", "needs nothing", "unjudged", "just text"]
    assert qs[0].relevant == {"a": 1} and qs[1].off_topic and qs[2].relevant is None
    f.write_text('{"query": ""}\n', encoding="utf-8")
    with pytest.raises(metrics.GoldenError, match=r"q.jsonl:1: \"query\" must be"):
        S.read_query_set(f)


def test_gate_passes_on_noise_and_fails_on_a_planted_regression():
    judged = {"r": 1}
    base = _snap([_e(f"q{n}", "r a b", judged) for n in range(30)], k=3)
    # noise: two queries lose their hit, two gain a better rank elsewhere -> not significant
    noisy = [_e(f"q{n}", "a b c" if n < 2 else "r a b", judged) for n in range(30)]
    assert S.gate(base, _snap(noisy, k=3)).passed
    # planted: 20 of 30 queries lose their relevant hit
    bad = [_e(f"q{n}", "a b c" if n < 20 else "r a b", judged) for n in range(30)]
    res = S.gate(base, _snap(bad, k=3))
    assert not res.passed
    assert {c.metric for c in res.checks if c.worse} == {"recall", "mrr"}
    assert len(res.worse_queries) == 20 and res.worse_queries[0].lost_relevant == ("r",)


def test_gate_fails_when_abstention_drops():
    base = _snap([_e(f"q{n}", "", {}) for n in range(12)], k=3)
    cur = _snap([_e(f"q{n}", "a", {}) for n in range(12)], k=3)
    res = S.gate(base, cur)
    assert not res.passed
    (check,) = res.checks
    assert check.metric == "abstention" and check.baseline == 1.0 and check.current == 0.0


# --------------------------------------------------------------------------------------------
# the commands, end to end


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("snap") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


@pytest.fixture(scope="module")
def baseline(vault, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("snaps") / "base.json"
    r = _run("snapshot", "--vault", str(vault), "--queries", str(vault / "golden.jsonl"),
             "--preset", "default", "--embedder", "none", "--now", NOW, "--k", "5",
             "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "coverage: " in r.stdout and "top-5 results are unjudged" in r.stdout
    return out


def test_snapshot_holds_what_the_engine_returned(vault, baseline):
    snap = S.load(baseline)
    golden = metrics.read_golden(vault / "golden.jsonl")
    assert [e.query for e in snap.entries] == [g.query for g in golden]
    assert snap.k == 5 and snap.preset == "default" and snap.embedder == "none"
    eng = open_engine(vault, preset="default", embedder="none")
    try:
        for e, g in list(zip(snap.entries, golden, strict=True))[:10]:
            tr = eng.recall(g.query, k=5, now=metrics.parse_time(NOW), as_of=g.as_of)
            assert e.hits == tuple((h.id, h.score) for h in tr.hits)
            assert e.relevant == dict(g.relevant)
    finally:
        if eng.index is not None:
            eng.index.close()


def test_gate_cli_passes_on_itself_and_fails_on_a_planted_regression(vault, baseline, tmp_path):
    same = _run("gate", str(baseline), "--vault", str(vault), "--preset", "default",
                "--embedder", "none", "--json")
    assert same.returncode == 0, same.stderr
    doc = json.loads(same.stdout)
    assert doc["passed"] and doc["diff"]["summary"]["changed"] == 0
    planted = tmp_path / "no-keywords.toml"
    planted.write_text('extends = "default"\n[keyword]\nenabled = false\n[fuzzy]\nenabled = false\n',
                       encoding="utf-8")
    bad = _run("gate", str(baseline), "--vault", str(vault), "--preset", str(planted),
               "--embedder", "none")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "gate failed" in bad.stdout and "WORSE" in bad.stdout and "lost relevant" in bad.stdout


def test_diff_cli_against_another_preset(vault, baseline):
    r = _run("diff", str(baseline), "--vault", str(vault), "--preset", "bastra",
             "--embedder", "none", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["k"] == 5 and doc["summary"]["queries"] == len(S.load(baseline).entries)
    assert doc["paired"]["recall"]["a_mean"] is not None
    text = _run("diff", str(baseline), "--vault", str(vault), "--preset", "bastra",
                "--embedder", "none")
    assert text.returncode == 0 and "compared at k=5" in text.stdout


def test_commands_name_the_bad_file(tmp_path):
    r = _run("diff", str(tmp_path / "nope.json"))
    assert r.returncode == 2 and "nope.json: no such file" in r.stderr
    r = _run("snapshot", "--queries", str(tmp_path / "q.jsonl"), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 2 and "q.jsonl: no such file" in r.stderr


def test_query_set_reads_lines_as_eval_does(tmp_path):
    """One parser for both (`metrics.golden_query`): the off-topic flag, `as_of` in the note,
    numbered categories, and eval's checks."""
    f = tmp_path / "q.jsonl"
    f.write_text('{"query": "judged nothing", "relevant": {"a": 0}, "off_topic": true}\n'
                 '{"query": "old", "relevant": ["a"], "note": "as_of=2026-03-15", "category": 2}\n',
                 encoding="utf-8")
    qs = S.read_query_set(f)
    golden = metrics.read_golden(f)
    assert qs[0].off_topic and qs[0].relevant == {} and golden[0].off_topic
    assert qs[1].as_of == golden[1].as_of and qs[1].as_of is not None
    assert qs[1].category == golden[1].category == "2"
    f.write_text('{"query": "x", "relevant": ["a"], "off_topic": true}\n', encoding="utf-8")
    for read in (S.read_query_set, metrics.read_golden):
        with pytest.raises(metrics.GoldenError, match="names a relevant id"):
            read(f)
