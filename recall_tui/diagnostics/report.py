"""Bug reports: everything needed to understand (and reproduce) one query's recall.

`build_report(engine, query, repeat, now)` runs the query once cold and `repeat` more times
warm (the recall cache cleared before each run, so every stage really runs) and gathers the
versions, the platform, the vault and index facts, the full configuration and the trace.
`render_markdown` turns it into text ready to paste into an issue; `report_to_json` into its
JSON twin, which carries the full traces so `recall-tui replay` can open it. The CLI and the UI
call the same functions. Headless: no textual, no rich (their versions are read from package
metadata, never imported).
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from recall_tui.diagnostics.recording import (
    REPORT_KIND,
    REPORT_VERSION,
    file_stamp,
)
from recall_tui.engine.trace import STAGE_ORDER, Hit, Trace

#: Where reports go by default, relative to the vault root.
REPORTS_DIR = Path(".recall") / "reports"
#: Distributions whose versions a report lists (read from metadata, never imported).
_DISTRIBUTIONS: tuple[tuple[str, str], ...] = (
    ("recall-tui", "recall-tui"),
    ("textual", "textual"),
    ("rich", "rich"),
    ("apsw", "apsw"),
    ("sqlite-vec", "sqlite-vec"),
    ("onnxruntime", "onnxruntime"),
    ("numpy", "numpy"),
    ("tokenizers", "tokenizers"),
)


@dataclass(frozen=True)
class StageTiming:
    """One stage's time in the report: the cold run and the warm repeats."""

    name: str
    """Stage name (trace.STAGE_ORDER), or `total` for the whole recall."""
    cold_ms: float
    """Its time in the first recall."""
    p50_ms: float
    """Median over the warm repeats."""
    p95_ms: float
    """95th percentile over the warm repeats."""
    ran: int
    """Warm repeats in which the stage ran (was not skipped)."""
    note: str = ""
    """The cold run's skip reason or note (e.g. `disabled by the configuration`)."""


@dataclass(frozen=True)
class Report:
    """A bug report for one query, as written to Markdown and JSON."""

    created: str
    """When the report was made (ISO-8601 UTC, real time)."""
    query: str
    preset: str
    repeat: int
    """Warm repeats measured."""
    versions: tuple[tuple[str, str], ...]
    """(component, version): recall-tui, Python, libraries, SQLite, sqlite-vec, the embedder."""
    platform: tuple[tuple[str, str], ...]
    """(fact, value): OS, machine, CPU count."""
    vault: dict[str, Any]
    """Vault statistics: memories by type, role and status, chains, entities, problems."""
    index: dict[str, Any]
    """Index facts: schema version, size, embedder, vector count."""
    config_toml: str
    """The full configuration the query ran with."""
    config_hash: str
    timings: tuple[StageTiming, ...]
    """Per stage in pipeline order, then `total`."""
    problems: tuple[str, ...]
    """The reader's problems, `path:line: reason`."""
    trace: Trace
    """The cold run's trace (the hits are the same in every run of the same state)."""
    notes: tuple[str, ...] = ()
    """Caveats about the measurement (e.g. recall tracking changed the state between runs)."""
    first_run: str = "cold"
    """What the first run was: `cold` (a freshly opened engine, as `recall-tui report` runs
    it) or `first (warm process)` (from the TUI: the embedder, its query cache and the index
    were warm already; only the recall cache was cleared)."""


# --- measuring ------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between ranks (numpy's default);
    NaN for no values."""
    xs = sorted(values)
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def library_versions() -> list[tuple[str, str]]:
    """Versions of the packages that shape a recall, from metadata (nothing is imported)."""
    out = [("Python", platform.python_version())]
    for label, dist in _DISTRIBUTIONS:
        try:
            out.append((label, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((label, "not installed"))
    return out


def sqlite_versions() -> list[tuple[str, str]]:
    """SQLite (as bundled by apsw) and the sqlite-vec extension's own version string."""
    out: list[tuple[str, str]] = []
    try:
        import apsw
        import sqlite_vec
    except ImportError as exc:  # pragma: no cover - dependencies of the package
        return [("SQLite", f"unavailable ({exc})")]
    out.append(("SQLite", apsw.sqlite_lib_version()))
    try:
        conn = apsw.Connection(":memory:")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        (vec,) = conn.execute("SELECT vec_version()").fetchone()
        conn.close()
    except Exception as exc:  # a broken extension is itself worth reporting
        vec = f"cannot load: {exc}"
    out.append(("sqlite-vec (vec_version)", str(vec)))
    return out


def platform_facts() -> list[tuple[str, str]]:
    """OS, machine and CPU count."""
    return [
        ("OS", f"{platform.system()} {platform.release()}".strip()),
        ("machine", platform.machine() or "unknown"),
        ("CPUs", str(os.cpu_count() or "unknown")),
        ("Python implementation", f"{platform.python_implementation()} ({sys.platform})"),
    ]


def vault_stats(vault: Any) -> dict[str, Any]:
    """Counts a maintainer asks for first: memories by type, role and status, chains, entities."""
    mems = list(vault.memories.values())
    problems = list(vault.problems)
    return {
        "memories": len(mems),
        "by_type": dict(sorted(Counter(m.type for m in mems).items())),
        "by_role": dict(sorted(Counter(m.role.value for m in mems).items())),
        "by_status": dict(sorted(Counter(m.status for m in mems).items())),
        "chains": len(vault.chains),
        "entities": len(vault.graph.adjacency),
        "edges": len(vault.graph.edges),
        "digest_paragraphs": len(vault.digests),
        "turns": len(vault.turns),
        "problems": len(problems),
        "problem_errors": sum(1 for p in problems if p.severity == "error"),
    }


def index_facts(engine: Any) -> dict[str, Any]:
    """Schema version, file size and the embedder of the engine's index (None fields without)."""
    index = engine.index
    if index is None:
        return {"schema_version": None, "path": None, "size_bytes": 0, "embedder": "none",
                "model": "", "dim": 0, "vectors": 0}
    from recall_tui.index.schema import SCHEMA_VERSION

    info = dict(index.embedder_info or {})
    path = str(getattr(index, "path", ""))
    try:
        shown = str(Path(path).relative_to(Path(engine.vault.root)))
    except ValueError:
        shown = path
    return {
        "schema_version": SCHEMA_VERSION,
        "path": shown,
        "size_bytes": int(index.size_bytes()) if hasattr(index, "size_bytes") else 0,
        "embedder": info.get("name", "none"),
        "model": info.get("model", ""),
        "dim": info.get("dim", 0),
        "vectors": info.get("vectors", 0),
        "embed_error": info.get("error"),
    }


def _timings(cold: Trace, warm: Sequence[Trace]) -> tuple[StageTiming, ...]:
    out = []
    for name in STAGE_ORDER:
        c = cold.stage(name)
        runs = [s for s in (t.stage(name) for t in warm) if s is not None and not s.skipped]
        ms = [s.ms for s in runs]
        note = ""
        if c is not None:
            note = c.reason if c.skipped or c.reason else ""
        out.append(StageTiming(name, c.ms if c is not None else 0.0,
                               percentile(ms, 50) if ms else 0.0,
                               percentile(ms, 95) if ms else 0.0, len(runs), note))
    totals = [t.total_ms for t in warm]
    out.append(StageTiming("total", cold.total_ms, percentile(totals, 50) if totals else 0.0,
                           percentile(totals, 95) if totals else 0.0, len(totals)))
    return tuple(out)


def build_report(engine: Any, query: str, repeat: int = 20, now: datetime | None = None, *,
                 created: datetime | None = None, k: int | None = None,
                 as_of: datetime | None = None, why: Sequence[str] = (),
                 filters: Any = None, verbosity: str | None = None,
                 warm_process: bool = False) -> Report:
    """Run `query` once cold and `repeat` times warm on `engine` and gather the report.

    Cold is the first recall after the cache is cleared; from the CLI, where the engine was
    just opened, it also pays for building the engine's in-memory structures. Each warm run
    clears the recall cache first, so every stage runs (the index's query-embedding cache is
    kept: its time shows in the vector stage's `embed_ms`). `warm_process` says the engine
    served recalls before (the TUI): the first run is then labelled for what it is, the
    first recall after the recall cache was cleared, not a cold one.
    """
    repeat = max(0, int(repeat))
    # every run is asked exactly what the caller's screen asked: k, as-of, pins, filters
    asked = dict(now=now, k=k, as_of=as_of, why=list(why), filters=filters, verbosity=verbosity)
    engine.clear_cache()
    cold = engine.recall(query, **asked)
    warm = []
    for _ in range(repeat):
        engine.clear_cache()
        warm.append(engine.recall(query, **asked))
    cfg = engine.config
    notes = []
    if getattr(getattr(cfg, "tracking", None), "enabled", False):
        notes.append(f"recall tracking is on: the {repeat + 1} runs were each recorded as "
                     "recalls, which can change recall-count boosts between runs")
    if engine.index is None:
        notes.append("no index: the vector, fuzzy and signature channels ran without one")
    if warm_process:
        notes.append("made from a running session: the embedder, its query cache and the "
                     "index were warm, so the first run is not a cold start (run "
                     "`recall-tui report` for a cold one)")
    when = created or datetime.now(timezone.utc)
    emb = index_facts(engine)
    versions = library_versions() + sqlite_versions()
    versions.append(("embedder", f"{emb['embedder']} {emb['model']} (dim {emb['dim']})".strip()))
    return Report(
        created=when.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"),
        query=query,
        preset=getattr(engine, "preset", "default"),
        repeat=repeat,
        versions=tuple(versions),
        platform=tuple(platform_facts()),
        vault=vault_stats(engine.vault),
        index=emb,
        config_toml=cfg.to_toml(),
        config_hash=cfg.hash(),
        timings=_timings(cold, warm),
        problems=tuple(str(p) for p in engine.vault.problems),
        trace=cold,
        notes=tuple(notes),
        first_run="first (warm process)" if warm_process else "cold",
    )


# --- rendering ------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    return text.replace("|", "\\|")


def _code(value: Any) -> str:
    """Inline code that survives backticks (and newlines) in the text."""
    text = " ".join(str(value).splitlines())
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str, lang: str) -> str:
    """A fenced code block whose fence is longer than any backtick run inside `text`."""
    longest = 0
    current = 0
    for ch in text:
        current = current + 1 if ch == "`" else 0
        longest = max(longest, current)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _ms(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _hit_lines(h: Hit) -> list[str]:
    """A hit's explanation: channels, fusion, hop, boosts with reasons, rerank, MMR, final."""
    e = h.explain
    lines = [f"#### {h.rank}. {_code(h.id)} — {h.title}", ""]
    lines.append(f"- type {h.type}, scope {h.scope}, {h.staleness}, path {_code(h.path)}")
    if e.channels:
        parts = [f"{c.channel} raw {c.raw:.4g} rank {c.rank} (weight {c.weight:g}, "
                 f"+{c.contribution:.4g})" for c in e.channels]
        lines.append("- channels: " + "; ".join(parts))
    else:
        lines.append("- channels: none")
    if e.matched_terms:
        lines.append("- matched terms: " + "; ".join(
            f"{m.field}×{m.weight:g}: {' '.join(m.terms)}" for m in e.matched_terms))
    lines.append(f"- fused: {e.fused:.6g}")
    if e.hop is not None:
        lines.append(f"- 1-hop from {_code(e.hop.from_id)} via {e.hop.relation} "
                     f"(link {e.hop.link_score:g}, factor {e.hop.factor:g})")
    if e.boosts:
        lines.append("- boosts: " + "; ".join(
            f"{b.name} {'×' if b.mode == 'mul' else '+'}{b.value:.4g} ({b.reason})"
            for b in e.boosts))
    lines.append(f"- boosted: {e.boosted:.6g}")
    if e.rerank is not None:
        lines.append(f"- rerank: {e.rerank:.6g}")
    if e.mmr is not None:
        m = e.mmr
        closest = f", closest {_code(m.closest_id)}" if m.closest_id else ""
        runner = f", runner-up {_code(m.runner_up)}" if m.runner_up else ""
        lines.append(f"- MMR step {m.step}: relevance {m.relevance:.4g}, penalty "
                     f"{m.penalty:.4g}, λ {m.lam:g}, mmr {m.mmr:.4g}{closest}{runner}")
    lines.append(f"- final: {e.final:.6g}")
    for n in e.notes:
        lines.append(f"- note: {n}")
    for w in h.warnings:
        lines.append(f"- warning: {w}")
    lines.append("")
    return lines


#: The most characters a GitHub issue body takes: `render_markdown` stays under it.
ISSUE_BODY_LIMIT = 65_536


def render_markdown(report: Report, limit: int = ISSUE_BODY_LIMIT) -> str:
    """The report as GitHub-flavoured Markdown, ready to paste into an issue: within `limit`
    characters. The full trace, then the configuration, are left to the JSON twin (written
    next to it, `recall-tui replay` opens it) when the text would be longer; then the hits'
    explanations are shortened and the problem list cut, each saying so."""
    text = _markdown(report, trace=True, config=True)
    if len(text) > limit:
        text = _markdown(report, trace=False, config=True)
    if len(text) > limit:
        text = _markdown(report, trace=False, config=False)
    if len(text) > limit:
        text = _markdown(report, trace=False, config=False, short=True)
    if len(text) > limit:
        note = "\n\n(cut here to fit an issue: the rest is in the report's .json twin)\n"
        text = text[:limit - len(note)] + note
    return text


def _markdown(report: Report, *, trace: bool, config: bool, short: bool = False) -> str:
    r = report
    t = r.trace
    L: list[str] = [f"# recall-tui report: {_code(r.query)}", ""]
    L.append(f"Made {r.created} · preset {_code(r.preset)} · config hash "
             f"{_code(r.config_hash[:16])} · {r.first_run} run + {r.repeat} warm runs")
    L.append("")
    L += ["## Query", "", _fence(r.query, "text"), ""]
    L += _table(["k", "now", "as of", "verbosity", "hits", "cache hit"],
                [[t.k, t.now, t.as_of or "—", t.verbosity, len(t.hits), t.cache_hit]])
    parse = t.stage("query.parse")
    asked = [(a[len("filter "):], b) for a, b in (parse.info if parse else ())
             if a.startswith("filter ")]
    if asked:
        L += ["", "Filters asked for: " + ", ".join(f"{a} = {_code(b)}" for a, b in asked)]
    if t.why:
        L += ["", "Pinned (why not?): " + "; ".join(
            f"{_code(w.id)} " + (f"found at #{w.rank}" if w.found else
                                 f"out at {w.stage}: {_cell(w.reason)}") for w in t.why)]
    L.append("")
    L += ["## Versions", ""]
    L += _table(["component", "version"], r.versions)
    L += ["", "## Platform", ""]
    L += _table(["fact", "value"], r.platform)
    v = r.vault
    L += ["", "## Vault", ""]
    L += _table(["fact", "count"], [
        ["memories", v["memories"]], ["supersession chains", v["chains"]],
        ["entities", v["entities"]], ["entity edges", v["edges"]],
        ["digest paragraphs", v["digest_paragraphs"]], ["transcript turns", v["turns"]],
        ["problems", f"{v['problems']} ({v['problem_errors']} errors)"],
    ])
    L.append("")
    L += _table(["type", "memories"], list(v["by_type"].items()))
    L.append("")
    L += _table(["role", "memories"], list(v["by_role"].items()))
    L.append("")
    L += _table(["status", "memories"], list(v["by_status"].items()))
    ix = r.index
    L += ["", "## Index", ""]
    size = f"{ix['size_bytes'] / 1024:.0f} KiB" if ix.get("size_bytes") else "—"
    L += _table(["schema version", "size", "file", "embedder", "model", "dim", "vectors"],
                [[ix["schema_version"] if ix["schema_version"] is not None else "—", size,
                  ix.get("path") or "—", ix["embedder"], ix["model"] or "—", ix["dim"],
                  ix["vectors"]]])
    if ix.get("embed_error"):
        L += ["", f"Embedder problem: {ix['embed_error']}"]
    first = "cold" if r.first_run == "cold" else "first"
    L += ["", "## Timings (ms)", "",
          f"{first.capitalize()} = the first recall"
          + ("" if first == "cold" else " after the recall cache was cleared, in a warm "
             "process (not a cold start)")
          + f"; warm = {r.repeat} repeats with the recall cache cleared "
          "before each, so every stage runs.", ""]
    rows = [[(f"**{s.name}**" if s.name == "total" else s.name), _ms(s.cold_ms), _ms(s.p50_ms),
             _ms(s.p95_ms), f"{s.ran}/{r.repeat}", s.note] for s in r.timings]
    L += _table(["stage", first, "warm p50", "warm p95", "ran", "note"], rows)
    vec = t.stage("vector")
    if vec is not None and "embed_ms" in vec.info_dict():
        L += ["", f"Query embedding in the {first} run: {vec.info_dict()['embed_ms']} ms "
                  "(part of the vector stage"
              + ("; 0.0: its vector came from the index's query cache)."
                 if vec.info_dict()["embed_ms"] == "0.0" else ").")]
    for n in r.notes:
        L += ["", f"> Note: {n}"]
    L += ["", f"## Top hits ({len(t.hits)})", ""]
    if t.hits:
        L += _table(["#", "id", "score", "channels", "type", "staleness", "hop"],
                    [[h.rank, h.id, f"{h.score:.4g}", ", ".join(h.channels) or "—", h.type,
                      h.staleness, h.hop or ""] for h in t.hits])
        L.append("")
        for h in t.hits[:3] if short else t.hits:
            L += _hit_lines(h)
        if short and len(t.hits) > 3:
            L += [f"(the explanations of hits 4 to {len(t.hits)} are in the report's .json "
                  "twin: shortened to fit an issue)", ""]
    else:
        L += ["No hits.", ""]
    problems = r.problems[:20] if short else r.problems
    L += [f"## Reader problems ({len(r.problems)})", ""]
    L += [f"- {_cell(p)}" for p in problems] or ["None."]
    if len(problems) < len(r.problems):
        L += [f"- … and {len(r.problems) - len(problems)} more (in the report's .json twin)"]
    L += ["", "## Configuration", ""]
    if config:
        L += [f"<details><summary>Full configuration (TOML), hash {r.config_hash}</summary>",
              "", _fence(r.config_toml, "toml"), "", "</details>", ""]
    else:
        L += [f"The full configuration (hash {_code(r.config_hash)}) is in the report's .json "
              "twin (left out here to fit an issue).", ""]
    L += ["## Trace", ""]
    if trace:
        L += ["<details><summary>Full trace JSON (open with <code>recall-tui replay</code> "
              "after saving it as a .json file)</summary>", "",
              _fence(t.to_json(indent=2), "json"), "", "</details>", ""]
    else:
        L += ["The full trace is in the report's .json twin (left out here to fit an issue); "
              "`recall-tui replay` opens it.", ""]
    return "\n".join(L)


def report_to_json(report: Report) -> str:
    """The JSON twin: every figure of the Markdown plus the full trace dicts (for replay)."""
    r = report
    data = {
        "kind": REPORT_KIND,
        "report_version": REPORT_VERSION,
        "created": r.created,
        "query": r.query,
        "preset": r.preset,
        "repeat": r.repeat,
        "first_run": r.first_run,
        "versions": dict(r.versions),
        "platform": dict(r.platform),
        "vault": r.vault,
        "index": r.index,
        "config_hash": r.config_hash,
        "config_toml": r.config_toml,
        "timings": [
            {"stage": s.name, "cold_ms": round(s.cold_ms, 6),
             "p50_ms": round(s.p50_ms, 6), "p95_ms": round(s.p95_ms, 6), "ran": s.ran,
             "note": s.note}
            for s in r.timings
        ],
        "problems": list(r.problems),
        "notes": list(r.notes),
        "traces": [r.trace.to_dict()],
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


def write_report(report: Report, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write `report-<timestamp>.md` and `report-<timestamp>.json` into `out_dir` (created
    when missing); returns both paths. A name already taken gets a `-2`, `-3`... suffix."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    when = datetime.fromisoformat(report.created.replace("Z", "+00:00"))
    stem = f"report-{file_stamp(when)}"
    n = 1
    while True:  # the twins share one free name
        name = stem if n == 1 else f"{stem}-{n}"
        md, js = folder / f"{name}.md", folder / f"{name}.json"
        if not md.exists() and not js.exists():
            break
        n += 1
    md.write_text(render_markdown(report), encoding="utf-8")
    js.write_text(report_to_json(report) + "\n", encoding="utf-8")
    return md, js
