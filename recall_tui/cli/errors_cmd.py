"""`recall-tui errors`: where the default loses to a seed preset on a judged set.

Runs the judged queries under the baseline (`--base`, default `default`) and every compared
preset (`--preset`, default: the five seed presets), and lists each question where the
baseline scores a lower recall@k (or the same recall@k and a lower MRR) than a compared
preset, grouped by category, with both presets' top hits side by side. The scores are those
of `recall-tui eval` (same scoring loop); this module arranges them. See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys

from recall_tui.vault.literal import dump_json, safe_print

HELP = "questions where the default loses to a seed preset, side by side"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from recall_tui.cli._common import positive_int

    p.add_argument("--vault", metavar="V", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--queries", metavar="FILE",
                   help="judged queries, one JSON object a line (default: "
                        "VAULT/.recall/golden.jsonl, the TUI's judgements, when it exists, else "
                        "VAULT/golden.jsonl)")
    p.add_argument("--base", default="default", metavar="P", help="the baseline preset (default: default)")
    p.add_argument("--preset", action="append", default=[], metavar="P",
                   help="a preset to compare with; repeatable (default: the five seed presets)")
    p.add_argument("--k", type=positive_int, default=10, metavar="N", help="cut-off (default 10)")
    p.add_argument("--top", type=positive_int, default=5, metavar="N",
                   help="hits shown per side (default 5)")
    p.add_argument("--now", metavar="T", help="pin the current time, ISO-8601 (default: now)")
    p.add_argument("--embedder", default="auto", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: auto)")
    p.add_argument("--json", action="store_true", help="print the losses as JSON")


def _err(msg: str) -> None:
    safe_print(f"recall-tui errors: {msg}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import judged_vault_or_say

    judged = judged_vault_or_say("errors", args)
    if judged is None:
        return 2
    root, now, qfile, golden = judged
    from recall_tui.engine import Engine, open_engine
    from recall_tui.engine.config import load_preset
    from recall_tui.tuning import errors

    names = errors.compared(args.base, args.preset)

    try:
        configs = [(p, load_preset(p, root)) for p in names]
        base = open_engine(root, preset=names[0], embedder=args.embedder, config=configs[0][1])
    except ValueError as exc:
        _err(str(exc))
        return 2
    try:
        engines = {name: base if name == names[0] else
                   Engine(base.vault, base.index, cfg, preset=name) for name, cfg in configs}
        results = errors.score_presets(engines, golden, k=args.k, now=now)
    finally:
        if base.index is not None:
            base.index.close()

    grouped = errors.losses(golden, results, names[0], top=args.top,
                            text=errors.hit_text(base.vault))
    if args.json:
        dump_json({"vault": str(root), "queries_file": str(qfile), "k": args.k,
                   "now": now.isoformat(), "baseline": names[0], "compared": names[1:],
                   "categories": errors.to_json(grouped)}, indent=2)
        return 0
    _render(grouped, names, len(golden), args.k)
    return 0


def _render(grouped, names, n, k) -> None:
    from rich.table import Table

    from recall_tui.cli._out import console, lit
    from recall_tui.tuning.errors import summary

    con = console(highlight=False)
    con.print(lit(summary(grouped, names, n, k)))
    for cat, rows in grouped.items():
        con.print(lit(f"\n== {cat}: {len(rows)}"))
        for x in rows:
            con.print(lit(f"\nline {x.line}: {x.query}  [lost on {x.metric}]"))
            con.print(lit(f"  relevant: {', '.join(x.relevant)}"))
            t = Table(header_style="bold", show_edge=False, expand=True)
            for s in (x.baseline, x.other):
                t.add_column(lit(f"{s.preset}  R@{k} {s.recall:.2f}  MRR {(s.mrr or 0):.2f}"),
                             overflow="fold", ratio=1)
            for a, b in zip(_cells(x.baseline.hits, len(x.other.hits)),
                            _cells(x.other.hits, len(x.baseline.hits)), strict=True):
                t.add_row(lit(a), lit(b))
            con.print(t)


def _cells(hits, other_len: int) -> list[str]:
    out = [f"{'*' if g > 0 else ' '} {mid}: {text}" for mid, g, text in hits]
    return out + [""] * (max(len(hits), other_len) - len(hits))
