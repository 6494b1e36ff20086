"""Changes made outside the tool are picked up: real files, a real watchfiles thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recall_tui.engine import open_engine
from recall_tui.engine.engines import EngineSet, refresh
from recall_tui.index.watch import ChangeSummary
from tests.conftest import PINNED_NOW

NEW_MEMORY = """\
---
id: sourdough-starter-feeding
title: Sourdough starter feeding schedule
type: fact
scope: personal
summary: The zorbleflux starter lives in the fridge and is fed every Sunday with rye flour.
created: 2026-11-20
---
Feed 1:1:1 with rye; leave out two hours before baking.
"""


@pytest.fixture()
def engine(vault_copy):
    e = open_engine(vault_copy, embedder="local")
    yield e
    e.index.close()


class _Collector:
    def __init__(self) -> None:
        self.summaries: list[ChangeSummary] = []
        self.event = threading.Condition()

    def __call__(self, s: ChangeSummary) -> None:
        with self.event:
            self.summaries.append(s)
            self.event.notify_all()

    def ids(self, field: str) -> set[str]:
        return {i for s in self.summaries for i in getattr(s, field)}

    def wait_for(self, pred, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.event:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.event.wait(left)
        return True


def test_watcher_reports_added_changed_removed_and_queries_see_them(engine, vault_copy: Path):
    seen = _Collector()
    changed_path = vault_copy / engine.vault.get("running-club").path
    removed_path = vault_copy / engine.vault.get("coffee-order").path
    watcher = EngineSet.of(engine).watch(seen, debounce_ms=100)
    try:
        assert watcher.running
        (vault_copy / "personal" / "food" / "sourdough-starter.md").write_text(NEW_MEMORY, encoding="utf-8")
        changed_path.write_text(changed_path.read_text(encoding="utf-8") + "\nAlso on Saturdays now.\n",
                                encoding="utf-8")
        removed_path.unlink()
        ok = seen.wait_for(lambda: seen.ids("added") >= {"sourdough-starter-feeding"}
                           and "running-club" in seen.ids("changed")
                           and "coffee-order" in seen.ids("removed"))
        assert ok, [s.describe() for s in seen.summaries]
        assert all(s.error is None for s in seen.summaries)
        assert "added (sourdough-starter-feeding)" in " ".join(s.describe() for s in seen.summaries)
    finally:
        watcher.stop()
    assert not watcher.running and watcher.error is None
    trace = engine.recall("zorbleflux starter", k=5, now=PINNED_NOW)
    assert trace.hits and trace.hits[0].id == "sourdough-starter-feeding"
    assert engine.vault.get("coffee-order") is None
    assert "Saturdays" in engine.vault.get("running-club").body
    assert engine.index.memory_count() == len(engine.vault.memories)


def test_writes_under_dot_folders_do_not_wake_the_watcher(engine, vault_copy: Path):
    seen = _Collector()
    with EngineSet.of(engine) as engines:
        engines.watch(seen, debounce_ms=50)
        assert engines.watch_settled.wait(30), "the watch's catch-up re-read never ran"
        (vault_copy / ".recall" / "note.md").write_text("---\nid: hidden\n---\nx\n", encoding="utf-8")
        (vault_copy / ".git").mkdir()
        (vault_copy / ".git" / "HEAD.md").write_text("ref\n", encoding="utf-8")
        (vault_copy / "notes.txt").write_text("not a memory\n", encoding="utf-8")
        # a file that does count, so we know the watcher was awake while the others were written
        (vault_copy / "personal" / "food" / "sourdough-starter.md").write_text(NEW_MEMORY, encoding="utf-8")
        assert seen.wait_for(lambda: "sourdough-starter-feeding" in seen.ids("added"))
    files = {f for s in seen.summaries for f in s.files}
    assert files == {"personal/food/sourdough-starter.md"}
    assert engine.vault.get("hidden") is None


def test_an_edit_made_before_the_watch_began_is_seen_without_another_change(engine, vault_copy: Path):
    """The service, the MCP server and the TUI read the vault, then start watching: a file
    written in between is in no batch of the watcher. The watch begins with a re-read of the
    folder (a catch-up), so the edit is seen though nothing changes on disk afterwards."""
    engines = EngineSet.of(engine)
    path = vault_copy / engine.vault.get("running-club").path
    path.write_text(path.read_text(encoding="utf-8") + "\nThe quokka census meets at the boathouse.\n",
                    encoding="utf-8")
    assert "quokka" not in engine.vault.get("running-club").body  # read before the edit
    seen = _Collector()
    with engines:
        engines.watch(seen, debounce_ms=50)
        assert seen.wait_for(lambda: "running-club" in seen.ids("changed"), timeout=30), \
            [s.describe() for s in seen.summaries]
        assert engines.watch_settled.is_set()
    catch_up = seen.summaries[0]
    assert catch_up.error is None and catch_up.files == () and not catch_up.patched
    assert catch_up.index is not None and catch_up.index.updated == 1
    assert "quokka" in engine.vault.get("running-club").body
    hits = [h.id for h in engine.recall("quokka census boathouse", k=5, now=PINNED_NOW).hits]
    assert hits and hits[0] == "running-club", hits


def test_the_watch_catch_up_swaps_nothing_when_nothing_changed(engine, vault_copy: Path):
    """The catch-up re-read finds the vault as it was: the engines keep the vault they read
    (and their cached recalls), and nothing is reported."""
    engines = EngineSet.of(engine)
    vault = engine.vault
    first = engine.recall("running club", k=5, now=PINNED_NOW)
    seen = _Collector()
    with engines:
        engines.watch(seen, debounce_ms=50)
        assert engines.watch_settled.wait(30), "the watch's catch-up re-read never ran"
        assert seen.summaries == []
        assert engine.vault is vault and engines.vault is vault
        again = engine.recall("running club", k=5, now=PINNED_NOW)
        assert [h.id for h in again.hits] == [h.id for h in first.hits]
        assert again.cache_hit, "the catch-up dropped the engine's cached recalls"
        # the vault kept still patches: the next batch is not a read of the whole folder
        path = vault_copy / vault.get("running-club").path
        path.write_text(path.read_text(encoding="utf-8") + "\nAlso on Saturdays.\n",
                        encoding="utf-8")
        assert seen.wait_for(lambda: "running-club" in seen.ids("changed"), timeout=30)
    assert [s.patched for s in seen.summaries] == [True] * len(seen.summaries)


def test_refresh_after_an_editor_returns(engine, vault_copy: Path):
    m = engine.vault.get("running-club")
    path = vault_copy / m.path
    path.write_text(path.read_text(encoding="utf-8").replace("Tuesday and Thursday", "Monday and Wednesday"),
                    encoding="utf-8")
    s = refresh(engine)
    assert (s.added, s.changed, s.removed) == ((), ("running-club",), ())
    assert s.index is not None and s.index.updated == 1 and s.index.embedded == 1
    assert "Monday and Wednesday" in engine.vault.get("running-club").body
    again = refresh(engine)
    assert again.empty and again.index.updated == 0 and "no memory changed" in again.describe()
