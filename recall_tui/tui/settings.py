"""The user's settings for the terminal UI: a typed record read from a TOML file in the XDG
config folder, with environment-variable overrides.

Headless (no textual, no rich) so the CLI can validate a config file without starting the UI.
The file lives at `$XDG_CONFIG_HOME/recall-tui/config.toml` (`~/.config/recall-tui/config.toml`
when the variable is unset); `RECALL_TUI_CONFIG` points at another file. A missing file means
defaults; a bad one raises `SettingsError` naming the file and the reason, because silently
ignoring a typo in a keymap leaves the user wondering why a key does nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import tomllib

APP_DIR_NAME = "recall-tui"
ENV_PREFIX = "RECALL_TUI_"


class SettingsError(ValueError):
    """The config file (or an environment override) could not be used as written."""


def config_dir() -> Path:
    """The XDG config folder for recall-tui."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / APP_DIR_NAME


def config_path() -> Path:
    """The config file to read: `RECALL_TUI_CONFIG` if set, else the XDG location."""
    explicit = os.environ.get(ENV_PREFIX + "CONFIG")
    return Path(explicit) if explicit else config_dir() / "config.toml"


@dataclass(frozen=True)
class Settings:
    """What the user can set for the UI. Every field has a default; the file sets any subset."""

    theme: str = "textual-dark"
    """Name of a Textual built-in theme (the palette's theme switcher changes it live)."""
    preset: str = "default"
    """Preset the UI starts with when `--preset` is not given."""
    embedder: str = "auto"
    """Embedder kind passed to the engine when `--embedder` is not given."""
    k: int | None = None
    """Number of hits asked for; None (unset): the preset's k, as on the command line."""
    verbosity: str = "lean"
    """`lean` or `full` payloads in the results table (toggled live)."""
    debounce_ms: int = 0
    """Deprecated and ignored: the UI no longer waits after a keystroke (each one runs at once,
    and while a recall runs only the newest request waits). Still read, so an old config file
    keeps loading; setting it adds a one-line notice to `notices`."""
    keymap: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Binding id -> keys (comma-separated), applied with Textual's `App.set_keymap`."""
    source: str = ""
    """The file these settings were read from (empty when only defaults were used)."""
    notices: tuple[str, ...] = ()
    """Things worth telling the user about the file (deprecated keys); the UI shows them."""


#: Keys still accepted but no longer used, with what to tell the user.
DEPRECATED: dict[str, str] = {
    "debounce_ms": "`debounce_ms` is no longer used: every keystroke runs a recall at once and "
                   "only the newest waits while one runs (remove it from the config file)",
}

#: Fields a user may set from the `[ui]` table or the top level of the file, with their types.
_SCALARS: dict[str, type] = {"theme": str, "preset": str, "embedder": str, "k": int,
                             "verbosity": str, "debounce_ms": int}


def _coerce(name: str, value: Any, where: str) -> Any:
    want = _SCALARS[name]
    if want is int:
        if isinstance(value, bool):
            raise SettingsError(f"{where}: `{name}` must be an integer, not {value!r}")
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{where}: `{name}` must be an integer, not {value!r}") from None
        if value < (0 if name == "debounce_ms" else 1):
            raise SettingsError(f"{where}: `{name}` is out of range: {value}")
        return value
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where}: `{name}` must be a non-empty string, not {value!r}")
    if name == "verbosity" and value not in ("lean", "full"):
        raise SettingsError(f"{where}: `verbosity` must be `lean` or `full`, not {value!r}")
    return value


def load_settings(path: str | os.PathLike | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Read the config file (if it exists) and apply `RECALL_TUI_*` environment overrides.

    Environment variables win over the file: `RECALL_TUI_THEME`, `RECALL_TUI_PRESET`,
    `RECALL_TUI_EMBEDDER`, `RECALL_TUI_K`, `RECALL_TUI_VERBOSITY`, `RECALL_TUI_DEBOUNCE_MS`.
    """
    env = os.environ if environ is None else environ
    file = Path(path) if path is not None else config_path()
    values: dict[str, Any] = {}
    keymap: dict[str, str] = {}
    source = ""
    if file.is_file():
        source = str(file)
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{file}: cannot be read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{file}: not valid TOML: {exc}") from None
        ui = data.get("ui", {})
        if not isinstance(ui, dict):
            raise SettingsError(f"{file}: `[ui]` must be a table")
        for table in (data, ui):
            for key, value in table.items():
                if key in _SCALARS:
                    values[key] = _coerce(key, value, str(file))
        unknown = set(data) - set(_SCALARS) - {"ui", "keymap"}
        if unknown:
            raise SettingsError(f"{file}: unknown setting(s): {', '.join(sorted(unknown))}")
        raw_keymap = data.get("keymap", {})
        if not isinstance(raw_keymap, dict):
            raise SettingsError(f"{file}: `[keymap]` must be a table of binding_id = \"keys\"")
        for binding_id, keys in raw_keymap.items():
            if not isinstance(keys, str) or not keys.strip():
                raise SettingsError(
                    f"{file}: keymap `{binding_id}` must be a non-empty string of keys, "
                    f"not {keys!r}"
                )
            keymap[str(binding_id)] = keys.strip()
    for name in _SCALARS:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw:
            values[name] = _coerce(name, raw, f"environment {ENV_PREFIX + name.upper()}")
    notices = tuple(f"{source or 'environment'}: {DEPRECATED[name]}"
                    for name in DEPRECATED if name in values)
    return Settings(**values, keymap=MappingProxyType(keymap), source=source, notices=notices)
