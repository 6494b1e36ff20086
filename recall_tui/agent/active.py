"""The vault's active configuration: the preset and embedder its agent recalls with.

One small JSON file, `VAULT/.recall/active.json`, written atomically:

    {"preset": "memoryvault", "embedder": "local", "set_by": "preset use", "updated": "...Z",
     "log": {"enabled": true, "max_mb": 20, "max_days": 30}}

`recall-tui preset use NAME` and the TUI's `S` (save preset) write it; `query`, the hooks,
the recall service and the MCP server read it unless a flag overrides it, so the agent's
ranking is the one the TUI shows. Without the file the defaults are `default` / `auto`.

Imports nothing but the standard library: the hook's client path reads it.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from recall_tui.vault.recalldir import keep_out_of_git

#: The file under the vault holding the active configuration.
ACTIVE_FILE = Path(".recall") / "active.json"
DEFAULT_PRESET = "default"
DEFAULT_EMBEDDER = "auto"
EMBEDDERS = ("auto", "local", "ollama", "none")


class Active(NamedTuple):
    """What `read_active` returns (a plain 3-tuple to callers that unpack it)."""

    preset: str
    embedder: str
    source: str
    """Where the values came from: the file's path, or "default" when there is none."""


def active_path(vault: str | os.PathLike) -> Path:
    return Path(vault) / ACTIVE_FILE


def read_active_data(vault: str | os.PathLike) -> dict[str, Any]:
    """The whole file as a dict ({} when missing or unreadable: never raises)."""
    try:
        data = json.loads(active_path(vault).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_active_set(vault: str | os.PathLike) -> tuple[str | None, str | None]:
    """(preset, embedder) as far as the vault's file sets them validly, None for each it does
    not (missing file, missing key, empty preset, unknown embedder). Never raises."""
    data = read_active_data(vault)
    preset = data.get("preset")
    embedder = data.get("embedder")
    if not isinstance(preset, str) or not preset:
        preset = None
    if embedder not in EMBEDDERS:
        embedder = None
    return preset, embedder


def read_active(vault: str | os.PathLike) -> Active:
    """(preset, embedder, source) of the vault. Never raises: a missing or broken file gives
    the defaults with source "default"."""
    preset, embedder = read_active_set(vault)
    if preset is None and embedder is None:
        return Active(DEFAULT_PRESET, DEFAULT_EMBEDDER, "default")
    return Active(preset or DEFAULT_PRESET, embedder or DEFAULT_EMBEDDER,
                  str(active_path(vault)))


def write_active(vault: str | os.PathLike, *, preset: str | None = None,
                 embedder: str | None = None, set_by: str = "", **extra: Any) -> Path:
    """Set the vault's active preset and/or embedder (None keeps what is there), plus any other
    top-level keys given (e.g. `log={...}`). Atomic: a temp file in `.recall/` then a rename,
    so a reader sees the old file or the new one, never half of one. Raises OSError when
    `.recall/` cannot be written and ValueError for an unknown embedder."""
    if embedder is not None and embedder not in EMBEDDERS:
        raise ValueError(f"unknown embedder {embedder!r} (choose from {', '.join(EMBEDDERS)})")
    path = active_path(vault)
    data = read_active_data(vault)
    if preset is not None:
        data["preset"] = preset
    if embedder is not None:
        data["embedder"] = embedder
    data.update(extra)
    data["set_by"] = set_by
    data["updated"] = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    path.parent.mkdir(parents=True, exist_ok=True)
    keep_out_of_git(path.parent)  # .recall/ never goes into the vault's git
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".active-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def resolve(vault: str | os.PathLike, preset: str | None = None,
            embedder: str | None = None) -> Active:
    """The active configuration with explicit flags taking precedence; source "flag" when any
    flag was given."""
    act = read_active(vault)
    if preset is None and embedder is None:
        return act
    return Active(preset or act.preset, embedder or act.embedder, "flag")


__all__ = ["ACTIVE_FILE", "Active", "active_path", "read_active", "read_active_data",
           "resolve", "write_active"]
