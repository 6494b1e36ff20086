"""`recall-tui synth --n N OUT [--seed S]`: write a deterministic synthetic vault."""

from __future__ import annotations

import argparse
import sys

from recall_tui.vault.literal import safe_print

HELP = "write a deterministic synthetic vault of N memories"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT", help="folder to write (must not exist or be empty)")
    p.add_argument("--n", type=int, required=True, metavar="N", help="number of memories")
    p.add_argument("--turns", type=int, default=0, metavar="T",
                   help="also write T raw transcript turns as session logs (sessions/turns-*.jsonl, "
                        "200 a session), for the turn channel at scale (default 0)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="random seed; the same N and seed give byte-identical files (default 0)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.diagnostics.synth import write_synth_vault

    if args.n < 1:
        safe_print("recall-tui synth: --n must be at least 1", file=sys.stderr)
        return 2
    if args.turns < 0:
        safe_print("recall-tui synth: --turns must be 0 or more", file=sys.stderr)
        return 2
    try:
        r = write_synth_vault(args.out, args.n, args.seed, turns=args.turns)
    except (FileExistsError, NotADirectoryError, PermissionError) as exc:
        safe_print(f"recall-tui synth: {exc}", file=sys.stderr)
        return 2
    safe_print(
        f"wrote {r.memories} memories in {r.folders} folders to {r.root} in {r.seconds:.1f} s: "
        f"{r.entities} entities, {r.chains} supersessions, {r.digests} digests, "
        f"{r.sessions} sessions ({r.turns} raw turns), {r.queries} judged queries in queries.jsonl (seed {args.seed})"
    )
    return 0
