"""`recall-tui gate BASELINE [--preset P]`: fail when recall got significantly worse.

Re-runs the baseline snapshot's query set (its k and clock) under the vault's active preset, or
`--preset P`, and compares query by query: exit 1 when recall@k, MRR (judged queries) or the
abstention rate ("nothing relevant" queries) is significantly worse (paired randomisation test,
p < --alpha, and a lower mean), printing the queries that got worse; exit 0 otherwise, noise
included. For a pre-commit hook or a CI job on a vault kept in git: docs/evaluation.md.
`recall-tui eval --gate BASELINE` and `recall-tui preset use NAME --gate BASELINE` run this same
gate through `run_gate`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from recall_tui.vault.literal import dump_json

if TYPE_CHECKING:
    from recall_tui.tuning.snapshot import GateResult

HELP = "exit 1 when the active preset is significantly worse than a baseline snapshot"


def _alpha(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {x}")
    return x


def add_alpha(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alpha", type=_alpha, default=0.05,
                   help="significance level of the gate's paired test (default 0.05)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from recall_tui.cli.snapshot_cmd import add_run_arguments

    p.add_argument("baseline", metavar="BASELINE", help="a snapshot (recall-tui snapshot --out)")
    add_run_arguments(p, preset_help="the preset to check (default: the vault's active one)")
    add_alpha(p)
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli.diff_cmd import fresh_side, load_or_say
    from recall_tui.tuning import snapshot as S

    base = load_or_say("gate", args.baseline)
    if base is None:
        return 2
    if args.k is not None and args.k != base.k:
        args.k = None  # the gate compares at the baseline's depth, always
    cur = fresh_side("gate", args, base)
    if cur is None:
        return 2
    res = S.gate(base, cur, alpha=args.alpha)
    if args.json:
        dump_json(res.to_dict(), indent=2)
    else:
        render(res)
    return 0 if res.passed else 1


def run_gate(baseline: str, *, vault: str | None, preset: str | None,
             embedder: str | None = None, now: str | None = None, alpha: float = 0.05,
             as_json: bool = False) -> int:
    """The gate of `recall-tui gate`, for the commands that offer it as an option (`eval
    --gate`, `preset use --gate`): 0 passed, 1 significantly worse, 2 could not run."""
    return run(argparse.Namespace(baseline=baseline, vault=vault, preset=preset,
                                  embedder=embedder, k=None, now=now, alpha=alpha,
                                  json=as_json))


def render(res: GateResult) -> None:
    from recall_tui.cli._out import console, esc, lit
    from recall_tui.tuning.snapshot import gate_lines

    con = console()
    con.print(f"baseline {esc(res.diff.a)} → current {esc(res.diff.b)}, k={res.diff.k}, "
              f"alpha={res.alpha}")
    for note in res.diff.notes:
        con.print(lit(f"note: {note}"))
    for line in gate_lines(res):
        if line.endswith("  WORSE"):
            con.print(lit(line.removesuffix("WORSE")).append("WORSE", style="bold red"))
        elif line.startswith("gate "):
            con.print("[bold green]gate passed[/]" if res.passed else "[bold red]gate failed[/]")
        else:
            con.print(lit(line))
