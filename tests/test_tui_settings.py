"""The UI's settings file: XDG location, typed values, env overrides, clear errors, headless."""

from __future__ import annotations

import subprocess
import sys

import pytest

from recall_tui.tui.keymap import unknown_ids
from recall_tui.tui.safe import clean
from recall_tui.tui.settings import Settings, SettingsError, config_path, load_settings


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "recall-tui" / "config.toml"
    s = load_settings()
    assert s == Settings(keymap=s.keymap) and dict(s.keymap) == {} and s.source == ""


def test_file_values_keymap_and_env_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    cfg = tmp_path / "recall-tui" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text('theme = "nord"\nk = 7\n[ui]\ndebounce_ms = 120\n'
                   '[keymap]\n"app.help" = "f1"\n"list.down" = "j,down"\n')
    s = load_settings()
    assert (s.theme, s.k, s.debounce_ms, s.source) == ("nord", 7, 120, str(cfg))
    assert dict(s.keymap) == {"app.help": "f1", "list.down": "j,down"}
    assert unknown_ids(s.keymap) == []
    monkeypatch.setenv("RECALL_TUI_K", "3")
    monkeypatch.setenv("RECALL_TUI_THEME", "gruvbox")
    s = load_settings()
    assert (s.k, s.theme) == (3, "gruvbox")


@pytest.mark.parametrize("text, words", [
    ("k = [", "not valid TOML"),
    ("k = 0", "out of range"),
    ('k = "many"', "must be an integer"),
    ('verbosity = "loud"', "lean` or `full"),
    ("colour = 1", "unknown setting(s): colour"),
    ('[keymap]\n"app.help" = 3', "keymap `app.help`"),
])
def test_bad_file_names_the_file_and_the_reason(tmp_path, text, words):
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg)
    assert str(cfg) in str(err.value) and words in str(err.value)


def test_unknown_binding_ids_are_reported():
    assert unknown_ids({"app.help": "f1", "app.hlep": "f2"}) == ["app.hlep"]


def test_clean_makes_escape_sequences_and_controls_visible():
    raw = "a\x1b[2Jb\x1b]52;c;Zm9v\x07c\x1b]0;title\x1b\\d\x07e\x9b31mf\x00g\th\ni\x1bPq\x1b\\j\x7f"
    assert clean(raw) == ("a␛[2Jb␛]52;c;Zm9v␇c␛]0;title␛\\d␇e\\x9b31mf␀g\th\ni␛Pq␛\\j␡")
    assert clean("[bold]x[/] $var") == "[bold]x[/] $var"  # markup is not our business here


def test_settings_module_is_headless():
    code = ("import sys, recall_tui.tui.settings; "
            "assert 'textual' not in sys.modules and 'rich' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
