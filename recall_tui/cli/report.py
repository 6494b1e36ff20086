"""`recall-tui report QUERY`: write a bug report (Markdown + its JSON twin) for one query."""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path

from recall_tui.cli._common import is_folder_or_say, iso_time, positive_int
from recall_tui.vault.literal import safe_print

HELP = "write a bug report (Markdown + JSON) for one query"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="the query to report on")
    p.add_argument("--vault", default=".", help="the vault folder (default: .)")
    p.add_argument("--preset", default="default", help="preset name or TOML file (default: default)")
    p.add_argument("--embedder", default="auto", help="auto | local | ollama | none (default: auto)")
    p.add_argument("--repeat", type=positive_int, default=20, metavar="N",
                   help="warm runs timed after the cold one (default: 20)")
    p.add_argument("--now", type=iso_time, help="pin the clock, e.g. 2026-11-21T09:00Z")
    p.add_argument("--out", metavar="DIR",
                   help="folder for the two files (default: VAULT/.recall/reports/)")
    p.add_argument("--copy", action="store_true",
                   help="also copy the Markdown to the clipboard (OSC 52 via the terminal)")


def osc52_sequence(text: str, *, tmux: bool = False) -> bytes:
    """The OSC 52 "set clipboard" escape for `text` (wrapped for tmux's passthrough)."""
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    seq = f"\x1b]52;c;{payload}\x07"
    if tmux:
        seq = "\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return seq.encode("ascii")


def copy_to_clipboard(text: str) -> str | None:
    """Send `text` to the terminal's clipboard through /dev/tty; the reason when it cannot.
    Whether the terminal honours OSC 52 cannot be checked from here."""
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError as exc:
        return f"no terminal to send OSC 52 to (/dev/tty: {exc.strerror or exc})"
    try:
        os.write(fd, osc52_sequence(text, tmux=bool(os.environ.get("TMUX"))))
    except OSError as exc:
        return f"writing to /dev/tty failed: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None


def run(args: argparse.Namespace) -> int:
    vault = Path(args.vault)
    if not is_folder_or_say("recall-tui report", vault):
        return 2
    from recall_tui.engine.config import find_preset

    try:
        find_preset(args.preset, vault)
    except ValueError as exc:
        safe_print(f"recall-tui report: {exc}", file=sys.stderr)
        return 2
    from recall_tui.diagnostics.report import REPORTS_DIR, build_report, write_report
    from recall_tui.engine import open_engine
    from recall_tui.index.embed import EmbedderUnavailable

    try:
        engine = open_engine(vault, preset=args.preset, embedder=args.embedder)
    except (EmbedderUnavailable, ValueError) as exc:
        safe_print(f"recall-tui report: {exc}", file=sys.stderr)
        return 2
    try:
        report = build_report(engine, args.query, args.repeat, args.now)
    finally:
        if engine.index is not None:
            engine.index.close()
    out = Path(args.out) if args.out else vault / REPORTS_DIR
    try:
        md, js = write_report(report, out)
    except OSError as exc:
        safe_print(f"recall-tui report: cannot write into {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    total = report.timings[-1]
    safe_print(f"wrote {md}")
    safe_print(f"wrote {js}")
    safe_print(f"{len(report.trace.hits)} hits; total cold {total.cold_ms:.1f} ms, warm p50 "
               f"{total.p50_ms:.1f} ms, p95 {total.p95_ms:.1f} ms over {report.repeat} runs")
    if args.copy:
        why = copy_to_clipboard(md.read_text(encoding="utf-8"))
        if why is None:
            safe_print("sent the Markdown to the clipboard with OSC 52 (the terminal must allow it)")
        else:
            safe_print(f"could not copy to the clipboard: {why}; open {md} instead", file=sys.stderr)
    return 0
