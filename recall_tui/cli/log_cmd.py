"""`recall-tui log [--vault V] [--json] [--session S] [--since T]`: the recalls served to
agents (hooks and MCP), newest first, from the flight recorder (recall_tui/agent/log.py)."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timedelta, timezone

from recall_tui.vault.literal import json_text, literal_line, safe_print

HELP = "list the recalls served to agents (hooks, MCP), newest first"

_REL = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_arg(text: str) -> datetime:
    """argparse type: an ISO-8601 time, or an age such as 30m, 2h, 7d."""
    m = _REL.match(text.strip())
    if m:
        return datetime.now(timezone.utc) - timedelta(seconds=float(m.group(1)) * _UNIT[m.group(2)])
    from recall_tui.cli._common import iso_time

    try:
        return iso_time(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"not an ISO-8601 time nor an age like 30m, 2h, 7d: {text!r}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--json", action="store_true", help="one JSON object per recall, full trace included")
    p.add_argument("--session", help="only this session id (a prefix is enough)")
    p.add_argument("--since", type=since_arg, help="only recalls since this time (ISO-8601 or 30m, 2h, 7d)")
    p.add_argument("--limit", type=int, default=None, help="at most this many (newest first)")
    p.add_argument("--follow", "-f", action="store_true",
                   help="then keep printing new recalls as agents get them (Ctrl-C stops)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.agent.log import prune, read_agent_log
    from recall_tui.cli._common import vault_root

    root = vault_root(args.vault)
    if not root.is_dir():
        safe_print(f"recall-tui log: {root}: no such vault folder", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        safe_print("recall-tui log: --limit must be at least 1", file=sys.stderr)
        return 2
    prune(root)
    from recall_tui.agent.log import LogTail

    tail = LogTail(root) if args.follow else None  # before reading: nothing falls in between
    recs = read_agent_log(root, session=args.session, since=args.since, limit=args.limit)
    seen = {r.id for r in recs}
    if not recs and not args.json:
        safe_print(f"no agent recalls recorded in {root / '.recall' / 'agent'}")
    _show(recs, args.json)
    if tail is None:
        return 0
    import time

    while True:
        new = [r for r in tail.poll() if r.id not in seen
               and (not args.session or r.session_id.startswith(args.session))]
        if new:
            _show(new, args.json)  # oldest first, below what is already shown
        time.sleep(0.5)


def _show(recs, as_json: bool) -> None:
    if as_json:
        for r in recs:
            sys.stdout.write(json_text(r.to_dict()) + "\n")
        sys.stdout.flush()
        return
    for r in recs:
        what = r.prompt if r.prompt else (f"source={r.source}" if r.source else "")
        ids = ", ".join(r.injected_ids) or "-"
        more = f" (+{len(r.left_out_ids)} left out)" if r.left_out_ids else ""
        skipped = f"  skipped: {r.skipped}" if r.skipped else ""
        safe_print(literal_line(f"{r.time}  {r.id}  {r.served_by}/{r.event}  session {r.session_id[:12] or '-'}  "
                       f"{r.preset}/{r.embedder}  {r.ms:.0f} ms  [{r.path}]"))
        safe_print("    " + literal_line(what, 200))
        safe_print(literal_line(f"    -> {ids}{more}{skipped}"))
    sys.stdout.flush()
