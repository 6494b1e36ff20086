"""Recall statistics: how often and when each memory was recalled (kept in the index, never
in the vault). `RecallStatsStore` is the part of `Index` that reads and writes them: it is
given the index's connection and lock, and owns nothing else. Headless.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

import apsw

from recall_tui.index.schema import WRITE_FAILURES, write_txn

#: Recall times kept per memory.
MAX_RECALL_TIMES = 20


@dataclass(frozen=True)
class RecallStats:
    """How often and when a memory was recalled (kept in the index, never in the vault)."""

    count: int = 0
    """Times recalled."""
    last_recalled: datetime | None = None
    """Most recent recall, None if never."""
    times: tuple[datetime, ...] = field(default=())
    """The most recent recall times, oldest first, at most MAX_RECALL_TIMES."""


class RecallStatsStore:
    """The recall statistics of an index (a part of `Index`, over its connection and lock)."""

    def __init__(self, conn: apsw.Connection, lock: threading.RLock, path: str) -> None:
        self._conn = conn
        self._lock = lock
        self._path = path
        self.error: str | None = None
        """Why the last recalls could not be recorded (said once, not on every recall)."""

    def recall_stats(self, memory_id: str) -> RecallStats:
        """How often `memory_id` was recalled; zero counts for a memory never recalled."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count, last_recalled, times FROM recall_stats WHERE id=?", (memory_id,)
            ).fetchone()
        if row is None:
            return RecallStats()
        times = tuple(datetime.fromisoformat(t) for t in json.loads(row[2]))
        last = datetime.fromisoformat(row[1]) if row[1] else None
        return RecallStats(count=int(row[0]), last_recalled=last, times=times)

    def record_recalls(self, ids: Iterable[str], at: datetime) -> None:
        """Count one recall of each id at `at` (timezone-aware; naive is taken as UTC). The
        caller (`Index`) refuses it on a read-only index."""
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
        stamp = at.isoformat()
        try:
            self._record(ids, at, stamp)
        except WRITE_FAILURES as exc:
            # Statistics are a nicety: a full disk or a file gone read-only must not fail the
            # recall that was just made. Said once (`stats_error`), not on every recall.
            self.error = f"{self._path}: recall stats not recorded ({type(exc).__name__}: {exc})"

    def _record(self, ids: Iterable[str], at: datetime, stamp: str) -> None:
        with self._lock, write_txn(self._conn):
            for mid in dict.fromkeys(ids):
                row = self._conn.execute(
                    "SELECT count, last_recalled, times FROM recall_stats WHERE id=?", (mid,)
                ).fetchone()
                count, last, times = (
                    (0, None, []) if row is None else (row[0], row[1], json.loads(row[2]))
                )
                times = sorted([*times, stamp], key=datetime.fromisoformat)[-MAX_RECALL_TIMES:]
                if last is None or datetime.fromisoformat(last) < at:
                    last = stamp
                self._conn.execute(
                    "INSERT OR REPLACE INTO recall_stats(id, count, last_recalled, times)"
                    " VALUES (?,?,?,?)",
                    (mid, count + 1, last, json.dumps(times)),
                )
