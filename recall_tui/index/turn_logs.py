"""Which session logs the index's `turns` rows came from: meta `turn_logs`.

The sync (`IndexSync._sync_turns`) stores, in the same transaction as the rows, every session
log's signature as read (`Vault.turn_logs`: size, mtime and a digest of the bytes parsed), its
number of turns and its session, as one JSON object `{path: [signature, turns, session]}`. A
later sync skips a log whose signature and count are the stored ones without hashing a single
turn of it (a million turns: the whole of a fresh process's sync of an unchanged vault), and
reads back only the rows of the sessions it compares. The record is trusted only while the
table holds exactly as many turns as it lists (a rebuild clears meta; a writer that does not
keep it, such as an older version, changes the count or the logs it touched), else every turn
is compared as before and the record written again. Headless.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from operator import attrgetter

import apsw

from recall_tui.vault.model import Turn

META_KEY = "turn_logs"
#: One log's entry: (its signature, its number of turns, its session id).
LogEntry = tuple[str, int, str]

_path_of = attrgetter("path")


def group_by_log(turns: Sequence[Turn]) -> dict[str, list[Turn]]:
    """The turns by session log path, in order (a reader's turns come one log at a time)."""
    groups: dict[str, list[Turn]] = {}
    for path, run in groupby(turns, key=_path_of):
        got = groups.get(path)
        if got is None:
            groups[path] = list(run)
        else:
            got.extend(run)
    return groups


def stored_logs(conn: apsw.Connection) -> dict[str, LogEntry] | None:
    """The stored record, or None when there is none or the table does not hold exactly the
    turns it lists (then nothing may be skipped)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
    if row is None:
        return None
    try:
        raw = json.loads(row[0])
        logs = {str(p): (str(e[0]), int(e[1]), str(e[2])) for p, e in raw.items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    total = conn.execute("SELECT count(*) FROM turns").get
    return logs if total == sum(e[1] for e in logs.values()) else None


def logs_unchanged(before: Mapping[str, LogEntry], logs: Mapping[str, str], turns: int) -> bool:
    """Whether the vault's turns are exactly the stored ones, without looking at a turn: every
    log of the (trusted) record has its stored signature, and the vault has as many turns as
    the record lists. A log's turns are a function of the bytes its signature digests, so
    the recorded logs give their recorded counts, and no other log can hold a turn."""
    if turns != sum(e[1] for e in before.values()):
        return False
    get = logs.get
    return all(get(path) == entry[0] for path, entry in before.items())


def session_rows(
    conn: apsw.Connection, sessions: Iterable[str], skip: set[str]
) -> dict[str, tuple[int, str]]:
    """turn id -> (rowid, row hash) of the stored turns of `sessions` (by the id's prefix,
    `turn:<session>#`, a range of the unique index), leaving out rows of the logs in `skip`."""
    out: dict[str, tuple[int, str]] = {}
    for s in sorted(sessions):
        for rowid, tid, rh, path in conn.execute(
            "SELECT rowid, id, row_hash, path FROM turns WHERE id >= ? AND id < ?"
            " AND session_id = ?", (f"turn:{s}#", f"turn:{s}$", s),
        ):
            if path not in skip:
                out[tid] = (rowid, rh)
    return out


def log_entries(
    groups: Mapping[str, list[Turn]],
    logs: Mapping[str, str],
    before: Mapping[str, LogEntry],
    skip: set[str],
) -> dict[str, LogEntry]:
    """The record after a sync: a skipped log's entry as it was, every other log with a
    signature and a single session as synced now (a log without one is compared every time)."""
    out: dict[str, LogEntry] = {}
    for path, group in groups.items():
        if path in skip:
            out[path] = before[path]
            continue
        entry = _entry(group, logs.get(path))
        if entry is not None:
            out[path] = entry
    return out


def _entry(turns: Sequence[Turn], sig: str | None) -> LogEntry | None:
    """A log's entry as synced now: None without a signature, turns or a single session."""
    if sig is None or not turns:
        return None
    session = turns[0].session_id
    if all(t.session_id == session for t in turns):
        return (sig, len(turns), session)
    return None


def patch_entries(
    before: Mapping[str, LogEntry],
    sessions: Mapping[str, Sequence[Turn]],
    logs: Mapping[str, str],
) -> dict[str, LogEntry]:
    """The record after a targeted sync (`IndexSync.sync_changed`) brought the logs of
    `sessions` (path -> its turns now, none when gone) up to date: each with its signature
    now (`logs`) and a single session, or left out (then compared every time)."""
    out = dict(before)
    for path, turns in sessions.items():
        out.pop(path, None)
        entry = _entry(turns, logs.get(path))
        if entry is not None:
            out[path] = entry
    return out


def write_stored_logs(conn: apsw.Connection, logs: Mapping[str, LogEntry]) -> None:
    """Store the record (inside the caller's write transaction)."""
    value = json.dumps({p: list(logs[p]) for p in sorted(logs)}, separators=(",", ":"))
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, value))
