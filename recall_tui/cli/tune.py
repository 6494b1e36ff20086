"""`recall-tui tune --vault V [--queries Q] [--vault V2 [--queries Q2]] [--base P] [--budget N]
[--folds F] [--seed S] [--k N] [--knobs GLOB[,GLOB...]] [--now T] [--save NAME] [--json]`.

Searches the pipeline's knobs with k-fold cross-validation over every given vault
(`recall_tui.tuning.tune`) and prints the held-out figures per fold, their mean and a paired
test against the base, then the configuration chosen on all queries (in-sample, labelled so)
and the best configurations tried. `--knobs` restricts the search to the knobs whose dotted
names match the glob patterns (`fuse.*`, `vector.threshold`). `--save NAME` writes the chosen configuration as a preset.
A progress bar goes to stderr. See docs/tuning.md.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recall_tui.vault.literal import dump_json, literal_line, safe_print

HELP = "search knobs by cross-validation on judged vaults; save the result as a preset"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from recall_tui.cli._common import positive_int

    p.add_argument("--vault", action="append", default=[], metavar="V",
                   help="a judged vault folder; repeat for several (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--queries", action="append", default=[], metavar="FILE",
                   help="judged queries of the vault given at the same position "
                        "(default: "
                        "VAULT/.recall/golden.jsonl, the TUI's judgements, when it exists, else "
                        "VAULT/golden.jsonl)")
    p.add_argument("--base", default="default", metavar="PRESET",
                   help="preset to start from and compare with (default: default)")
    p.add_argument("--budget", type=positive_int, default=80, metavar="N",
                   help="configurations in the search pool (default 80)")
    p.add_argument("--folds", type=int, default=5, metavar="F", help="cross-validation folds (default 5)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the pool and the folds (default 0)")
    p.add_argument("--k", type=positive_int, default=10, metavar="N",
                   help="cut-off of recall@k and MRR (default 10)")
    p.add_argument("--knobs", action="append", default=[], metavar="GLOB[,GLOB...]",
                   help="search only the knobs whose dotted names match a glob, e.g. 'fuse.*' "
                        "or vector.threshold; repeatable (default: every knob)")
    p.add_argument("--now", metavar="T", help="pin the current time, ISO-8601 (default: now)")
    p.add_argument("--embedder", default="auto", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: auto)")
    p.add_argument("--save", metavar="NAME", help="save the chosen configuration as preset NAME")
    p.add_argument("--where", default="vault", choices=("vault", "user"),
                   help="save into the first vault's .recall/presets (default) or the user's presets")
    p.add_argument("--overwrite", action="store_true", help="replace an existing preset NAME")
    p.add_argument("--top", type=positive_int, default=5, metavar="N",
                   help="rows of the best-configurations table (default 5)")
    p.add_argument("--off-topic-weight", type=float, default=None, metavar="W",
                   help="weight 0..1 of the off-topic queries' quiet (1 - hits / k) in the "
                        "objective (default 0.25)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _err(msg: str) -> None:
    safe_print(f"recall-tui tune: {msg}", file=sys.stderr)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import is_folder_or_say, read_golden_or_say, time_arg, vault_root

    roots = [vault_root(v) for v in args.vault] or [vault_root(None)]
    if args.queries and len(args.queries) != len(roots):
        _err(f"give one --queries per --vault ({len(roots)} vault(s), {len(args.queries)} --queries)")
        return 2
    if args.folds < 2:
        _err("--folds must be at least 2")
        return 2
    for r in roots:
        if not is_folder_or_say("recall-tui tune", r):
            return 2
    try:
        now = time_arg(args.now, "--now") or datetime.now(timezone.utc)
    except ValueError as exc:
        _err(str(exc))
        return 2
    from recall_tui.tuning.golden import default_queries_file

    qfiles = [Path(q) for q in args.queries] or [default_queries_file(r) for r in roots]
    golden = []
    for qf in qfiles:
        g = read_golden_or_say("tune", qf, given=bool(args.queries))
        if g is None:
            return 2
        golden.append(g)

    from recall_tui.engine import Cancelled, open_engine
    from recall_tui.engine.config import load_preset
    from recall_tui.tuning.tune import TuneVault, tune
    from recall_tui.tuning.tune_space import knob_patterns, restrict, search_space

    try:
        base = load_preset(args.base, roots[0])
        args.knobs = knob_patterns(args.knobs)
        restrict(search_space(base), args.knobs)  # a pattern matching nothing: before any work
    except ValueError as exc:
        _err(str(exc))
        return 2
    base_name = Path(args.base).stem if args.base.endswith(".toml") else args.base
    labels = _labels(roots)
    engines = []
    try:
        for r in roots:
            engines.append(open_engine(r, preset=args.base, embedder=args.embedder, config=base))
        vaults = [TuneVault(e, g, lab) for e, g, lab in zip(engines, golden, labels, strict=True)]
        try:
            result = _run_with_progress(tune, vaults, base, base_name, args, now)
        except ValueError as exc:
            _err(str(exc))
            return 2
        except Cancelled:
            return 130
    finally:
        for e in engines:
            if e.index is not None:
                e.index.close()

    saved = None
    if args.save:
        from recall_tui.tuning.presets_io import save_preset

        try:
            saved = save_preset(result.best, args.save, where=args.where, vault_root=roots[0],
                                base=base, base_name=base_name, overwrite=args.overwrite)
        except (ValueError, FileExistsError) as exc:
            _err(str(exc))
            return 2
    if args.json:
        doc = result.to_json()
        doc["now"] = now.isoformat()
        doc["saved"] = str(saved) if saved else None
        dump_json(doc, indent=2)
        return 0
    _render(result, args, now, saved)
    return 0


def _labels(roots: list[Path]) -> list[str]:
    """Folder names, made unique with a number when two vaults share one."""
    out: list[str] = []
    for r in roots:
        name = r.resolve().name or str(r)
        label, n = name, 2
        while label in out:
            label, n = f"{name}#{n}", n + 1
        out.append(label)
    return out


def _run_with_progress(tune, vaults, base, base_name, args, now):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from recall_tui.cli._out import console

    con = console(stderr=True)
    with Progress(TextColumn("tuning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}", markup=False), console=con, transient=True,
                  disable=not con.is_terminal) as bar:
        task = bar.add_task("", total=None)

        def progress(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=literal_line(what, 60))

        from recall_tui.tuning.tune import OFF_TOPIC_WEIGHT

        weight = OFF_TOPIC_WEIGHT if args.off_topic_weight is None else args.off_topic_weight
        return tune(vaults, base, base_name=base_name, budget=args.budget, folds=args.folds,
                    seed=args.seed, k=args.k, now=now, knobs=args.knobs, progress=progress,
                    off_topic_weight=weight)


def _render(result: Any, args: argparse.Namespace, now: datetime, saved: Path | None) -> None:
    from rich.table import Table

    from recall_tui.cli._out import console, lit
    from recall_tui.tuning.tune_space import describe

    con = console()
    if not con.is_terminal:  # a log or a file: wide enough that no table wraps
        con.width = 120
    k = result.k
    nq = sum(v["scored"] for v in result.vaults)
    con.print(lit(
        f"tuned from {result.base_name} on {len(result.vaults)} vault(s), {nq} judged queries, "
        f"{len(result.folds)} folds, seed {result.seed}, budget {result.budget} "
        f"({result.evaluated} configurations run), k={k}, now={now.isoformat()}"))
    for v in result.vaults:
        skip = f", {v['skipped']} without a relevant id left out" if v["skipped"] else ""
        con.print(lit(f"  {v['label']}: {v['scored']} queries{skip}"))
    if result.knobs:
        con.print(lit(f"knobs searched (--knobs {','.join(result.knobs)}): "
                      f"{', '.join(result.searched)}"))
    else:
        con.print(lit("knobs searched: all"))
    w = result.off_topic_weight
    con.print(lit(f"objective: mean over vaults of (1 - {w:g}) x (recall@{k} + MRR) / 2 on-topic "
                  f"+ {w:g} x (1 - hits / k) off-topic"))
    held, base_off = result.off_topic.get("heldout", {}), result.off_topic.get("base", {})
    if held.get("queries"):
        con.print(lit(f"off-topic queries: {held['queries']}; abstained held-out "
                      f"{held['abstained']} (base {base_off['abstained']}), mean injected "
                      f"held-out {_fmt(held['mean_injected'])} (base {_fmt(base_off['mean_injected'])})"))

    t = Table(title="held-out figures per fold (chosen on the other folds)", title_justify="left",
              header_style="bold", show_edge=False)
    for col in ("fold", "train", "test", f"R@{k} base", f"R@{k} tuned", "MRR base", "MRR tuned"):
        t.add_column(col, justify="right")
    for f in result.folds:
        t.add_row(str(f.index), str(f.train), str(f.test), _fmt(f.base["recall"]),
                  _fmt(f.heldout["recall"]), _fmt(f.base["mrr"]), _fmt(f.heldout["mrr"]))
    fm, fb = result.fold_mean, result.fold_mean_base
    t.add_row("mean", "", "", _fmt(fb["recall"]), _fmt(fm["recall"]), _fmt(fb["mrr"]),
              _fmt(fm["mrr"]))
    con.print(t)
    con.print(lit("chosen on the training folds:"))
    for f in result.folds:
        con.print(lit(f"  fold {f.index}: {describe(f.changes)}"))

    ct = Table(title=lit(f"held-out vs base {result.base_name!r}, paired per query (each query "
                         "held out once)"), title_justify="left", header_style="bold", show_edge=False)
    for col in ("vault", "metric", "base", "tuned", "Δ mean", "wins", "losses", "ties",
                "sign p", "rand. p"):
        ct.add_column(col, justify="left" if col in ("vault", "metric") else "right")
    rows = [("all", result.comparison)]
    if len(result.vaults) > 1:
        rows += [(lab, d["comparison"]) for lab, d in result.per_vault.items()]
    for lab, c in rows:
        for name in ("recall", "mrr", "ndcg"):
            mc = c.metrics[name]
            d = mc.mean_delta
            ct.add_row(lit(lab), name, _fmt(mc.baseline_mean), _fmt(mc.candidate_mean),
                       "-" if d is None else f"{d:+.3f}", str(mc.wins), str(mc.losses),
                       str(mc.ties), f"{mc.sign_p:.3g}", f"{mc.randomisation_p:.3g}")
    con.print(ct)

    ins, insb = result.insample, result.insample_base
    con.print(lit(f"chosen on all queries: {describe(result.changes)}"))
    con.print(lit(f"  in-sample (the queries chose it; the held-out figures above are the honest "
                   f"ones): recall@{k} {_fmt(insb['recall'])} -> {_fmt(ins['recall'])}, "
                   f"MRR {_fmt(insb['mrr'])} -> {_fmt(ins['mrr'])}"))
    bt = Table(title="best configurations tried (in-sample, all queries)", title_justify="left",
               header_style="bold", show_edge=False)
    for col in ("#", "objective", f"R@{k}", "MRR", "changes"):
        bt.add_column(col, justify="left" if col == "changes" else "right", overflow="fold")
    for i, c in enumerate(result.leaderboard[: args.top], 1):
        bt.add_row(str(i), f"{c.objective:.3f}", _fmt(c.means["recall"]), _fmt(c.means["mrr"]),
                   lit(describe(c.changes)))
    con.print(bt)
    if saved is not None:
        con.print(lit(f"saved preset {args.save!r}: {saved}"))
