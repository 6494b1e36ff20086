"""The watcher's incremental refresh: a vault patched with the changed files alone
(`vault.patch.patch_vault`) is the vault a fresh `read_vault` gives, after each kind of change,
and the index updated for those rows only (`Index.update_changed`) is the index a full sync
leaves (a full sync after it finds nothing to do).

One small vault is built here (the bench's stand-in embedder: vectors cost nothing) and changed step by step, each step checked against a fresh read of the folder.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.engine.config import load_preset
from recall_tui.engine.engines import EngineSet
from recall_tui.engine.pipeline import Engine
from recall_tui.index.store import Index
from recall_tui.index.watch import ChangeSummary, reread
from recall_tui.vault.model import Vault
from recall_tui.vault.patch import patch_vault
from recall_tui.vault.reader import read_vault


def _memory(mid: str, body: str, **front: object) -> str:
    lines = [f"id: {mid}"] + [f"{k}: {json.dumps(v)}" for k, v in front.items()]
    return "---\n" + "\n".join(lines) + f"\n---\n# {mid}\n\n{body}\n"


def _log(session: str, n: int, start: int = 0) -> str:
    return "".join(
        json.dumps({"seq": seq, "role": "user" if seq % 2 == 0 else "assistant",
                    "text": f"{session} turn {seq} about the deploy runbook",
                    "at": f"2026-01-05T09:{seq % 60:02d}:00+00:00"}) + "\n"
        for seq in range(start, start + n))


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("incremental") / "vault"
    _write(root, "projects/alpha.md", _memory(
        "alpha", "Alpha ships on Fridays.", tags=["deploy"],
        edges=[{"subject": "alpha", "relation": "uses", "object": "postgres"}]))
    _write(root, "projects/beta.md", _memory("beta", "Beta replaced alpha.", supersedes=["alpha"]))
    _write(root, "projects/gamma.md", _memory(
        "gamma", "Gamma links to a ghost.", related_via=[{"id": "ghost", "score": 0.5}]))
    _write(root, "personal/tea.md", _memory("tea", "Green tea in the morning.", tpye="x"))
    _write(root, "_inbox/dup.md", _memory("tea", "A second tea."))
    _write(root, "consolidation/daily/2026-01-05.md", "# Day\n\nWe shipped alpha.\n\nThen beta.\n")
    _write(root, "sessions/s1.jsonl", _log("s1", 6) + "not json\n")
    _write(root, "sessions/s2.jsonl", _log("s2", 4))
    return root


def _copy(root: Path, tmp_path: Path) -> Path:
    """A private copy of the module's vault as it is now (no `.recall/`)."""
    copy = tmp_path / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".recall"))
    return copy


def _same(patched: Vault, root: Path) -> None:
    fresh = read_vault(root)
    assert dict(patched.memories) == dict(fresh.memories)
    assert list(patched.memories) == list(fresh.memories)
    assert patched.problems == fresh.problems
    assert patched.turns == fresh.turns
    # each session log's signature, which the index sync trusts to skip an unchanged log
    assert dict(patched.turn_logs) == dict(fresh.turn_logs)
    assert patched.digests == fresh.digests
    assert patched.chains == fresh.chains
    assert patched.graph == fresh.graph
    assert dict(patched.graph.adjacency) == dict(fresh.graph.adjacency)


# Each step: a change to the folder and the files the watcher would report.
def _edit_memory(root: Path) -> tuple[str, ...]:
    _write(root, "projects/alpha.md", _memory(
        "alpha", "Alpha ships on Mondays now.", status="superseded",
        edges=[{"subject": "alpha", "relation": "uses", "object": "mysql"}]))
    return ("projects/alpha.md",)


def _add_memory(root: Path) -> tuple[str, ...]:
    _write(root, "projects/ghost.md", _memory("ghost", "The ghost exists now.",
                                              superseded_by="gamma"))
    _write(root, "projects/delta.md", _memory("delta", "Delta supersedes itself.",
                                              supersedes=["delta"]))
    return ("projects/delta.md", "projects/ghost.md")


def _remove_memory(root: Path) -> tuple[str, ...]:
    (root / "personal/tea.md").unlink()  # the duplicate's id becomes its own
    (root / "projects/beta.md").unlink()
    return ("personal/tea.md", "projects/beta.md")


def _append_log(root: Path) -> tuple[str, ...]:
    with open(root / "sessions/s2.jsonl", "a", encoding="utf-8") as fh:
        fh.write(_log("s2", 200, start=4))
    return ("sessions/s2.jsonl",)


def _new_log(root: Path) -> tuple[str, ...]:
    _write(root, "sessions/s0.jsonl", _log("s0", 3) + '{"seq": 0, "role": "user", "text": "x"}\n')
    _write(root, "sessions/s9.jsonl", _log("s9", 2))
    return ("sessions/s0.jsonl", "sessions/s9.jsonl")


def _truncate_log(root: Path) -> tuple[str, ...]:
    _write(root, "sessions/s1.jsonl", _log("s1", 2))
    (root / "sessions/s9.jsonl").unlink()
    return ("sessions/s1.jsonl", "sessions/s9.jsonl")


def _digest(root: Path) -> tuple[str, ...]:
    _write(root, "consolidation/daily/2026-01-05.md", "# Day\n\nOnly beta now.\n")
    _write(root, "consolidation/weekly/2026-W02.md", "# Week\n\nA quiet week.\n")
    _write(root, "consolidation/notes.md", "misplaced\n")
    _write(root, "sessions/notes.md", "misplaced too\n")
    return ("consolidation/daily/2026-01-05.md", "consolidation/notes.md",
            "consolidation/weekly/2026-W02.md", "sessions/notes.md")


def _mixed(root: Path) -> tuple[str, ...]:
    (root / "consolidation/notes.md").unlink()
    _write(root, "projects/gamma.md", _memory("gamma", "Gamma, plain now."))
    with open(root / "sessions/s0.jsonl", "a", encoding="utf-8") as fh:
        fh.write(_log("s0", 2, start=10))
    return ("consolidation/notes.md", "projects/gamma.md", "sessions/s0.jsonl",
            "projects/never-there.md", "notes.txt")


def _rows(index: Index) -> tuple[list[tuple[object, ...]], ...]:
    """What the index holds about each memory and turn (rowids included: a row written
    again would show)."""
    conn = index.core.conn
    return (
        conn.execute("SELECT rowid, id, path, row_hash, mtime FROM memories ORDER BY id").fetchall(),
        conn.execute("SELECT rowid, id, path, row_hash FROM turns ORDER BY id").fetchall(),
        conn.execute("SELECT subject, relation, object, memory_id FROM edges ORDER BY 1, 2, 3, 4"
                     ).fetchall(),
        conn.execute("SELECT id, signature FROM signatures ORDER BY id").fetchall(),
        conn.execute("SELECT rowid FROM memories_fts ORDER BY rowid").fetchall(),
    )


STEPS = [_edit_memory, _add_memory, _remove_memory, _append_log, _new_log, _truncate_log,
         _digest, _mixed]


def test_each_kind_of_change_patches_to_a_fresh_read_and_indexes_like_a_full_sync(root: Path):
    vault = read_vault(root, cache=True)
    index = Index.open(vault, StandinEmbedder())
    try:
        for step in STEPS:
            files = step(root)
            new, summary = reread(vault, index, files=files)
            assert new is not None and summary.patched, (step.__name__, summary)
            _same(new, root)
            assert summary.files == files
            # the index as a full sync leaves it: a full sync now has nothing to do
            rows = _rows(index)
            conn = index.core.conn
            assert conn.execute("SELECT count(*) FROM turns WHERE vector IS NULL").fetchone() == (0,)
            report = index.update_files(new)
            assert (report.added, report.updated, report.removed) == (0, 0, 0), step.__name__
            assert _rows(index) == rows, step.__name__
            assert len(rows[1]) == report.turns == len(new.turns)
            assert sorted(r[1] for r in rows[0]) == sorted(new.memories)
            vault = new
        # what the summary said on the last step: gamma changed, nothing added or removed
        assert summary.changed == ("gamma",) and not summary.added and not summary.removed
    finally:
        index.close()


def test_a_session_log_appended_keeps_every_memory_object_and_the_engines_keyword_index(
        tmp_path: Path, root: Path):
    copy = _copy(root, tmp_path)
    vault = read_vault(copy, cache=True)
    engines = EngineSet(vault, None)
    engine = engines.for_preset("default", load_preset("default", copy))
    kw = engine.keyword_index(engine.config)
    _write(copy, "sessions/s5.jsonl", _log("s5", 200))
    summary = engines.refresh(files=("sessions/s5.jsonl",))
    assert summary.patched and summary.empty
    new = engines.vault
    assert new is not vault and engine.vault is new
    assert all(new.memories[mid] is m for mid, m in vault.memories.items())
    assert new.chains is vault.chains and new.graph is vault.graph
    assert engine.keyword_index(engine.config) is kw
    assert sum(t.session_id == "s5" for t in new.turns) == 200
    _same(new, copy)


@pytest.mark.parametrize("case", ["symlink", "folder", "too_many", "not_the_last_read",
                                  "uncached"])
def test_what_cannot_be_patched_is_read_again(tmp_path: Path, root: Path, case: str):
    copy = _copy(root, tmp_path)
    vault = read_vault(copy, cache=case != "uncached")
    files: tuple[str, ...] = ("projects/alpha.md",)
    if case == "symlink":
        os.symlink("alpha.md", copy / "projects/link.md")
        files = ("projects/link.md",)
    elif case == "folder":  # a folder moved out: the watcher reports the folder alone
        shutil.move(copy / "projects", tmp_path / "elsewhere")
        files = ("projects",)
    elif case == "too_many":
        files = tuple(f"projects/n{i}.md" for i in range(65))
    elif case == "not_the_last_read":
        read_vault(copy, cache=True)  # a later read: `vault` is no longer the basis
    assert patch_vault(vault, files) is None
    new, summary = reread(vault, None, files=files)
    assert new is not None and not summary.patched
    _same(new, copy)


def test_an_engine_recalls_a_session_appended_through_the_patch(tmp_path: Path, root: Path):
    copy = _copy(root, tmp_path)
    vault = read_vault(copy, cache=True)
    index = Index.open(vault, StandinEmbedder())
    try:
        # (the turn channel on, as the bench's append timing has it)
        config = load_preset("default", copy).with_value("turns.enabled", True)
        engine = Engine(vault, index, config)
        asked = "where is the zqpatchword rollout plan"
        _write(copy, "sessions/s7.jsonl", json.dumps({"seq": 0, "role": "user", "text": asked}) + "\n")
        summary = EngineSet.of(engine).refresh(files=("sessions/s7.jsonl",))
        assert summary.patched and summary.error is None
        trace = engine.recall(asked)
        assert any(t.session_id == "s7" for t in trace.turns)
    finally:
        index.close()


def test_a_watched_vault_reads_at_once_what_changed_before_the_watch_then_patches(
        tmp_path: Path, root: Path):
    copy = _copy(root, tmp_path)
    engines = EngineSet(read_vault(copy, cache=True), None)
    _write(copy, "projects/early.md", _memory("early", "Written before the watch began."))
    seen: list[ChangeSummary] = []
    arrived = threading.Condition()

    def on_change(summary: ChangeSummary) -> None:
        with arrived:
            seen.append(summary)
            arrived.notify_all()

    def batch_of(rel: str) -> ChangeSummary:
        with arrived:
            assert arrived.wait_for(lambda: any(rel in s.files for s in seen), 60), seen
        (summary,) = [s for s in seen if rel in s.files]
        return summary

    engines.watch(on_change, debounce_ms=50)
    try:
        # the watch begins with a read of the whole folder (no file changed since: nothing
        # else tells the watcher), which finds the memory written before the watch
        with arrived:
            assert arrived.wait_for(lambda: seen, 60), "the watch's catch-up never reported"
        first = seen[0]
        assert first.files == () and not first.patched and first.error is None
        assert first.added == ("early",)
        assert engines.watch_settled.is_set()
        _write(copy, "sessions/s8.jsonl", _log("s8", 3))
        assert batch_of("sessions/s8.jsonl").patched
        _write(copy, "sessions/s9.jsonl", _log("s9", 2))
        second = batch_of("sessions/s9.jsonl")
        assert second.patched and second.error is None
        assert sum(t.session_id in ("s8", "s9") for t in engines.vault.turns) == 5
        _same(engines.vault, copy)
    finally:
        engines.close()
    assert not engines.watch_settled.is_set()
