"""Installing and uninstalling recall-tui in Claude Code's settings: the hooks
(`settings.json` `hooks`) and the MCP server (`.mcp.json` `mcpServers`). Standard library only.

Only our own entries are ever edited. A hook is ours when its command ends with the marker
`# recall-tui-hook:<vault id>` (a shell comment: the command runs the same) where the vault id
is the first 12 hex digits of the SHA-256 of the vault's absolute path; hooks written before
the marker existed are recognised by their command (`recall-tui hook EVENT --vault PATH`).
The command runs this Python with `-S` on the package's launcher file (`hook_executable`,
recall_tui/launcher.py); an entry written with an older command (the `recall-tui` script)
still runs, and the next install replaces it, being ours.
A hook sharing an entry with the user's own keeps the entry and the user's hook; another
vault's hooks are never touched. The file itself is read and written by `SettingsFile`
(order, indentation, symlink, mode, numbered backups, malformed files refused).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recall_tui.agent.hooks import EVENTS
from recall_tui.agent.settings_file import SettingsError, SettingsFile, json_kind

#: The events `hook install` writes, our event name -> Claude Code's. `stop` records weak
#: labels only (recall_tui/agent/weak.py): it injects nothing and never blocks the stop.
INSTALLED_EVENTS = {**EVENTS, "stop": "Stop"}
#: Events whose hooks take the recall options given to `install` (Stop takes only --vault).
RECALL_EVENTS = tuple(EVENTS)
MARK = "# recall-tui-hook:"
_MARK_RE = re.compile(r"#\s*recall-tui-hook:([0-9a-f]+)\s*$")
DEFAULT_TIMEOUT_S = 30


def vault_id(vault: Path) -> str:
    """The id our marker carries for a vault (its absolute path, hashed)."""
    return hashlib.sha256(os.fsencode(str(Path(vault).resolve()))).hexdigest()[:12]


def executable() -> list[str]:
    """How to run this recall-tui: the `recall-tui` script beside this Python (the same
    install), else the one on PATH, else `python -m recall_tui`."""
    here = Path(sys.executable).parent / "recall-tui"
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    found = shutil.which("recall-tui")
    return [found] if found else [sys.executable, "-m", "recall_tui"]


LAUNCHER = "launcher.py"


def hook_executable() -> list[str]:
    """How a hook runs this recall-tui: this Python without `site` (`-S`) on the package's
    launcher file (recall_tui/launcher.py: a warm hook then skips most of Python's start-up),
    for a normal install and an editable one alike; `executable()` where the launcher is not a
    file (a package imported from a zip) or there is no Python path to give."""
    import recall_tui

    launcher = Path(recall_tui.__file__).resolve().parent / LAUNCHER
    if sys.executable and launcher.is_file():
        return [sys.executable, "-S", str(launcher)]
    return executable()


def hook_argv(vault: Path, event: str, extra: Sequence[str] = ()) -> list[str]:
    """The words of one hook's command (without our marker)."""
    return [*hook_executable(), "hook", event, "--vault", str(Path(vault).resolve()), *extra]


def hook_command(vault: Path, event: str, extra: Sequence[str] = ()) -> str:
    """The shell command of one hook: every path quoted, then our marker."""
    return f"{shlex.join(hook_argv(vault, event, extra))}  {MARK}{vault_id(vault)}"


def settings_block(vault: Path, *, extra: Sequence[str] = (),
                   timeout: int = DEFAULT_TIMEOUT_S, stop: bool = True) -> dict[str, Any]:
    """The `hooks` part of Claude Code's settings for this vault, one entry an event in the
    shape Claude Code's hooks documentation shows (`{"hooks": [{"type": "command", "command":
    ..., "timeout": ...}]}`). No matcher: SessionStart runs on every source and `--sources`
    decides which inject (and `compact` re-arms the repeat window), so adding `resume` to
    `--sources` works; UserPromptSubmit and Stop take none. With `stop`, the Stop hook that
    records weak labels is included (its command takes only --vault)."""
    events = [e for e in INSTALLED_EVENTS if stop or e != "stop"]
    return {"hooks": {INSTALLED_EVENTS[e]: [{"hooks": [{
        "type": "command", "command": hook_command(vault, e, extra if e in RECALL_EVENTS else ()),
        "timeout": timeout}]}] for e in events}}


def _legacy_vault(cmd: str) -> str | None:
    """The --vault of a recall-tui hook command written without the marker, else None."""
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError:
        return None
    for i, w in enumerate(words[:-1]):
        if w != "hook" or words[i + 1] not in INSTALLED_EVENTS or i == 0:
            continue
        prev = words[i - 1]
        if not (os.path.basename(prev) == "recall-tui" or prev.endswith(f"recall_tui/{LAUNCHER}")
                or (prev == "recall_tui" and i >= 2 and words[i - 2] == "-m")):
            continue
        rest = words[i + 2:]
        if "--vault" in rest and rest.index("--vault") + 1 < len(rest):
            return rest[rest.index("--vault") + 1]
        return os.environ.get("RECALL_TUI_VAULT", "")
    return None


def is_ours(hook: Any, vid: str | None) -> bool:
    """Whether a hook object is recall-tui's (for the vault with id `vid`; any vault if None)."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    cmd = hook["command"]
    m = _MARK_RE.search(cmd)
    if m:
        return vid is None or m.group(1) == vid
    legacy = _legacy_vault(cmd)
    if legacy is None:
        return False
    return vid is None or (bool(legacy) and vault_id(Path(os.path.expanduser(legacy))) == vid)


def _hooks_of(data: dict[str, Any], path: Path, create: bool) -> dict[str, Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: its \"hooks\" value is a JSON {json_kind(hooks)}, not an object; "
                            "not changed")
    return hooks


def merge_hooks(data: dict[str, Any], block: dict[str, Any], vault: Path, path: Path) -> None:
    """Put our hooks for `vault` into `data` (a settings object), in place: an entry of ours
    is replaced where it stands; our hook inside a user's entry is replaced inside it; a new
    one is appended. Everything else stays. Raises SettingsError for a malformed event."""
    vid = vault_id(vault)
    hooks = _hooks_of(data, path, create=True)
    assert hooks is not None
    for event, entries in block["hooks"].items():
        new_entry = entries[0]
        new_hook = new_entry["hooks"][0]
        cur = hooks.get(event)
        if cur is None:
            hooks[event] = [new_entry]
            continue
        if not isinstance(cur, list):
            raise SettingsError(f"{path}: \"hooks\".\"{event}\" is a JSON {json_kind(cur)}, not an array; "
                                "not changed")
        placed = False
        out: list[Any] = []
        for entry in cur:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(inner, list) or not any(is_ours(h, vid) for h in inner):
                out.append(entry)
                continue
            if all(is_ours(h, vid) for h in inner):  # an entry of ours: replaced where it stands
                if not placed:
                    out.append(new_entry)
                    placed = True
                continue
            kept = []  # a user's entry holding our hook: theirs stay, ours is replaced in place
            for h in inner:
                if not is_ours(h, vid):
                    kept.append(h)
                elif not placed:
                    kept.append(new_hook)
                    placed = True
            out.append({**entry, "hooks": kept})
        if not placed:
            out.append(new_entry)
        hooks[event] = out
    # an event this install leaves out (Stop with --no-stop) loses this vault's hook
    left_out = [e for e in INSTALLED_EVENTS.values() if e not in block["hooks"]]
    if left_out:
        remove_hooks(data, vault, path, events=left_out)


def remove_hooks(data: dict[str, Any], vault: Path | None, path: Path,
                 events: Sequence[str] | None = None) -> int:
    """Remove our hooks (for `vault`, or every vault's when None; from every event, or only
    `events`) from `data`, in place; an entry or event list we emptied goes too. Returns how
    many hooks were removed."""
    vid = vault_id(vault) if vault is not None else None
    hooks = _hooks_of(data, path, create=False)
    if hooks is None:
        return 0
    removed = 0
    for event in list(hooks):
        if events is not None and event not in events:
            continue
        cur = hooks[event]
        if not isinstance(cur, list):
            continue
        out: list[Any] = []
        for entry in cur:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(inner, list):
                out.append(entry)
                continue
            kept = [h for h in inner if not is_ours(h, vid)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                out.append(entry if len(kept) == len(inner) else {**entry, "hooks": kept})
        if out or not cur:
            hooks[event] = out
        else:
            del hooks[event]
    if removed and not hooks:
        del data["hooks"]
    return removed


def mcp_entry(vault: Path, extra: Sequence[str] = ()) -> dict[str, Any]:
    """The `mcpServers` entry that runs `recall-tui mcp` for the vault."""
    exe = executable()
    return {"command": exe[0], "args": [*exe[1:], "mcp", "--vault", str(Path(vault).resolve()), *extra]}


def merge_mcp(data: dict[str, Any], name: str, entry: dict[str, Any], path: Path) -> None:
    servers = data.get("mcpServers")
    if servers is None:
        servers = data["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise SettingsError(f"{path}: its \"mcpServers\" value is a JSON {json_kind(servers)}, not an "
                            "object; not changed")
    old = servers.get(name)
    if old is not None and not _is_our_mcp(old):
        raise SettingsError(f"{path}: an MCP server named {name!r} is already there and is not "
                            "recall-tui's; pass --name to choose another name; not changed")
    servers[name] = entry


def remove_mcp(data: dict[str, Any], name: str, path: Path) -> int:
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers or not _is_our_mcp(servers[name]):
        return 0
    del servers[name]
    return 1


def _is_our_mcp(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return "mcp" in words and any(os.path.basename(w) == "recall-tui" or w == "recall_tui" for w in words)


def write_plugin(folder: Path, vault: Path, block: dict[str, Any], mcp_extra: Sequence[str] = ()) -> list[str]:
    """A Claude Code plugin folder for the vault: `.claude-plugin/plugin.json`,
    `hooks/hooks.json` (the same hooks as `settings_block`) and `.mcp.json` (the MCP server).
    Files already there are replaced only when they are ours (a recall-tui plugin), each after
    a numbered backup. Returns the files written, relative to the folder."""
    from recall_tui import __version__

    manifest = {"name": "recall-tui", "version": __version__,
                "description": f"MemoryVault recall for {Path(vault).resolve()}: always-load "
                               "memories at session start, relevant ones with each prompt, and "
                               "the recall/load_memory/why_not MCP tools"}
    hooks = {"description": "recall-tui: inject MemoryVault memories", **block}
    files = {".claude-plugin/plugin.json": manifest, "hooks/hooks.json": hooks,
             ".mcp.json": {"mcpServers": {"recall-tui": mcp_entry(vault, mcp_extra)}}}
    man = Path(folder) / ".claude-plugin" / "plugin.json"
    if man.exists():
        old = SettingsFile.read(man)
        if old.data.get("name") != "recall-tui":
            raise SettingsError(f"{man}: a plugin named {old.data.get('name')!r} is there, not "
                                "recall-tui's; not changed")
    written = []
    for rel, data in files.items():
        sf = SettingsFile.read(Path(folder) / rel)
        sf.data = data
        if sf.changed():
            sf.write()
            written.append(rel)
    return written


__all__ = ["INSTALLED_EVENTS", "hook_argv", "hook_command", "is_ours", "mcp_entry", "merge_hooks",
           "merge_mcp", "remove_hooks", "remove_mcp", "settings_block", "vault_id", "write_plugin"]
