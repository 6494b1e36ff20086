"""`recall-tui check [VAULT] [--json]`: read a vault, print what it holds and every problem.

Meant for people and CI alike: the summary says at a glance whether the vault looks like what
the agent meant to write (types, roles, chains, entities, digests, transcripts), and the
problem list gives `path:line: reason` lines an editor can jump to. Exit status: 0 clean,
1 when any problem (error or warning) was found, 2 when there is no vault to read.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from recall_tui.cli._common import read_vault_or_say
from recall_tui.cli._out import console, lit
from recall_tui.vault.literal import dump_json, literal
from recall_tui.vault.model import MEMORY_TYPES, STATUSES, Role, Vault
from recall_tui.vault.reader import DIGEST_PERIODS

HELP = "read a vault, print a summary and every problem; exit 1 on problems"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", nargs="?", default=".", help="the vault folder (default: .)")
    p.add_argument("--json", action="store_true", help="print the summary and problems as JSON")


def summarise(vault: Vault, read_ms: float) -> dict[str, Any]:
    """Everything `check` reports, as plain data (the JSON output is exactly this)."""
    mems = list(vault.memories.values())
    by_type = Counter(m.type for m in mems)
    by_role = Counter(m.role.value for m in mems)
    by_status = Counter(m.status for m in mems)
    lengths = Counter(len(c.ids) for c in vault.chains)
    longest = max((len(c.ids) for c in vault.chains), default=0)
    topic_keys = Counter(m.topic_key for m in mems if m.topic_key)
    digests: dict[str, dict[str, int]] = {}
    for period in DIGEST_PERIODS:
        paras = [d for d in vault.digests if d.period == period]
        digests[period] = {"files": len({d.path for d in paras}), "paragraphs": len(paras)}
    return {
        "vault": vault.root,
        "read_ms": round(read_ms, 1),
        "memories": {
            "total": len(mems),
            "by_type": {t: by_type[t] for t in MEMORY_TYPES if by_type[t]},
            "by_role": {r.value: by_role[r.value] for r in Role if by_role[r.value]},
            "by_status": {s: by_status[s] for s in STATUSES if by_status[s]},
        },
        "chains": {
            "count": len(vault.chains),
            "lengths": {str(n): lengths[n] for n in sorted(lengths)},
            "longest": [list(c.ids) for c in vault.chains if len(c.ids) == longest],
        },
        "entities": len(vault.graph.entities),
        "edges": len(vault.graph.edges),
        "related_via_links": sum(len(m.related_via) for m in mems),
        "topic_keys": {"distinct": len(topic_keys), "memories": sum(topic_keys.values())},
        "digests": digests,
        "sessions": len({t.session_id for t in vault.turns}),
        "turns": len(vault.turns),
        "problems": {
            "errors": sum(p.severity == "error" for p in vault.problems),
            "warnings": sum(p.severity != "error" for p in vault.problems),
            "items": [
                {"path": p.path, "line": p.line, "reason": p.reason, "severity": p.severity}
                for p in vault.problems
            ],
        },
    }


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"


def _print_human(s: dict[str, Any], console: Console) -> None:
    table = Table(title=lit(f"vault {s['vault']}"), show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("count", justify="right")
    table.add_column("detail", overflow="fold")
    m = s["memories"]
    table.add_row("memories", str(m["total"]), f"read in {s['read_ms']:.0f} ms")
    table.add_row("  by type", "", _counts(m["by_type"]))
    table.add_row("  by folder role", "", _counts(m["by_role"]))
    table.add_row("  by status", "", _counts(m["by_status"]))
    c = s["chains"]
    lengths = ", ".join(f"{k} of length {n}" for n, k in c["lengths"].items()) or "-"
    table.add_row("supersession chains", str(c["count"]), lengths)
    for ids in c["longest"]:
        table.add_row("  longest", str(len(ids)), lit(" -> ".join(ids)))
    table.add_row("entities", str(s["entities"]), f"{s['edges']} edges")
    table.add_row("related_via links", str(s["related_via_links"]), "")
    t = s["topic_keys"]
    table.add_row("topic keys", str(t["distinct"]), f"on {t['memories']} memories")
    d = s["digests"]
    table.add_row(
        "digest paragraphs",
        str(sum(p["paragraphs"] for p in d.values())),
        ", ".join(
            f"{k} {v['paragraphs']} in {v['files']} files" for k, v in d.items() if v["files"]
        )
        or "-",
    )
    table.add_row("sessions", str(s["sessions"]), f"{s['turns']} turns")
    console.print(table)
    p = s["problems"]
    if not p["items"]:
        console.print("no problems")
        return
    console.print(
        Text(f"{p['errors']} errors, {p['warnings']} warnings:", style="bold red"), highlight=False
    )
    for item in p["items"]:
        where = f"{item['path']}:{item['line']}" if item["line"] else item["path"]
        mark = "warning: " if item["severity"] != "error" else ""
        style = "yellow" if mark else "red"
        line = Text(literal(f"{where}: "))
        line.append(literal(mark + item["reason"]), style=style)
        console.print(line, highlight=False, soft_wrap=True)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    vault = read_vault_or_say("check", args.vault)
    if vault is None:
        return 2
    summary = summarise(vault, (time.perf_counter() - start) * 1000)
    if args.json:
        dump_json(summary, indent=2)
    else:
        _print_human(summary, console())
    return 1 if vault.problems else 0
