"""Save a tuned configuration as a named preset, and list what was tuned.

The tuning pane changes knobs on a copy of the preset it started from; when the result is
worth keeping it is saved as a TOML preset in the vault's `.recall/presets/` (travels with the
vault) or the user's config folder (every vault), where `recall_tui.engine.config.load_preset` finds
it by name. The file holds the complete configuration, so it keeps meaning the same thing when
a built-in default changes later; a comment header lists the knobs that differ from the preset
it started from. Headless: no textual, no rich.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_tui.engine.config import PRESET_DIR, Config, knobs, preset_dirs
from recall_tui.vault.edit import atomic_write

#: A preset name: a file stem that is safe on every platform.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class KnobChange:
    """One knob whose value differs between two configurations."""

    path: str
    """Dotted knob path, e.g. `mmr.lam`."""
    old: Any
    """Value in the starting configuration."""
    new: Any
    """Value in the tuned configuration."""


#: Settings that are labels, not knobs: never counted as a change (save_preset replaces the
#: description, so the file said "3 knob(s) changed" where the save dialog said 2).
NOT_KNOBS = frozenset({"description"})


def changed_knobs(base: Config, config: Config) -> list[KnobChange]:
    """Every knob of `config` whose value differs from `base`, in `knobs()` order (the
    description is not a knob)."""
    old = {path: value for path, _t, value, _doc in knobs(base)}
    return [KnobChange(path, old.get(path), value)
            for path, _t, value, _doc in knobs(config)
            if old.get(path) != value and path not in NOT_KNOBS]


def preset_folder(where: str, vault_root: str | os.PathLike[str] | None = None) -> Path:
    """`vault` -> VAULT/.recall/presets, `user` -> the user's recall-tui presets folder."""
    if where == "vault":
        if vault_root is None:
            raise ValueError("saving a preset in the vault needs the vault folder")
        return Path(vault_root) / ".recall" / "presets"
    if where == "user":
        return preset_dirs(None)[-1]
    raise ValueError(f"where must be 'vault' or 'user', got {where!r}")


def save_preset(config: Config, name: str, *, where: str = "vault",
                vault_root: str | os.PathLike[str] | None = None, base: Config | None = None,
                base_name: str | None = None, description: str | None = None,
                overwrite: bool = False) -> Path:
    """Write `config` as preset `name` and return its path.

    Refuses (ValueError) a name that is not a plain file stem or that a built-in preset
    already uses (the built-in would shadow it), and (FileExistsError) an existing file unless
    `overwrite`. With `base`, the header comment lists the knobs changed from it. `description`
    (shown in preset lists) replaces the one inherited from the starting preset, which would
    otherwise describe a configuration this no longer is. The write is atomic.
    """
    if not _NAME.match(name) or name.endswith(".toml"):
        raise ValueError(f"preset name {name!r}: use letters, digits, '.', '_' or '-' (no path, no .toml)")
    if (PRESET_DIR / f"{name}.toml").is_file():
        raise ValueError(f"preset name {name!r} is a built-in preset; choose another name")
    if description is None and base_name:
        description = f"{name}: tuned from {base_name}"
    if description is not None:
        config = config.with_value("description", description)
    folder = preset_folder(where, vault_root)
    path = folder / f"{name}.toml"
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path}: a preset with this name exists (save with overwrite to replace it)")
    header = [f"# recall-tui preset {name!r}" + (f", tuned from {base_name!r}" if base_name else "")]
    if base is not None:
        changes = changed_knobs(base, config)
        header.append(f"# {len(changes)} knob(s) changed" + (":" if changes else ""))
        header += [f"#   {c.path}: {c.old!r} -> {c.new!r}" for c in changes]
    text = "\n".join(header) + "\n" + config.to_toml()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"), 0o644)
    return path
