"""Re-opening the index of an unchanged vault compares no memory and writes nothing (meta
`memories_source`, index/synced.py), and a stale index is never trusted: an edit, a removed
file, an added file, a changed session log and another process's write are all found, the
index then holding what a build from nothing of the same vault holds. Small vaults, the
stand-in embedder; "a fresh process's read" is a cached read after forgetting what this
process kept (the snapshot path a new process takes)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.diagnostics.synth import write_synth_vault
from recall_tui.index.store import Index
from recall_tui.index.synced import META_KEY
from recall_tui.vault import digests, readcache
from recall_tui.vault.model import Vault
from recall_tui.vault.reader import read_vault


def _fresh_read(root: Path) -> Vault:
    """What a new process's cached read gives (nothing kept in this process)."""
    readcache.forget_reads(str(root))
    digests._SESSIONS.clear()
    return read_vault(root, cache=True)


def _dump(idx: Index) -> dict[str, list[tuple[object, ...]]]:
    """What the index holds, rowids aside: every memory row, edge, signature and turn, the
    FTS tables' per-row sizes by memory id, and which memories and turns have a vector."""
    conn = idx.core.conn
    q = lambda sql: sorted(tuple(r) for r in conn.execute(sql))  # noqa: E731
    return {
        "memories": q("SELECT id, path, content_hash, row_hash, embed_hash, mtime, role,"
                      " status, type, scope, topic_key FROM memories"),
        "fts": q("SELECT m.id, d.sz FROM memories m JOIN memories_fts_docsize d"
                 " ON d.id = m.rowid"),
        "words": q("SELECT m.id, d.sz FROM memories m JOIN memories_words_docsize d"
                   " ON d.id = m.rowid"),
        "edges": q("SELECT subject, relation, object, memory_id FROM edges"),
        "signatures": q("SELECT id, signature FROM signatures"),
        "turns": q("SELECT id, session_id, seq, role, text, at, path, row_hash, text_hash,"
                   " vector IS NULL FROM turns"),
        "vectors": q("SELECT m.id FROM memories m JOIN memory_vectors_rowids r"
                     " ON r.rowid = m.rowid"),
    }


def _built_from_nothing(root: Path, tmp: Path) -> dict[str, list[tuple[object, ...]]]:
    path = tmp / f"scratch-{len(list(tmp.glob('scratch-*')))}.sqlite"
    with Index.open(read_vault(root), StandinEmbedder(), path=path) as idx:
        return _dump(idx)


def _file_state(path: Path) -> tuple[str, int]:
    """The index file's bytes (hashed) and its WAL's size: what a write would change."""
    wal = Path(str(path) + "-wal")
    return (hashlib.sha256(path.read_bytes()).hexdigest(),
            wal.stat().st_size if wal.exists() else 0)


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(digests, "_RACY_NS", 0)  # keep the records of logs written just now
    root = tmp_path / "vault"
    write_synth_vault(root, 40, workers=1, turns=240)
    return root


@pytest.fixture()
def index_path(vault: Path, tmp_path: Path) -> Path:
    """The vault's index, built as the bench and the UI build it (a cached read), closed."""
    path = tmp_path / "index.sqlite"
    Index.open(_fresh_read(vault), StandinEmbedder(), path=path).close()
    return path


def _memory_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if ".recall" not in p.parts
                  and p.read_text(encoding="utf-8").startswith("---")
                  and "consolidation" not in p.parts)


def _reopen(root: Path, path: Path) -> Index:
    return Index.open(_fresh_read(root), StandinEmbedder(), path=path)


def test_an_unchanged_reopen_compares_nothing_and_writes_nothing(vault, index_path, tmp_path):
    before = _file_state(index_path)
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "source"
        r = idx.report
        assert (r.added, r.updated, r.removed, r.embedded) == (0, 0, 0, 0)
        assert r.unchanged == len(idx.sync.last_vault.memories) > 0
        assert r.turns == len(idx.sync.last_vault.turns) >= 240
        assert _file_state(index_path) == before  # nothing written (no WAL frame either)
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_a_vault_read_without_the_cache_is_compared_row_by_row(vault, index_path, tmp_path):
    """Only the very memories of a remembered cached read are vouched for by its signature:
    with that read still alive, a plain read of the folder after an edit is compared."""
    kept = _fresh_read(vault)  # remembered, with the signature the record names
    with Index.open(read_vault(vault), StandinEmbedder(), path=index_path) as idx:
        assert idx.sync.last_compare == "rows"
        assert idx.report.unchanged == len(idx.sync.last_vault.memories)
    f = _memory_files(vault)[2]
    f.write_text(f.read_text(encoding="utf-8") + "\nEdited, then read without the cache.\n",
                 encoding="utf-8")
    with Index.open(read_vault(vault), StandinEmbedder(), path=index_path) as idx:
        assert idx.sync.last_compare == "rows" and idx.report.updated == 1
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)
    assert kept.memories  # (alive until here)


@pytest.mark.parametrize("change", ["edit", "remove", "add", "log-appended", "log-replaced"])
def test_every_change_is_found_after_an_unchanged_reopen(vault, index_path, tmp_path, change):
    _reopen(vault, index_path).close()  # the record is there and trusted
    turns = len(read_vault(vault).turns)
    files = _memory_files(vault)
    logs = sorted((vault / "sessions").glob("*.jsonl"))
    if change == "edit":
        f = files[5]
        f.write_text(f.read_text(encoding="utf-8") + "\nA line added later.\n", encoding="utf-8")
    elif change == "remove":
        files[7].unlink()
    elif change == "add":
        text = files[3].read_text(encoding="utf-8")
        old_id = text.split("\nid: ", 1)[1].split("\n", 1)[0]
        (files[3].parent / "added-later.md").write_text(
            text.replace(f"\nid: {old_id}\n", "\nid: added-later\n", 1), encoding="utf-8")
    elif change == "log-appended":
        with logs[0].open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"seq": 9999, "role": "user", "text": "one more turn"}) + "\n")
    else:  # same number of turns, other text: only the log's signature says so
        lines = logs[-1].read_text(encoding="utf-8").splitlines()
        obj = json.loads(lines[0])
        obj["text"] = obj["text"] + " (edited)"
        lines[0] = json.dumps(obj)
        logs[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    with _reopen(vault, index_path) as idx:
        r = idx.report
        # (a session log changed no memory file: the memories stay uncompared, the turns not)
        assert idx.sync.last_compare == ("source" if change.startswith("log") else "rows")
        if change == "edit":
            assert (r.added, r.updated, r.removed) == (0, 1, 0)
        elif change == "remove":
            assert (r.added, r.updated, r.removed) == (0, 0, 1)
        elif change == "add":
            assert (r.added, r.updated, r.removed) == (1, 0, 0)
        else:
            assert (r.added, r.updated, r.removed) == (0, 0, 0)
        assert r.turns == turns + (change == "log-appended")
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)
    with _reopen(vault, index_path) as idx:  # and the next open trusts the new record
        assert idx.sync.last_compare == "source"
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_a_log_swapped_for_another_of_as_many_turns_is_found(vault, index_path, tmp_path):
    """The vault's turn count is the recorded one, but a recorded log is gone: compared."""
    logs = sorted((vault / "sessions").glob("*.jsonl"))
    turns = len(read_vault(vault).turns)
    logs[0].rename(logs[0].with_name("renamed-session.jsonl"))
    with _reopen(vault, index_path) as idx:
        assert idx.report.turns == turns
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


_OTHER_PROCESS = """
import sys
from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
with Index.open(read_vault(sys.argv[1], cache=True), StandinEmbedder(), path=sys.argv[2]) as idx:
    print(idx.report.updated)
"""


def test_another_process_writing_other_memories_is_found(vault, index_path, tmp_path):
    """Another process syncs the same index file from another folder, whose one memory
    differs (and whose files' keys all differ): this vault's next open, from a read whose
    files did not change at all, must put its own memory back."""
    _reopen(vault, index_path).close()
    other = tmp_path / "other"
    subprocess.run(["cp", "-a", str(vault), str(other)], check=True)
    f = _memory_files(other)[9]
    f.write_text(f.read_text(encoding="utf-8").replace("\n---\n", "\n---\nEdited elsewhere.\n", 1),
                 encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(other), str(index_path)],
                         check=True, capture_output=True, text=True, env=env)
    assert out.stdout.split()[-1] != "0"  # it rewrote rows (paths and keys are its own)
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "rows"
        assert idx.report.updated >= 1
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_a_write_of_memory_rows_that_moves_the_generation_voids_the_record(
        vault, index_path, tmp_path):
    """Any writer (another connection here: an older version, a tool) that changes a memory
    row gives the generation a new value; the record is of the old one, so not trusted."""
    import apsw

    _reopen(vault, index_path).close()
    conn = apsw.Connection(str(index_path))
    with conn:
        conn.execute("UPDATE memories SET row_hash='stale' WHERE rowid=(SELECT min(rowid)"
                     " FROM memories)")
        conn.execute("UPDATE meta SET value='another-writer' WHERE key='generation'")
    conn.close()
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "rows"
        assert idx.report.updated == 1
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_vectors_filled_later_keep_the_record(vault, tmp_path):
    """A progressive open: text first, the vectors later in their own writes (each a new
    generation). The record is carried along, so the next open compares nothing; a rebuild
    compares everything (and records again)."""
    path = tmp_path / "progressive.sqlite"
    with Index.open(_fresh_read(vault), StandinEmbedder(), path=path,
                    defer_vectors=True) as idx:
        assert idx.embedding_progress() is not None
        gen = idx.core.meta("generation")
        idx.fill_vectors()
        assert idx.embedding_progress() is None
        idx.core.forget_meta()
        assert idx.core.meta("generation") != gen
        assert idx.core.meta(META_KEY) == f"{idx.core.meta(META_KEY).split()[0]} " \
                                          f"{idx.core.meta('generation')}"
    with _reopen(vault, path) as idx:
        assert idx.sync.last_compare == "source"
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)
    with Index.open(_fresh_read(vault), StandinEmbedder(), path=path, rebuild=True) as idx:
        assert idx.sync.last_compare == "rows"
        assert idx.report.embedded == 0
    with _reopen(vault, path) as idx:
        assert idx.sync.last_compare == "source"


def test_an_update_after_an_unchanged_open_builds_on_it(vault, index_path, tmp_path):
    """The unchanged open read no row back; the watcher's targeted update that follows
    reads them then and re-indexes just the changed memory, as after any sync."""
    idx = _reopen(vault, index_path)
    try:
        assert idx.sync.last_compare == "source"
        v1 = idx.sync.last_vault
        f = _memory_files(vault)[11]
        f.write_text(f.read_text(encoding="utf-8") + "\nEdited while open.\n", encoding="utf-8")
        v2 = read_vault(vault, cache=True)
        changed = [m.id for m in v2.memories.values() if v1.memories.get(m.id) is not m]
        assert len(changed) == 1
        r = idx.update_changed(v2, changed, {})
        assert (r.added, r.updated, r.removed) == (0, 1, 0)
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)
    finally:
        idx.close()


def test_a_session_appended_through_the_watcher_keeps_the_record(vault, index_path, tmp_path):
    """The watcher's refresh of a changed log (a patched vault: the memories the same
    objects) writes turns only: the record is carried, so the next fresh open (the bench's
    re-open after its append timing) compares no memory, and has the new turn."""
    from recall_tui.vault.patch import patch_vault

    idx = _reopen(vault, index_path)
    try:
        log = sorted((vault / "sessions").glob("*.jsonl"))[0]
        with log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"seq": 9998, "role": "user", "text": "appended live"}) + "\n")
        patched = patch_vault(idx.sync.last_vault, [str(log.relative_to(vault))])
        assert patched is not None and not patched.memory_ids
        r = idx.update_changed(patched.vault, patched.memory_ids, patched.sessions)
        assert r.turns == len(patched.vault.turns)
    finally:
        idx.close()
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "source"
        assert idx.sync._turn_hashes == {}  # (no turn compared: the log record was kept true)
        assert idx.report.turns == len(idx.sync.last_vault.turns)
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_building_the_trigram_table_keeps_the_record_unless_it_marks_rows(vault, index_path,
                                                                          tmp_path):
    """The fuzzy stage's scan mode builds the trigram table on first need (the bench does):
    from the synced vault it changes no memory row, and the next open compares none; from a
    vault whose memory differs it marks that row, and the next open compares them all."""
    with _reopen(vault, index_path) as idx:
        assert idx.ensure_trigram() is not None
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "source"
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)
    from recall_tui.diagnostics.engine_bench_child import _changed_vault

    with _reopen(vault, index_path) as idx:  # (the table is there: dropped to build again)
        idx.core.conn.execute("DELETE FROM meta WHERE key='trigram'")
        idx.core.forget_meta()
        mid = sorted(idx.sync.last_vault.memories)[3]
        assert idx.ensure_trigram(_changed_vault(idx.sync.last_vault, mid, "elsewhere"))
    with _reopen(vault, index_path) as idx:
        assert idx.sync.last_compare == "rows" and idx.report.updated == 1
        assert _dump(idx) == _built_from_nothing(vault, tmp_path)


def test_removing_an_index_removes_every_cache_kept_beside_it(tmp_path):
    """`remove_index_files` takes the side files (`index.sidefiles`) with the index: the turn
    codes, each keyword-postings variant and the probe bests; not another index's, and not
    a name that only starts the same."""
    from recall_tui.index.schema import remove_index_files

    idx = tmp_path / "in[dex].sqlite"  # (glob characters in the name are taken literally)
    gone = [idx, tmp_path / "in[dex].sqlite-wal", tmp_path / "in[dex].sqlite-turncodes",
            tmp_path / "in[dex].sqlite.keywords-stem-stop",
            tmp_path / "in[dex].sqlite.keywords-nostem-nostop",
            tmp_path / "in[dex].sqlite.probe-bests"]
    kept = [tmp_path / "other.sqlite.keywords-stem-stop", tmp_path / "in[dex].sqlite2",
            tmp_path / "index.sqlite.probe-bests"]
    for p in gone + kept:
        p.write_bytes(b"x")
    remove_index_files(idx)
    assert [p.name for p in gone if p.exists()] == []
    assert [p.name for p in kept if not p.exists()] == []
