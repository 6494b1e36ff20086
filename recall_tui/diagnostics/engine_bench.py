"""Benchmarks: the pipeline per stage, the index, memory, and the stages against oracles.

`run_bench` measures one vault per fresh child process (`python -m recall_tui.diagnostics.engine_bench child`),
so each vault's peak memory (`ru_maxrss`) is its own: onnxruntime and SQLite allocate outside
Python's heap, where tracemalloc cannot see. In the child:

- vault read and full index build (into a temporary file, never the vault's own index), with
  the embedder named: the real local model, or the *stand-in* (hash-seeded random unit
  vectors, dim 384) that makes 10k and 100k memories feasible;
- re-index of one changed memory (its body changed in memory; the vault is never written);
- every stage's p50/p95 over queries x runs, the recall cache cleared before each run;
- the whole pipeline as traced, and without the query embedding (the vector stage records
  `embed_ms`; fresh query embeddings are timed on their own too);
- the keyword stage against rank_bm25's `BM25Okapi.get_scores` per field (scores asserted
  equal within 1e-9) and the vector stage against numpy brute-force cosine.

`cold_start` times a fresh process from its start to the first recall result. Headless.

This module is the parent side and the child's entry point; the child's measurements live in
`engine_bench_child.py`, the targets and the text table in `engine_bench_report.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recall_tui.diagnostics.engine_bench_child import (
    BENCH_KIND,
    BENCH_VERSION,
    cold_start_child,
    default_queries,
    embedder_for,
    first_open_child,
    load_queries,
    measure_vault,
    reopen_child,
    run_child,
    stats,
)
from recall_tui.diagnostics.engine_bench_report import (
    evaluate_targets,
    machine_facts,
)

# --- the parent -----------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where synthetic vaults are kept between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "recall-tui" / "bench"


def synth_vault(n: int, folder: Path | None = None, seed: int = 0,
                log: Callable[[str], None] = lambda s: None, turns: int = 0) -> Path:
    """The synthetic vault of n memories (and `turns` raw turns in session logs), written
    once and reused (written to a temporary name and renamed, so an interrupted write is
    never mistaken for a finished vault)."""
    from recall_tui.diagnostics.synth import write_synth_vault

    name = f"synth-{n}-turns{turns}-seed{seed}" if turns else f"synth-{n}-seed{seed}"
    root = (folder or cache_dir()) / name
    if (root / "queries.jsonl").is_file():
        return root
    tmp = root.with_name(root.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    log(f"writing a synthetic vault of {n} memories and {turns} turns to {root} ...")
    write_synth_vault(tmp, n, seed, turns=turns)
    if root.exists():
        shutil.rmtree(root)
    tmp.rename(root)
    return root


def measure_in_child(vault: Path, *, embedder: str, queries_file: Path | None, runs: int,
                     preset: str, label: str, oracles: bool = True,
                     max_queries: int | None = None, turns_on: bool = True,
                     keep_index: Path | None = None,
                     log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """`measure_vault` in a fresh interpreter, so its peak memory is its own."""
    args = ["child", str(vault), "--embedder", embedder, "--runs", str(runs),
            "--preset", preset, "--label", label]
    if keep_index is not None:
        args += ["--keep-index", str(keep_index)]
    if not turns_on:
        args.append("--preset-turns")
    if queries_file is not None:
        args += ["--queries", str(queries_file)]
    if max_queries:
        args += ["--max-queries", str(max_queries)]
    if not oracles:
        args.append("--no-oracles")
    result, _ = run_child(args, log)
    return result


def cold_start(vault: Path, *, embedder: str = "local", query: str = "postgres upgrade",
               preset: str = "default", repeats: int = 3) -> dict[str, Any]:
    """Process start to first recall result, in fresh processes against an index already
    built (one unmeasured run builds it first). Median of `repeats`."""
    args = ["cold", str(vault), "--embedder", embedder, "--query", query, "--preset", preset]
    run_child(args)  # builds or updates the index; not measured
    samples = []
    for _ in range(max(1, repeats)):
        marks, spawned = run_child(args)
        marks["process_ms"] = (marks.pop("result_at") - spawned) * 1000
        samples.append(marks)
    samples.sort(key=lambda m: m["process_ms"])
    mid = samples[len(samples) // 2]
    return {"vault": str(vault), "embedder": embedder, "query": query, "repeats": len(samples),
            "process_to_first_result_ms": stats([s["process_ms"] for s in samples]),
            "median_sample": mid,
            "note": "wall time from spawning the interpreter to the first recall's result; "
                    "the index already existed"}


def first_open(vault: Path, *, embedder: str = "local", query: str = "postgres upgrade",
               preset: str = "default", wait_ready: bool = True, label: str = "",
               log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """A vault opened for the first time (a copy with no `.recall/`: no index, no reading
    cache) by a fresh process through the progressive open: spawn to the first keyword
    result, and to every vector when `wait_ready`."""
    with tempfile.TemporaryDirectory(prefix="recall-first-") as tmp:
        copy = Path(tmp) / "vault"
        log(f"copying {vault} for a first open ...")
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".recall"))
        args = ["first", str(copy), "--embedder", embedder, "--query", query,
                "--preset", preset]
        if wait_ready:
            args.append("--wait-ready")
        marks, spawned = run_child(args, log)
    marks["process_to_first_result_ms"] = (marks.pop("result_at") - spawned) * 1000
    return {"vault": str(vault), "label": label or vault.name, "embedder": embedder,
            "query": query, **marks,
            "note": "wall time from spawning the interpreter to the first recall's result, on "
                    "a copy without .recall/ (no index, no reading cache); the vector stage "
                    "is skipped until the vectors exist"}


def run_bench(*, vault: Path | None, sizes: Sequence[int], queries_file: Path | None,
              runs: int, embedder: str, preset: str = "default", cold_vault: Path | None = None,
              synth_dir: Path | None = None, oracles: bool = True,
              max_queries: int | None = None, first_open_sizes: Sequence[int] = (),
              turns_per_memory: float = 0.0, turns_on: bool = True,
              keep_index: Path | None = None,
              log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The whole benchmark: each vault in its own child process, then the cold start and
    the first opens (the cold-start vault with the real model, waiting for every vector;
    synthetic vaults of `first_open_sizes` with the real model, up to the first result).
    `turns_per_memory` > 0 gives each synthetic vault round(n x it) raw turns; on a vault
    with turns the turn channel is switched on (unless `turns_on` is False: the preset's own
    setting) so that it is timed beside the other channels. `keep_index` (a folder): each
    vault's index is kept there (`bench_index_path`) and used again by the next run (its
    build figure then says `reused`), e.g. by `bench --tui` on the same vault."""
    results = []
    if vault is not None:
        qf = queries_file or default_queries(vault)
        if qf is None:
            raise ValueError(f"{vault}: no queries.jsonl or golden.jsonl; give --queries FILE")
        targets = [(vault, vault.name, qf, embedder_for(embedder, None))]
    else:
        targets = []
        for n in sizes:
            turns = round(n * turns_per_memory)
            root = synth_vault(n, synth_dir, log=log, turns=turns)
            label = f"synth-{n}+{turns}t" if turns else f"synth-{n}"
            targets.append((root, label, queries_file or root / "queries.jsonl",
                            embedder_for(embedder, n)))
    for root, label, qf, emb in targets:
        log(f"measuring {label} ({emb} embedder, {runs} runs) ...")
        t = time.perf_counter()
        r = measure_in_child(root, embedder=emb, queries_file=qf, runs=runs,
                             preset=preset, label=label, oracles=oracles,
                             max_queries=max_queries, turns_on=turns_on,
                             keep_index=keep_index, log=log)
        r["child_seconds"] = time.perf_counter() - t
        results.append(r)
    cold = None
    if cold_vault is not None:
        log(f"measuring cold start on {cold_vault} ...")
        cold = cold_start(cold_vault, preset=preset)
    firsts = []
    if cold_vault is not None:
        log(f"measuring a first open of {cold_vault} ...")
        firsts.append(first_open(cold_vault, preset=preset, log=log))
    for n in first_open_sizes:
        turns = round(n * turns_per_memory)
        root = synth_vault(n, synth_dir, log=log, turns=turns)
        label = f"synth-{n}+{turns}t" if turns else f"synth-{n}"
        log(f"measuring a first open of {label} (real model, up to the first result) ...")
        firsts.append(first_open(root, preset=preset, wait_ready=False, label=label,
                                 query=load_queries(root / "queries.jsonl")[0], log=log))
    return {"kind": BENCH_KIND, "version": BENCH_VERSION,
            "created": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
            "machine": machine_facts(), "embedder": embedder, "preset": preset,
            "results": results, "cold_start": cold, "first_open": firsts,
            "targets": evaluate_targets(results, cold, firsts)}


# --- child entry point ----------------------------------------------------------------------


def _progress(text: str) -> None:
    """Child progress goes to stderr (the parent relays it); stdout carries the result."""
    print(text, file=sys.stderr, flush=True)


def _main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m recall_tui.diagnostics.engine_bench")
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("child")
    c.add_argument("vault")
    c.add_argument("--embedder", default="standin")
    c.add_argument("--queries")
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--preset", default="default")
    c.add_argument("--label", default="")
    c.add_argument("--no-oracles", action="store_true")
    c.add_argument("--max-queries", type=int)
    c.add_argument("--preset-turns", action="store_true")
    c.add_argument("--keep-index")
    k = sub.add_parser("cold")
    k.add_argument("vault")
    k.add_argument("--embedder", default="local")
    k.add_argument("--query", default="postgres upgrade")
    k.add_argument("--preset", default="default")
    f = sub.add_parser("first")
    f.add_argument("vault")
    f.add_argument("--embedder", default="local")
    f.add_argument("--query", default="postgres upgrade")
    f.add_argument("--preset", default="default")
    f.add_argument("--wait-ready", action="store_true")
    r = sub.add_parser("reopen")
    r.add_argument("vault")
    r.add_argument("--index", required=True)
    r.add_argument("--embedder", default="standin")
    r.add_argument("--query", default="postgres upgrade")
    r.add_argument("--preset", default="default")
    r.add_argument("--turns-on", action="store_true")
    a = p.parse_args(argv)
    if a.mode == "reopen":
        print(json.dumps(reopen_child(a.vault, a.index, a.embedder, a.query, a.preset,
                                      a.turns_on)), flush=True)
        return 0
    if a.mode == "first":
        out = first_open_child(a.vault, a.embedder, a.query, a.preset, a.wait_ready)
        print(json.dumps(out), flush=True)
        os._exit(0)  # do not wait for a background embedding still running
    if a.mode == "cold":
        out = cold_start_child(a.vault, a.embedder, a.query, a.preset)
    else:
        qf = Path(a.queries) if a.queries else default_queries(Path(a.vault))
        if qf is None:
            print(f"{a.vault}: no queries file", file=sys.stderr)
            return 2
        queries = load_queries(qf)[: a.max_queries or None]
        out = measure_vault(a.vault, embedder=a.embedder, queries=queries,
                            runs=a.runs, preset=a.preset, label=a.label,
                            oracles=not a.no_oracles, turns_on=not a.preset_turns,
                            keep_index=Path(a.keep_index) if a.keep_index else None,
                            log=_progress)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
