"""`recall-tui mcp --vault V`: recall, load_memory and why_not served over MCP (stdio).
`recall-tui mcp install` prints the `mcpServers` entry that runs it, or puts it into a
Claude Code `.mcp.json` (`--write PATH`) as safely as `hook install` edits settings;
`mcp uninstall` removes it. Logic: recall_tui/agent/mcp_server.py, agent/install.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recall_tui.vault.literal import safe_print

HELP = "serve recall, load_memory and why_not to an agent over MCP (stdio)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("serve", "install", "uninstall"), default="serve",
                   help="serve (the default), or install/uninstall the entry in an MCP config")
    p.add_argument("--write", "--settings", dest="write", metavar="PATH",
                   help="install/uninstall: edit this file (e.g. .mcp.json); a numbered backup is kept")
    p.add_argument("--name", default="recall-tui", help="install/uninstall: the server's name "
                   "(default recall-tui)")
    p.add_argument("--dry-run", action="store_true",
                   help="install/uninstall with --write: print the file as it would be; write nothing")
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--preset", help="preset (default: the vault's active preset)")
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: the vault's active embedder)")
    p.add_argument("--no-watch", action="store_true", help="do not watch the vault for changes")


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import is_folder_or_say, vault_root

    root = vault_root(args.vault)
    if args.action != "serve":
        return _install(args, root)
    if not is_folder_or_say("recall-tui mcp", root):
        return 2
    if args.preset:
        from recall_tui.engine.config import load_preset

        try:
            load_preset(args.preset, root)
        except ValueError as exc:
            safe_print(f"recall-tui mcp: {exc}", file=sys.stderr)
            return 2
    from recall_tui.agent.mcp_open import VaultLoader

    # open the vault before importing the MCP SDK: it loads while the SDK imports and the
    # client's handshake runs, so the first recall finds it (nearly) ready
    loader = VaultLoader(root, args.preset, args.embedder, not args.no_watch).start()
    from recall_tui.agent.mcp_server import serve_stdio

    return serve_stdio(root, preset=args.preset, embedder=args.embedder, watch=not args.no_watch,
                       loader=loader)


def _install(args: argparse.Namespace, root: Path) -> int:
    from recall_tui.agent.install import mcp_entry, merge_mcp, remove_mcp
    from recall_tui.agent.settings_file import SettingsError, SettingsFile
    from recall_tui.cli._common import is_folder_or_say
    from recall_tui.vault.literal import json_text

    name = f"recall-tui mcp {args.action}"
    extra = [*(["--preset", args.preset] if args.preset else []),
             *(["--embedder", args.embedder] if args.embedder else []),
             *(["--no-watch"] if args.no_watch else [])]
    if args.action == "install":
        if not is_folder_or_say(name, root):
            return 2
        entry = mcp_entry(root, extra)
        if not args.write:
            print(json_text({"mcpServers": {args.name: entry}}, indent=2))
            return 0
    elif not args.write:
        safe_print(f"{name}: pass --write PATH (the file to remove the server from)", file=sys.stderr)
        return 2
    try:
        sf = SettingsFile.read(Path(args.write))
        if args.action == "install":
            merge_mcp(sf.data, args.name, entry, sf.path)
        elif not remove_mcp(sf.data, args.name, sf.path):
            safe_print(f"{args.write}: no recall-tui MCP server named {args.name!r}; nothing changed")
            return 0
        if args.dry_run:
            sys.stdout.write(sf.text())
            return 0
        if not sf.changed():
            safe_print(f"{args.write} already has this MCP server; nothing changed")
            return 0
        backup = sf.write()
    except (SettingsError, OSError) as exc:
        safe_print(f"{name}: {exc}", file=sys.stderr)
        return 2
    what = "MCP server written to" if args.action == "install" else "MCP server removed from"
    safe_print(f"{what} {args.write}" + (f" (previous file kept as {backup})" if backup else ""))
    return 0
