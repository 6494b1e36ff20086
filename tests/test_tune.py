"""`recall-tui tune` and `recall_tui.tuning.tune`: the cross-validated search finds a planted
better configuration, its folds never share a query, it is deterministic for a seed, and its
paired test says "no difference" when there is none. Also `eval`'s explanation of empty recalls
and its per-category figures, through the real command. Real engine, real index (keyword
channels only, `--embedder none`, to stay fast); no mocks."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from recall_tui.engine import open_engine
from recall_tui.engine.config import load_preset
from recall_tui.tuning import metrics
from recall_tui.tuning.tune import TuneVault, make_folds, tune
from recall_tui.tuning.tune_space import (
    apply_changes,
    knob_patterns,
    make_pool,
    restrict,
    search_space,
)
from tests.engine_vaults import mem, write_vault

BIN = Path(sys.executable).with_name("recall-tui")
NOW = datetime(2026, 11, 21, 9, tzinfo=timezone.utc)
NOW_S = "2026-11-21T09:00:00Z"
PAIRS = 30

def _word(i: int, salt: int) -> str:
    """A made-up word, unique per (i, salt), that the stemmer leaves alone."""
    n, letters = i * 3 + salt, ""
    for _ in range(3):
        n, r = divmod(n, 26)
        letters += "abcdefghijklmnopqrstuvwxyz"[r]
    return f"zeb{letters}k"


#: A base preset where only the BM25 channel runs and the title weighs 4x the body.
BASE_TOML = """\
extends = "default"
description = "test base: BM25 only, title x4"
[fuzzy]
enabled = false
[vector]
enabled = false
[topic]
enabled = false
[hops]
enabled = false
[consolidation]
enabled = false
[keyword]
title = 4.0
body = 1.0
summary = 1.0
recall_when = 0.0
tags = 0.0
keywords = 0.0
"""


def planted_vault(root: Path) -> tuple[Path, Path]:
    """PAIRS pairs: the relevant memory holds both query words in its body; a distractor
    holds one of them in its short title. With title x4 the distractor ranks first (MRR 0.5);
    with the title weighed like the body, or the body weighed up, the relevant one does."""
    files = {}
    lines = []
    for i in range(PAIRS):
        w, x = _word(i, 1), _word(i, 2)
        files.update([
            mem(f"rel-{i:02d}", "Meeting note", "Meeting note",
                body=f"We talked it over: {w} and {x} came up, and nothing else did."),
            mem(f"dis-{i:02d}", f"{w} report", "A report filed earlier",
                body="Routine filler text about the weather and lunch."),
        ])
        lines.append(json.dumps({"query": f"{w} {x}", "relevant": {f"rel-{i:02d}": 3},
                                 "category": "single-fact" if i % 2 else "multi-hop"}))
    write_vault(root, dict(files))
    qfile = root / "golden.jsonl"
    qfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = root.parent / "base-title4.toml"
    base.write_text(BASE_TOML, encoding="utf-8")
    return qfile, base


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("tune") / "planted"
    qfile, base_path = planted_vault(root)
    base = load_preset(str(base_path))
    engine = open_engine(root, config=base, embedder="none")
    yield root, qfile, base_path, base, engine
    engine.index.close()


def _run(planted, **kw):
    root, qfile, _bp, base, engine = planted
    args = dict(base_name="title4", budget=120, folds=5, seed=7, k=10, now=NOW)
    args.update(kw)
    return tune([TuneVault(engine, metrics.read_golden(qfile), root.name)], base, **args)


def test_finds_the_planted_better_configuration_on_held_out_queries(planted):
    result = _run(planted)
    # the base really is worse: the distractor outranks the answer on every query
    assert result.heldout_base["mrr"] == pytest.approx(0.5)
    # every fold, choosing on the other folds only, finds a fix that holds on its own queries
    for f in result.folds:
        assert f.changes, f"fold {f.index} kept the base"
        assert f.heldout["mrr"] == pytest.approx(1.0), (f.index, f.changes)
    assert result.heldout["mrr"] == pytest.approx(1.0)
    mc = result.comparison.metrics["mrr"]
    assert mc.wins == PAIRS and mc.losses == 0
    assert mc.randomisation_p < 0.001 and mc.sign_p < 0.001
    # the chosen configuration changes what the plant is about: the title against the body
    # weight, or a fusion that counts matched query terms (linear: 2 of 2 beats 1 of 2)
    best = apply_changes(result.base, result.changes)
    assert (best.keyword.title < 2 * best.keyword.body + best.keyword.summary
            or best.fuse.method == "linear"), result.changes
    assert result.insample["mrr"] == pytest.approx(1.0)
    # the saved choice is the best configuration tried on all queries
    chosen = [c for c in result.leaderboard if c.changes == result.changes]
    assert chosen and chosen[0].objective == pytest.approx(result.leaderboard[0].objective)


def test_folds_never_share_a_query_and_cover_every_query():
    texts_a = [f"q{i}" for i in range(23)] + ["Q3", " q5 "]  # duplicates of q3 and q5
    texts_b = [f"other {i}" for i in range(11)]
    assign = make_folds([texts_a, texts_b], 5, seed=3)
    assert [len(a) for a in assign] == [len(texts_a), len(texts_b)]
    folds_of: dict[tuple[int, str], set[int]] = {}
    for v, (texts, a) in enumerate(zip([texts_a, texts_b], assign, strict=True)):
        for t, f in zip(texts, a, strict=True):
            folds_of.setdefault((v, " ".join(t.lower().split())), set()).add(f)
        # stratified: each vault is spread over every fold
        assert set(a) == set(range(5))
    assert all(len(fs) == 1 for fs in folds_of.values()), "a query text sits in two folds"
    with pytest.raises(ValueError, match="folds"):
        make_folds([["a", "b"]], 3, seed=0)


def test_every_query_is_held_out_exactly_once(planted):
    result = _run(planted, budget=10)
    assert sum(f.test for f in result.folds) == PAIRS
    assert all(f.train + f.test == PAIRS for f in result.folds)
    n = len(result.comparison.metrics["mrr"].deltas)
    assert n == PAIRS


def test_deterministic_for_a_seed(planted):
    a = _run(planted, budget=25, seed=11).to_json()
    b = _run(planted, budget=25, seed=11).to_json()
    assert a == b
    assert make_pool(load_preset("default"), 30, 1) == make_pool(load_preset("default"), 30, 1)
    assert make_pool(load_preset("default"), 30, 1) != make_pool(load_preset("default"), 30, 2)


def test_knobs_restrict_the_pool_and_the_search(planted):
    base = load_preset("default")
    # the pool holds only changes to knobs matching a pattern (`*` crosses dots), and the base
    pool = make_pool(base, 40, 3, ("fuse.*", "vector.threshold"))
    assert pool[0] == () and len(pool) == 40
    paths = {p for c in pool for p, _v in c}
    assert paths and all(p.startswith("fuse.") or p == "vector.threshold" for p in paths), paths
    assert "fuse.weights.vector" in paths and "vector.threshold" in paths
    # every single change of the restricted space is in a pool large enough for it
    space = restrict(search_space(base), ("fuse.*", "vector.threshold"))
    singles = {(p, v) for p, vals in space for v in vals}
    assert singles <= {c[0] for c in make_pool(base, 200, 3, ("fuse.*", "vector.threshold"))
                       if len(c) == 1}
    # deterministic for a seed; no pattern is the unrestricted pool
    assert pool == make_pool(base, 40, 3, ("fuse.*", "vector.threshold"))
    assert pool != make_pool(base, 40, 4, ("fuse.*", "vector.threshold"))
    assert make_pool(base, 40, 3, ()) == make_pool(base, 40, 3)
    assert knob_patterns(["fuse.*, vector.threshold", "fuse.*", " "]) == (
        "fuse.*", "vector.threshold")
    with pytest.raises(ValueError, match=r"'nope\.\*' matches no knob.*fuse\.method"):
        make_pool(base, 10, 0, ("fuse.*", "nope.*"))
    # the whole search stays inside the restriction: the planted fix is a keyword field
    # weight, so `hops.*` cannot find it and `keyword.*` does
    kept = _run(planted, budget=30, knobs=("hops.*",))
    assert kept.knobs == ("hops.*",) and set(kept.searched) <= {"hops.enabled", "hops.factor"}
    assert all(p.startswith("hops.") for f in kept.folds for p, _v in f.changes)
    assert all(p.startswith("hops.") for c in kept.leaderboard for p, _v in c.changes)
    assert kept.heldout["mrr"] == pytest.approx(0.5)
    found = _run(planted, budget=30, knobs=("keyword.*",))
    assert all(p.startswith("keyword.") for f in found.folds for p, _v in f.changes)
    assert found.heldout["mrr"] == pytest.approx(1.0)
    doc = found.to_json()
    assert doc["knobs"] == ["keyword.*"] and "keyword.title" in doc["searched_knobs"]
    assert doc == _run(planted, budget=30, knobs=("keyword.*",)).to_json()
    assert _run(planted, budget=5).to_json()["knobs"] is None


def test_no_difference_means_not_significant(planted):
    # a pool holding only the base: the "tuned" configuration is the base itself
    result = _run(planted, budget=1)
    assert result.changes == ()
    for name in ("recall", "mrr", "ndcg"):
        mc = result.comparison.metrics[name]
        assert mc.wins == mc.losses == 0
        assert mc.randomisation_p == 1.0 and mc.sign_p == 1.0
    # and the test itself: identical runs -> p = 1
    rs = [metrics.score_query(f"q{i}", ["a", "b"], {"b": 1}, 10) for i in range(20)]
    c = metrics.compare(rs, rs)
    assert c.metrics["mrr"].randomisation_p == 1.0 and c.metrics["mrr"].sign_p == 1.0


def test_progress_reaches_the_total_and_cancel_stops_it(planted):
    seen: list[tuple[int, int]] = []
    whats: list[str] = []

    def progress(done: int, total: int, what: str) -> None:
        seen.append((done, total))
        whats.append(what)

    _run(planted, budget=40, progress=progress)
    assert seen, "no progress was reported"
    # what runs is named, with the fold a selection step belongs to (the bar shows it)
    assert whats[0].startswith("pool of 40: ")
    assert {w.split(":")[0] for w in whats} == {
        "pool of 40", *(f"fold {i} of 5" for i in range(1, 6)), "all queries", "done"}
    dones = [d for d, _t in seen]
    assert dones == sorted(dones), "progress went backwards"
    assert seen[-1][0] == seen[-1][1]
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 5

    from recall_tui.engine import Cancelled

    with pytest.raises(Cancelled):
        _run(planted, budget=8, cancel=cancel)


# --------------------------------------------------------------------------------------------
# the command


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=600, check=False)


def test_tune_command_reports_held_out_figures_and_saves_a_preset(planted):
    root, qfile, base_path, _b, _e = planted
    r = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--base", str(base_path),
             "--budget", "60", "--folds", "3", "--seed", "2", "--now", NOW_S, "--embedder", "none",
             "--save", "planted-tuned", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["folds"]) == 3 and sum(f["test"] for f in doc["folds"]) == PAIRS
    assert doc["heldout"]["mrr"] > doc["heldout_base"]["mrr"] + 0.3
    assert doc["comparison"]["mrr"]["randomisation_p"] < 0.01
    saved = Path(doc["saved"])
    assert saved.is_file() and saved.parent == root / ".recall" / "presets"
    tuned = load_preset("planted-tuned", root)
    assert tuned.to_dict() != load_preset(str(base_path)).with_value(
        "description", tuned.description).to_dict()
    # the saved preset is what was chosen, and eval agrees it is better than the base
    ev = _cli("eval", "--vault", str(root), "--queries", str(qfile), "--preset", str(base_path),
              "--preset", "planted-tuned", "--now", NOW_S, "--embedder", "none", "--json")
    assert ev.returncode == 0, ev.stderr
    means = {name: p["means"] for name, p in json.loads(ev.stdout)["presets"].items()}
    assert means["planted-tuned"]["mrr"] == pytest.approx(1.0)
    # the text report names the folds, the paired test and labels in-sample figures
    txt = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--base", str(base_path),
               "--budget", "20", "--folds", "3", "--now", NOW_S, "--embedder", "none")
    assert txt.returncode == 0, txt.stderr
    out = " ".join(txt.stdout.split())
    for needle in ("held-out figures per fold", "paired per query", "in-sample", "rand. p",
                   "tuned from base-title4"):
        assert needle in out, needle


def test_tune_command_rejects_bad_input(planted, tmp_path):
    root, qfile, _bp, _b, _e = planted
    r = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--queries", str(qfile),
             "--embedder", "none")
    assert r.returncode == 2 and "one --queries per --vault" in r.stderr
    r = _cli("tune", "--vault", str(tmp_path / "nope"), "--embedder", "none")
    assert r.returncode == 2 and "no such vault folder" in r.stderr
    r = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--folds", "1", "--embedder", "none")
    assert r.returncode == 2 and "--folds" in r.stderr
    r = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--base", "no-such-preset",
             "--embedder", "none")
    assert r.returncode == 2 and "unknown preset" in r.stderr
    r = _cli("tune", "--vault", str(root), "--queries", str(qfile), "--knobs", "keyword.*",
             "--knobs", "fuse.wieghts.*", "--embedder", "none")
    assert r.returncode == 2 and r.stdout == ""
    err = " ".join(r.stderr.split())
    assert "'fuse.wieghts.*' matches no knob" in err and "keyword.*" not in err
    assert "fuse.weights.keyword" in err and "keyword.title" in err  # the names it could match


def test_tune_command_knobs_restrict_and_report(planted):
    root, qfile, base_path, _b, _e = planted
    common = ("tune", "--vault", str(root), "--queries", str(qfile), "--base", str(base_path),
              "--budget", "20", "--folds", "3", "--seed", "4", "--now", NOW_S, "--embedder", "none",
              "--knobs", "keyword.title,keyword.body", "--knobs", "hops.*")
    r = _cli(*common, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["knobs"] == ["keyword.title", "keyword.body", "hops.*"]
    assert doc["searched_knobs"] == ["keyword.title", "keyword.body", "hops.enabled", "hops.factor"]
    changed = {c["knob"] for f in doc["folds"] for c in f["changes"]}
    changed |= {c["knob"] for b in doc["leaderboard"] for c in b["changes"]}
    assert changed and changed <= set(doc["searched_knobs"]), changed
    assert doc == json.loads(_cli(*common, "--json").stdout)  # deterministic for a seed
    txt = _cli(*common)
    assert txt.returncode == 0, txt.stderr
    out = " ".join(txt.stdout.split())
    assert ("knobs searched (--knobs keyword.title,keyword.body,hops.*): keyword.title, "
            "keyword.body, hops.enabled, hops.factor") in out


# --------------------------------------------------------------------------------------------
# eval: empty recalls explained, figures per category


@pytest.fixture(scope="module")
def old_vault(tmp_path_factory) -> tuple[Path, Path]:
    """Chat-shaped: short observations, no recall_when, no edges, all dated years before now."""
    root = tmp_path_factory.mktemp("eval-old") / "old"
    files = {}
    lines = []
    topics = [("kayak", "Priya bought a red kayak for the lake trips"),
              ("sourdough", "Tom bakes sourdough every Sunday morning"),
              ("violin", "Priya started violin lessons with a teacher from Porto"),
              ("marathon", "Tom ran the Berlin marathon in under four hours"),
              ("allergy", "Priya has a peanut allergy since childhood"),
              ("garden", "Tom grows tomatoes and basil in a rooftop garden")]
    for i, (word, text) in enumerate(topics):
        files.update([mem(f"obs-{i}", text, text, type="fact", tags=["session-3", "priya"],
                          created=f"2019-05-0{i + 1}T10:00:00Z")])
        lines.append(json.dumps({"query": f"what about the {word}?", "relevant": {f"obs-{i}": 3},
                                 "category": "temporal" if i % 3 == 0 else "single-fact"}))
    write_vault(root, files)
    qfile = root / "questions.jsonl"
    qfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, qfile


def test_eval_explains_a_preset_that_returns_nothing(old_vault):
    root, qfile = old_vault
    args = ("eval", "--vault", str(root), "--queries", str(qfile), "--preset", "default",
            "--preset", "bastra", "--now", NOW_S, "--embedder", "none")
    r = _cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    bastra = doc["presets"]["bastra"]
    assert bastra["means"]["recall"] == 0.0
    assert bastra["empty"]["queries"] == 6
    assert bastra["empty"]["by_stage"] == {"floor": 6}
    # the staleness factor (every memory is years old: expired, x0.2), not the match, put
    # the hits under the floor
    assert bastra["empty"]["boosted_under_floor"] == 6
    reason = bastra["queries"][0]["empty_reason"]
    assert reason["stage"] == "floor" and reason["floor"] == 30.0
    assert any(f.startswith("staleness x0.2") for f in reason["factors"])
    # default finds them all, and has nothing to explain
    assert doc["presets"]["default"]["means"]["recall"] == 1.0
    assert doc["presets"]["default"]["empty"]["queries"] == 0
    txt = _cli(*args)
    assert txt.returncode == 0, txt.stderr
    out = " ".join(txt.stdout.split())
    assert "bastra: 6 of 6 queries returned no hits" in out
    assert "6 emptied by floor" in out and "staleness x0.2" in out


def test_eval_prints_figures_per_category(old_vault):
    root, qfile = old_vault
    r = _cli("eval", "--vault", str(root), "--queries", str(qfile), "--preset", "default",
             "--preset", "bastra", "--now", NOW_S, "--embedder", "none", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    cats = doc["presets"]["default"]["categories"]
    assert set(cats) == {"temporal", "single-fact"}
    assert cats["temporal"]["queries"] == 2 and cats["single-fact"]["queries"] == 4
    # per-category means are the means of that category's own rows
    rows = doc["presets"]["default"]["queries"]
    for cat, row in cats.items():
        vals = [q["metrics"]["mrr"] for q in rows if q["category"] == cat]
        assert row["mrr"] == pytest.approx(sum(vals) / len(vals))
    assert doc["presets"]["bastra"]["categories"]["temporal"]["recall"] == 0.0
    txt = _cli("eval", "--vault", str(root), "--queries", str(qfile), "--now", NOW_S,
               "--embedder", "none")
    assert txt.returncode == 0, txt.stderr
    assert "per category" in txt.stdout and "temporal" in txt.stdout


def test_read_golden_category(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"query": "a", "relevant": ["x"], "category": "multi-hop"}\n'
                 '{"query": "b", "relevant": ["y"]}\n', encoding="utf-8")
    qs = metrics.read_golden(p)
    assert [q.category for q in qs] == ["multi-hop", None]
    # a numbered category is a label too (issue 22); a list is not
    p.write_text('{"query": "a", "relevant": ["x"], "category": 3}\n', encoding="utf-8")
    assert [q.category for q in metrics.read_golden(p)] == ["3"]
    p.write_text('{"query": "a", "relevant": ["x"], "category": ["x"]}\n', encoding="utf-8")
    with pytest.raises(metrics.GoldenError, match="category"):
        metrics.read_golden(p)


def test_off_topic_queries_enter_the_objective(planted, tmp_path):
    """Off-topic lines are tuned on through their quiet (1 - hits / k): the objective is
    (1 - w) x on-topic (recall + MRR) / 2 + w x off-topic quiet, by hand from the results."""
    from recall_tui.tuning.tune import _Runner

    root, qfile, _bp, base, engine = planted
    # the base without its calibrated floor injects on anything that shares a word
    loud = base.with_value("floor.calibrated", False)
    off = [metrics.GoldenQuery(q, {}, "", None, 900 + i, "off-topic", True)
           for i, q in enumerate(["meeting weather lunch", "zzqx unheard of words"])]
    queries = metrics.read_golden(qfile)[:6] + off
    tv = TuneVault(engine, queries, root.name)
    for w in (0.0, 0.25, 1.0):
        runner = _Runner(loud, [tv], 10, NOW, None, w)
        rs = runner.run(())[0]
        on = [(r.metrics["recall"] + r.metrics["mrr"]) / 2 for r in rs[:6]]
        quiet = [1 - min(len(r.ranked), 10) / 10 for r in rs[6:]]
        assert quiet[0] < 1 and quiet[1] == 1  # the first shares words, the second none
        want = (1 - w) * sum(on) / 6 + w * sum(quiet) / 2
        mask = [np.ones(len(queries), dtype=bool)]
        assert runner.objective((), mask) == pytest.approx(want)
    result = tune([tv], loud, base_name="loud", budget=6, folds=2, seed=1, k=10, now=NOW,
                  knobs=["keyword.title"], off_topic_weight=0.5)
    assert result.vaults[0]["scored"] == len(queries)
    summary = result.off_topic["base"]
    assert summary["queries"] == 2 and summary["abstained"] == 1
    doc = result.to_json()
    assert doc["off_topic_weight"] == 0.5 and "0.5 x mean (1 - hits / k)" in doc["objective"]
    with pytest.raises(ValueError, match="off_topic_weight"):
        tune([tv], loud, now=NOW, off_topic_weight=2.0)
