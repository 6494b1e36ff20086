"""Helpers shared by the commands: where the vault is, reading it with a clear message, and
argparse value types. Light to import (the engine only inside the functions that need it):
the hook command checks its vault folder here too."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from recall_tui.vault.literal import safe_print

if TYPE_CHECKING:
    from recall_tui.tuning.metrics import GoldenQuery
    from recall_tui.vault.model import Vault


def vault_root(arg: str | None) -> Path:
    """--vault, else $RECALL_TUI_VAULT, else the current folder."""
    return Path(arg or os.environ.get("RECALL_TUI_VAULT") or ".")


def is_folder_or_say(prog: str, vault: Path) -> bool:
    """True when `vault` is a folder; else says on stderr why not (no such folder, or a
    file), naming `prog` (e.g. `recall-tui report`), and the caller exits 2 (a hook: 0).
    Every command's vault-folder check goes through here, so they all say it alike."""
    if vault.is_dir():
        return True
    _say_not_a_folder(prog, vault)
    return False


def _say_not_a_folder(prog: str, vault: Path) -> None:
    why = "a file, not a vault folder" if vault.exists() else "no such vault folder"
    safe_print(f"{prog}: {vault}: {why}", file=sys.stderr)


def read_vault_or_say(command: str, path: str, *, cache: bool = False,
                      progress=None) -> Vault | None:
    """The vault at `path`; None after saying on stderr why there is none (no such folder, or
    a file), and the caller exits 2."""
    from recall_tui.vault.reader import read_vault

    try:
        return read_vault(path, cache=cache, progress=progress)
    except (FileNotFoundError, NotADirectoryError):  # said in `is_folder_or_say`'s words
        _say_not_a_folder(f"recall-tui {command}", Path(path))
    return None


class JudgedVault(NamedTuple):
    """A vault and its judged queries, as `judged_vault_or_say` found them."""

    root: Path
    now: datetime
    qfile: Path
    golden: list[GoldenQuery]


def judged_vault_or_say(command: str, args: argparse.Namespace) -> JudgedVault | None:
    """What `eval` and `errors` start from: the vault folder (`--vault`), the time (`--now`,
    else the current time) and the judged queries (`--queries`, else the vault's default
    file); None after saying on stderr why not, and the caller exits 2."""
    root = vault_root(args.vault)
    if not is_folder_or_say(f"recall-tui {command}", root):
        return None
    try:
        now = time_arg(args.now, "--now") or datetime.now(timezone.utc)
    except ValueError as exc:
        safe_print(f"recall-tui {command}: {exc}", file=sys.stderr)
        return None
    from recall_tui.tuning.golden import default_queries_file

    qfile = Path(args.queries) if args.queries else default_queries_file(root)
    golden = read_golden_or_say(command, qfile, given=bool(args.queries))
    if golden is None:
        return None
    return JudgedVault(root, now, qfile, golden)


def read_golden_or_say(command: str, qfile: Path, *, given: bool) -> list | None:
    """The judged queries of `qfile` (`tuning.metrics.read_golden`); None after saying on
    stderr why there are none (no such file, a bad line, an empty file), and the caller exits
    2. `given`: the user named the file (else the hint to give `--queries`)."""
    from recall_tui.tuning import metrics

    def say(msg: str) -> None:
        safe_print(f"recall-tui {command}: {msg}", file=sys.stderr)

    try:
        golden = metrics.read_golden(qfile)
    except FileNotFoundError:
        say(f"{qfile}: no such file" + ("" if given else " (give --queries FILE)"))
        return None
    except (metrics.GoldenError, UnicodeDecodeError) as exc:
        say(str(exc))
        return None
    if not golden:
        say(f"{qfile}: no queries in the file")
        return None
    return golden


def time_arg(value: str | None, flag: str) -> datetime | None:
    """An ISO date/datetime option, or a ValueError naming the flag."""
    from recall_tui.engine.stages.parse import parse_time

    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError:
        raise ValueError(f"{flag} {value!r} is not an ISO-8601 date or datetime") from None


def iso_time(text: str) -> datetime:
    """argparse type: an ISO-8601 date or datetime, UTC when no zone is given."""
    from recall_tui.engine.stages.parse import parse_time

    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date or datetime: {text!r}") from None


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n
