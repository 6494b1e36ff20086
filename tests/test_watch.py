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
