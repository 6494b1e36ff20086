"""The benchmark's measurements of one vault, run in a fresh child process (see `engine_bench.py`).

`measure_vault` reads the vault, builds its index into a temporary file, re-indexes one changed
memory, times every stage and the whole pipeline, and compares the keyword and vector stages
with their oracles (rank_bm25 and numpy brute force); `cold_start_child` times the phases from
interpreter start to the first recall; `reopen_child` re-opens the vault with the index
`measure_vault` built, up to the first recall. Also the stand-in embedder and the small
helpers they share. Headless.

Long module: everything the child process of one bench run measures, in one place, so the
child imports one module and its figures are read top to bottom in the order they are taken.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from recall_tui.diagnostics.report import percentile
from recall_tui.engine.trace import STAGE_ORDER

BENCH_KIND = "recall-tui-bench"
#: 2: the stand-in's vectors changed (one shake-256 stream per text expanded by numpy instead
#: of a numpy generator per text), so stand-in figures of version 1 are not the same vectors.
BENCH_VERSION = 2
#: Scores of the keyword stage and rank_bm25 must agree this closely.
SCORE_TOLERANCE = 1e-9
#: The `now` every benchmark recall is pinned to (synthetic vaults end 2026-11-20).
BENCH_NOW = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
#: Queries compared with rank_bm25 and numpy per vault (the oracles are slow by design).
ORACLE_QUERIES = 20
STANDIN_DIM = 384
#: Largest synthetic vault `--embedder auto` embeds with the real model.
AUTO_LOCAL_MAX = 1000
STANDIN_MODEL = "shake256-gaussian-384 (stand-in, not semantic)"
#: Texts the stand-in expands at once (bounds its temporary arrays to a few MB).
STANDIN_CHUNK = 4096


class StandinEmbedder:
    """A deterministic stand-in for a real embedder: each text's vector is a unit vector drawn
    uniformly from the sphere, from the text's own SHAKE-256 stream (384 16-bit uniforms,
    turned into 384 standard normals by Box-Muller, then scaled to unit length). A text's
    vector depends on its text alone, never on the batch it came in. The per-text work is one
    C hash; the rest is numpy over the whole batch, ~20 us a text on this 2-core machine (a
    numpy generator per text cost ~4x that in CPU). It exercises storage and kNN exactly like real
    vectors of the same dimension; its similarities mean nothing, so recall quality is not
    measured."""

    name = "standin"
    model = STANDIN_MODEL
    dim = STANDIN_DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), STANDIN_CHUNK):
            chunk = texts[start:start + STANDIN_CHUNK]
            out[start:start + len(chunk)] = _standin_vectors(chunk, self.dim)
        return out

    def release(self) -> bool:
        """Nothing is loaded."""
        return False


def _standin_vectors(texts: Sequence[str], dim: int) -> np.ndarray:
    """Unit rows for `texts` (dim even): Box-Muller over each text's SHAKE-256 uniforms."""
    half = dim // 2
    raw = b"".join(hashlib.shake_256(t.encode("utf-8")).digest(2 * dim) for t in texts)
    u = np.frombuffer(raw, dtype="<u2").reshape(len(texts), dim).astype(np.float32)
    u = (u + np.float32(0.5)) * np.float32(1.0 / 65536.0)  # in (0, 1): log never sees 0
    radius = np.sqrt(np.float32(-2.0) * np.log(u[:, :half]))
    theta = u[:, half:] * np.float32(2.0 * np.pi)
    v = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def make_bench_embedder(kind: str):
    """`standin` or `local` (the real MiniLM model)."""
    if kind == "standin":
        return StandinEmbedder()
    if kind == "local":
        from recall_tui.index.embed import make_embedder

        emb, _ = make_embedder("local")
        return emb
    raise ValueError(f"unknown bench embedder {kind!r}: use local or standin")


def embedder_for(kind: str, size: int | None) -> str:
    """`auto` means the real local model for a real vault and for synthetic vaults of up to
    AUTO_LOCAL_MAX memories, the stand-in above (embedding 10k texts takes minutes)."""
    if kind != "auto":
        return kind
    return "local" if size is None or size <= AUTO_LOCAL_MAX else "standin"


def stats(values: Sequence[float]) -> dict[str, float | int]:
    """p50, p95, mean, min, max and count of a list of milliseconds."""
    xs = [float(v) for v in values]
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "p50": percentile(xs, 50), "p95": percentile(xs, 95),
            "mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs)}


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB (ru_maxrss: KiB on Linux,
    bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def load_queries(path: str | os.PathLike[str]) -> list[str]:
    """Query texts from a JSONL file of objects with a `query` key (golden.jsonl,
    queries.jsonl) or plain text lines; a bad line raises ValueError naming file:line."""
    p = Path(path)
    out: list[str] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("{"):
            try:
                q = json.loads(s).get("query")
            except (json.JSONDecodeError, AttributeError) as exc:
                raise ValueError(f"{p}:{n}: not a JSON object with a query: {exc}") from None
            if not isinstance(q, str):
                raise ValueError(f"{p}:{n}: `query` must be a string")
            out.append(q)
        else:
            out.append(s)
    if not out:
        raise ValueError(f"{p}: holds no queries")
    return out


def default_queries(vault: Path) -> Path | None:
    """The vault's own judged queries: `queries.jsonl` (synthetic) or `golden.jsonl`."""
    for name in ("queries.jsonl", "golden.jsonl"):
        if (vault / name).is_file():
            return vault / name
    return None


def _changed_vault(vault: Any, memory_id: str, stamp: str):
    """The vault with one memory's body changed (in memory only: the files are untouched)."""
    m = vault.memories[memory_id]
    # Prepended: text after a final `## Related` section is not embedded, so an edit there
    # would not exercise the embedder.
    body = f"Edited for the re-index benchmark ({stamp}).\n\n{m.body}"
    changed = replace(m, body=body,
                      content_hash=hashlib.sha256(body.encode("utf-8")).hexdigest())
    memories = dict(vault.memories)
    memories[memory_id] = changed
    return replace(vault, memories=MappingProxyType(memories))


def _ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float | None:
    """a[key] / b[key] of two `stats` results, None when either is missing or zero."""
    x, y = a.get(key), b.get(key)
    return x / y if x and y else None


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1000


def run_child(args: list[str], log: Callable[[str], None] = lambda s: None
              ) -> tuple[dict[str, Any], float]:
    """Run `python -m recall_tui.diagnostics.engine_bench ARGS`, pass its progress lines
    (stderr) to `log`, and parse the JSON it prints last on stdout; also the epoch time it was
    spawned at. (Here, not in the parent module: `measure_vault` spawns the re-open too.)"""
    cmd = [sys.executable, "-m", "recall_tui.diagnostics.engine_bench", *args]
    spawned = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    errors: list[str] = []

    def pump() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            errors.append(line.rstrip("\n"))
            log("  " + line.rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    out = proc.stdout.read()  # type: ignore[union-attr]
    proc.wait()
    reader.join()
    if proc.returncode != 0:
        raise RuntimeError("benchmark child failed:\n" + "\n".join(errors[-12:]))
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"benchmark child printed no result: {out[-500:]}")
    return json.loads(lines[-1]), spawned


# --- the oracles ----------------------------------------------------------------------------


def keyword_oracle(engine: Any, cfg: Any, queries: Sequence[str]) -> dict[str, Any]:
    """The keyword index's per-field scores against rank_bm25 over the same token lists.

    Raises AssertionError when any score differs by more than SCORE_TOLERANCE: a benchmark of
    a stage that computes something else would be meaningless."""
    from rank_bm25 import BM25Okapi

    from recall_tui.engine.bm25 import field_text
    from recall_tui.engine.stages.keyword import field_weights
    from recall_tui.engine.stages.parse import parse_query
    from recall_tui.engine.text import analyze

    kidx = engine.keyword_index(cfg)
    memories = [engine.vault.memories[mid] for mid in kidx.ids]
    weights = {f: w for f, w in field_weights(cfg).items() if w}
    oracles: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    t0 = time.perf_counter()
    for name in weights:
        # The same token lists the keyword index was built from (same analysis settings).
        docs = [analyze(field_text(m, name), stem=kidx.stem, stop_words=kidx.stop_words)
                for m in memories]
        if not any(docs):
            skipped[name] = "empty in every memory (rank_bm25 divides by zero there)"
            continue
        oracles[name] = BM25Okapi(docs, k1=cfg.keyword.k1, b=cfg.keyword.b,
                                  epsilon=cfg.keyword.epsilon)
    build_ms = (time.perf_counter() - t0) * 1000
    worst = 0.0
    oracle_ms: list[float] = []
    ours_ms: list[float] = []
    compared = 0
    for q in queries:
        terms = list(parse_query(q, cfg).terms)
        if not terms:
            continue
        t = time.perf_counter()
        ref = {name: o.get_scores(terms) for name, o in oracles.items()}
        ref_total = sum(weights[n] * s for n, s in ref.items())
        oracle_ms.append((time.perf_counter() - t) * 1000)
        res, ms = _timed(lambda terms=terms: kidx.search(terms, weights))
        ours_ms.append(ms)
        for name, s in ref.items():
            diff = float(np.max(np.abs(np.asarray(s) - res.per_field[name]))) if len(s) else 0.0
            worst = max(worst, diff)
            assert diff <= SCORE_TOLERANCE, (
                f"keyword field {name!r} differs from rank_bm25 by {diff:g} for {q!r}")
        if len(ref_total):
            worst = max(worst, float(np.max(np.abs(ref_total - res.total))))
        compared += 1
    return {"queries": compared, "fields": sorted(oracles), "fields_skipped": skipped,
            "same_scores": worst <= SCORE_TOLERANCE, "max_abs_diff": worst,
            "rank_bm25_build_ms": build_ms, "rank_bm25_ms": stats(oracle_ms),
            "keyword_search_ms": stats(ours_ms)}


def vector_oracle(engine: Any, queries: Sequence[str], k: int) -> dict[str, Any]:
    """The vector search the stage calls (numpy over the cached matrix) and sqlite-vec's own kNN,
    same stored vectors; also how many of the top k agree."""
    index = engine.index
    ids, mat = index.vectors()
    if not len(ids):
        return {"skipped": "the index holds no vectors"}
    numpy_ms: list[float] = []
    knn_ms: list[float] = []
    sqlite_ms: list[float] = []
    overlap: list[float] = []
    for q in queries:
        qv = index.embed_query(q)
        if qv is None:
            continue
        t = time.perf_counter()
        sims = mat @ qv
        kk = min(k, len(ids))
        top = np.argpartition(-sims, kk - 1)[:kk]
        top = top[np.argsort(-sims[top])]
        numpy_ms.append((time.perf_counter() - t) * 1000)
        rows, ms = _timed(lambda qv=qv: index.vector_search(qv, k))
        knn_ms.append(ms)
        # sqlite-vec's own kNN, the store's path for matrices too large to cache
        _rows, ms = _timed(lambda qv=qv: index.vector_search_sqlite(qv, k))
        sqlite_ms.append(ms)
        want = {ids[i] for i in top}
        overlap.append(len(want & {r[0] for r in rows}) / max(1, len(want)))
    return {"queries": len(numpy_ms), "k": k, "vectors": len(ids),
            "numpy_ms": stats(numpy_ms), "vector_search_ms": stats(knn_ms),
            "sqlite_vec_knn_ms": stats(sqlite_ms),
            "topk_agreement": sum(overlap) / len(overlap) if overlap else None}


# --- one vault, in a child process ----------------------------------------------------------


def measure_vault(vault_path: str | os.PathLike[str], *, embedder: str, queries: Sequence[str],
                  runs: int, preset: str = "default", label: str = "",
                  oracles: bool = True, turns_on: bool = True, reopen: bool = True,
                  keep_index: Path | None = None,
                  log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Every figure for one vault, measured in this process (call it in a fresh one). On a
    vault with raw turns the turn channel is switched on when `turns_on` (the presets leave
    it off), so its stage is timed beside the other channels; the result says which. With
    `reopen`, last, a fresh process re-opens the vault with the index built here
    (`reopen_child`). `keep_index`: the index is made (or found) in that folder
    (`bench_index_path`) and kept, instead of in a temporary folder."""
    from recall_tui.engine import Engine
    from recall_tui.engine.config import load_preset
    from recall_tui.engine.pipeline import settle_heap
    from recall_tui.index.store import Index
    from recall_tui.vault.readcache import cache_path, drop_read_cache
    from recall_tui.vault.reader import read_vault

    baseline_mb = peak_rss_mb()
    log(f"reading {vault_path} ...")
    # The first read parses every file (the reading cache is dropped first) and fills the
    # cache; the re-read is what opening the unchanged vault again costs (from the cache file:
    # letting the first Vault go lets go what the process kept of that read). Only one Vault
    # is alive at a time, so the peak memory is one vault's.
    drop_read_cache(str(vault_path))
    vault, read_ms = _timed(lambda: read_vault(vault_path, cache=True))
    vault = None
    vault, reread_ms = _timed(lambda: read_vault(vault_path, cache=True))
    # With that Vault alive, a re-read in the same process (the watcher's, a reload) takes
    # the unchanged files' records from what the process kept of its last read.
    _, reread_live_ms = _timed(lambda: read_vault(vault_path, cache=True))
    rc_path = cache_path(str(vault_path))
    rss_after_read = peak_rss_mb()
    if not vault.memories:
        raise ValueError(f"{vault_path}: holds no memories to benchmark")
    emb = make_bench_embedder(embedder)
    cfg = load_preset(preset, vault.root)
    turn_channel = "off (no turns)"
    if vault.turns:
        turn_channel = "on (preset)" if cfg.turns.enabled else "off (preset)"
        if turns_on and not cfg.turns.enabled:
            cfg = cfg.with_value("turns.enabled", True)
            turn_channel = "on (bench)"
    result: dict[str, Any] = {
        "label": label or Path(vault_path).name,
        "vault": str(vault_path),
        "memories": len(vault.memories),
        "turns": len(vault.turns),
        "turn_channel": turn_channel,
        "preset": preset,
        "config_hash": cfg.hash(),
        "embedder": {"name": emb.name, "model": emb.model, "dim": emb.dim,
                     "standin": emb.name == "standin"},
        "queries": len(queries),
        "runs": runs,
        "load_average": _loadavg(),
        "vault_read_ms": read_ms,
        "vault_reread_ms": reread_ms,
        "vault_reread_live_ms": reread_live_ms,
        "peak_rss_mb_after_read": rss_after_read,
        "read_cache_bytes": rc_path.stat().st_size if rc_path and rc_path.exists() else 0,
    }
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        index_path = (bench_index_path(keep_index, label or Path(vault_path).name, embedder)
                      if keep_index is not None else Path(tmp) / "index.sqlite")
        reused = index_path.exists()
        log(f"read {len(vault.memories)} memories in {read_ms / 1000:.1f} s; "
            + (f"opening the kept index {index_path.name}" if reused else "building the index")
            + f" ({emb.name}) ...")
        index, build_ms = _timed(lambda: Index.open(vault, emb, path=index_path))
        rep = index.report
        result["peak_rss_mb_after_build"] = peak_rss_mb()
        result["index_build"] = {
            "reused": reused,
            "ms": build_ms, "embed_ms": rep.embed_ms, "embedded": rep.embedded,
            "vectors": rep.vectors, "embedder": f"{emb.name} {emb.model}",
            "size_bytes": index.size_bytes(),
            "tables_bytes": table_sizes(index.path),
        }
        # Re-index one changed memory: change it, then change it back (two samples).
        target = sorted(vault.memories)[len(vault.memories) // 2]
        samples = []
        for v in (_changed_vault(vault, target, "bench"), vault):
            r, ms = _timed(lambda v=v: index.update_files(v))
            samples.append({"ms": ms, "index_ms": r.ms, "embed_ms": r.embed_ms,
                            "updated": r.updated, "embedded": r.embedded})
        result["reindex_one"] = {"memory": target, "samples": samples,
                                 "ms": max(s["ms"] for s in samples),
                                 "embed_ms": max(s["embed_ms"] for s in samples),
                                 "embedder": f"{emb.name} {emb.model}"}
        log(f"index built in {build_ms / 1000:.1f} s; recalling {len(queries)} queries "
            f"x (1 warm-up + {runs}) ...")
        engine = Engine(vault, index, cfg, preset=preset)
        # The first recall builds the engine's in-memory structures (BM25 postings...).
        _, first_ms = _timed(lambda: engine.recall(queries[0], now=BENCH_NOW))
        result["first_recall_ms"] = first_ms
        # One warm-up pass embeds every query once (the index keeps query vectors).
        for q in queries:
            engine.clear_cache()
            engine.recall(q, now=BENCH_NOW)
        settle_heap(vault)  # as the TUI's warm-up and the service's open do (engine/pipeline.py)
        per_stage: dict[str, list[float]] = {s: [] for s in STAGE_ORDER}
        # The stages' times on the queries the oracles use, for like-for-like ratios.
        oracle_set = set(queries[:ORACLE_QUERIES])
        oracle_stage: dict[str, list[float]] = {"keyword": [], "vector": []}
        skipped: dict[str, str] = {}
        total: list[float] = []
        wall: list[float] = []
        ex_embed: list[float] = []
        hits: list[int] = []
        for _ in range(runs):
            for q in queries:
                engine.clear_cache()
                trace, ms = _timed(lambda q=q: engine.recall(q, now=BENCH_NOW))
                wall.append(ms)
                total.append(trace.total_ms)
                hits.append(len(trace.hits))
                embed_ms = 0.0
                for s in trace.stages:
                    if s.skipped:
                        skipped.setdefault(s.name, s.reason)
                        continue
                    per_stage[s.name].append(s.ms)
                    if s.name in ("keyword", "vector") and q in oracle_set:
                        oracle_stage[s.name].append(s.ms)
                    if s.name == "vector":
                        embed_ms = float(s.info_dict().get("embed_ms", 0.0) or 0.0)
                ex_embed.append(trace.total_ms - embed_ms)
        log(f"pipeline p50 {percentile(total, 50):.1f} ms; embedding queries and oracles ...")
        fresh_embed = []
        for i, q in enumerate(queries):
            _, ms = _timed(lambda q=q, i=i: emb.embed([f"{q} #{i}"]))  # never cached
            fresh_embed.append(ms)
        result["stages"] = {
            name: {**stats(per_stage[name]), **({"skipped": skipped[name]}
                                               if not per_stage[name] and name in skipped else {})}
            for name in STAGE_ORDER
        }
        result["pipeline"] = {"traced_total_ms": stats(total), "wall_ms": stats(wall),
                              "excluding_query_embedding_ms": stats(ex_embed),
                              "mean_hits": sum(hits) / len(hits) if hits else 0}
        result["embed_query_ms"] = stats(fresh_embed)
        result["peak_rss_mb"] = peak_rss_mb()
        if vault.turns and (Path(vault.root) / "sessions").is_dir():
            from recall_tui.diagnostics.append_timing import time_append

            result["append_session"] = time_append(engine, now=BENCH_NOW, log=log)
        result["load_average_after"] = _loadavg()
        result["baseline_rss_mb"] = baseline_mb
        if cfg.fuzzy.enabled and cfg.fuzzy.trigram:
            result["fuzzy_modes"] = fuzzy_modes(engine, cfg, queries, runs)
        if oracles:
            sample = list(queries[:ORACLE_QUERIES])
            kw = keyword_oracle(engine, cfg, sample)
            st_kw = stats(oracle_stage["keyword"])
            kw["keyword_stage"] = st_kw
            kw["keyword_stage_ms"] = st_kw.get("p50")
            kw["speedup_vs_stage"] = _ratio(kw["rank_bm25_ms"], st_kw, "p50")
            kw["speedup_vs_stage_min"] = _ratio(kw["rank_bm25_ms"], st_kw, "min")
            kw["speedup_vs_search"] = _ratio(kw["rank_bm25_ms"], kw["keyword_search_ms"], "p50")
            result["keyword_vs_rank_bm25"] = kw
            vec = vector_oracle(engine, sample, cfg.k * max(1, cfg.vector.overfetch))
            if "numpy_ms" in vec:
                st_vec = stats(oracle_stage["vector"])
                vec["vector_stage"] = st_vec
                vec["vector_stage_ms"] = st_vec.get("p50")
                vec["ratio_stage_to_numpy"] = _ratio(st_vec, vec["numpy_ms"], "p50")
                vec["ratio_stage_to_numpy_min"] = _ratio(st_vec, vec["numpy_ms"], "min")
                vec["ratio_search_to_numpy"] = _ratio(vec["vector_search_ms"], vec["numpy_ms"],
                                                      "p50")
                vec["ratio_sqlite_vec_to_numpy"] = _ratio(vec["sqlite_vec_knn_ms"],
                                                          vec["numpy_ms"], "p50")
            result["vector_vs_numpy"] = vec
        index.close()
        if reopen:
            log("re-opening the unchanged vault in a fresh process ...")
            result["reopen"] = reopen_in_child(vault_path, index_path,
                                               embedder=embedder, query=queries[0],
                                               preset=preset, turns_on=cfg.turns.enabled,
                                               log=log)
    return result


def bench_index_path(folder: Path, label: str, embedder: str) -> Path:
    """Where `bench --keep-index FOLDER` keeps a vault's index: one file per vault label and
    embedder kind (`synth-100000+1000000t.standin.sqlite`)."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{label}.{embedder}.sqlite"


def reopen_in_child(vault_path: str | os.PathLike[str], index_path: Path, *, embedder: str,
                    query: str, preset: str, turns_on: bool,
                    log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """`reopen_child` in a fresh interpreter (the index the bench built, its vault unchanged),
    with the wall time from spawning it to the first recall's answer."""
    args = ["reopen", str(vault_path), "--index", str(index_path), "--embedder", embedder,
            "--query", query, "--preset", preset]
    if turns_on:
        args.append("--turns-on")
    marks, spawned = run_child(args, log)
    marks["process_ms"] = (marks.pop("result_at") - spawned) * 1000
    return marks


def reopen_child(vault_path: str, index_path: str, embedder: str, query: str, preset: str,
                 turns_on: bool) -> dict[str, Any]:
    """Issue 24's "re-open of the unchanged vault": in a fresh process, read the vault (its
    reading cache is there), open the index it already has, build the engine and answer one
    recall. Each phase's wall and CPU milliseconds (`phases`), and the first recall's stages."""
    t_start, c_start = time.perf_counter(), time.process_time()
    phases: dict[str, dict[str, float]] = {}

    def phase(name: str, fn: Callable[[], Any]) -> Any:
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        phases[name] = {"wall_ms": (time.perf_counter() - t) * 1000,
                        "cpu_ms": (time.process_time() - c) * 1000}
        return out

    # (The imports are part of `process_ms` only: this module's parent imported most.)
    from recall_tui.engine import Engine
    from recall_tui.engine.config import load_preset
    from recall_tui.index.store import Index
    from recall_tui.vault.reader import read_vault

    vault = phase("read", lambda: read_vault(vault_path, cache=True))
    emb = make_bench_embedder(embedder)
    index = phase("index_open", lambda: Index.open(vault, emb, path=Path(index_path)))
    cfg = load_preset(preset, vault.root)
    if turns_on and not cfg.turns.enabled:
        cfg = cfg.with_value("turns.enabled", True)
    engine = phase("engine", lambda: Engine(vault, index, cfg, preset=preset))
    trace = phase("first_recall", lambda: engine.recall(query, now=BENCH_NOW))
    result_at = time.time()
    marks: dict[str, Any] = {
        "result_at": result_at,
        "wall_ms": (time.perf_counter() - t_start) * 1000,
        "cpu_ms": (time.process_time() - c_start) * 1000,
        "phases": phases,
        "first_recall_stages_ms": {s.name: s.ms for s in trace.stages if not s.skipped},
        "index_report": {"added": index.report.added, "updated": index.report.updated,
                         "removed": index.report.removed, "embedded": index.report.embedded},
        "hits": len(trace.hits),
        "peak_rss_mb": peak_rss_mb(),
        "load_average": _loadavg(),
    }
    index.close()
    return marks


def typo(query: str) -> str:
    """The query with two neighbouring letters of its longest word swapped (a typing slip)."""
    words = query.split()
    if not words:
        return query
    i = max(range(len(words)), key=lambda j: len(words[j]))
    w = words[i]
    if len(w) >= 4:
        k = len(w) // 2
        words[i] = w[: k - 1] + w[k] + w[k - 1] + w[k + 1 :]
    return " ".join(words)


def fuzzy_modes(engine: Any, cfg: Any, queries: Sequence[str], runs: int) -> dict[str, Any]:
    """The fuzzy stage and the whole pipeline under `trigram_mode` correct and scan, run
    interleaved in this process (so both see the same load), on the queries and on each with
    a typo (`typo`); one warm-up pass per mode first."""
    variants = {m: replace(cfg, fuzzy=replace(cfg.fuzzy, trigram_mode=m))
                for m in ("correct", "scan")}
    out: dict[str, Any] = {}
    for label, qs in (("queries", list(queries)), ("typos", [typo(q) for q in queries])):
        got: dict[str, dict[str, list[float]]] = {m: {"fuzzy": [], "total": []}
                                                  for m in variants}
        for rnd in range(1 + max(1, runs)):
            for q in qs:
                for m, c in variants.items():
                    engine.clear_cache()
                    tr = engine.recall(q, now=BENCH_NOW, config=c)
                    if rnd == 0:
                        continue
                    fz = tr.stage("fuzzy")
                    if fz is not None and not fz.skipped:
                        got[m]["fuzzy"].append(fz.ms)
                    got[m]["total"].append(tr.total_ms)
        out[label] = {m: {"fuzzy_ms": stats(v["fuzzy"]), "total_ms": stats(v["total"])}
                      for m, v in got.items()}
    return out


def _loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages now (the machine may be shared)."""
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def table_sizes(path: str) -> dict[str, int]:
    """Bytes per table of an SQLite file (indexes and FTS5/vec0 shadow tables folded into
    the table they serve), from the `dbstat` virtual table; {} when this SQLite lacks it."""
    import apsw

    out: dict[str, int] = {}
    try:
        conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
        try:
            rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
            owners = dict(conn.execute("SELECT name, tbl_name FROM sqlite_schema").fetchall())
        finally:
            conn.close()
    except apsw.Error:
        return {}
    for name, size in rows:
        owner = owners.get(name, name)
        for shadow in ("_data", "_idx", "_docsize", "_config", "_content", "_rowids",
                       "_chunks", "_info", "_vector_chunks00"):
            if owner.endswith(shadow):
                owner = owner[: -len(shadow)]
                break
        out[owner] = out.get(owner, 0) + int(size)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def first_open_child(vault_path: str, embedder: str, query: str, preset: str,
                     wait_ready: bool) -> dict[str, Any]:
    """In a fresh process, on a vault with no index and no reading cache: the progressive
    open (`open_progressive`) up to the first keyword result, and up to every vector when
    `wait_ready`. Times are from this process's start (`result_at` for the parent)."""
    marks: dict[str, Any] = {}
    t = time.perf_counter()
    from recall_tui.engine.opening import open_progressive

    marks["import_ms"] = (time.perf_counter() - t) * 1000
    emb = make_bench_embedder(embedder) if embedder == "standin" else embedder
    opening = open_progressive(vault_path, preset=preset, embedder=emb)
    engine = opening.wait_usable()
    if engine is None:
        raise RuntimeError(f"{vault_path}: the open failed: {opening.status.error}")
    marks["usable_ms"] = opening.first_usable_ms
    t = time.perf_counter()
    trace = engine.recall(query)
    marks["first_recall_ms"] = (time.perf_counter() - t) * 1000
    marks["result_at"] = time.time()
    vec = trace.stage("vector")
    marks["vector_stage"] = (vec.reason if vec and vec.skipped else "ran")
    marks["hits"] = len(trace.hits)
    marks["memories"] = len(engine.vault.memories)
    if wait_ready:
        opening.wait_ready()
        marks["ready_ms"] = opening.ready_ms
        marks["embedded"] = engine.index.report.embedded
    marks["peak_rss_mb"] = peak_rss_mb()
    marks["load_average"] = _loadavg()
    return marks


def cold_start_child(vault_path: str, embedder: str, query: str, preset: str) -> dict[str, Any]:
    """In a fresh process: the phases from interpreter start to the first recall result."""
    marks: dict[str, float] = {}
    t = time.perf_counter()
    from recall_tui.engine import open_engine

    marks["import_ms"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    engine = open_engine(vault_path, preset=preset, embedder=embedder)
    marks["open_engine_ms"] = (time.perf_counter() - t) * 1000
    marks["index_ms"] = engine.index.report.ms if engine.index is not None else 0.0
    t = time.perf_counter()
    trace = engine.recall(query)
    marks["first_recall_ms"] = (time.perf_counter() - t) * 1000
    marks["result_at"] = time.time()  # epoch seconds: the parent compares it with the spawn
    vec = trace.stage("vector")
    marks["first_recall_embed_ms"] = float((vec.info_dict() if vec else {}).get("embed_ms", 0.0))
    marks["hits"] = len(trace.hits)
    marks["peak_rss_mb"] = peak_rss_mb()
    if engine.index is not None:
        engine.index.close()
    return marks
