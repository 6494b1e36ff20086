"""`recall-tui replay FILE`: open a recording or a report's JSON in the UI, read only.

The file is validated first (a bad line or an unsupported trace version is reported with the
file, the line and the reason). `--print` writes each trace's summary as text instead; the
same text is shown when the UI has no replay mode yet.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from recall_tui.engine.trace import Trace
from recall_tui.vault.literal import literal, literal_line, safe_print

HELP = "open a recorded trace or a report's JSON in the UI, read only"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE",
                   help="a recording (.recall/recordings/*.jsonl) or a report's .json twin")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the traces' summaries (query, hits, stages) instead of the UI")


def summarize(trace: Trace, number: int) -> list[str]:
    """A few lines that say what one recall did: inputs, hits, and stage times (shown
    literally: the caller may print them as they are)."""
    t = trace
    head = (f"#{number} query {t.query!r} · preset {t.preset} · k {t.k} · now {t.now}"
            + (f" · as of {t.as_of}" if t.as_of else "")
            + f" · {t.total_ms:.1f} ms" + (" · cache hit" if t.cache_hit else ""))
    lines = [head]
    if t.hits:
        width = max(len(h.id) for h in t.hits)
        for h in t.hits:
            chans = ",".join(h.channels) or "-"
            hop = " 1-hop" if h.hop else ""
            lines.append(f"  {h.rank:>2}. {literal_line(h.id):<{width}}  {h.score:8.4f}  {chans}{hop}  "
                         f"{literal_line(h.title)}")
    else:
        lines.append("  no hits")
    ran = [f"{s.name} {s.ms:.1f}" for s in t.stages if not s.skipped]
    skipped = [f"{s.name}: {s.reason or 'skipped'}" for s in t.stages if s.skipped]
    lines.append("  stages ms: " + ", ".join(ran))
    if skipped:
        lines.append("  skipped: " + "; ".join(skipped))
    for w in t.why:
        where = f"rank {w.rank}" if w.found else f"fell out at {w.stage}"
        lines.append(f"  why {w.id}: {where}: {w.reason}")
    return [literal(line) for line in lines]


def print_summaries(traces: Sequence[Trace], source: Path, out=None) -> None:
    """The text replay: one block per trace."""
    out = out or sys.stdout
    safe_print(f"{source}: {len(traces)} trace{'s' if len(traces) != 1 else ''}", file=out)
    for i, t in enumerate(traces, 1):
        print("", file=out)
        print("\n".join(summarize(t, i)), file=out)


def _tui_replay():
    """The UI's replay entry point."""
    from recall_tui.tui.replay import run_replay

    return run_replay


def run(args: argparse.Namespace) -> int:
    from recall_tui.diagnostics.recording import RecordingError, load_traces

    path = Path(args.file)
    try:
        traces = load_traces(path)
    except RecordingError as exc:
        safe_print(f"recall-tui replay: {exc}", file=sys.stderr)
        return 2
    if args.print_only:
        print_summaries(traces, path)
        return 0
    replay = _tui_replay()
    if replay is None:
        print_summaries(traces, path)
        print("\n(the UI's replay mode is not built yet: the traces are printed as text)",
              file=sys.stderr)
        return 0
    return int(replay(traces, source=path) or 0)
