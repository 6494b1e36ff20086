"""`recall-tui bench`: benchmark the pipeline per stage, the index, memory and cold start.

With `--vault` it measures that vault; without, synthetic vaults of each `--sizes` (written
once by `recall_tui.diagnostics.synth` into the cache folder and reused). Each vault is measured in a fresh
process. Prints a table; `--out` also writes the full JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from recall_tui.cli._common import is_folder_or_say, positive_int
from recall_tui.vault.literal import safe_print

HELP = "benchmark the pipeline, the index and the UI"


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1000,10000: {text!r}") from None
    if not sizes or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("every size must be at least 1")
    return sizes


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="benchmark this vault instead of synthetic ones")
    p.add_argument("--queries", metavar="F",
                   help="queries (JSONL with a `query` key, or one per line); default: the "
                        "vault's queries.jsonl or golden.jsonl")
    p.add_argument("--runs", type=positive_int, default=3, metavar="N",
                   help="timed passes over the queries (default: 3)")
    p.add_argument("--max-queries", type=positive_int, metavar="Q",
                   help="use only the first Q queries (default: all of them)")
    p.add_argument("--sizes", type=_sizes, default=[1000, 10000, 100000],
                   help="synthetic vault sizes (default: 1000,10000,100000)")
    p.add_argument("--embedder", choices=("auto", "local", "standin"), default="auto",
                   help="local = the real MiniLM model; standin = hash-seeded random unit "
                        "vectors (dim 384, not semantic); auto = local for --vault and up to "
                        "1000 memories, stand-in above (default)")
    p.add_argument("--preset", default="default", help="preset to run (default: default)")
    p.add_argument("--out", metavar="FILE.json", help="also write the full results as JSON")
    p.add_argument("--stages", action="store_true",
                   help="print every stage's p50 and p95 (the JSON always has them)")
    p.add_argument("--cold-vault", metavar="V",
                   help="vault for the cold-start figure (default: --vault, else ./sample-vault "
                        "when present)")
    p.add_argument("--no-cold-start", action="store_true", help="skip the cold-start figure")
    p.add_argument("--cold-start-only", action="store_true",
                   help="measure only the cold start (no vault benchmark)")
    p.add_argument("--no-oracles", action="store_true",
                   help="skip the rank_bm25 and numpy comparisons")
    p.add_argument("--tui", action="store_true",
                   help="measure only keystroke to painted results in the UI (Textual's test "
                        "driver), on --vault or each --sizes synthetic vault")
    p.add_argument("--first-open-sizes", type=_sizes, default=[], metavar="SIZES",
                   help="also open synthetic vaults of these sizes for the first time with the "
                        "real model and time the first keyword result (e.g. 10000)")
    p.add_argument("--hook", action="store_true",
                   help="measure only `hook prompt-submit` as Claude Code runs it (whole process), "
                        "warm service, in-process and a hung service, on --vault (default "
                        "./sample-vault)")
    p.add_argument("--hook-baseline", metavar="SRC",
                   help="with --hook: also time warm hooks run from another copy of the package "
                        "(SRC holds its recall_tui/), alternating with this one, for a ratio")
    p.add_argument("--turns-per-memory", type=float, default=0.0, metavar="R",
                   help="give each synthetic vault round(size x R) raw turns in session logs "
                        "(e.g. 10: 100k memories + 1M turns); the turn channel is then timed "
                        "beside the others (default: 0, no turns)")
    p.add_argument("--keep-index", metavar="DIR",
                   help="keep each vault's index in DIR and use it again on the next run "
                        "(one file per vault and embedder): a 1M-turn vault's index is built "
                        "once for the engine bench and then `--tui` (the build figure of a "
                        "run that found it says `reused`)")
    p.add_argument("--preset-turns", action="store_true",
                   help="leave the turn channel as the preset sets it (by default the bench "
                        "switches it on for a vault with turns)")
    p.add_argument("--baseline", metavar="FILE.json",
                   help="compare with an earlier --out file (e.g. docs/bench-baseline.json) "
                        "and say which figures moved")
    p.add_argument("--synth-dir", metavar="DIR",
                   help="where synthetic vaults are kept (default: the user cache folder)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.diagnostics.engine_bench import run_bench
    from recall_tui.diagnostics.engine_bench_report import format_table

    vault = Path(args.vault) if args.vault else None
    if vault is not None and not is_folder_or_say("recall-tui bench", vault):
        return 2
    queries = Path(args.queries) if args.queries else None
    if queries is not None and not queries.is_file():
        safe_print(f"recall-tui bench: {queries}: no such file", file=sys.stderr)
        return 2
    if args.cold_start_only and args.no_cold_start:
        safe_print("recall-tui bench: --cold-start-only and --no-cold-start contradict each other",
                   file=sys.stderr)
        return 2
    cold = None
    if not args.no_cold_start:
        if args.cold_vault:
            cold = Path(args.cold_vault)
        elif vault is not None:
            cold = vault
        elif Path("sample-vault").is_dir():
            cold = Path("sample-vault")
        if cold is not None and not cold.is_dir():
            safe_print(f"recall-tui bench: {cold}: not a folder", file=sys.stderr)
            return 2
    if args.cold_start_only and cold is None:
        safe_print("recall-tui bench: --cold-start-only needs --cold-vault (no ./sample-vault here)",
                   file=sys.stderr)
        return 2

    def log(text: str) -> None:
        safe_print(text, file=sys.stderr, flush=True)

    baseline = None
    if args.baseline:
        try:
            baseline = json.loads(Path(args.baseline).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            safe_print(f"recall-tui bench: --baseline {args.baseline}: cannot read it ({exc})",
                       file=sys.stderr)
            return 2
        if not isinstance(baseline, dict) or not isinstance(baseline.get("results"), list):
            safe_print(f"recall-tui bench: --baseline {args.baseline}: not a bench --out file "
                       "(no `results` list)", file=sys.stderr)
            return 2
    if args.turns_per_memory < 0:
        safe_print("recall-tui bench: --turns-per-memory must be 0 or more", file=sys.stderr)
        return 2
    if args.tui:
        return _run_tui(args, vault, queries, log)
    if args.hook:
        return _run_hook(args, vault, log)
    try:
        result = run_bench(vault=None if args.cold_start_only else vault,
                           sizes=[] if args.cold_start_only else args.sizes, queries_file=queries, runs=args.runs,
                           embedder=args.embedder, preset=args.preset, cold_vault=cold,
                           synth_dir=Path(args.synth_dir) if args.synth_dir else None,
                           oracles=not args.no_oracles, max_queries=args.max_queries,
                           first_open_sizes=args.first_open_sizes,
                           turns_per_memory=args.turns_per_memory,
                           turns_on=not args.preset_turns,
                           keep_index=Path(args.keep_index) if args.keep_index else None, log=log)
    except (ValueError, RuntimeError) as exc:
        safe_print(f"recall-tui bench: {exc}", file=sys.stderr)
        return 1
    if baseline is not None:
        from recall_tui.diagnostics.engine_bench_report import compare_baseline

        result["baseline"] = compare_baseline(result, baseline, args.baseline)
    safe_print(format_table(result, stages=args.stages))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        safe_print(f"wrote {out}")
    return 0


def _run_tui(args: argparse.Namespace, vault: Path | None, queries: Path | None, log) -> int:
    """`--tui`: keystroke-to-paint latency per vault, printed as p50/p95 per pass, with the
    phases of a paced keystroke."""
    from recall_tui.diagnostics.engine_bench import synth_vault
    from recall_tui.diagnostics.engine_bench_child import (
        bench_index_path,
        default_queries,
        embedder_for,
        load_queries,
    )
    from recall_tui.tui.paint_timing import tui_keystroke_bench

    synth_dir = Path(args.synth_dir) if args.synth_dir else None
    targets = []
    if vault is not None:
        targets.append((vault, None, vault.name))
    for n in [] if vault is not None else args.sizes:
        turns = round(n * args.turns_per_memory)
        targets.append((synth_vault(n, synth_dir, log=log, turns=turns), n,
                        f"synth-{n}+{turns}t" if turns else f"synth-{n}"))
    results = []
    for root, n, label in targets:
        qf = queries or (root / "queries.jsonl" if n else default_queries(root))
        if qf is None:
            safe_print(f"recall-tui bench: {root}: no queries.jsonl or golden.jsonl; give --queries",
                       file=sys.stderr)
            return 2
        emb = embedder_for(args.embedder, n)
        index_path = (bench_index_path(Path(args.keep_index), label, emb)
                      if args.keep_index else None)
        r = tui_keystroke_bench(root, embedder=emb, queries=load_queries(qf),
                                preset=args.preset, index_path=index_path, log=log)
        results.append(r)
        safe_print(f"{root.name}: {r['memories']} memories, {r['turns']} turns (turn channel "
                   f"{'on' if r['turn_channel'] else 'off'}), {r['embedder']}, "
                   f"{r['keystrokes']} keystrokes, {r['driver']}")
        for ps in r["passes"]:
            lat, eng = ps["latency_ms"], ps["engine_total_ms"]
            what = ("keystroke to painted results" if ps["mode"] == "paced" else
                    f"last of keys every {r['burst_interval_ms']} ms to painted results")
            safe_print(f"  {ps['mode']}: {what} p50 {lat['p50']:.1f} ms  p95 {lat['p95']:.1f} ms  "
                  f"(engine p50 {eng['p50']:.1f} ms)"
                  + (f"  {ps['recalls_started']} recalls for {ps['keys']} keys"
                     if "recalls_started" in ps else ""))
            for name, st in ps.get("phases_ms", {}).items():
                if st.get("n"):
                    safe_print(f"    {name:<28} p50 {st['p50']:7.1f} ms  p95 {st['p95']:7.1f} ms")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"kind": "recall-tui-bench-tui", "results": results},
                                  indent=2) + "\n", encoding="utf-8")
        safe_print(f"wrote {out}")
    return 0


def _run_hook(args: argparse.Namespace, vault: Path | None, log) -> int:
    """`--hook`: whole-process wall time of a prompt hook, warm and in-process."""
    from recall_tui.agent.hook_timing import format_hook_bench, hook_bench

    root = vault or (Path("sample-vault") if Path("sample-vault").is_dir() else None)
    if root is None:
        print("recall-tui bench: --hook needs --vault (no ./sample-vault here)", file=sys.stderr)
        return 2
    runs = args.runs if args.runs != 3 else 20
    try:
        r = hook_bench(root, runs=runs, log=log, baseline_src=args.hook_baseline)
    except RuntimeError as exc:
        print(f"recall-tui bench: {exc}", file=sys.stderr)
        return 1
    print(format_hook_bench(r))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"kind": "recall-tui-bench-hook", **r}, indent=2) + "\n",
                       encoding="utf-8")
        print(f"wrote {out}")
    return 0
