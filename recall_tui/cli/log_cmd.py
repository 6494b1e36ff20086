"""`recall-tui log [--vault V] [--json] [--session S] [--since T] [--limit N]`: the recalls
served to agents (hooks and MCP), newest first, from the flight recorder
(recall_tui/agent/log.py).

`recall-tui log show ID [--rerun [PRESET]] [--json]` opens one entry: the prompt, preset, k,
filters, what was injected and the exact text the agent got (printed literally: control
characters shown, never interpreted); `--rerun` runs it again under PRESET (default: the
vault's active preset) with the entry's k, time and filters, and prints what changed."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from recall_tui.vault.literal import json_text, literal_line, safe_print

if TYPE_CHECKING:
    from recall_tui.agent.log import AgentRecall
    from recall_tui.agent.rerun import RerunDiff
    from recall_tui.engine.trace import Trace

HELP = "list the recalls served to agents (hooks, MCP), newest first"

_REL = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_arg(text: str) -> datetime:
    """argparse type: an ISO-8601 time, or an age such as 30m, 2h, 7d."""
    m = _REL.match(text.strip())
    if m:
        return datetime.now(timezone.utc) - timedelta(seconds=float(m.group(1)) * _UNIT[m.group(2)])
    from recall_tui.cli._common import iso_time

    try:
        return iso_time(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"not an ISO-8601 time nor an age like 30m, 2h, 7d: {text!r}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--json", action="store_true", help="one JSON object per recall, full trace included")
    p.add_argument("--session", help="only this session id (a prefix is enough)")
    p.add_argument("--since", type=since_arg, help="only recalls since this time (ISO-8601 or 30m, 2h, 7d)")
    p.add_argument("--limit", type=int, default=None, help="at most this many (newest first)")
    p.add_argument("--follow", "-f", action="store_true",
                   help="then keep printing new recalls as agents get them (Ctrl-C stops)")
    p.set_defaults(recall_id=None, rerun=None)
    sub = p.add_subparsers(dest="action", metavar="{show,sample}", required=False)
    show = sub.add_parser("show", help="open one entry: its prompt, configuration, what was "
                                       "injected and the exact text the agent got")
    show.add_argument("recall_id", metavar="ID", help="the entry's id (a unique prefix is enough)")
    show.add_argument("--rerun", nargs="?", const="", default=None, metavar="PRESET",
                      help="re-run the entry under PRESET (default: the vault's active preset) "
                           "with its k, time and filters, and print the difference")
    show.add_argument("--vault", default=argparse.SUPPRESS,
                      help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="the entry (and the re-run's difference) as one JSON object")
    sample = sub.add_parser("sample", help="write a query set from the logged prompts (secrets "
                                           "dropped, near-duplicates merged), to judge or snapshot")
    sample.add_argument("--n", type=int, default=50, metavar="N", help="queries to pick (default 50)")
    sample.add_argument("--by", choices=("recent", "frequent", "random"), default="recent",
                        help="newest first, most asked first, or seeded random (default recent)")
    sample.add_argument("--seed", type=int, default=0, help="seed of --by random (default 0)")
    sample.add_argument("--exclude", action="append", default=[], metavar="REGEX",
                        help="never sample prompts matching REGEX (repeatable; likely secrets "
                             "are always excluded)")
    sample.add_argument("--max-chars", type=int, default=300, metavar="C",
                        help="cut longer prompts to their question (default 300)")
    sample.add_argument("--out", metavar="FILE",
                        help="write the query set here (JSON lines; default: standard output)")
    sample.add_argument("--vault", default=argparse.SUPPRESS,
                        help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    sample.add_argument("--coverage", action="store_true",
                        help="also recall the set under the vault's active preset and say how "
                             "many of its top-k results are still unjudged (in the judged "
                             "queries eval reads by default)")


def run(args: argparse.Namespace) -> int:
    from recall_tui.agent.log import prune, read_agent_log
    from recall_tui.cli._common import is_folder_or_say, vault_root

    root = vault_root(args.vault)
    if not is_folder_or_say("recall-tui log", root):
        return 2
    if args.limit is not None and args.limit < 1:
        safe_print("recall-tui log: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.action == "show":
        return _show_one(root, args)
    if args.action == "sample":
        return _sample(root, args)
    prune(root)
    from recall_tui.agent.log import LogTail

    tail = LogTail(root) if args.follow else None  # before reading: nothing falls in between
    recs = read_agent_log(root, session=args.session, since=args.since, limit=args.limit)
    seen = {r.id for r in recs}
    if not recs and not args.json:
        safe_print(f"no agent recalls recorded in {root / '.recall' / 'agent'}")
    _show(recs, args.json)
    if tail is None:
        return 0
    import time

    while True:
        new = [r for r in tail.poll() if r.id not in seen
               and (not args.session or r.session_id.startswith(args.session))]
        if new:
            _show(new, args.json)  # oldest first, below what is already shown
        time.sleep(0.5)


def _show(recs, as_json: bool) -> None:
    if as_json:
        for r in recs:
            sys.stdout.write(json_text(r.to_dict()) + "\n")
        sys.stdout.flush()
        return
    for r in recs:
        what = r.prompt if r.prompt else (f"source={r.source}" if r.source else "")
        ids = ", ".join(r.injected_ids) or "-"
        more = f" (+{len(r.left_out_ids)} left out)" if r.left_out_ids else ""
        skipped = f"  skipped: {r.skipped}" if r.skipped else ""
        safe_print(literal_line(f"{r.time}  {r.id}  {r.served_by}/{r.event}  session {r.session_id[:12] or '-'}  "
                       f"{r.preset}/{r.embedder}  {r.ms:.0f} ms  [{r.path}]"))
        safe_print("    " + literal_line(what, 200))
        if r.about_ids:  # why_not / load_memory: an answer about a memory, not an injection
            safe_print(literal_line(f"    about {', '.join(r.about_ids)}{skipped}"))
        else:
            safe_print(literal_line(f"    -> {ids}{more}{skipped}"))
    sys.stdout.flush()


def _show_one(root: Path, args: argparse.Namespace) -> int:
    from recall_tui.agent.log import find_recall

    if not args.recall_id:
        safe_print("recall-tui log show: give the entry's ID (see `recall-tui log`)", file=sys.stderr)
        return 2
    rec = find_recall(root, args.recall_id)
    if rec is None:
        safe_print(f"recall-tui log show: no single entry with id {args.recall_id!r} in "
                   f"{root / '.recall' / 'agent'} (unknown, or a prefix of several)", file=sys.stderr)
        return 1
    rerun = None
    if args.rerun is not None:
        from recall_tui.agent.rerun import rerun as do_rerun

        try:
            rerun = do_rerun(root, rec, args.rerun or None)
        except ValueError as exc:
            safe_print(f"recall-tui log show: {exc}", file=sys.stderr)
            return 2
    if args.json:
        out = rec.to_dict()
        if rerun is not None:
            trace, d, warning = rerun
            out["rerun"] = {"preset": trace.preset, "config_hash": trace.config_hash,
                            "warning": warning, "diff": d.to_dict()}
        sys.stdout.write(json_text(out) + "\n")
        sys.stdout.flush()
        return 0
    _print_entry(rec)
    if rerun is not None:
        _print_rerun(rec, *rerun)
    sys.stdout.flush()
    return 0


def _print_entry(rec: AgentRecall) -> None:
    from recall_tui.agent.rerun import filters_of

    trace = rec.trace
    safe_print(f"{rec.id}  {rec.served_by}/{rec.event}  {rec.time}  "
               f"session {literal_line(rec.session_id or '-')}  [{rec.path}]  {rec.ms:.0f} ms")
    safe_print("prompt:   " + literal_line(rec.prompt or (f"source={rec.source}" if rec.source else "-")))
    config = f"preset {rec.preset}  embedder {rec.embedder}"
    if rec.config_hash:
        config += f"  config {rec.config_hash[:12]}"
    safe_print(config)
    if trace is not None:
        asked = {k: v for k, v in vars(filters_of(trace)).items() if v not in (None, ())}
        safe_print(f"k {trace.k}  now {trace.now}" + (f"  as_of {trace.as_of}" if trace.as_of else "")
                   + "  filters " + literal_line(", ".join(f"{k}={v}" for k, v in asked.items()) or "-"))
        safe_print("hits:     " + (", ".join(h.id for h in trace.hits) or "-"))
    if rec.warning:
        safe_print("warning:  " + literal_line(rec.warning))
    if rec.note:
        safe_print("note:     " + literal_line(rec.note))
    if rec.skipped:
        safe_print("skipped:  " + literal_line(rec.skipped))
    if rec.about_ids:
        safe_print(f"about:    {', '.join(rec.about_ids)} ({rec.event}: nothing injected)")
    else:
        left = f"  (left out: {', '.join(rec.left_out_ids)})" if rec.left_out_ids else ""
        safe_print(f"injected: {', '.join(rec.injected_ids) or '-'}{left}")
    safe_print(f"--- the exact text the agent got ({len(rec.injected_text):,} characters) ---")
    safe_print(rec.injected_text)
    safe_print("--- end ---")


def _print_rerun(rec: AgentRecall, trace: Trace, d: RerunDiff, warning: str) -> None:
    safe_print(f"re-run under preset {trace.preset} (config {trace.config_hash[:12]}), "
               "same k, time and filters:")
    if warning:
        safe_print("warning:  " + literal_line(warning))
    safe_print("hits:     " + (", ".join(d.after) or "-"))
    if not (d.gained or d.lost or d.moved):
        safe_print("same ids in the same order")
        return
    for i in d.gained:
        safe_print(f"  + {i} (rank {d.after.index(i) + 1})")
    for i in d.lost:
        safe_print(f"  - {i} (was rank {d.before.index(i) + 1})")
    for i, a, b in d.moved:
        safe_print(f"  ~ {i}: rank {a} -> {b}")


def _sample(root: Path, args: argparse.Namespace) -> int:
    """`log sample`: a query set from the logged prompts (recall_tui.agent.sample)."""
    from recall_tui.agent.log import read_agent_log
    from recall_tui.agent.sample import sample_prompts

    if args.n < 1 or args.max_chars < 20:
        safe_print("recall-tui log sample: --n must be at least 1 and --max-chars at least 20",
                   file=sys.stderr)
        return 2
    recs = read_agent_log(root, session=args.session, since=args.since)
    try:
        res = sample_prompts(recs, n=args.n, by=args.by, seed=args.seed, exclude=args.exclude,
                             limit=args.max_chars)
    except ValueError as exc:
        safe_print(f"recall-tui log sample: {exc}", file=sys.stderr)
        return 2
    text = "".join(json_text(q.to_dict()) + "\n" for q in res.queries)
    summary = (f"{len(res.queries)} queries from {res.prompts} logged prompts "
               f"({res.merged} near-duplicates merged, {res.secret} dropped as likely secrets, "
               f"{res.excluded} by --exclude)")
    if args.out:
        from recall_tui.vault.edit import atomic_write

        out = Path(args.out)
        if not out.parent.is_dir():
            safe_print(f"recall-tui log sample: {out}: its folder does not exist", file=sys.stderr)
            return 2
        atomic_write(out, text.encode("utf-8"), 0o600)
        safe_print(f"wrote {out}: {summary}")
    else:
        sys.stdout.write(text)
        safe_print(summary, file=sys.stderr)
    if args.coverage and res.queries:
        return _coverage(root, [q.query for q in res.queries], to_err=not args.out)
    return 0


def _coverage(root: Path, queries: list[str], *, to_err: bool) -> int:
    """`log sample --coverage`: the set recalled under the active preset (its k, now), its
    unjudged top-k results counted against the judged queries file `eval` reads by default."""
    from datetime import datetime, timezone

    from recall_tui.cli.snapshot_cmd import open_run, take_with
    from recall_tui.tuning.golden import default_queries_file
    from recall_tui.tuning.snapshot import SetQuery, coverage, judged_queries

    engine = open_run("log sample", argparse.Namespace(vault=str(root), preset=None, embedder=None))
    if engine is None:
        return 2
    judged_file = default_queries_file(root)
    try:
        judged = judged_queries(judged_file)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        safe_print(f"recall-tui log sample: {exc}", file=sys.stderr)
        return 2
    snap = take_with(engine, [SetQuery(q, n) for n, q in enumerate(queries, start=1)],
                     k=engine.config.k, now=datetime.now(timezone.utc))
    safe_print(f"coverage: {coverage(snap, judged).line()} (judged in {judged_file.name})",
               file=sys.stderr if to_err else sys.stdout)
    return 0
