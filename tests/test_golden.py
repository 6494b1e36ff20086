"""The golden set under a configuration: same figures as `recall-tui eval`, badges against a
baseline, cancellation, and judgements written back to golden.jsonl."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.engine import Cancelled, open_engine
from recall_tui.engine.config import load_preset
from recall_tui.tuning import metrics
from recall_tui.tuning.golden import (
    GoldenRun,
    compare_runs,
    file_hash,
    mark_relevant,
    run_golden,
)
from recall_tui.tuning.metrics import GoldenQuery, read_golden
from recall_tui.vault.edit import EditConflict
from tests.conftest import PINNED_NOW


@pytest.fixture(scope="module")
def engine(session_vault_copy):
    e = open_engine(session_vault_copy, embedder="local")
    yield e
    e.index.close()


@pytest.fixture(scope="module")
def golden(session_vault_copy) -> list[GoldenQuery]:
    return read_golden(session_vault_copy / "golden.jsonl")


def test_figures_equal_recall_tui_eval(engine, golden, session_vault_copy):
    out = subprocess.run(
        [sys.executable, "-m", "recall_tui", "eval", "--vault", str(session_vault_copy),
         "--preset", "default", "--preset", "bastra", "--k", "10",
         "--now", PINNED_NOW.isoformat(), "--embedder", "local", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["embedder"] == "local"
    for name in ("default", "bastra"):
        run = run_golden(engine, golden, load_preset(name, session_vault_copy), k=10, now=PINNED_NOW,
                         label=name)
        want = doc["presets"][name]
        assert dict(run.means) == want["means"]  # exactly equal, not approximately
        assert [list(r.ranked) for r in run.results] == [q["ranked"] for q in want["queries"]]
        assert [list(r.unjudged) for r in run.results] == [q["unjudged"] for q in want["queries"]]
    assert len(run.results) == len(golden) == 118  # 85 judged on-topic + 33 off-topic (issue 20)


def test_unjudged_hits_are_marked_unjudged_not_wrong(engine, golden):
    run = run_golden(engine, golden, k=10, now=PINNED_NOW)
    with_unjudged = [r for r in run.results if r.unjudged]
    assert with_unjudged, "the sample golden set has queries with unjudged hits"
    r = with_unjudged[0]
    assert GoldenRun.judgement(r, r.unjudged[0]) is None
    judged_hit = next((i for i in r.ranked[: r.k] if i in r.judged), None)
    if judged_hit is not None:
        assert GoldenRun.judgement(r, judged_hit) == r.judged[judged_hit]
    # an unjudged hit costs nothing: recall is the share of relevant ids found, whatever else came
    rel = {i for i, g in r.judged.items() if g > 0}
    assert r.metrics["recall"] == pytest.approx(len(rel & set(r.ranked[: r.k])) / len(rel))


def test_cancel_is_checked_between_queries(engine, golden):
    asked = []

    def cancel() -> bool:
        asked.append(1)
        return len(asked) > 40  # the engine asks too, between stages; stop part way

    with pytest.raises(Cancelled):
        run_golden(engine, golden, k=10, now=PINNED_NOW, cancel=cancel)
    assert 40 < len(asked) < 85 * 25


def _result(query: str, ranked: list[str], judged: dict[str, int], k: int = 3):
    return metrics.score_query(query, ranked, judged, k)


def _run(label: str, results) -> GoldenRun:
    qs = tuple(GoldenQuery(r.query, r.judged, "", None, i) for i, r in enumerate(results, 1))
    return GoldenRun(label, "h", 3, "f", qs, tuple(results), metrics.mean_metrics(results), 0.0)


def test_compare_runs_badges_hand_checked():
    judged = {"a": 3, "b": 1}
    base = _run("base", [
        _result("q1", ["x", "a", "b"], judged),   # a at rank 2
        _result("q2", ["a", "b", "x"], judged),   # ideal
        _result("q3", ["x", "y", "z"], {}),       # nothing relevant judged: unscored
        _result("q4", ["b", "x", "y"], judged),   # b only
    ])
    cur = _run("cur", [
        _result("q1", ["a", "x", "b"], judged),   # a moves to rank 1: nDCG up -> better
        _result("q2", ["b", "a", "x"], judged),   # same set, worse order: nDCG down -> worse
        _result("q3", ["z", "y", "x"], {}),
        _result("q4", ["b", "y", "x"], judged),   # b still rank 1, an unjudged id moved: same
    ])
    c = compare_runs(cur, base)
    assert [(b.query, b.badge) for b in c.badges] == [
        ("q1", "better"), ("q2", "worse"), ("q3", "unscored"), ("q4", "same")]
    assert (c.better, c.worse, c.same) == (1, 1, 1)
    assert c.badges[0].metric == "ndcg"
    # MRR: base q1 1/2, q2 1, q4 1 -> 2.5/3; cur q1 1, q2 1, q4 1 -> 3/3; delta = 0.5/3
    assert c.mean_deltas["mrr"] == pytest.approx(0.5 / 3)
    # recall@3 unchanged everywhere (q4 finds b only, both times)
    assert c.mean_deltas["recall"] == 0.0
    assert c.paired.metrics["ndcg"].wins == 1 and c.paired.metrics["ndcg"].losses == 1


GOLDEN_TEXT = (
    "# judged queries, hand-kept\n"
    '{"query": "postgres upgrade", "relevant": {"pg16": 3, "pg15": 1}, "note": "keep me"}\n'
    "\n"
    '{"query":"café hours","relevant":["cafe"]}\r\n'
    '{"query": "tail", "relevant": {"t": 2}}\n'
)


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def test_mark_relevant_rewrites_only_that_line(tmp_path: Path):
    p = tmp_path / "golden.jsonl"
    p.write_bytes(GOLDEN_TEXT.encode())
    before = p.read_bytes()
    h1 = mark_relevant(p, "postgres upgrade", "pg14", 2, expected_hash=file_hash(p))
    after = p.read_bytes()
    assert h1 == file_hash(p)
    old, new = _lines(before), _lines(after)
    assert len(old) == len(new)
    assert [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == [1]
    assert json.loads(new[1]) == {"query": "postgres upgrade",
                                  "relevant": {"pg16": 3, "pg15": 1, "pg14": 2}, "note": "keep me"}
    # change a grade on the CRLF line given as a list: it becomes a mapping, the CRLF stays
    h2 = mark_relevant(p, "café hours", "cafe", 3, expected_hash=h1)
    third = _lines(p.read_bytes())
    assert third[3].endswith(b"\r") and third[3].decode().startswith('{"query": "café hours"')
    assert [i for i, (a, b) in enumerate(zip(new, third, strict=True)) if a != b] == [3]
    # remove a judgement
    h3 = mark_relevant(p, "postgres upgrade", "pg15", None, expected_hash=h2)
    q = {g.query: dict(g.relevant) for g in read_golden(p)}
    assert q == {"postgres upgrade": {"pg16": 3, "pg14": 2}, "café hours": {"cafe": 3}, "tail": {"t": 2}}
    # a new query is appended; every earlier byte stays
    prev = p.read_bytes()
    h4 = mark_relevant(p, "new question", "m1", 1, expected_hash=h3)
    assert p.read_bytes().startswith(prev)
    assert p.read_bytes()[len(prev):] == b'{"query": "new question", "relevant": {"m1": 1}}\n'
    assert h4 == file_hash(p)
    assert [g.query for g in read_golden(p)][-1] == "new question"


def test_mark_relevant_refuses_when_the_file_changed(tmp_path: Path):
    p = tmp_path / "golden.jsonl"
    p.write_bytes(GOLDEN_TEXT.encode())
    stale = file_hash(p)
    p.write_bytes(GOLDEN_TEXT.encode() + b'{"query": "added by someone", "relevant": ["z"]}\n')
    on_disk = p.read_bytes()
    with pytest.raises(EditConflict) as err:
        mark_relevant(p, "tail", "t", 0, expected_hash=stale)
    assert p.read_bytes() == on_disk  # nothing written
    assert "added by someone" in err.value.disk_text
    assert '"t": 0' in err.value.intended_text and "added by someone" in err.value.intended_text
    assert list(tmp_path.iterdir()) == [p]  # no temp file left behind


def test_mark_relevant_creates_a_missing_file_only_when_none_was_read(tmp_path: Path):
    p = tmp_path / "golden.jsonl"
    with pytest.raises(EditConflict):
        mark_relevant(p, "q", "m", 1, expected_hash="0" * 64)
    assert not p.exists()
    mark_relevant(p, "q", "m", 1, expected_hash=None)
    assert [(g.query, dict(g.relevant)) for g in read_golden(p)] == [("q", {"m": 1})]
    with pytest.raises(ValueError, match="grade"):
        mark_relevant(p, "q", "m", 4, expected_hash=file_hash(p))
