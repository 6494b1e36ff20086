"""`recall-tui demo`: open the debugger on a private copy of the bundled sample vault.

The sample ships inside the package (`recall_tui/data/sample-vault.tar.gz`, the tracked
`sample-vault/` folder packed by `pack_sample`), so a user who installed a wheel has it too.
The first run unpacks it into `$XDG_DATA_HOME/recall-tui/demo-vault`
(`~/.local/share/recall-tui/demo-vault` when the variable is unset); later runs reopen that
copy, with whatever was edited, judged or recorded in it. Nothing tracked or shared is ever
edited: `E`, `J` and `e` write into the copy. `--fresh` starts over from the bundled sample.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from recall_tui.cli._common import iso_time
from recall_tui.vault.literal import safe_print

HELP = "open the debugger on a private copy of the bundled sample vault"

#: The packed sample, shipped as package data.
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample-vault.tar.gz"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fresh", action="store_true",
                   help="replace the copy with a new one from the bundled sample")
    p.add_argument("--path-only", action="store_true",
                   help="make the copy if needed, print its folder and exit")
    p.add_argument("--now", type=iso_time, help="pin the clock, e.g. 2026-11-21T09:00Z")
    p.add_argument("--embedder", help="auto | local | ollama | none")
    p.add_argument("--query", default="", help="start with this query typed in")


def demo_folder() -> Path:
    """Where the private copy lives: the user's data folder, never the working folder."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "recall-tui" / "demo-vault"


def pack_sample(source: Path) -> bytes:
    """`source` packed as the shipped archive: its files sorted by path, with fixed times and
    owners (the same folder always packs to the same bytes); `.recall/` left out."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = path.relative_to(source)
            if rel.parts[0] == ".recall":
                continue
            info = tarfile.TarInfo(rel.as_posix())
            data = path.read_bytes()
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack_sample(dest: Path, archive: Path = SAMPLE) -> Path:
    """Unpack the bundled sample into `dest` (replaced when it exists): into a temp folder
    beside it first, then renamed, so a half-made copy is never opened."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".demo-", dir=dest.parent))
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def run(args: argparse.Namespace) -> int:
    folder = demo_folder()
    if args.fresh or not folder.is_dir():
        try:
            unpack_sample(folder)
        except (OSError, tarfile.TarError) as exc:
            safe_print(f"recall-tui demo: cannot make the demo vault in {folder}: {exc}",
                       file=sys.stderr)
            return 2
        safe_print(f"demo vault: a new private copy of the sample in {folder}")
    else:
        safe_print(f"demo vault: {folder} (your copy; --fresh starts over)")
    if args.path_only:
        safe_print(str(folder))
        return 0
    from recall_tui.cli import tui_cmd

    tui_args = argparse.Namespace(vault=str(folder), preset=None, now=args.now,
                                  embedder=args.embedder, query=args.query)
    return tui_cmd.run(tui_args)
