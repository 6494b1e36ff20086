"""The benchmark's results judged and shown: the machine's facts, the performance targets and
the text table `recall-tui bench` prints.
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


def evaluate_targets(results: Sequence[dict[str, Any]], cold: dict[str, Any] | None,
                     firsts: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
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
            check(Target("pipeline p50 excl. query embedding", 4, "ms"), ex, where)
            check(Target("peak memory", 300, "MB"), r.get("peak_rss_mb"), where)
            kw = r.get("keyword_vs_rank_bm25") or {}
            check(Target("keyword stage speed-up vs rank_bm25", 10, "x", True),
                  kw.get("speedup_vs_stage"), where)
        if 90_000 <= n <= 110_000:
            check(Target("pipeline p50 excl. query embedding", 30, "ms"), ex, where)
            check(Target("peak memory", 1000, "MB"), r.get("peak_rss_mb"), where)
            # The file once closed (its WAL checkpointed): the tables' pages, when dbstat
            # counted them, else the file and its WAL as they were after the build.
            build = r.get("index_build") or {}
            on_disk = sum((build.get("tables_bytes") or {}).values()) or build.get("size_bytes")
            check(Target("index on disk", 600, "MB"), on_disk / 1e6 if on_disk else None, where)
            check(Target("re-read of the unchanged vault", 3000, "ms"),
                  r.get("vault_reread_ms"), where)
            if r.get("turns", 0) >= 500_000:  # issue 24: 100k memories + 1M turns
                check(Target("re-open of the unchanged vault to first recall", 5000, "ms"),
                      (r.get("reopen") or {}).get("process_ms"), where)
        vec = r.get("vector_vs_numpy") or {}
        check(Target("vector stage / numpy brute force", 2, "x"),
              vec.get("ratio_stage_to_numpy"), where)
        check(Target("re-index one changed memory (excl. its embedding)", 100, "ms"),
              r["reindex_one"]["ms"] - r["reindex_one"]["embed_ms"], where)
    if cold:
        check(Target("cold start to first result", 1500, "ms"),
              cold["process_to_first_result_ms"].get("p50"), cold["vault"])
    for f in firsts:
        limit = 10_000 if f.get("memories", 0) >= 5000 else 1500
        check(Target("first open (no index) to first keyword result", limit, "ms"),
              f.get("process_to_first_result_ms"), f.get("label", f["vault"]))
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
    if any(r.get("turns") for r in res):
        row("raw turns", lambda r: r.get("turns", 0))
        row("turn channel", lambda r: r.get("turn_channel"))
    row("queries x runs", lambda r: f"{r['queries']} x {r['runs']}")
    row("pipeline p50 (traced)", lambda r: r["pipeline"]["traced_total_ms"]["p50"])
    row("pipeline p95 (traced)", lambda r: r["pipeline"]["traced_total_ms"]["p95"])
    row("pipeline min (traced)", lambda r: r["pipeline"]["traced_total_ms"]["min"])
    row("pipeline p50 excl. embed", lambda r: r["pipeline"]["excluding_query_embedding_ms"]["p50"])
    row("pipeline p95 excl. embed", lambda r: r["pipeline"]["excluding_query_embedding_ms"]["p95"])
    row("query embedding p50", lambda r: r["embed_query_ms"]["p50"])
    row("first recall", lambda r: r["first_recall_ms"])
    row("vault read (parse every file)", lambda r: r["vault_read_ms"], 0)
    row("vault re-read (unchanged)", lambda r: r["vault_reread_ms"], 0)
    row("  again, same process", lambda r: r["vault_reread_live_ms"], 0)
    row("reading cache on disk (MB)", lambda r: r["read_cache_bytes"] / 1e6, 0)
    row("index build (full)", lambda r: None if r["index_build"].get("reused")
        else r["index_build"]["ms"], 0)
    if any(r["index_build"].get("reused") for r in res):
        row("  index kept (--keep-index): open", lambda r: r["index_build"]["ms"]
            if r["index_build"].get("reused") else None, 0)
    row("  of which embedding", lambda r: r["index_build"]["embed_ms"], 0)
    row("index on disk (MB), file + WAL", lambda r: r["index_build"]["size_bytes"] / 1e6, 0)
    row("  its tables (dbstat, MB)",
        lambda r: sum(r["index_build"]["tables_bytes"].values()) / 1e6 or None, 0)
    for table in ("memories_trigram", "memories_original", "embed_cache", "memory_vectors",
                  "memories_fts", "memories", "memories_words"):
        row(f"    {table}", lambda r, t=table: r["index_build"]["tables_bytes"][t] / 1e6, 0)
    row("re-index one memory", lambda r: r["reindex_one"]["ms"])
    row("  of which embedding", lambda r: r["reindex_one"]["embed_ms"])
    if any(r.get("reopen") for r in res):
        row("re-open to first recall (fresh process)", lambda r: r["reopen"]["process_ms"], 0)
        row("  its CPU (after imports)", lambda r: r["reopen"]["cpu_ms"], 0)
        for ph, label in (("read", "read (reading cache)"), ("index_open", "index open"),
                          ("engine", "engine build"), ("first_recall", "first recall")):
            row(f"  {label}: wall / CPU", _reopen_phase(ph))
    if any(r.get("append_session") for r in res):
        row("append a 200-turn session: visible", lambda r: r["append_session"]["visible_ms"], 0)
        row("  the refresh (new vault, index update, swap)",
            lambda r: r["append_session"]["refresh_ms"], 0)
        row("  its new vault (patch or re-read)", lambda r: r["append_session"].get("read_ms"), 0)
        row("  its index update", lambda r: r["append_session"]["index_update_ms"], 0)
        row("  its swap into the engines", lambda r: r["append_session"].get("swap_ms"), 0)
    row("peak RSS (MB)", lambda r: r["peak_rss_mb"], 0)
    row("  peak after reading (MB)", lambda r: r["peak_rss_mb_after_read"], 0)
    row("  peak after the index build (MB)", lambda r: r["peak_rss_mb_after_build"], 0)
    for label in ("queries", "typos"):
        for mode in ("correct", "scan"):
            row(f"fuzzy {mode}, {label}: stage p50",
                lambda r, a=label, b=mode: r["fuzzy_modes"][a][b]["fuzzy_ms"]["p50"])
            row(f"fuzzy {mode}, {label}: pipeline p50",
                lambda r, a=label, b=mode: r["fuzzy_modes"][a][b]["total_ms"]["p50"])
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
    if not stages:  # the channels side by side (--stages prints every stage)
        for name in CHANNEL_STAGES:
            if any(r.get("stages", {}).get(name, {}).get("n") for r in res):
                row(f"channel {name} p50 / p95", _channel(name))
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
    for f in bench.get("first_open") or []:
        ready = f" ; every vector after {f['ready_ms']:.0f} ms" if f.get("ready_ms") else ""
        lines.append(f"first open ({f.get('label', f['vault'])}, {f['memories']} memories, "
                     f"{f['embedder']}, no index): process start to first keyword result "
                     f"{f['process_to_first_result_ms']:.0f} ms (usable after "
                     f"{f['usable_ms']:.0f} ms; vector stage: {f['vector_stage']}){ready}; "
                     f"peak RSS {f['peak_rss_mb']:.0f} MB")
    for r in res:
        if r.get("load_average") or r.get("load_average_after"):
            lines.append(f"load average [{r['label']}]: at start {r.get('load_average')}, "
                         f"after the recalls {r.get('load_average_after')}")
    for t in bench.get("targets", []):
        mark = "met" if t["met"] else "MISSED"
        lines.append(f"target {t['target']} [{t['where']}]: {t['value']:.2f} {t['unit']} vs "
                     f"{t['limit']:g} {t['unit']}: {mark}")
    cmp = bench.get("baseline")
    if cmp:
        lines.append(f"against the baseline {cmp['file']} (its load {cmp['load_average']}, now "
                     f"{m.get('load_average_at_start')}; a move under {cmp['tolerance']:.0%} is "
                     "called steady):")
        if cmp.get("version_note"):
            lines.append(f"  note: {cmp['version_note']}")
        for c in cmp["figures"]:
            lines.append(f"  {c['verdict']:<8} {c['figure']} [{c['where']}]: {_f(c['baseline'])} "
                         f"-> {_f(c['now'])} {c['unit']} ({c['ratio']:.2f}x)")
        if not cmp["figures"]:
            lines.append("  no figure in common (other sizes or vaults)")
    return "\n".join(lines)


#: The channels' stages, shown side by side in the table.
CHANNEL_STAGES = ("keyword", "fuzzy", "vector", "turns")


def _reopen_phase(name: str) -> Callable[[dict[str, Any]], str]:
    """One phase of the re-open (`reopen_child`): its wall and CPU milliseconds."""
    def get(r: dict[str, Any]) -> str:
        ph = r["reopen"]["phases"][name]
        return f"{ph['wall_ms']:.0f} / {ph['cpu_ms']:.0f}"
    return get


def _channel(name: str) -> Callable[[dict[str, Any]], str | None]:
    return lambda r: _p50_p95(r["stages"][name])


def _p50_p95(st: dict[str, Any]) -> str | None:
    if not st.get("n"):
        return None
    return f"{st['p50']:.2f} / {st['p95']:.2f}"


#: The figures compared with a baseline: (name, unit, path into one vault's result).
BASELINE_FIGURES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("pipeline p50", "ms", ("pipeline", "traced_total_ms", "p50")),
    ("pipeline p95", "ms", ("pipeline", "traced_total_ms", "p95")),
    *((f"channel {c} p50", "ms", ("stages", c, "p50")) for c in CHANNEL_STAGES),
    ("vault read", "ms", ("vault_read_ms",)),
    ("vault re-read", "ms", ("vault_reread_ms",)),
    ("index build", "ms", ("index_build", "ms")),
    ("index on disk", "B", ("index_build", "size_bytes")),
    ("re-index one memory", "ms", ("reindex_one", "ms")),
    ("peak RSS", "MB", ("peak_rss_mb",)),
)


def _dig(r: dict[str, Any], path: Sequence[str]) -> float | None:
    cur: Any = r
    for key in path:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return float(cur) if isinstance(cur, (int, float)) and not isinstance(cur, bool) else None


def compare_baseline(bench: dict[str, Any], baseline: dict[str, Any], file: str,
                     tolerance: float = 0.25) -> dict[str, Any]:
    """Each figure of BASELINE_FIGURES that both runs have for the same vault (by label), as
    baseline, now, ratio now/baseline and a verdict: `steady` within `tolerance`, else
    `slower`/`larger` or `faster`/`smaller`. Lower is better for every one of them."""
    before = {r.get("label"): r for r in baseline.get("results", [])}
    figures = []
    for r in bench.get("results", []):
        old = before.get(r.get("label"))
        if old is None:
            continue
        for name, unit, path in BASELINE_FIGURES:
            a, b = _dig(old, path), _dig(r, path)
            if not a or b is None:
                continue
            ratio = b / a
            if abs(ratio - 1) <= tolerance:
                verdict = "steady"
            elif ratio > 1:
                verdict = "slower" if unit == "ms" else "larger"
            else:
                verdict = "faster" if unit == "ms" else "smaller"
            figures.append({"figure": name, "where": r.get("label"), "unit": unit,
                            "baseline": a, "now": b, "ratio": ratio, "verdict": verdict})
    load = (baseline.get("machine") or {}).get("load_average_at_start")
    out: dict[str, Any] = {"file": file, "tolerance": tolerance, "load_average": load,
                           "figures": figures}
    if baseline.get("version") != bench.get("version"):
        out["version_note"] = (
            f"the baseline is bench version {baseline.get('version')}, this run "
            f"{bench.get('version')}: {VERSION_CHANGES.get(bench.get('version'), 'see the docs')}")
    return out


#: What changed in each bench version, said when a baseline of another version is compared.
VERSION_CHANGES: dict[Any, str] = {
    2: "the stand-in's vectors changed (a SHAKE-256 stream per text, not a numpy generator), "
       "~4x cheaper to make, the build's chunks larger, and stand-in rankings differ; "
       "compare the index build and the vector figures with care",
}
