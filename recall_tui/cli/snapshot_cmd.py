"""`recall-tui snapshot --queries Q [--preset P] --out S`: freeze a query set's rankings.

Every query of the set is recalled once (clock and k pinned; each at its own `as_of`) and the
ranked ids and scores are written to S as JSON (`recall_tui.tuning.snapshot`), with the
preset, its configuration hash, the embedder and the query set's hash. `recall-tui diff` compares
two snapshots (or a snapshot and the active preset); `recall-tui gate` fails on a significant
regression against one. See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recall_tui.vault.literal import safe_print

HELP = "freeze a query set's rankings and scores (for diff and gate)"


def add_run_arguments(p: argparse.ArgumentParser, *, preset_help: str) -> None:
    """The options of a fresh run: vault, preset, embedder, k and clock."""
    from recall_tui.cli._common import positive_int

    p.add_argument("--vault", metavar="V", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--preset", metavar="P", help=preset_help)
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: the vault's active embedder, else auto)")
    p.add_argument("--k", type=positive_int, metavar="N", help="results per query (default 10)")
    p.add_argument("--now", metavar="T", help="pin the clock, ISO-8601 (default: now)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", metavar="FILE", required=True,
                   help="the query set: judged queries (as eval reads them), JSON lines without "
                        "`relevant`, or one query a line")
    p.add_argument("--out", metavar="S", required=True, help="where to write the snapshot (JSON)")
    add_run_arguments(p, preset_help="preset name or .toml path (default: the vault's active preset)")


def say(command: str, msg: str) -> None:
    safe_print(f"recall-tui {command}: {msg}", file=sys.stderr)


def open_run(command: str, args: argparse.Namespace, vault: str | None = None) -> Any | None:
    """The engine of a fresh run (the vault's active preset unless --preset), or None after
    saying why there is none."""
    from recall_tui.agent.active import resolve
    from recall_tui.cli._common import is_folder_or_say, vault_root
    from recall_tui.engine import open_engine

    root = vault_root(args.vault or vault)
    if not is_folder_or_say(f"recall-tui {command}", root):
        return None
    act = resolve(root, args.preset, args.embedder)
    try:
        return open_engine(root, preset=act.preset, embedder=act.embedder)
    except ValueError as exc:
        say(command, str(exc))
        return None


def clock(command: str, text: str | None) -> datetime | None:
    from recall_tui.cli._common import time_arg

    try:
        return time_arg(text, "--now") or datetime.now(timezone.utc)
    except ValueError as exc:
        say(command, str(exc))
        return None


def take_with(engine: Any, queries: list[Any], *, k: int, now: datetime, qfile: str = "",
              sha: str = "") -> Any:
    from recall_tui.tuning import snapshot as S

    try:
        return S.take(engine, queries, k=k, now=now, queries_file=qfile, queries_sha256=sha)
    finally:
        if engine.index is not None:
            engine.index.close()


def run(args: argparse.Namespace) -> int:
    from recall_tui.tuning import snapshot as S
    from recall_tui.tuning.metrics import GoldenError

    qfile = Path(args.queries)
    try:
        queries = S.read_query_set(qfile)
    except FileNotFoundError:
        say("snapshot", f"{qfile}: no such file")
        return 2
    except (GoldenError, UnicodeDecodeError) as exc:
        say("snapshot", str(exc))
        return 2
    if not queries:
        say("snapshot", f"{qfile}: no queries in the file")
        return 2
    out = Path(args.out)
    if not out.parent.is_dir():
        say("snapshot", f"{out}: its folder does not exist")
        return 2
    now = clock("snapshot", args.now)
    if now is None:
        return 2
    engine = open_run("snapshot", args)
    if engine is None:
        return 2
    snap = take_with(engine, queries, k=args.k or 10, now=now, qfile=str(qfile),
                     sha=S.file_sha256(qfile))
    S.save(snap, out)
    judged = sum(1 for e in snap.entries if e.relevant is not None)
    have, total = snap.coverage()
    safe_print(f"wrote {out}: {len(snap.entries)} queries ({judged} judged) under "
               f"{snap.label()}, now={snap.now}")
    safe_print(f"coverage: {total - have} of the {total} top-{snap.k} results are unjudged"
               + (" (judge them to make diff and gate see every change)" if have < total else ""))
    return 0
