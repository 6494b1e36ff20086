"""The index: a real SQLite file (apsw + FTS5 + sqlite-vec) built from real vaults with the real
local embedder (built once per module) and the real ollama client against tests/ollama_server."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw
import numpy as np
import pytest

from recall_tui.index.embed import LocalEmbedder, NoEmbedder, OllamaEmbedder
from recall_tui.index.fts import match_any
from recall_tui.index.rows import embed_text
from recall_tui.index.schema import SCHEMA_VERSION
from recall_tui.index.signature import hamming_similarity, signature
from recall_tui.index.stats import MAX_RECALL_TIMES
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.ollama_server import FakeOllama


def _files(root: Path) -> dict[str, bytes]:
    """Every file under root except the index folder, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".recall" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder):
    """The sample vault copied, indexed once with the local embedder; (vault dir, report)."""
    root = tmp_path_factory.mktemp("built") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".recall"))
    before = _files(root)
    calls: list[tuple[int, int, str]] = []
    vault = read_vault(root)
    idx = Index.open(vault, embedder, progress=lambda d, t, p: calls.append((d, t, p)))
    report = idx.report
    idx.close()
    return {
        "root": root,
        "report": report,
        "progress": calls,
        "before": before,
        "vault": vault,
    }


@pytest.fixture(scope="module")
def index(built, embedder):
    """A read-write handle on the built index, shared by the read-only tests."""
    idx = Index.open(built["vault"], embedder)
    yield idx
    idx.close()


@pytest.fixture()
def built_copy(built, tmp_path) -> Path:
    """A private copy of the built vault *with* its index, for tests that change files."""
    dst = tmp_path / "vault"
    shutil.copytree(built["root"], dst)
    return dst


@pytest.fixture()
def small_vault(tmp_path) -> Path:
    """Six memories of the sample vault and one transcript: cheap to rebuild from scratch."""
    dst = tmp_path / "small"
    picks = sorted(p for p in SAMPLE_VAULT.glob("work/billing/*.md"))[:6]
    for p in picks:
        target = dst / p.relative_to(SAMPLE_VAULT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
    (dst / "sessions").mkdir()
    (dst / "sessions" / "s1.jsonl").write_text(
        '{"seq": 1, "role": "user", "text": "how do we run billing migrations?",'
        ' "at": "2026-11-20T10:00:00Z"}\n'
        '{"seq": 2, "role": "assistant", "text": "with goose, in the deploy job",'
        ' "at": "2026-11-20T10:00:05Z"}\n',
        encoding="utf-8",
    )
    return dst


def _by_title(vault, fragment: str):
    for m in vault.memories.values():
        if fragment.lower() in m.title.lower():
            return m
    raise AssertionError(f"no memory titled like {fragment!r} in the sample vault")


# ------------------------------------------------------------------ building


@pytest.mark.slow
def test_full_build_indexes_every_memory(built):
    rep, vault = built["report"], built["vault"]
    n = len(vault.memories)
    assert n > 50
    assert (rep.added, rep.updated, rep.removed, rep.unchanged) == (n, 0, 0, 0)
    assert rep.vectors == n and rep.embed_error is None
    assert rep.embedded == len(
        {embed_text(m) for m in vault.memories.values()} | {t.text for t in vault.turns}
    )
    assert rep.rebuilt is None and rep.location_note == ""
    assert Path(rep.path) == built["root"] / ".recall" / "index.sqlite"
    assert rep.embedder == "local all-MiniLM-L6-v2-int8"
    # progress reported from 0 to the total, phase named
    calls = built["progress"]
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == rep.embedded
    assert {c[2] for c in calls} == {"embed"}


@pytest.mark.slow
def test_build_writes_nothing_in_the_vault_but_the_index_folder(built):
    assert _files(built["root"]) == built["before"]
    assert sorted(p.name for p in (built["root"] / ".recall").iterdir()
                  if p.is_file() and p.name != ".gitignore")[0] == "index.sqlite"


@pytest.mark.slow
def test_second_open_embeds_nothing(built, embedder):
    vault = read_vault(built["root"])
    Index.open(vault, embedder).close()
    file = built["root"] / ".recall" / "index.sqlite"
    before = file.read_bytes()
    with Index.open(vault, embedder) as idx:
        rep = idx.report
    n = len(vault.memories)
    assert (rep.added, rep.updated, rep.removed, rep.unchanged) == (0, 0, 0, n)
    assert rep.embedded == 0 and rep.reused == n + len(vault.turns)
    assert file.read_bytes() == before, "opening an unchanged vault must not write"


@pytest.mark.slow
def test_editing_one_body_reembeds_exactly_one(built_copy, embedder):
    vault = read_vault(built_copy)
    m = _by_title(vault, "Stripe webhook")
    f = built_copy / m.path
    f.write_text(
        f.read_text(encoding="utf-8") + "\nAlso: replays older than 72h are dropped.\n",
        encoding="utf-8",
    )
    vault2 = read_vault(built_copy)
    with Index.open(vault2, embedder) as idx:
        rep = idx.report
        assert (rep.added, rep.updated, rep.removed) == (0, 1, 0)
        assert rep.unchanged == len(vault2.memories) - 1
        assert rep.embedded == 1
        assert idx.fts(match_any(["replays"]), 5)[0][0] == m.id
        q = embedder.embed([embed_text(vault2.memories[m.id])])[0]
        assert idx.vector_search(q, 1)[0][0] == m.id


@pytest.mark.slow
def test_deleting_a_file_removes_it_everywhere(built_copy, embedder):
    vault = read_vault(built_copy)
    m = _by_title(vault, "Playwright")
    qvec = embedder.embed([embed_text(m)])[0]
    (built_copy / m.path).unlink()
    with Index.open(read_vault(built_copy), embedder) as idx:
        assert idx.report.removed == 1 and idx.report.embedded == 0
        assert m.id not in [i for i, _ in idx.fts(match_any(["playwright"]), 50)]
        assert m.id not in [i for i, _ in idx.fts_trigram("playwright", 50)]
        assert m.id not in [i for i, _ in idx.vector_search(qvec, 20)]
        assert m.id not in idx.vectors()[0] and m.id not in idx.signatures()
        assert idx.report.vectors == len(vault.memories) - 1


@pytest.mark.slow
def test_touching_a_file_reindexes_nothing(built_copy, embedder):
    vault = read_vault(built_copy)
    m = next(iter(vault.memories.values()))
    later = time.time() + 3600
    os.utime(built_copy / m.path, (later, later))
    with Index.open(read_vault(built_copy), embedder) as idx:
        rep = idx.report
        assert (rep.added, rep.updated, rep.removed, rep.embedded) == (0, 0, 0, 0)
    with Index.open(read_vault(built_copy), embedder) as idx:
        assert idx.report.unchanged == len(vault.memories)


@pytest.mark.slow
def test_a_new_memory_with_known_text_reuses_the_cache(built_copy, embedder):
    vault = read_vault(built_copy)
    m = _by_title(vault, "Playwright")
    src = (built_copy / m.path).read_text(encoding="utf-8")
    (built_copy / m.path).unlink()
    with Index.open(read_vault(built_copy), embedder) as idx:
        assert idx.report.removed == 1
    (built_copy / "moved").mkdir()
    (built_copy / "moved" / Path(m.path).name).write_text(src, encoding="utf-8")
    vault2 = read_vault(built_copy)
    if embed_text(vault2.memories[m.id]) != embed_text(m):
        pytest.skip("the memory's text depends on its folder")
    with Index.open(vault2, embedder) as idx:
        assert idx.report.added == 1 and idx.report.embedded == 0


# ------------------------------------------------------------------ rebuild rules


def test_garbage_file_is_rebuilt_with_reason(small_vault, embedder):
    path = small_vault / ".recall" / "index.sqlite"
    path.parent.mkdir()
    path.write_bytes(os.urandom(8192))
    vault = read_vault(small_vault)
    with Index.open(vault, embedder) as idx:
        assert idx.report.rebuilt and "not a database" in idx.report.rebuilt
        assert str(path) in idx.report.rebuilt
        assert idx.report.added == len(vault.memories) and idx.report.vectors == len(vault.memories)


def test_damaged_pages_are_rebuilt_with_reason(small_vault):
    vault = read_vault(small_vault)
    Index.open(vault, NoEmbedder()).close()
    path = small_vault / ".recall" / "index.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) > 6 * 4096
    data[3 * 4096 : 6 * 4096] = os.urandom(3 * 4096)  # keep the header, break some pages
    path.write_bytes(bytes(data))
    with Index.open(vault, NoEmbedder()) as idx:
        assert idx.report.rebuilt, "a damaged file must not be trusted"
        assert idx.report.added == len(vault.memories)
        assert len(idx.fts(match_any(["billing"]), 10)) > 0


def test_wrong_schema_version_is_rebuilt(small_vault):
    vault = read_vault(small_vault)
    Index.open(vault, NoEmbedder()).close()
    path = small_vault / ".recall" / "index.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 7),))
    conn.close()
    with Index.open(vault, NoEmbedder()) as idx:
        assert f"schema version {SCHEMA_VERSION + 7}" in idx.report.rebuilt
        assert idx.report.added == len(vault.memories)


def test_missing_table_is_rebuilt(small_vault):
    vault = read_vault(small_vault)
    Index.open(vault, NoEmbedder()).close()
    conn = apsw.Connection(str(small_vault / ".recall" / "index.sqlite"))
    conn.execute("DROP TABLE signatures")
    conn.close()
    with Index.open(vault, NoEmbedder()) as idx:
        assert "missing tables signatures" in idx.report.rebuilt
        assert len(idx.signatures()) == len(vault.memories)


def test_unwritable_index_folder_falls_back_to_the_cache(small_vault):
    # `.recall` being a file makes the folder impossible to create (works even as root).
    (small_vault / ".recall").write_text("not a folder", encoding="utf-8")
    vault = read_vault(small_vault)
    with Index.open(vault, NoEmbedder()) as idx:
        cache = Path(os.environ["XDG_CACHE_HOME"]) / "recall-tui"
        assert Path(idx.path).is_relative_to(cache)
        assert "not writable" in idx.report.location_note and idx.path in idx.report.location_note
        assert idx.report.added == len(vault.memories) and Path(idx.path).exists()
    assert (small_vault / ".recall").read_text(encoding="utf-8") == "not a folder"


def test_read_only_open_never_writes(small_vault):
    vault = read_vault(small_vault)
    embedder = NoEmbedder()
    with Index.open(vault, embedder, read_only=True) as idx:
        assert idx.path == ":memory:" and "built in memory" in idx.report.location_note
        assert idx.fts(match_any(["billing"]), 3)
    assert not (small_vault / ".recall").exists()
    Index.open(vault, embedder).close()
    first = next(iter(vault.memories.values()))
    f = small_vault / first.path
    f.write_text(f.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    stamp = (small_vault / ".recall" / "index.sqlite").stat().st_mtime_ns
    with Index.open(read_vault(small_vault), embedder, read_only=True) as idx:
        assert idx.report.stale == 1 and idx.read_only
        with pytest.raises(RuntimeError, match="read-only"):
            idx.record_recalls([first.id], PINNED_NOW)
    assert (small_vault / ".recall" / "index.sqlite").stat().st_mtime_ns == stamp


# ------------------------------------------------------------------ embedders and the cache


def test_no_embedder_indexes_everything_else(small_vault):
    vault = read_vault(small_vault)
    with Index.open(vault, NoEmbedder()) as idx:
        info = idx.embedder_info
        assert info["name"] == "none" and info["vectors"] == 0 and not info["usable"]
        assert idx.report.embed_error == "no embedder: vectors off"
        assert idx.embed_query("billing") is None
        assert idx.vector_search(np.ones(384, dtype=np.float32), 5) == []
        assert idx.fts(match_any(["billing"]), 3) and len(idx.signatures()) == len(vault.memories)
        ids, mat = idx.vectors()
        assert ids == [] and mat.shape[0] == 0


def test_ollama_index_and_model_switch_reuses_the_cache(small_vault, embedder):
    vault = read_vault(small_vault)
    texts = {embed_text(m) for m in vault.memories.values()} | {t.text for t in vault.turns}
    with FakeOllama(dim=16) as srv:
        with Index.open(vault, OllamaEmbedder(host=srv.host)) as idx:
            assert idx.report.embedded == len(texts)
            assert idx.embedder_info["dim"] == 16 and idx.embedder_info["name"] == "ollama"
            m = next(iter(vault.memories.values()))
            top = idx.vector_search(idx.embed_query(embed_text(m)), 1)
            assert top[0][0] == m.id and top[0][1] == pytest.approx(1.0, abs=1e-5)
            ids, mat = idx.turn_vectors()
            assert ids == ["turn:s1#1", "turn:s1#2"] and mat.shape == (2, 16)
        # switch to the local model: everything is embedded with it
        with Index.open(vault, embedder) as idx:
            assert idx.report.embedded == len(texts)
            assert idx.embedder_info["dim"] == 384
        # and back: the cache has every ollama vector, nothing is sent to the server again
        sent = srv.embedded_texts
        with Index.open(vault, OllamaEmbedder(host=srv.host)) as idx:
            assert idx.report.embedded == 0
            assert idx.report.reused == len(vault.memories) + len(vault.turns)
            assert idx.embedder_info["dim"] == 16
        resent = [t for call in srv.embed_calls for t in call][sent:]
        assert not set(resent) & texts, "cached texts were embedded again"


def test_ollama_going_away_keeps_the_rest_of_the_index(small_vault):
    vault = read_vault(small_vault)
    with FakeOllama() as srv:
        emb = OllamaEmbedder(host=srv.host)
    with Index.open(vault, emb) as idx:  # the server is gone now
        assert "not reachable" in idx.report.embed_error
        assert idx.report.vectors == 0 and idx.report.added == len(vault.memories)
        assert idx.fts(match_any(["billing"]), 3)
        assert "not reachable" in idx.embedder_info["error"]


# ------------------------------------------------------------------ searching


@pytest.mark.slow
def test_vector_search_finds_each_memory_from_its_own_text(index, built, embedder):
    vault = built["vault"]
    texts = [embed_text(m) for m in vault.memories.values()]
    unique = [m for m, t in zip(vault.memories.values(), texts, strict=True) if texts.count(t) == 1]
    # a fresh embedding of a few memories' own text finds that memory first...
    sample = unique[:: max(1, len(unique) // 8)]
    for m, v in zip(sample, embedder.embed([embed_text(m) for m in sample]), strict=True):
        (top_id, sim), *_ = index.vector_search(v, 3)
        assert top_id == m.id and sim > 0.999
    # ...and every stored vector is its own nearest neighbour
    ids, mat = index.vectors()
    wanted = {m.id for m in unique}
    for mid, v in zip(ids, mat, strict=True):
        if mid in wanted:
            assert index.vector_search(v, 1)[0][0] == mid


@pytest.mark.slow
def test_vector_search_by_meaning(index, embedder):
    q = index.embed_query("which database does billing run on?")
    ids = [i for i, _ in index.vector_search(q, 5)]
    assert any("postgres" in i for i in ids), ids


@pytest.mark.slow
def test_vector_search_rejects_a_foreign_dimension(index):
    with pytest.raises(ValueError, match="dimension 16"):
        index.vector_search(np.ones(16, dtype=np.float32), 3)


@pytest.mark.slow
def test_embed_query_is_cached(index):
    a = index.embed_query("staging environment")
    b = index.embed_query("staging environment")
    assert b is a, "the second call must come from the query cache, not the model"


@pytest.mark.slow
def test_vectors_matrix_matches_the_embedder(index, built, embedder):
    ids, mat = index.vectors()
    vault = built["vault"]
    assert sorted(ids) == sorted(vault.memories) and mat.shape == (len(ids), 384)
    assert mat.dtype == np.float32 and np.allclose(np.linalg.norm(mat, axis=1), 1, atol=1e-5)
    i = ids.index(next(iter(vault.memories)))
    fresh = embedder.embed([embed_text(vault.memories[ids[i]])])[0]
    assert float(fresh @ mat[i]) > 0.9999


@pytest.mark.slow
def test_fts_stems_and_weights_columns(index, built):
    m = _by_title(built["vault"], "Stripe webhook")
    ids = [i for i, _ in index.fts(match_any(["deduplicating"]), 5)]  # stem of deduplication
    assert m.id in ids
    scores = index.fts(match_any(["webhook"]), 20)
    assert scores == sorted(scores, key=lambda r: -r[1]) and scores[0][1] > 0
    with pytest.raises(ValueError, match="bad FTS5 query"):
        index.fts('"unbalanced', 5)


@pytest.mark.slow
def test_fts_trigram_finds_a_typo(index, built):
    m = _by_title(built["vault"], "Playwright")
    assert index.fts_trigram("playwrigth tests", 3)[0][0] == m.id
    assert index.fts(match_any(["playwrigth"]), 3) == []  # the porter table cannot
    assert index.fts_trigram("pw", 3) == []  # under 3 characters: nothing to match
    assert index.fts_trigram('"; DROP TABLE memories; --', 3) is not None


@pytest.mark.slow
def test_trigram_strips_diacritics(index, built):
    m = _by_title(built["vault"], "Léa's notes")
    assert m.id in [i for i, _ in index.fts_trigram("Lea echarts theme", 3)]
    assert m.id in [i for i, _ in index.fts(match_any(["Lea", "ECharts"]), 5)]


@pytest.mark.slow
def test_signatures_are_stored_for_every_memory(index, built):
    sigs = index.signatures()
    vault = built["vault"]
    assert set(sigs) == set(vault.memories)
    m = next(iter(vault.memories.values()))
    assert sigs[m.id] == signature(embed_text(m))
    assert hamming_similarity(sigs[m.id], signature(embed_text(m) + " minor edit")) > 0.8


# ------------------------------------------------------------------ recall stats, threads


def test_recall_stats_roundtrip_and_cap(small_vault):
    vault = read_vault(small_vault)
    mid = next(iter(vault.memories))
    with Index.open(vault, NoEmbedder()) as idx:
        assert idx.recall_stats(mid).count == 0 and idx.recall_stats(mid).last_recalled is None
        for i in range(MAX_RECALL_TIMES + 5):
            idx.record_recalls([mid, mid], PINNED_NOW - timedelta(hours=i))
    with Index.open(vault, NoEmbedder()) as idx:
        st = idx.recall_stats(mid)
        assert st.count == MAX_RECALL_TIMES + 5
        assert st.last_recalled == PINNED_NOW
        assert len(st.times) == MAX_RECALL_TIMES and st.times[-1] == PINNED_NOW
        assert st.times[0] == PINNED_NOW - timedelta(hours=MAX_RECALL_TIMES - 1)
        idx.record_recalls([mid], datetime(2026, 1, 1))  # naive: taken as UTC, older
        st = idx.recall_stats(mid)
        assert st.last_recalled == PINNED_NOW and st.times[0].tzinfo == timezone.utc


@pytest.mark.slow
def test_queries_from_threads_during_an_update(built_copy, embedder):
    vault = read_vault(built_copy)
    idx = Index.open(vault, embedder)
    errors: list[BaseException] = []
    stop = threading.Event()
    q = idx.embed_query("postgres upgrade")

    def reader():
        try:
            while not stop.is_set():
                idx.fts(match_any(["billing"]), 10)
                idx.fts_trigram("postgres", 10)
                idx.vector_search(q, 10)
                idx.vectors()
        except BaseException as exc:  # collected and re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i, m in enumerate(list(vault.memories.values())[:3]):
            f = built_copy / m.path
            f.write_text(f.read_text(encoding="utf-8") + f"\nthread edit {i}\n", encoding="utf-8")
            rep = idx.update_files(read_vault(built_copy))
            assert rep.updated == 1 and rep.embedded == 1
    finally:
        stop.set()
        for t in threads:
            t.join()
        idx.close()
    assert not errors, errors


# ------------------------------------------------------------------ the `index` command


def test_index_command_json_and_incremental(small_vault, capsys):
    import json

    from recall_tui.cli import main

    vault = read_vault(small_vault)
    assert main(["index", str(small_vault), "--embedder", "local", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["added"] == len(vault.memories) and out["problems"] == 0
    assert out["embedder"]["name"] == "local" and out["embedder"]["why"].startswith("local")
    assert out["index"] == str(small_vault / ".recall" / "index.sqlite") and out["size_bytes"] > 0
    assert main(["index", str(small_vault), "--embedder", "local"]) == 0
    human = capsys.readouterr().out
    assert f"{len(vault.memories)} unchanged" in human and "embedded 0" in human
    assert main(["index", str(small_vault), "--embedder", "local", "--rebuild", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["rebuilt"] == "asked for (--rebuild)"
    assert out["report"]["added"] == len(vault.memories)


def test_index_command_reports_problems_and_bad_embedder(small_vault, capsys):
    from recall_tui.cli import main

    (small_vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    assert main(["index", str(small_vault), "--embedder", "none"]) == 0
    out = capsys.readouterr().out
    assert "problem(s) in the vault" in out and "recall-tui check" in out
    assert "keyword-only" in out
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["index", str(small_vault), "--embedder", "ollama", "--host", f"127.0.0.1:{port}"])
    assert code == 2
    assert "not reachable" in capsys.readouterr().err
    assert main(["index", str(small_vault / "nope")]) == 2
