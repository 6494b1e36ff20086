"""`recall-tui mcp --vault V`: recall, load_memory and why_not served over MCP (stdio).
Logic: recall_tui/agent/mcp_server.py."""

from __future__ import annotations

import argparse
import sys

from recall_tui.vault.literal import safe_print

HELP = "serve recall, load_memory and why_not to an agent over MCP (stdio)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--preset", help="preset (default: the vault's active preset)")
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: the vault's active embedder)")
    p.add_argument("--no-watch", action="store_true", help="do not watch the vault for changes")


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import vault_root

    root = vault_root(args.vault)
    if not root.is_dir():
        safe_print(f"recall-tui mcp: {root}: no such vault folder", file=sys.stderr)
        return 2
    if args.preset:
        from recall_tui.engine.config import load_preset

        try:
            load_preset(args.preset, root)
        except ValueError as exc:
            safe_print(f"recall-tui mcp: {exc}", file=sys.stderr)
            return 2
    from recall_tui.agent.mcp_server import serve_stdio

    return serve_stdio(root, preset=args.preset, embedder=args.embedder, watch=not args.no_watch)
