"""`recall-tui serve --vault V`: keep a vault warm and answer recalls over a Unix socket
(the hooks start it on demand). Logic: recall_tui/agent/service.py."""

from __future__ import annotations

import argparse
import sys

from recall_tui.vault.literal import json_text, safe_print

HELP = "keep a vault warm and answer recalls over a Unix socket (hooks use it)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--idle", type=float, default=None,
                   help="exit after this many seconds without a request (default: 1800)")
    p.add_argument("--model-idle", type=float, default=None, metavar="S",
                   help="drop the local model after this many seconds without a request; the "
                        "next recall loads it again (default: $RECALL_TUI_MODEL_IDLE or 300; "
                        "0: never)")
    p.add_argument("--no-watch", action="store_true", help="do not watch the vault for changes")
    p.add_argument("--stop", action="store_true", help="stop the vault's running service")
    p.add_argument("--status", action="store_true", help="say whether a service runs for the vault")


def run(args: argparse.Namespace) -> int:
    from recall_tui.agent import client
    from recall_tui.agent.client import DEFAULT_IDLE_S
    from recall_tui.cli._common import is_folder_or_say, vault_root

    root = vault_root(args.vault)
    if not is_folder_or_say("recall-tui serve", root):
        return 2
    if args.stop or args.status:
        try:
            ans = client.request(root, {"op": "stop" if args.stop else "ping"}, timeout=5)
        except client.ServiceUnavailable as exc:
            pid = client.loading_pid(root)  # holds the lock, does not answer: loading (or hung)
            if pid is None:
                safe_print(f"no service for {root} ({exc})")
                return 1 if args.status else 0
            if args.stop:
                import os
                import signal

                os.kill(pid, signal.SIGTERM)
                os.kill(pid, signal.SIGCONT)  # a stopped one must run to see the SIGTERM
                safe_print(f"stopped (pid {pid}, it was not answering yet: {exc})")
            else:
                safe_print(f"a service for {root} is starting or not answering (pid {pid}: {exc})")
            return 0
        safe_print("stopped" if args.stop else json_text(ans))
        return 0
    if args.idle is not None and args.idle <= 0:
        safe_print("recall-tui serve: --idle must be more than 0 seconds", file=sys.stderr)
        return 2
    from recall_tui.agent.service import RecallService

    return RecallService(root, idle_s=args.idle or DEFAULT_IDLE_S, watch=not args.no_watch,
                         model_idle_s=args.model_idle).run()



