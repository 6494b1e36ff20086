"""Turn id -> Turn over a vault's raw turns without a dict entry per turn. Headless.

The turn channel looks up the few turns it takes (`turn:<session>#<seq>`); a dict of every
turn cost ~1 s per 200k turns on every open, before the first recall with turns. This
mapping finds a session's turns by their runs in the vault's list (one pass over the
session ids, no id strings made) and keeps a small seq -> Turn dict per session asked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from operator import attrgetter

from recall_tui.vault.model import Turn

PREFIX = "turn:"


class TurnLookup(Mapping[str, Turn]):
    """`{t.id: t for t in turns}` (a repeated id: the last turn), built per session on use."""

    def __init__(self, turns: Sequence[Turn]):
        self._turns = turns
        self._runs: dict[str, list[tuple[int, int]]] | None = None
        self._sessions: dict[str, dict[int, Turn]] = {}

    def _session(self, session_id: str) -> dict[int, Turn]:
        got = self._sessions.get(session_id)
        if got is None:
            if self._runs is None:
                runs: dict[str, list[tuple[int, int]]] = {}
                at = 0
                for sid, group in groupby(map(attrgetter("session_id"), self._turns)):
                    n = sum(1 for _ in group)
                    runs.setdefault(sid, []).append((at, at + n))
                    at += n
                self._runs = runs
            got = {t.seq: t for lo, hi in self._runs.get(session_id, ())
                   for t in self._turns[lo:hi]}
            self._sessions[session_id] = got
        return got

    def __getitem__(self, turn_id: str) -> Turn:
        if not turn_id.startswith(PREFIX):
            raise KeyError(turn_id)
        sid, sep, seq = turn_id[len(PREFIX):].rpartition("#")
        try:
            turn = self._session(sid)[int(seq)] if sep else None
        except (KeyError, ValueError):
            turn = None
        if turn is None or turn.id != turn_id:  # `#07` is not seq 7's id
            raise KeyError(turn_id)
        return turn

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(t.id for t in self._turns))

    def __len__(self) -> int:
        return len(dict.fromkeys(t.id for t in self._turns))
