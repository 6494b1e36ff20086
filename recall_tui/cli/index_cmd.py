"""`recall-tui index [VAULT]`: build or update the vault's index and say what it did.

Prints the counts (added, updated, removed, unchanged; embedded and reused vectors), which
embedder was used and why, the time taken, and where the index file is and how big. A progress
bar appears on a terminal when there is much to embed. Problems in the vault are summarised, not
fatal: the index holds every memory that could be read. Exit status: 0 done, 1 the vectors
could not all be made (the rest of the index is still up to date), 2 no vault or the asked-for
embedder cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from recall_tui.cli._common import read_vault_or_say
from recall_tui.cli._out import console, esc
from recall_tui.index.embed import EmbedderUnavailable, make_embedder
from recall_tui.index.store import Index, remove_index_files, resolve_index_path
from recall_tui.vault.literal import dump_json, safe_print

HELP = "build or update the vault's index (.recall/index.sqlite)"
#: Texts to embed before a progress bar is worth showing.
PROGRESS_MIN = 32


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", nargs="?", default=".", help="the vault folder (default: .)")
    p.add_argument(
        "--embedder",
        choices=("auto", "local", "ollama", "none"),
        default="auto",
        help="auto (default): ollama if it answers, else the local model",
    )
    p.add_argument("--model", help="the ollama embedding model (default: embeddinggemma)")
    p.add_argument("--host", help="the ollama server (default: $OLLAMA_HOST or localhost)")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="delete the index and build it again from nothing (re-embeds everything)",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")


def _human_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class _Bar:
    """A rich progress bar on stderr, started only once there is enough to embed."""

    def __init__(self, console: Console, enabled: bool):
        self.console = console
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task = None

    def __call__(self, done: int, total: int, phase: str) -> None:
        if not self.enabled or total < PROGRESS_MIN:
            return
        if self.progress is None:
            self.progress = Progress(
                TextColumn(f"[bold]{phase}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(phase, total=total)
        self.progress.update(self.task, completed=done, total=total)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    err = Console(stderr=True)
    vault = read_vault_or_say("index", args.vault)
    if vault is None:
        return 2
    try:
        embedder, why = make_embedder(args.embedder, model=args.model, host=args.host)
    except EmbedderUnavailable as exc:
        safe_print(f"recall-tui index: --embedder {args.embedder}: {exc.reason}", file=sys.stderr)
        return 2
    rebuilt_note = None
    if args.rebuild:
        path, _ = resolve_index_path(vault.root)
        if path.exists():
            remove_index_files(path)
            rebuilt_note = "asked for (--rebuild)"
    bar = _Bar(err, enabled=not args.json and err.is_terminal)
    try:
        idx = Index.open(vault, embedder, progress=bar)
    finally:
        bar.stop()
    with idx:
        rep = idx.report
        info = idx.embedder_info
        size = idx.size_bytes()
    total_ms = (time.perf_counter() - start) * 1000
    out: dict[str, Any] = {
        "vault": vault.root,
        "index": rep.path,
        "size_bytes": size,
        "embedder": {**info, "why": why},
        "report": {**asdict(rep), "rebuilt": rep.rebuilt or rebuilt_note},
        "problems": len(vault.problems),
        "total_ms": round(total_ms, 1),
    }
    if args.json:
        dump_json(out, indent=2)
    else:
        _print_human(out, console(), args.vault)
    failed = rep.embed_error is not None and embedder.name != "none"
    return 1 if failed else 0


def _print_human(out: dict[str, Any], con: Console, vault_arg: str) -> None:
    rep = out["report"]
    emb = out["embedder"]
    con.print(f"[bold]index[/]     {esc(out['index'])} ({_human_size(out['size_bytes'])})")
    if rep["location_note"]:
        con.print(f"          [yellow]{esc(rep['location_note'])}[/]")
    if rep["rebuilt"]:
        con.print(f"[bold]rebuilt[/]   {esc(rep['rebuilt'])}")
    con.print(f"[bold]embedder[/]  {esc(emb['why'])}")
    con.print(
        f"[bold]memories[/]  {rep['added'] + rep['updated'] + rep['unchanged']}: "
        f"{rep['added']} added, {rep['updated']} updated, {rep['removed']} removed, "
        f"{rep['unchanged']} unchanged"
    )
    if emb["name"] == "none":
        con.print("[bold]vectors[/]   none (keyword-only recall)")
    else:
        con.print(
            f"[bold]vectors[/]   {rep['vectors']} x {emb['dim']}-d; embedded {rep['embedded']} "
            f"in {rep['embed_ms'] / 1000:.1f} s, reused {rep['reused']}"
        )
    if rep["turns"]:
        con.print(f"[bold]turns[/]     {rep['turns']}")
    if rep["embed_error"] and emb["name"] != "none":
        con.print(f"[bold red]vectors incomplete[/]: {esc(rep['embed_error'])}")
    con.print(f"[bold]time[/]      {out['total_ms'] / 1000:.2f} s (index {rep['ms']:.0f} ms)")
    if out["problems"]:
        con.print(
            f"[yellow]{out['problems']} problem(s) in the vault[/]: "
            f"run `recall-tui check {esc(vault_arg)}`"
        )
