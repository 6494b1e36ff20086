"""Each vector stored once (schema 4, issue 13): on its memory or turn while one has that text,
else parked in `embed_cache`; it moves with an edit and back, a rebuild, an embedder switch and
back, an upgrade from schema 3, and two writers at once never leave it twice or on the wrong
text. Real apsw + sqlite-vec files, the real local embedder (see docs/index.md, "Schema")."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import apsw
import numpy as np
import pytest

from recall_tui.index.embed import LocalEmbedder, NoEmbedder
from recall_tui.index.rows import embed_text
from recall_tui.index.schema import SCHEMA_VERSION, previous_cache_path
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import SAMPLE_VAULT


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def small_vault(dst: Path) -> Path:
    """Two folders and one session of the sample vault: memories and turns, cheap to embed."""
    for folder in ("people", "homelab"):
        shutil.copytree(SAMPLE_VAULT / folder, dst / folder)
    (dst / "sessions").mkdir()
    shutil.copy(SAMPLE_VAULT / "sessions" / "cc-20260307-pg15.jsonl", dst / "sessions")
    return dst


def stored(idx: Index) -> dict:
    """Where the index's vectors are: per memory id its vector's bytes, the turns with one,
    the cache's hashes, and every memory's and turn's text hash."""
    conn = idx.core.conn
    mem = dict(conn.execute(
        "SELECT m.id, v.embedding FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid"
    ).fetchall()) if idx.core.has_vec_table() else {}
    return {
        "mem": mem,
        "turns": conn.execute("SELECT count(*) FROM turns WHERE vector IS NOT NULL").fetchone()[0],
        "cache": {h for (h,) in conn.execute("SELECT text_hash FROM embed_cache")},
        "hashes": {h for (h,) in conn.execute(
            "SELECT embed_hash FROM memories UNION SELECT text_hash FROM turns")},
        "n_mem": conn.execute("SELECT count(*) FROM memories").fetchone()[0],
        "n_turns": conn.execute("SELECT count(*) FROM turns").fetchone()[0],
    }


def assert_once(s: dict) -> None:
    """Every memory and turn has its vector, and no cached vector is one a row holds."""
    assert len(s["mem"]) == s["n_mem"] and s["turns"] == s["n_turns"]
    assert not s["cache"] & s["hashes"], "a vector stored twice: on its row and in the cache"


def built_small(tmp_path: Path, embedder):
    """A small vault indexed once: (its folder, where its vectors are, its first memory)."""
    root = small_vault(tmp_path / "v")
    vault = read_vault(root)
    with Index.open(vault, embedder) as idx:
        before = stored(idx)
    return root, before, sorted(vault.memories.values(), key=lambda m: m.path)[0]


def edit_body(path: Path, new: str) -> str:
    old = path.read_text(encoding="utf-8")
    path.write_text(old.rstrip("\n") + f"\n\n{new}\n", encoding="utf-8")
    return old


def test_a_first_build_stores_each_vector_once(tmp_path, embedder):
    root = small_vault(tmp_path / "v")
    with Index.open(read_vault(root), embedder) as idx:
        s = stored(idx)
        assert idx.report.embedded > 0 and s["n_turns"] > 0
        assert_once(s)
        assert s["cache"] == set()


def test_an_edit_parks_the_old_vector_and_editing_back_takes_it_out(tmp_path, embedder):
    root, before, m = built_small(tmp_path, embedder)
    original = edit_body(root / m.path, "An added line that changes what the memory says.")
    with Index.open(read_vault(root), embedder) as idx:
        assert idx.report.updated == 1 and idx.report.embedded == 1
        s = stored(idx)
        assert_once(s)
        # The old text's vector waits in the cache, byte for byte the one the memory had.
        assert len(s["cache"]) == 1
        (h,) = s["cache"]
        assert idx.core.conn.execute("SELECT vector FROM embed_cache").fetchone()[0] == \
            before["mem"][m.id]
        assert h not in s["hashes"]
    (root / m.path).write_text(original, encoding="utf-8")
    with Index.open(read_vault(root), embedder) as idx:
        assert idx.report.updated == 1 and idx.report.embedded == 0
        s = stored(idx)
        assert_once(s)
        assert s["mem"][m.id] == before["mem"][m.id], "the parked vector was not reused"
        # Now the edited text's vector is the one no memory has.
        assert len(s["cache"]) == 1 and h not in s["cache"]


def test_a_deleted_memory_parks_its_vector_and_a_copy_of_it_reuses_it(tmp_path, embedder):
    root, before, m = built_small(tmp_path, embedder)
    src = (root / m.path).read_text(encoding="utf-8")
    (root / m.path).unlink()
    with Index.open(read_vault(root), embedder) as idx:
        assert idx.report.removed == 1
        s = stored(idx)
        assert_once(s)
        assert s["cache"] == {_hash(m)}
    (root / m.path).write_text(src, encoding="utf-8")
    with Index.open(read_vault(root), embedder) as idx:
        assert idx.report.added == 1 and idx.report.embedded == 0
        s = stored(idx)
        assert_once(s)
        assert s["cache"] == set() and s["mem"][m.id] == before["mem"][m.id]


def test_two_memories_with_one_text_share_no_cache_row_and_embed_it_once(tmp_path, embedder):
    root, before, m = built_small(tmp_path, embedder)
    text = (root / m.path).read_text(encoding="utf-8")
    twin = root / "twin" / Path(m.path).name
    twin.parent.mkdir()
    twin.write_text(text.replace(f"id: {m.id}", f"id: {m.id}-twin"), encoding="utf-8")
    vault2 = read_vault(root)
    new = [x for x in vault2.memories.values() if x.path.startswith("twin/")]
    assert len(new) == 1
    if embed_text(new[0]) != embed_text(m):
        pytest.skip("the copy's embedded text differs")
    with Index.open(vault2, embedder) as idx:
        assert idx.report.added == 1 and idx.report.embedded == 0
        s = stored(idx)
        assert_once(s)
        assert s["mem"][new[0].id] == before["mem"][m.id]


def test_switching_the_embedder_and_back_embeds_nothing_and_stores_once(tmp_path, embedder):
    root = small_vault(tmp_path / "v")
    with Index.open(read_vault(root), embedder) as idx:
        before = stored(idx)
        total = len(before["mem"]) + before["turns"]
    with Index.open(read_vault(root), NoEmbedder()) as idx:
        s = stored(idx)
        assert s["mem"] == {} and s["turns"] == 0
        assert len(s["cache"]) == total, "the vectors were dropped, not parked"
    with Index.open(read_vault(root), embedder) as idx:
        assert idx.report.embedded == 0 and idx.report.reused == total
        s = stored(idx)
        assert_once(s)
        assert s["cache"] == set() and s["mem"] == before["mem"]


def test_rebuild_reuses_every_vector_and_drop_cache_embeds_again(tmp_path, embedder):
    root = small_vault(tmp_path / "v")
    with Index.open(read_vault(root), embedder) as idx:
        before = stored(idx)
        total = len(before["mem"]) + before["turns"]
    with Index.open(read_vault(root), embedder, rebuild=True) as idx:
        assert idx.report.embedded == 0 and idx.report.reused == total
        s = stored(idx)
        assert_once(s)
        assert s["cache"] == set()
        assert sorted(s["mem"].values()) == sorted(before["mem"].values())
    with Index.open(read_vault(root), embedder, rebuild=True, drop_cache=True) as idx:
        assert idx.report.embedded == len({*before["hashes"]})
        assert_once(stored(idx))


def _as_schema_3(db: Path) -> None:
    """Turn a schema-4 file into what schema 3 left: version 3, and every vector in the
    embedding cache as well as on its memory (as schema 3 kept them)."""
    conn = apsw.Connection(str(db))
    import sqlite_vec

    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
            " SELECT (SELECT value FROM meta WHERE key='embedder_key'), m.embed_hash,"
            " 384, v.embedding FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid")
        conn.execute(
            "INSERT OR REPLACE INTO embed_cache(model, text_hash, dim, vector)"
            " SELECT (SELECT value FROM meta WHERE key='embedder_key'), text_hash, 384, vector"
            " FROM turns WHERE vector IS NOT NULL")
        conn.execute("DROP INDEX memories_embed")
        conn.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    conn.close()


def test_an_index_of_schema_3_is_rebuilt_with_the_reason_and_keeps_its_vectors(
        tmp_path, embedder):
    assert SCHEMA_VERSION == 5
    root = small_vault(tmp_path / "v")
    db = root / ".recall" / "index.sqlite"
    with Index.open(read_vault(root), embedder) as idx:
        before = stored(idx)
    _as_schema_3(db)
    with Index.open(read_vault(root), embedder) as idx:
        why = idx.report.rebuilt
        assert why is not None
        assert "schema version 3, this recall-tui uses 5" in why
        assert "each vector is stored once" in why
        # The old file's cache was carried over: nothing embedded again.
        assert idx.report.embedded == 0
        s = stored(idx)
        assert_once(s)
        assert s["cache"] == set() and s["mem"] == before["mem"]
        assert idx.core.conn.execute(
            "SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "5"
    assert not previous_cache_path(db).exists()


def test_an_index_of_schema_4_is_rebuilt_with_float16_turn_vectors_and_embeds_nothing(
        tmp_path, embedder):
    # Schema 4 stored a turn's vector as float32 on its row (and no vector in the cache):
    # the rebuild keeps every vector the old file held, and narrows the turns' to float16.
    root = small_vault(tmp_path / "v")
    db = root / ".recall" / "index.sqlite"
    with Index.open(read_vault(root), embedder) as idx:
        before = stored(idx)
        conn = idx.core.conn
        dim = int(idx.core.meta("embedder_dim"))
        assert {n for (n,) in conn.execute(
            "SELECT DISTINCT length(vector) FROM turns")} == {2 * dim}  # float16
        with conn:
            conn.execute("UPDATE turns SET vector = turn_f32(vector)")
            conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
        old = dict(conn.execute("SELECT id, vector FROM turns").fetchall())
    with Index.open(read_vault(root), embedder) as idx:
        why = idx.report.rebuilt
        assert why is not None and "schema version 4, this recall-tui uses 5" in why
        assert "turn vectors are stored as float16" in why
        assert idx.report.embedded == 0  # every vector came from the old file
        s = stored(idx)
        assert_once(s)
        assert s["mem"] == before["mem"] and s["turns"] == before["turns"] > 0
        now = dict(idx.core.conn.execute("SELECT id, vector FROM turns").fetchall())
        assert now.keys() == old.keys()
        for tid, blob in now.items():
            assert blob == np.frombuffer(old[tid], np.float32).astype(np.float16).tobytes()
    assert not previous_cache_path(db).exists()


def test_two_writers_at_once_keep_each_vector_once_and_on_its_text(tmp_path, embedder):
    """Two connections (each its own `Index`, as two processes would) sync edits, and a third
    rebuilds, one file at the same time; afterwards every memory's vector is its text's and
    none is stored twice."""
    root = small_vault(tmp_path / "v")
    db = root / ".recall" / "index.sqlite"
    with Index.open(read_vault(root), embedder):
        pass
    mems = sorted(read_vault(root).memories.values(), key=lambda m: m.path)
    a = Index.open(read_vault(root), embedder, path=db)
    b = Index.open(read_vault(root), embedder, path=db)
    errors: list[BaseException] = []

    def run(fn) -> None:
        try:
            fn()
        except BaseException as exc:  # reported below
            errors.append(exc)

    try:
        for round_ in range(3):
            for m in mems[round_ * 3 : round_ * 3 + 3]:
                edit_body(root / m.path, f"Round {round_} says something new about {m.id}.")
            vault = read_vault(root)
            other = (
                # Round 1: a third connection rebuilds the file, as `index --rebuild` would.
                (lambda v=vault: Index.open(v, embedder, path=db, rebuild=True).close())
                if round_ == 1 else (lambda v=vault: b.update_files(v))
            )
            jobs = [
                threading.Thread(target=run, args=(lambda v=vault: a.update_files(v),)),
                threading.Thread(target=run, args=(other,)),
            ]
            for j in jobs:
                j.start()
            for j in jobs:
                j.join()
            assert not errors, errors
        a.update_files(read_vault(root))
        s = stored(a)
        assert_once(s)
        final = read_vault(root)
        for m in final.memories.values():
            want = embedder.embed([embed_text(m)])[0]
            got = np.frombuffer(s["mem"][m.id], dtype=np.float32)
            assert np.allclose(got, want, atol=1e-5), f"{m.id}: a vector of another text"
    finally:
        a.close()
        b.close()


def _hash(m) -> str:
    import hashlib

    return hashlib.sha256(embed_text(m).encode("utf-8")).hexdigest()
