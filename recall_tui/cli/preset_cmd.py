"""`recall-tui preset use NAME | show`: the vault's active configuration (the preset and
embedder its agent recalls with; see recall_tui/agent/active.py)."""

from __future__ import annotations

import argparse
import sys

from recall_tui.agent.active import EMBEDDERS, read_active, resolve_active, write_active
from recall_tui.cli._common import is_folder_or_say, vault_root
from recall_tui.vault.literal import safe_print

HELP = "set or show the vault's active preset and embedder (used by query, hooks, MCP)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    use = sub.add_parser("use", help="make NAME the vault's active preset")
    use.add_argument("name", help="preset name or .toml path")
    use.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    use.add_argument("--embedder", choices=EMBEDDERS, help="also set the active embedder")
    use.add_argument("--gate", metavar="BASELINE",
                     help="first run `recall-tui gate BASELINE` on NAME; activate only if it "
                          "passes (exit 1 and nothing changed when it fails)")
    from recall_tui.cli.gate_cmd import add_alpha

    add_alpha(use)
    show = sub.add_parser("show", help="print the vault's active preset and embedder")
    show.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.engine.config import load_preset

    root = vault_root(args.vault)
    if not is_folder_or_say("recall-tui preset", root):
        return 2
    if args.action == "show":
        act, warning = resolve_active(root)
        safe_print(f"preset {act.preset}  embedder {act.embedder}  ({act.source})")
        if warning:
            safe_print(f"warning: {warning}")
        return 0
    try:
        load_preset(args.name, root)
    except ValueError as exc:
        safe_print(f"recall-tui preset: {exc}", file=sys.stderr)
        return 2
    if args.gate is not None:
        from recall_tui.cli.gate_cmd import run_gate

        code = run_gate(args.gate, vault=str(root), preset=args.name,
                        embedder=args.embedder, alpha=args.alpha)
        if code != 0:
            safe_print(f"recall-tui preset: {args.name} not made active: the gate "
                       f"{'failed' if code == 1 else 'could not run'}", file=sys.stderr)
            return code
    try:
        path = write_active(root, preset=args.name, embedder=args.embedder, set_by="preset use")
    except OSError as exc:
        safe_print(f"recall-tui preset: cannot write {root / '.recall'}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    act = read_active(root)
    safe_print(f"active preset {act.preset}, embedder {act.embedder} (written to {path})")
    return 0
