"""A tuned configuration saved as a named preset loads back equal, by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_tui.engine.config import list_presets, load_preset
from recall_tui.tuning.presets_io import changed_knobs, save_preset


def test_save_in_the_vault_and_load_back_by_name(tmp_path: Path):
    base = load_preset("default")
    tuned = base.with_value("mmr.lam", 0.5).with_value("keyword.recall_when", 7.0)
    assert [(c.path, c.old, c.new) for c in changed_knobs(base, tuned)] == [
        ("keyword.recall_when", 5.0, 7.0), ("mmr.lam", base.mmr.lam, 0.5)]
    path = save_preset(tuned, "my-tuning", vault_root=tmp_path, base=base, base_name="default")
    assert path == tmp_path / ".recall" / "presets" / "my-tuning.toml"
    text = path.read_text(encoding="utf-8")
    assert "#   keyword.recall_when: 5.0 -> 7.0" in text
    assert "my-tuning" in list_presets(tmp_path)
    loaded = load_preset("my-tuning", tmp_path)
    assert loaded.description == "my-tuning: tuned from default"
    assert loaded == tuned.with_value("description", loaded.description)


def test_save_in_the_user_folder(tmp_path: Path):
    cfg = load_preset("bastra").with_value("k", 8)
    path = save_preset(cfg, "mine", where="user")
    assert path.parent.name == "presets" and path.parent.parent.name == "recall-tui"
    assert load_preset("mine", None) == cfg  # found without any vault


def test_refusals(tmp_path: Path):
    cfg = load_preset("default")
    with pytest.raises(ValueError, match="built-in"):
        save_preset(cfg, "default", vault_root=tmp_path)
    with pytest.raises(ValueError, match="letters"):
        save_preset(cfg, "../escape", vault_root=tmp_path)
    save_preset(cfg, "once", vault_root=tmp_path)
    with pytest.raises(FileExistsError, match="once.toml"):
        save_preset(cfg.with_value("k", 3), "once", vault_root=tmp_path)
    assert load_preset("once", tmp_path).k == cfg.k
    save_preset(cfg.with_value("k", 3), "once", vault_root=tmp_path, overwrite=True)
    assert load_preset("once", tmp_path).k == 3
