"""`recall-tui eval --queries FILE [--preset P]... [--k N] [--now T] [--json]`.

Runs every judged query of a golden file through the engine once per preset and scores the
rankings with recall@k, MRR and nDCG@k (`recall_tui.tuning.metrics`). With several presets, each one
is compared with the first, query by query (wins, losses, ties, a sign test and a paired
randomisation test). The numbers come from the engine's own traces; this module only
arranges them. See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from recall_tui.vault.literal import dump_json, safe_print

HELP = "score presets on judged queries: recall@k, MRR, nDCG@k"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from recall_tui.cli._common import positive_int

    p.add_argument("--vault", metavar="V", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--queries", metavar="FILE",
                   help="judged queries, one JSON object a line (default: "
                        "VAULT/.recall/golden.jsonl, the TUI's judgements, when it exists, else "
                        "VAULT/golden.jsonl)")
    p.add_argument("--preset", action="append", default=[], metavar="P",
                   help="preset name or .toml path; repeat to compare (the first is the baseline)")
    p.add_argument("--k", type=positive_int, default=10, metavar="N", help="cut-off for recall, nDCG, precision (default 10)")
    p.add_argument("--now", metavar="T",
                   help="pin the current time, ISO-8601 (default: now; the sample vault's figures "
                        "use 2026-11-21T09:00:00Z)")
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: auto; with --gate, the vault's active one)")
    p.add_argument("--per-query", action="store_true", help="also print every query's scores")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--plot", action="store_true",
                   help="also chart the evidence of relevant vs other hits and of on- vs "
                        "off-topic queries, with the calibrated floor")
    p.add_argument("--gate", metavar="BASELINE",
                   help="instead of scoring, run `recall-tui gate BASELINE` (a snapshot): exit 1 "
                        "when the preset (default: the vault's active one) is significantly "
                        "worse on the baseline's own query set")
    from recall_tui.cli.gate_cmd import add_alpha

    add_alpha(p)


def _err(msg: str) -> None:
    safe_print(f"recall-tui eval: {msg}", file=sys.stderr)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _result_json(q: Any, r: Any) -> dict[str, Any]:
    return {
        "query": r.query,
        "line": q.line,
        "as_of": q.as_of.isoformat() if q.as_of else None,
        "ranked": list(r.ranked),
        "judged": dict(r.judged),
        "metrics": dict(r.metrics),
        "unjudged": list(r.unjudged),
        "missed": list(r.missed),
    }


def _gate(args: argparse.Namespace) -> int:
    """`eval --gate BASELINE`: `recall-tui gate`, the same code, on the baseline's query set."""
    from recall_tui.cli.gate_cmd import run_gate

    if args.queries:
        _err("--gate re-runs the baseline snapshot's own query set; drop --queries "
             "(or take a new baseline with `recall-tui snapshot --queries`)")
        return 2
    if len(args.preset) > 1:
        _err("--gate checks one preset; give --preset at most once")
        return 2
    return run_gate(args.gate, vault=args.vault, preset=args.preset[0] if args.preset else None,
                    embedder=args.embedder, now=args.now, alpha=args.alpha, as_json=args.json)


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import judged_vault_or_say
    from recall_tui.tuning import metrics
    from recall_tui.tuning import why_empty as empty_mod

    if args.gate is not None:
        return _gate(args)
    judged = judged_vault_or_say("eval", args)
    if judged is None:
        return 2
    root, now, qfile, golden = judged
    presets = args.preset or ["default"]

    from recall_tui.engine import Engine, open_engine
    from recall_tui.engine.config import load_preset
    from recall_tui.tuning.golden import score_queries

    try:
        configs = [(p, load_preset(p, root)) for p in presets]
        base = open_engine(root, preset=presets[0], embedder=args.embedder or "auto",
                           config=configs[0][1])
    except ValueError as exc:
        _err(str(exc))
        return 2
    warnings: list[str] = []
    for q in golden:
        for mid in q.relevant:
            if base.vault.get(mid) is None:
                warnings.append(f"{qfile}:{q.line}: judged id {mid!r} is not in the vault")
    for w in warnings:
        safe_print(f"recall-tui eval: warning: {w}", file=sys.stderr)

    from recall_tui.tuning.why_empty import why_empty

    embedder = (base.index.embedder_info if base.index is not None else {}).get("name") or "none"
    results: dict[str, list[metrics.QueryResult]] = {}
    empties: dict[str, list[Any]] = {}
    dists: dict[str, Any] = {}
    from recall_tui.tuning.distribution import distribution
    try:
        for name, cfg in configs:
            engine = base if name == presets[0] else Engine(base.vault, base.index, cfg, preset=name)
            reasons: list[Any] = []
            traces: list[Any] = []

            def seen(_q: Any, tr: Any, rs: list[Any] = reasons, ts: list[Any] = traces) -> None:
                rs.append(why_empty(tr))
                ts.append(tr)

            results[name] = score_queries(engine, golden, k=args.k, now=now, on_trace=seen)
            empties[name] = reasons
            dists[name] = distribution(golden, traces)
    finally:
        if base.index is not None:
            base.index.close()
    comparisons = [
        metrics.compare(results[presets[0]], results[p], baseline_name=presets[0], candidate_name=p)
        for p in presets[1:]
    ]

    categorised = any(q.category for q in golden)
    if args.json:
        doc = {
            "vault": str(root),
            "queries_file": str(qfile),
            "k": args.k,
            "now": now.isoformat(),
            "embedder": embedder,
            "warnings": warnings,
            "presets": {
                name: {
                    "means": metrics.mean_metrics(rs),
                    "off_topic": metrics.off_topic_summary(golden, rs),
                    "evidence": dists[name],
                    "categories": metrics.by_category(golden, rs) if categorised else {},
                    "empty": empty_mod.summary_json(empties[name]),
                    "queries": [
                        {**_result_json(q, r), "category": q.category,
                         "empty_reason": empty_mod.reason_json(e)}
                        for q, r, e in zip(golden, rs, empties[name], strict=True)
                    ],
                }
                for name, rs in results.items()
            },
            "comparisons": [_comparison_json(c) for c in comparisons],
        }
        dump_json(doc, indent=2)
        return 0
    _render(args, golden, results, comparisons, now, qfile, empties)
    _render_off_topic(golden, results, dists, plot=args.plot)
    return 0


def _render_off_topic(golden, results, dists, *, plot: bool) -> None:
    """The off-topic figures (and with --plot the evidence chart) of every preset."""
    from recall_tui.tuning import metrics
    from recall_tui.tuning.distribution import chart_lines

    if any(q.off_topic for q in golden):
        safe_print("off-topic queries (nothing relevant; the means above are over the on-topic "
                   "queries only):")
        for name, rs in results.items():
            o = metrics.off_topic_summary(golden, rs)
            safe_print(f"  {name}: abstained on {o['abstained']}/{o['queries']} "
                       f"({_fmt(o['abstention'])}), mean injected {_fmt(o['mean_injected'])}")
    if plot:
        for name, dist in dists.items():
            if dist is None:
                safe_print(f"{name}: no calibrated floor, no evidence to chart")
                continue
            safe_print(f"evidence E = lexical + vector (0..2) under {name}, floor {dist['floor']}:")
            for line in chart_lines(dist):
                safe_print(line)


def _comparison_json(c: Any) -> dict[str, Any]:
    return {
        "baseline": c.baseline,
        "candidate": c.candidate,
        "test": "exact two-sided sign test; paired randomisation test on the mean delta",
        "metrics": {
            name: {
                "baseline_mean": mc.baseline_mean,
                "candidate_mean": mc.candidate_mean,
                "mean_delta": mc.mean_delta,
                "deltas": list(mc.deltas),
                "wins": mc.wins,
                "losses": mc.losses,
                "ties": mc.ties,
                "sign_p": mc.sign_p,
                "randomisation_p": mc.randomisation_p,
            }
            for name, mc in c.metrics.items()
        },
    }


def _render(args, golden, results, comparisons, now, qfile, empties) -> None:
    from rich.table import Table

    from recall_tui.cli._out import console, esc, lit
    from recall_tui.tuning import metrics
    from recall_tui.tuning import why_empty as empty_mod

    con = console(highlight=True)
    k = args.k
    con.print(f"[bold]{len(golden)}[/] judged queries from {esc(qfile)}, k={k}, now={now.isoformat()}")
    if args.per_query:
        for name, rs in results.items():
            t = Table(title=lit(f"per query: {name}"), title_justify="left", header_style="bold", show_edge=False)
            for col in ("line", "query", f"R@{k}", "MRR", f"nDCG@{k}", "missed", "unjudged"):
                t.add_column(col, overflow="fold")
            for q, r in zip(golden, rs, strict=True):
                t.add_row(str(q.line), lit(q.query), _fmt(r.metrics["recall"]), _fmt(r.metrics["mrr"]),
                          _fmt(r.metrics["ndcg"]), lit(", ".join(r.missed)), lit(", ".join(r.unjudged)))
            con.print(t)
    t = Table(header_style="bold", show_edge=False)
    for col in ("preset", f"recall@{k}", "MRR", f"nDCG@{k}", f"P@{k}", "scored", "unjudged hits"):
        t.add_column(col, justify="right" if col != "preset" else "left")
    for name, rs in results.items():
        means = metrics.mean_metrics(rs)
        scored = sum(1 for r in rs if r.metrics["recall"] is not None)
        t.add_row(lit(name), _fmt(means["recall"]), _fmt(means["mrr"]), _fmt(means["ndcg"]),
                  _fmt(means["precision"]), f"{scored}/{len(rs)}", str(sum(len(r.unjudged) for r in rs)))
    con.print(t)
    for name in results:
        for n, line in enumerate(empty_mod.summarise(empties[name])):
            con.print(lit(f"{name}: {line}" if n == 0 else f"  {line}"), overflow="fold")
    if any(q.category for q in golden):
        ct = Table(title="per category", title_justify="left", header_style="bold", show_edge=False)
        for col in ("category", "queries", "preset", f"recall@{k}", "MRR", f"nDCG@{k}"):
            ct.add_column(col, justify="left" if col in ("category", "preset") else "right")
        cats = {name: metrics.by_category(golden, rs) for name, rs in results.items()}
        first = next(iter(cats.values()))
        for cat, row in first.items():
            for n, name in enumerate(results):
                c = cats[name][cat]
                ct.add_row(lit(cat if n == 0 else ""), str(row["queries"]) if n == 0 else "",
                           lit(name), _fmt(c["recall"]), _fmt(c["mrr"]), _fmt(c["ndcg"]),
                           end_section=n == len(results) - 1)
        con.print(ct)
    for c in comparisons:
        ct = Table(title=lit(f"{c.candidate} vs {c.baseline} (paired, per query)"), title_justify="left",
                   header_style="bold", show_edge=False)
        for col in ("metric", c.baseline, c.candidate, "Δ mean", "wins", "losses", "ties",
                    "sign p", "rand. p"):
            ct.add_column(lit(col), justify="right" if col != "metric" else "left")
        for name in ("recall", "mrr", "ndcg"):
            mc = c.metrics[name]
            delta = mc.mean_delta
            ct.add_row(name, _fmt(mc.baseline_mean), _fmt(mc.candidate_mean),
                       "-" if delta is None else f"{delta:+.3f}", str(mc.wins), str(mc.losses),
                       str(mc.ties), f"{mc.sign_p:.3g}", f"{mc.randomisation_p:.3g}")
        con.print(ct)
