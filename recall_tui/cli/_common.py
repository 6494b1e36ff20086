"""Helpers shared by the commands: where the vault is, and argparse value types."""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path

from recall_tui.engine.stages.parse import parse_time


def vault_root(arg: str | None) -> Path:
    """--vault, else $RECALL_TUI_VAULT, else the current folder."""
    return Path(arg or os.environ.get("RECALL_TUI_VAULT") or ".")


def time_arg(value: str | None, flag: str) -> datetime | None:
    """An ISO date/datetime option, or a ValueError naming the flag."""
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError:
        raise ValueError(f"{flag} {value!r} is not an ISO-8601 date or datetime") from None


def iso_time(text: str) -> datetime:
    """argparse type: an ISO-8601 date or datetime, UTC when no zone is given."""
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
