"""`recall-tui diff S1 [S2]`: how the rankings of a query set moved between two snapshots.

With one snapshot, the other side is a fresh run of the snapshot's queries (its k and clock)
under the vault's active preset, or `--preset P`. Per query: the ids gained and lost in the top
k, rank moves, overlap (Jaccard of the top k, rank-biased overlap), and for judged queries
whether it got better or worse; over the judged queries, the paired test `eval` uses. The
numbers come from `recall_tui.tuning.snapshot`; this module only prints them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "compare two ranking snapshots, or one with the active preset: gains, losses, overlap"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from recall_tui.cli.snapshot_cmd import add_run_arguments

    p.add_argument("a", metavar="S1", help="a snapshot (recall-tui snapshot --out)")
    p.add_argument("b", metavar="S2", nargs="?",
                   help="a second snapshot (default: a fresh run under the active preset)")
    add_run_arguments(p, preset_help="without S2: run under this preset (default: the active one)")
    p.add_argument("--all", action="store_true", help="list unchanged queries too")
    p.add_argument("--json", action="store_true", help="print the difference as JSON")


def fresh_side(command: str, args: argparse.Namespace, snap: Any) -> Any | None:
    """A fresh snapshot of `snap`'s query set (its k and clock unless --k/--now)."""
    from recall_tui.cli.snapshot_cmd import clock, open_run, take_with
    from recall_tui.tuning import snapshot as S

    now = clock(command, args.now or snap.now or None)
    if now is None:
        return None
    engine = open_run(command, args, vault=snap.vault or None)
    if engine is None:
        return None
    return take_with(engine, S.query_set_of(snap), k=args.k or snap.k, now=now,
                     qfile=snap.queries_file, sha=snap.queries_sha256)


def load_or_say(command: str, path: str) -> Any | None:
    from recall_tui.cli.snapshot_cmd import say
    from recall_tui.tuning import snapshot as S

    try:
        return S.load(path)
    except S.SnapshotError as exc:
        say(command, str(exc))
        return None


def run(args: argparse.Namespace) -> int:
    from recall_tui.tuning import snapshot as S

    a = load_or_say("diff", args.a)
    if a is None:
        return 2
    b = load_or_say("diff", args.b) if args.b else fresh_side("diff", args, a)
    if b is None:
        return 2
    d = S.diff(a, b, k=args.k)
    if args.json:  # the Tuning pane's export writes the same text
        sys.stdout.write(S.diff_json(d))
        return 0
    render(d, show_all=args.all)
    return 0


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def render(d: Any, *, show_all: bool = False) -> None:
    from rich.table import Table

    from recall_tui.cli._out import console, esc, lit
    from recall_tui.vault.literal import literal_line

    con = console()
    s = d.summary()
    con.print(f"[bold]A[/] {esc(d.a)}   [bold]B[/] {esc(d.b)}   compared at k={d.k}")
    for note in d.notes:
        con.print(lit(f"note: {note}"))
    con.print(lit(f"{s['queries']} queries, {s['changed']} changed; mean Jaccard@{d.k} "
                  f"{_f(s['mean_jaccard'])}, mean RBO {_f(s['mean_rbo'])}; judged: "
                  f"{s['better']} better, {s['worse']} worse, {s['same']} same; "
                  f"{s['unjudged']} unjudged"))
    if d.only_a or d.only_b:
        con.print(lit(f"not compared: {len(d.only_a)} queries only in A, {len(d.only_b)} only in B"))
    if d.comparison is not None:
        t = Table(title=lit("judged queries, paired (B vs A)"), title_justify="left",
                  header_style="bold", show_edge=False)
        for col in ("metric", "A", "B", "Δ mean", "wins", "losses", "ties", "sign p", "rand. p"):
            t.add_column(col, justify="left" if col == "metric" else "right")
        for name in ("recall", "mrr", "ndcg"):
            mc = d.comparison.metrics[name]
            delta = mc.mean_delta
            t.add_row(name, _f(mc.baseline_mean), _f(mc.candidate_mean),
                      "-" if delta is None else f"{delta:+.3f}", str(mc.wins), str(mc.losses),
                      str(mc.ties), f"{mc.sign_p:.3g}", f"{mc.randomisation_p:.3g}")
        con.print(t)
    shown = 0
    for q in d.queries:
        if not (show_all or q.changed or q.verdict in ("better", "worse")):
            continue
        shown += 1
        con.print(f"[bold]line {q.line}[/] {esc(literal_line(q.query))}  {q.verdict}  "
                  f"J@{d.k} {_f(q.jaccard)}  RBO {_f(q.rbo)}")
        for mark, ids in (("+ gained", q.gained), ("- lost", q.lost)):
            if ids:
                con.print(lit(f"    {mark}: {', '.join(ids)}"))
        if q.moved:
            con.print(lit("    ~ moved: " + ", ".join(f"{i} {ra}→{rb}" for i, ra, rb in q.moved)))
    if not shown:
        con.print("no query's top k changed")
