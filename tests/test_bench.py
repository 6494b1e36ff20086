"""`recall-tui bench` on a tiny synthetic vault: the JSON holds every figure the docs quote.

Speed is never asserted here (the bench measures it); these tests check that every figure is
present, measured from a real run, and that the oracle checks can fail."""

from __future__ import annotations

import json

import numpy as np
import pytest

from recall_tui.cli import main
from recall_tui.diagnostics.engine_bench import synth_vault
from recall_tui.diagnostics.engine_bench_child import (
    SCORE_TOLERANCE,
    STANDIN_CHUNK,
    StandinEmbedder,
    embedder_for,
    keyword_oracle,
    load_queries,
)
from recall_tui.diagnostics.engine_bench_report import evaluate_targets
from recall_tui.engine.trace import STAGE_ORDER

SIZE = 200
#: The fixture's vault has as many raw turns as memories (`--turns-per-memory 1`).
TURNS = SIZE


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("bench")
    out = base / "bench.json"
    code = main(["bench", "--sizes", str(SIZE), "--runs", "2", "--embedder", "standin",
                 "--synth-dir", str(base / "synth"), "--no-cold-start", "--stages",
                 "--turns-per-memory", "1", "--out", str(out)])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8")), base


def test_bench_json_has_every_stage_with_p50_and_p95(bench_run):
    data, _ = bench_run
    assert data["kind"] == "recall-tui-bench"
    (r,) = data["results"]
    assert r["memories"] == SIZE and r["runs"] == 2
    # the synthetic vault also has a few transcripts of its own beside the generated turns
    assert r["turns"] >= TURNS and r["turn_channel"] == "on (bench)"
    assert set(r["stages"]) == set(STAGE_ORDER)
    ran = [name for name, s in r["stages"].items() if s["n"]]
    assert {"query.parse", "keyword", "fuzzy", "vector", "turns", "fuse", "boosts",
            "enrich"} <= set(ran)
    for name, s in r["stages"].items():
        if s["n"]:
            assert s["n"] <= r["queries"] * r["runs"]
            assert 0 <= s["min"] <= s["p50"] <= s["p95"] <= s["max"], name
        else:
            assert s["skipped"], name  # a stage that never ran says why
    pipe = r["pipeline"]
    for key in ("traced_total_ms", "wall_ms", "excluding_query_embedding_ms"):
        assert pipe[key]["n"] == r["queries"] * r["runs"]
        assert pipe[key]["p50"] > 0 and pipe[key]["p95"] >= pipe[key]["p50"]
    assert pipe["excluding_query_embedding_ms"]["p50"] <= pipe["traced_total_ms"]["p50"]
    assert r["embed_query_ms"]["n"] == r["queries"]


def test_bench_json_has_index_reindex_and_memory(bench_run):
    data, _ = bench_run
    (r,) = data["results"]
    assert r["embedder"] == {"name": "standin", "model": StandinEmbedder.model, "dim": 384,
                             "standin": True}
    build = r["index_build"]
    assert build["ms"] > 0 and build["vectors"] == SIZE
    assert "stand-in" in build["embedder"]
    re1 = r["reindex_one"]
    assert [s["updated"] for s in re1["samples"]] == [1, 1]
    assert re1["samples"][0]["embedded"] == 1  # the changed text was embedded once
    assert re1["samples"][1]["embedded"] == 0  # changing it back reuses the cached vector
    assert re1["ms"] > 0 and "stand-in" in re1["embedder"]
    assert r["peak_rss_mb"] >= r["baseline_rss_mb"] > 10
    assert r["vault_read_ms"] > 0 and r["first_recall_ms"] > 0


def test_bench_times_an_appended_session_and_leaves_the_vault_as_it_was(bench_run):
    data, base = bench_run
    (r,) = data["results"]
    app = r["append_session"]
    assert "error" not in app, app
    # the recall found turns of the session written while the engine set watched the vault
    assert app["visible"] and app["hits_from_session"] > 0 and app["turns"] == 200
    assert app["visible_ms"] >= app["notice_and_refresh_ms"] > 0
    assert app["refresh_ms"] > 0 and app["index_update_ms"] is not None
    assert app["patched"]  # the watcher's file list patched the vault: no re-read
    # the session was removed again: the kept synthetic vault is as synth wrote it
    (vault,) = (base / "synth").iterdir()
    assert not [p.name for p in (vault / "sessions").iterdir() if "bench-append" in p.name]


def test_bench_reopens_the_unchanged_vault_in_a_fresh_process(bench_run, capsys):
    """Issue 24's "re-open of the unchanged vault": the index the bench built, opened again by
    a fresh process with the vault unchanged (nothing re-indexed), up to one recall's answer,
    split by phase; the table shows it."""
    data, _ = bench_run
    (r,) = data["results"]
    ro = r["reopen"]
    assert ro["index_report"] == {"added": 0, "updated": 0, "removed": 0, "embedded": 0}
    assert {"keyword", "vector", "turns", "floor"} <= set(ro["first_recall_stages_ms"])
    assert set(ro["phases"]) == {"read", "index_open", "engine", "first_recall"}
    assert ro["process_ms"] > sum(p["wall_ms"] for p in ro["phases"].values()) > 0
    assert ro["cpu_ms"] >= ro["phases"]["first_recall"]["cpu_ms"] >= 0
    from recall_tui.diagnostics.engine_bench_report import format_table

    table = format_table(data)
    assert "re-open to first recall (fresh process)" in table
    assert "first recall: wall / CPU" in table


def test_bench_oracles_agree(bench_run):
    data, _ = bench_run
    (r,) = data["results"]
    kw = r["keyword_vs_rank_bm25"]
    assert kw["same_scores"] is True and kw["max_abs_diff"] <= SCORE_TOLERANCE
    assert kw["queries"] > 0 and "title" in kw["fields"]
    assert kw["speedup_vs_stage"] > 0
    vec = r["vector_vs_numpy"]
    assert vec["topk_agreement"] == 1.0  # sqlite-vec's exact kNN finds numpy's top k
    assert vec["ratio_stage_to_numpy"] > 0


def test_bench_table_labels_the_stand_in(bench_run, capsys):
    # the fixture printed the table; run the formatter again on the JSON to check its text
    from recall_tui.diagnostics.engine_bench_report import format_table

    data, _ = bench_run
    text = format_table(data, stages=True)
    assert "STAND-IN" in text and f"synth-{SIZE}+{TURNS}t*" in text
    assert "stage keyword p95" in text and "re-index one memory" in text
    assert "stage turns p95" in text and "turn channel" in text
    # without --stages the channels are still shown side by side, the turn channel among them
    short = format_table(data)
    for name in ("keyword", "fuzzy", "vector", "turns"):
        assert f"channel {name} p50 / p95" in short, name
    assert "stage fuse p50" not in short


def test_bench_compares_with_a_baseline(bench_run):
    """The run against itself is steady; against a baseline twice as slow it is faster, and
    against one with a smaller index it is larger; a vault the baseline lacks is skipped."""
    import copy

    from recall_tui.diagnostics.engine_bench_report import compare_baseline, format_table

    data, _ = bench_run
    same = compare_baseline(data, data, "same.json")
    assert same["figures"] and {c["verdict"] for c in same["figures"]} == {"steady"}
    names = {c["figure"] for c in same["figures"]}
    assert {"pipeline p50", "channel turns p50", "vault re-read", "peak RSS"} <= names
    old = copy.deepcopy(data)
    (r,) = old["results"]
    r["pipeline"]["traced_total_ms"]["p50"] *= 2
    r["index_build"]["size_bytes"] //= 2
    moved = {c["figure"]: c for c in compare_baseline(data, old, "old.json")["figures"]}
    assert moved["pipeline p50"]["verdict"] == "faster"
    assert moved["pipeline p50"]["ratio"] == pytest.approx(0.5)
    assert moved["index on disk"]["verdict"] == "larger"
    r["label"] = "another vault"
    assert compare_baseline(data, old, "old.json")["figures"] == []
    shown = format_table({**data, "baseline": compare_baseline(data, data, "same.json")})
    assert "against the baseline same.json" in shown and "steady" in shown
    assert "note:" not in shown
    # A baseline of another bench version (other stand-in vectors) is compared with a note.
    v1 = compare_baseline(data, {**old, "version": 1}, "v1.json")
    assert "stand-in's vectors changed" in v1["version_note"]
    assert "note: the baseline is bench version 1" in format_table({**data, "baseline": v1})


def test_bench_rejects_a_bad_baseline(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    assert main(["bench", "--baseline", str(bad), "--sizes", "5", "--no-cold-start"]) == 2
    assert "not a bench --out file" in capsys.readouterr().err


def test_synthetic_vault_is_reused(bench_run):
    _, base = bench_run
    root = synth_vault(SIZE, base / "synth", turns=TURNS)
    stamp = (root / "queries.jsonl").stat().st_mtime_ns
    assert synth_vault(SIZE, base / "synth", turns=TURNS) == root
    assert (root / "queries.jsonl").stat().st_mtime_ns == stamp
    assert len(load_queries(root / "queries.jsonl")) > 0


def test_standin_embedder_is_deterministic_unit_vectors():
    e = StandinEmbedder()
    a = e.embed(["alpha", "beta", "alpha"])
    assert a.shape == (3, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a[0], a[2]) and not np.allclose(a[0], a[1])
    assert np.array_equal(StandinEmbedder().embed(["alpha"])[0], a[0])
    # A text's vector depends on its text alone, not on its batch or place in it (a batch
    # longer than the stand-in's chunk included), and the model says it is a stand-in.
    many = e.embed([f"t{i}" for i in range(STANDIN_CHUNK + 3)])
    assert np.array_equal(many[STANDIN_CHUNK + 1], e.embed([f"t{STANDIN_CHUNK + 1}"])[0])
    assert np.allclose(np.linalg.norm(many, axis=1), 1.0, atol=1e-5)
    assert "stand-in" in StandinEmbedder.model
    # Unbiased directions: the mean of many vectors is near zero in every coordinate.
    assert float(np.abs(many.mean(axis=0)).max()) < 0.01


def test_auto_embedder_choice():
    assert embedder_for("auto", None) == "local"
    assert embedder_for("auto", 1000) == "local"
    assert embedder_for("auto", 10000) == "standin"
    assert embedder_for("standin", 10) == "standin"


def test_keyword_oracle_catches_different_scores(bench_run):
    """A keyword index built with another k1 than the configuration must fail the check."""
    from recall_tui.engine.bm25 import KeywordIndex
    from recall_tui.engine.config import load_preset
    from recall_tui.vault.reader import read_vault

    _, base = bench_run
    vault = read_vault(synth_vault(SIZE, base / "synth", turns=TURNS))
    cfg = load_preset("default")

    class WrongK1:
        """An engine whose keyword index disagrees with the configuration's k1."""

        def __init__(self):
            self.vault = vault
            self._kidx = KeywordIndex(list(vault.memories.values()), k1=cfg.keyword.k1 + 0.7,
                                      b=cfg.keyword.b, epsilon=cfg.keyword.epsilon)

        def keyword_index(self, _cfg):
            return self._kidx

    queries = load_queries(base / "synth" / f"synth-{SIZE}-turns{TURNS}-seed0" / "queries.jsonl")[:5]
    with pytest.raises(AssertionError, match="differs from rank_bm25"):
        keyword_oracle(WrongK1(), cfg, queries)


def test_targets_are_judged_both_ways():
    def result(n, ex, rss, kw, vec, re_ms):
        return {"memories": n, "label": f"synth-{n}",
                "pipeline": {"excluding_query_embedding_ms": {"p50": ex}},
                "peak_rss_mb": rss, "keyword_vs_rank_bm25": {"speedup_vs_stage": kw},
                "vector_vs_numpy": {"ratio_stage_to_numpy": vec},
                "reindex_one": {"ms": re_ms, "embed_ms": 1.0}}

    out = evaluate_targets([result(10000, 3.5, 350.0, 12.0, 2.5, 50.0)], None)
    met = {t["target"]: t["met"] for t in out}
    assert met["pipeline p50 excl. query embedding"] is True
    assert met["peak memory"] is False
    assert met["keyword stage speed-up vs rank_bm25"] is True
    assert met["vector stage / numpy brute force"] is False
    assert met["re-index one changed memory (excl. its embedding)"] is True
    out = evaluate_targets([result(100000, 61.0, 1.0, 1.0, 1.0, 1.0)], None)
    assert {t["target"]: t["met"] for t in out}["pipeline p50 excl. query embedding"] is False


def test_bench_rejects_a_missing_vault(tmp_path, capsys):
    assert main(["bench", "--vault", str(tmp_path / "nope")]) == 2
    assert "nope: no such vault folder" in capsys.readouterr().err


def test_cold_start_measures_a_fresh_process(tmp_path):
    """Process start to first result, in real child processes (keyword-only to stay fast)."""
    import shutil

    from recall_tui.diagnostics.engine_bench import cold_start
    from tests.conftest import SAMPLE_VAULT

    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault, ignore=shutil.ignore_patterns(".recall"))
    out = cold_start(vault, embedder="none", repeats=1)
    s = out["median_sample"]
    assert out["repeats"] == 1 and s["hits"] > 0
    total = out["process_to_first_result_ms"]["p50"]
    assert total == s["process_ms"]
    # the phases measured inside the child fit within the time seen from outside
    assert 0 < s["import_ms"] + s["open_engine_ms"] + s["first_recall_ms"] < total
    assert s["peak_rss_mb"] > 10
    assert (vault / ".recall" / "index.sqlite").is_file()  # the unmeasured run built it


def test_scale_targets_at_100k_and_first_open():
    big = {"memories": 100_000, "label": "synth-100000",
           "pipeline": {"excluding_query_embedding_ms": {"p50": 25.0}},
           "peak_rss_mb": 1200.0, "index_build": {"size_bytes": 500e6},
           "vault_reread_ms": 4000.0, "reindex_one": {"ms": 50.0, "embed_ms": 1.0}}
    firsts = [{"vault": "s", "label": "sample", "memories": 180,
               "process_to_first_result_ms": 1200.0},
              {"vault": "x", "label": "synth-10000", "memories": 10000,
               "process_to_first_result_ms": 12000.0}]
    out = evaluate_targets([big], None, firsts)
    met = {(t["target"], t["where"]): t["met"] for t in out}
    assert met[("pipeline p50 excl. query embedding", "synth-100000")] is True
    assert met[("peak memory", "synth-100000")] is False
    assert met[("index on disk", "synth-100000")] is True
    assert met[("re-read of the unchanged vault", "synth-100000")] is False
    assert met[("first open (no index) to first keyword result", "sample")] is True
    assert met[("first open (no index) to first keyword result", "synth-10000")] is False


def test_embedding_chunks_grow_with_a_fast_embedder_and_stay_small_with_a_slow_one():
    """The vector sync's chunk: ~CHUNK_SECONDS of work at the last chunk's rate, at most
    doubling, between EMBED_CHUNK and EMBED_CHUNK_MAX."""
    from recall_tui.index.vector_sync import (
        CHUNK_SECONDS,
        EMBED_CHUNK,
        EMBED_CHUNK_MAX,
        next_chunk_size,
    )

    fast, sizes = EMBED_CHUNK, []
    while fast < EMBED_CHUNK_MAX:
        fast = next_chunk_size(fast, fast, fast * 20e-6)  # the stand-in: ~20 us a text
        sizes.append(fast)
    assert sizes[0] == 2 * EMBED_CHUNK and sizes[-1] == EMBED_CHUNK_MAX
    slow = next_chunk_size(EMBED_CHUNK, EMBED_CHUNK, EMBED_CHUNK * 0.05)  # a model: 50 ms
    assert slow == EMBED_CHUNK
    assert next_chunk_size(256, 256, 256 * CHUNK_SECONDS / 100) == 100
    assert next_chunk_size(64, 0, 0.0) == 64 and next_chunk_size(64, 64, 0.0) == 128
