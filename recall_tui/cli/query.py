"""`recall-tui query TEXT`: run one recall and print its hits, its stages and the answers to
`--why`. With `--json` the output is `Trace.to_dict()` (schema in docs/trace.md), a stable
contract for scripts; without it, a table for people."""

from __future__ import annotations

import argparse
import sys

from recall_tui.agent.active import resolve
from recall_tui.cli._common import is_folder_or_say, positive_int, time_arg, vault_root
from recall_tui.engine import Filters
from recall_tui.vault.literal import dump_json, safe_print
from recall_tui.vault.model import lean_summary

HELP = "run one recall and print its hits and trace"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help="the query")
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--preset", help="preset name or .toml path (default: the vault's active "
                   "preset, see `recall-tui preset use`, else default)")
    p.add_argument("--k", type=positive_int, help="number of hits (default: the preset's k)")
    p.add_argument("--now", help="pin the current time (ISO-8601)")
    p.add_argument("--as-of", dest="as_of", help="bi-temporal as-of time (ISO-8601)")
    p.add_argument("--why", action="append", default=[], metavar="ID",
                   help="explain where this memory fell out (repeatable)")
    p.add_argument("--verbosity", choices=("lean", "full"), help="payload size (default: the preset's)")
    p.add_argument("--json", action="store_true", help="print the trace as JSON")
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: the vault's active embedder, else auto)")
    p.add_argument("--include-inbox", action="store_true", help="also recall _inbox/ memories")
    p.add_argument("--include-superseded", action="store_true", help="also recall superseded memories")
    p.add_argument("--include-turns", action="store_true", help="also search raw transcript turns")
    p.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                   help="only memories of this type (repeatable)")
    p.add_argument("--topic-key", help="exact topic_key for the topic channel")
    p.add_argument("--exclude", action="append", default=[], metavar="ID[,ID...]",
                   help="never recall these ids (as a hook excludes what it injected already; "
                        "a log entry's trace lists them as `filter exclude`)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.engine import open_engine

    root = vault_root(args.vault)
    try:
        now = time_arg(args.now, "--now")
        as_of = time_arg(args.as_of, "--as-of")
    except ValueError as exc:
        safe_print(f"recall-tui query: {exc}", file=sys.stderr)
        return 2
    if not is_folder_or_say("recall-tui query", root):
        return 2
    act = resolve(root, args.preset, args.embedder)
    try:
        engine = open_engine(root, preset=act.preset, embedder=act.embedder)
    except ValueError as exc:
        safe_print(f"recall-tui query: {exc}", file=sys.stderr)
        return 2
    if engine.index is not None and engine.index.report.in_memory:
        # Said once per run: recall works, but nothing (index, statistics) is saved.
        safe_print(f"recall-tui query: note: {engine.index.report.location_note}", file=sys.stderr)
    filters = Filters(
        types=tuple(args.types),
        include_inbox=True if args.include_inbox else None,
        include_superseded=True if args.include_superseded else None,
        include_turns=True if args.include_turns else None,
        exclude=tuple(i for arg in args.exclude for i in arg.split(",") if i),
    )
    trace = engine.recall(args.text, k=args.k, now=now, as_of=as_of, why=args.why,
                          verbosity=args.verbosity, topic_key=args.topic_key, filters=filters)
    if engine.index is not None:
        engine.index.close()
    for w in trace.warnings():
        safe_print(f"recall-tui query: warning: {w}", file=sys.stderr)
    if args.json:
        dump_json(trace.to_dict(), indent=2)
        return 0
    render(trace)
    return 0


def render(trace) -> None:
    """Hits, stages and why answers as rich tables; every text from the trace shown literally."""
    from rich.table import Table

    from recall_tui.cli._out import console, esc, lit

    con = console()
    con.print(f"[bold]{esc(repr(trace.query))}[/] preset [cyan]{esc(trace.preset)}[/] k={trace.k} "
              f"now={esc(trace.now)}" + (f" as_of={esc(trace.as_of)}" if trace.as_of else "")
              + f"  {trace.total_ms:.1f} ms" + ("  [yellow](cache hit)[/]" if trace.cache_hit else ""))
    t = Table(show_edge=False, header_style="bold")
    width = max((len(h.id) for h in trace.hits), default=2)
    t.add_column("#", justify="right", min_width=2)
    t.add_column("score", justify="right", min_width=5)
    t.add_column("id", no_wrap=True, min_width=min(width, 40))
    t.add_column("channels", overflow="fold", min_width=12)
    t.add_column("type / state", overflow="fold", min_width=10)
    t.add_column("summary", overflow="fold")
    for h in trace.hits:
        chans = "+".join(h.channels) + (" 1-hop" if h.hop else "")
        t.add_row(str(h.rank), f"{h.score:.1f}", lit(h.id, single_line=True), lit(chans),
                  lit(f"{h.type} {h.staleness}"), lit(lean_summary(h.summary, 70), single_line=True))
    if trace.hits:
        con.print(t)
    else:
        con.print("[dim]no hits[/]")
    s = Table(show_edge=False, header_style="bold", title="stages", title_justify="left")
    for col in ("stage", "ms", "out", "dropped", "note"):
        s.add_column(col, overflow="fold")
    for st in trace.stages:
        s.add_row(lit(st.name), "-" if st.skipped else f"{st.ms:.1f}",
                  "-" if st.skipped else str(len(st.candidates)), str(len(st.dropped) or ""),
                  lit(("skipped: " if st.skipped else "") + st.reason))
    con.print(s)
    for w in trace.why:
        head = f"rank {w.rank}" if w.found else f"{w.stage}: {w.reason}"
        con.print(f"[bold]why {esc(w.id)}[/]: {esc(head)}" + ("" if not w.found else f" ({esc(w.reason)})"))
        for d in w.details:
            con.print(lit(f"    {d}"))
