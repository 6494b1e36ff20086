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

import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import tomllib

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


def preset_dirs(vault: str | os.PathLike | None) -> list[Path]:
    """Where a preset name is looked up, in order: the package's presets, the vault's
    `.recall/presets/`, the user's config folder. Mirrors `recall_tui.engine.config.preset_dirs`
    (a test keeps the two equal) without importing the engine: the hook's client path uses it."""
    dirs = [Path(__file__).resolve().parent.parent / "presets"]
    if vault is not None:
        dirs.append(Path(vault) / ".recall" / "presets")
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs.append(Path(xdg) / "recall-tui" / "presets")
    return dirs


def _preset_file(vault: str | os.PathLike, name: str) -> Path | None:
    p = Path(name)
    if p.suffix == ".toml":
        return p if p.is_file() else None
    for d in preset_dirs(vault):
        cand = d / f"{name}.toml"
        if cand.is_file():
            return cand
    return None


def resolve_active(vault: str | os.PathLike, preset: str | None = None,
                   embedder: str | None = None) -> tuple[Active, str]:
    """`resolve()`, with the vault's active preset checked: when `.recall/active.json` names a
    preset that no longer exists (deleted, renamed), the configuration falls back to `default`
    and the second value is the warning to show (the log entry, `preset show`, the hook's
    stderr, the TUI). "" when all is well. A preset given as a flag is not checked here (the
    command that takes the flag refuses an unknown one). Never raises."""
    act = resolve(vault, preset, embedder)
    if preset is not None or act.preset == DEFAULT_PRESET or _preset_file(vault, act.preset):
        return act, ""
    warning = (f"active preset {act.preset!r} (set in {active_path(vault)}) not found; "
               f"recalling with {DEFAULT_PRESET!r}")
    return Active(DEFAULT_PRESET, act.embedder, act.source), warning


def _file_sig(p: Path) -> tuple[int, int, int] | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class ConfigWatch:
    """Notices when the vault's active configuration changes *in content*: `.recall/active.json`
    and the file(s) of the preset it resolves to (following `extends`), not only the name.
    `changed()` is cheap when nothing changed: it stats the files it depends on (and the places
    a preset of that name could appear), and hashes them again only when a stat differs.

    `preset`/`embedder` are flags that override the file, as in `resolve()`."""

    def __init__(self, vault: str | os.PathLike, preset: str | None = None,
                 embedder: str | None = None):
        self.vault = Path(vault)
        self.flags = (preset, embedder)
        self.digest = ""
        self._sigs: dict[Path, tuple[int, int, int] | None] = {}
        self.digest = self._compute()

    def _depends_on(self) -> list[Path]:
        """Every file whose change may change the configuration (existing or not)."""
        paths = [active_path(self.vault)]
        act, _ = resolve_active(self.vault, *self.flags)
        seen: set[str] = set()
        name: str | None = act.preset
        while name and name not in seen:
            seen.add(name)
            if Path(name).suffix == ".toml":
                paths.append(Path(name))
            else:
                paths.extend(d / f"{name}.toml" for d in preset_dirs(self.vault))
            f = _preset_file(self.vault, name)
            try:
                parent = tomllib.loads(f.read_text(encoding="utf-8")).get("extends") if f else None
            except (OSError, ValueError):
                parent = None
            name = parent if isinstance(parent, str) else None
        return paths

    def _compute(self) -> str:
        h = hashlib.sha256()
        paths = self._depends_on()
        self._sigs = {p: _file_sig(p) for p in paths}
        for p in paths:
            h.update(str(p).encode("utf-8", "surrogateescape") + b"\0")
            try:
                h.update(p.read_bytes())
            except OSError:
                h.update(b"\0missing")
            h.update(b"\0")
        return h.hexdigest()

    def changed(self) -> bool:
        """True (once) when the configuration's content changed since the last call."""
        if all(_file_sig(p) == sig for p, sig in self._sigs.items()):
            return False
        new = self._compute()
        if new == self.digest:
            return False
        self.digest = new
        return True


__all__ = ["ACTIVE_FILE", "Active", "ConfigWatch", "active_path", "preset_dirs", "read_active",
           "read_active_data", "resolve", "resolve_active", "write_active"]
