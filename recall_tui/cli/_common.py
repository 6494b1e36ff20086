"""Helpers shared by the engine commands (query, load, hook): where the vault is, times."""

from __future__ import annotations

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
