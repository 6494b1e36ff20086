"""`EngineSet`: one engine per preset over one vault, refreshed as one. A small vault written
here, no index and no embedder (the watcher with a real index is tests/test_watch.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.engine.engines import EngineSet, refresh
from tests.engine_vaults import mem, write_vault

NOW_FILE = """\
---
id: zorbleflux-note
title: Zorbleflux starter
type: fact
summary: The zorbleflux starter is fed every Sunday.
created: 2026-11-20
---
Rye flour.
"""


@pytest.fixture()
def vault(tmp_path):
    return write_vault(tmp_path, dict([
        mem("postgres-upgrade", "Postgres upgrade", "Upgrade postgres with pg_upgrade"),
        mem("running-club", "Running club", "Runs on Tuesday and Thursday"),
    ]))


def test_one_engine_per_preset_sharing_the_vault(vault):
    base = Engine(vault, None, load_preset("default"), preset="default")
    engines = EngineSet.of(base)
    assert engines.for_preset("default") is base
    other = engines.for_preset("memoria")
    assert other is engines.for_preset("memoria") and other.preset == "memoria"
    assert other.vault is base.vault and other.config.hash() == load_preset("memoria").hash()
    assert engines.presets() == ["default", "memoria"]
    with pytest.raises(ValueError):
        engines.for_preset("no-such-preset")
    assert engines.get("no-such-preset") is None
    engines.forget(["memoria"])
    assert engines.get("memoria") is None and engines.presets() == ["default"]


def test_refresh_swaps_the_new_vault_into_every_engine(vault):
    engines = EngineSet(vault, None, lock=threading.RLock())
    a, b = engines.for_preset("default"), engines.for_preset("memoria")
    assert not a.recall("zorbleflux").hits
    (Path(vault.root) / "zorbleflux.md").write_text(NOW_FILE, encoding="utf-8")
    summary = engines.refresh()
    assert summary.error is None and summary.added == ("zorbleflux-note",)
    assert a.vault is b.vault is engines.vault and engines.vault.get("zorbleflux-note")
    assert [h.id for h in b.recall("zorbleflux").hits][:1] == ["zorbleflux-note"]
    assert engines.refresh().empty  # nothing changed since


def test_a_lone_engine_refreshed_hands_its_vault_to_the_others(vault):
    engines = EngineSet(vault, None)
    a, b = engines.for_preset("default"), engines.for_preset("memoria")
    (Path(vault.root) / "zorbleflux.md").write_text(NOW_FILE, encoding="utf-8")
    summary = refresh(a)  # what saving recall_when does to the app's engine
    assert summary.added == ("zorbleflux-note",) and b.vault is not a.vault
    engines.set_vault(a.vault)
    assert b.vault is a.vault is engines.vault


def test_a_vault_gone_keeps_what_the_engines_had(vault, tmp_path):
    engines = EngineSet(vault, None)
    a = engines.for_preset("default")
    before = a.vault
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    Path(vault.root).rename(moved)
    try:
        summary = engines.refresh()
    finally:
        moved.rename(vault.root)
    assert summary.error and str(vault.root) in summary.error
    assert a.vault is before and engines.vault is before


def test_reload_configs_drops_a_preset_gone_and_close_empties(vault):
    engines = EngineSet(vault, None, root=vault.root)
    presets = Path(vault.root) / ".recall" / "presets"
    presets.mkdir(parents=True)
    (presets / "mine.toml").write_text('extends = "default"\nk = 3\n', encoding="utf-8")
    mine = engines.for_preset("mine")
    assert mine.config.k == 3
    default = engines.for_preset("default")
    engines.reload_configs({"default": load_preset("memoria")})
    assert default.config.hash() == load_preset("memoria").hash()
    (presets / "mine.toml").unlink()
    engines.reload_configs()
    assert engines.presets() == ["default"]
    engines.close()
    assert engines.presets() == [] and engines.watcher is None
