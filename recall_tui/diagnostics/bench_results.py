"""The benchmark's results judged and shown: the machine's facts, the performance targets and
the text table `recall-tui bench` prints. Re-exported by `recall_tui.diagnostics.bench`.
Headless.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_tui.engine.trace import STAGE_ORDER


def machine_facts() -> dict[str, Any]:
    """CPU model, cores and RAM of this machine (from /proc on Linux)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_mb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_mb = int(line.split()[1]) // 1024
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_mb": ram_mb,
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(),
            "load_average_at_start": list(load) if load else None}


@dataclass(frozen=True)
class Target:
    """One performance target and how a result is checked against it."""

    name: str
    """What is measured."""
    limit: float
    """The bound."""
    unit: str
    """`ms`, `MB` or `x` (a ratio)."""
    higher_is_better: bool = False
    """True for speed-ups (the value must reach the limit), False for times and sizes."""


def evaluate_targets(results: Sequence[dict[str, Any]],
                     cold: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each target that the results can check: value, limit, met, and by how much."""
    out: list[dict[str, Any]] = []

    def check(target: Target, value: float | None, where: str) -> None:
        if value is None:
            return
        met = value >= target.limit if target.higher_is_better else value <= target.limit
        margin = (value / target.limit) if target.limit else None
        out.append({"target": target.name, "where": where, "value": value,
                    "limit": target.limit, "unit": target.unit, "met": met,
                    "ratio_to_limit": margin})

    for r in results:
        n = r["memories"]
        where = r["label"]
        ex = r["pipeline"]["excluding_query_embedding_ms"].get("p50")
        if 9_000 <= n <= 11_000:
            check(Target("pipeline p50 excl. query embedding", 8, "ms"), ex, where)
            check(Target("peak memory", 300, "MB"), r.get("peak_rss_mb"), where)
            kw = r.get("keyword_vs_rank_bm25") or {}
            check(Target("keyword stage speed-up vs rank_bm25", 10, "x", True),
                  kw.get("speedup_vs_stage"), where)
        if 90_000 <= n <= 110_000:
            check(Target("pipeline p50 excl. query embedding", 60, "ms"), ex, where)
        vec = r.get("vector_vs_numpy") or {}
        check(Target("vector stage / numpy brute force", 2, "x"),
              vec.get("ratio_stage_to_numpy"), where)
        check(Target("re-index one changed memory (excl. its embedding)", 100, "ms"),
              r["reindex_one"]["ms"] - r["reindex_one"]["embed_ms"], where)
    if cold:
        check(Target("cold start to first result", 1500, "ms"),
              cold["process_to_first_result_ms"].get("p50"), cold["vault"])
    return out


# --- text output ----------------------------------------------------------------------------


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def format_table(bench: dict[str, Any], *, stages: bool = False) -> str:
    """A readable summary of `run_bench`'s result (all times in ms)."""
    res = bench["results"]
    lines = []
    m = bench["machine"]
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_mb']} MB RAM; "
                 f"load average at start {m.get('load_average_at_start')}")
    if any(r["embedder"]["standin"] for r in res):
        lines.append("embedder: STAND-IN (hash-seeded random unit vectors, dim 384, not "
                     "semantic) where marked *")
    head = ["", *[r["label"] + ("*" if r["embedder"]["standin"] else "") for r in res]]
    rows: list[list[str]] = []

    def row(name: str, get: Callable[[dict[str, Any]], Any], digits: int = 2) -> None:
        vals = []
        for r in res:
            try:
                vals.append(_f(get(r), digits))
            except (KeyError, TypeError):
                vals.append("—")
        rows.append([name, *vals])

    row("memories", lambda r: r["memories"])
    row("queries x runs", lambda r: f"{r['queries']} x {r['runs']}")
    row("pipeline p50 (traced)", lambda r: r["pipeline"]["traced_total_ms"]["p50"])
    row("pipeline p95 (traced)", lambda r: r["pipeline"]["traced_total_ms"]["p95"])
    row("pipeline min (traced)", lambda r: r["pipeline"]["traced_total_ms"]["min"])
    row("pipeline p50 excl. embed", lambda r: r["pipeline"]["excluding_query_embedding_ms"]["p50"])
    row("pipeline p95 excl. embed", lambda r: r["pipeline"]["excluding_query_embedding_ms"]["p95"])
    row("query embedding p50", lambda r: r["embed_query_ms"]["p50"])
    row("first recall", lambda r: r["first_recall_ms"])
    row("vault read", lambda r: r["vault_read_ms"], 0)
    row("index build (full)", lambda r: r["index_build"]["ms"], 0)
    row("  of which embedding", lambda r: r["index_build"]["embed_ms"], 0)
    row("re-index one memory", lambda r: r["reindex_one"]["ms"])
    row("  of which embedding", lambda r: r["reindex_one"]["embed_ms"])
    row("peak RSS (MB)", lambda r: r["peak_rss_mb"], 0)
    row("keyword stage p50", lambda r: r["keyword_vs_rank_bm25"]["keyword_stage_ms"])
    row("rank_bm25 per field p50", lambda r: r["keyword_vs_rank_bm25"]["rank_bm25_ms"]["p50"])
    row("  speed-up (x)", lambda r: r["keyword_vs_rank_bm25"]["speedup_vs_stage"], 1)
    row("  speed-up on minima (x)", lambda r: r["keyword_vs_rank_bm25"]["speedup_vs_stage_min"], 1)
    row("  raw search speed-up (x)", lambda r: r["keyword_vs_rank_bm25"]["speedup_vs_search"], 1)
    row("  same scores (1e-9)", lambda r: r["keyword_vs_rank_bm25"]["same_scores"])
    row("vector stage p50", lambda r: r["vector_vs_numpy"]["vector_stage_ms"])
    row("numpy brute force p50", lambda r: r["vector_vs_numpy"]["numpy_ms"]["p50"])
    row("  stage / numpy (x)", lambda r: r["vector_vs_numpy"]["ratio_stage_to_numpy"], 1)
    row("  on minima (x)", lambda r: r["vector_vs_numpy"]["ratio_stage_to_numpy_min"], 1)
    row("  Index.vector_search / numpy (x)",
        lambda r: r["vector_vs_numpy"]["ratio_search_to_numpy"], 1)
    row("  sqlite-vec kNN / numpy (x)",
        lambda r: r["vector_vs_numpy"].get("ratio_sqlite_vec_to_numpy"), 1)
    if stages:
        for name in STAGE_ORDER:
            row(f"stage {name} p50", lambda r, n=name: r["stages"][n].get("p50"))
            row(f"stage {name} p95", lambda r, n=name: r["stages"][n].get("p95"))
    widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]

    def fmt(cells: Sequence[Any]) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    if res:
        lines.append(fmt(head))
        lines += [fmt(r) for r in rows]
    cold = bench.get("cold_start")
    if cold:
        s = cold["median_sample"]
        lines.append(f"cold start ({cold['vault']}, {cold['embedder']}): process start to first "
                     f"result p50 {cold['process_to_first_result_ms']['p50']:.0f} ms (imports "
                     f"{s['import_ms']:.0f}, open_engine {s['open_engine_ms']:.0f}, first recall "
                     f"{s['first_recall_ms']:.0f} of which query embedding "
                     f"{s['first_recall_embed_ms']:.0f}); peak RSS "
                     f"{s.get('peak_rss_mb', 0):.0f} MB")
    for t in bench.get("targets", []):
        mark = "met" if t["met"] else "MISSED"
        lines.append(f"target {t['target']} [{t['where']}]: {t['value']:.2f} {t['unit']} vs "
                     f"{t['limit']:g} {t['unit']}: {mark}")
    return "\n".join(lines)
