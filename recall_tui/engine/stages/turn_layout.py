"""The shape of a raw-turn vault, read once per vault: which memories are turns of one
session, in what order, and who said each. Shared by the window, speaker and hop2 stages.

A memory is a turn of a session when it has `session_id` and a speaker (an extracted memory
that only records its session is not a turn); its place is its rank by `created` (then id)
among that session's turns. Its speaker is the name before the
first colon of the body (`Lena: ...`, at most three capitalised words), else the value of a
`speaker-<name>` tag. Headless."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_tui.engine.text import fold
from recall_tui.engine.topk import by_score
from recall_tui.vault.model import Vault

if TYPE_CHECKING:
    from recall_tui.engine.stages import StageContext
    from recall_tui.engine.state import RecallState

_SPEAKER = re.compile(r"^\s*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}):\s")


@dataclass(frozen=True)
class TurnLayout:
    """Sessions and speakers of a vault's turn-shaped memories."""

    sessions: Mapping[str, tuple[str, ...]]
    """session id -> its memory ids in turn order."""
    place: Mapping[str, tuple[str, int]]
    """memory id -> (session id, 0-based position)."""
    speaker: Mapping[str, str]
    """memory id -> speaker name, folded to lower case (turns with a known speaker only)."""
    names: frozenset[str] = frozenset()
    """Every speaker name, `fold`ed: what the speaker and hop2 stages match the query
    against (built once here, not per recall over every turn)."""


def speaker_of(body: str, tags: tuple[str, ...] | list[str]) -> str | None:
    """The speaker of a turn: `Name:` at the start of the body, else a `speaker-x` tag."""
    m = _SPEAKER.match(body)
    if m:
        return m.group(1).lower()
    for t in tags:
        if t.lower().startswith("speaker-") and len(t) > 8:
            return t[8:].lower()
    return None


def build(vault: Vault) -> TurnLayout:
    """The layout of `vault` (memories without `session_id` or a speaker are not turns)."""
    by_session: dict[str, list[tuple[float, str]]] = {}
    speaker: dict[str, str] = {}
    for mid, m in vault.memories.items():
        who = speaker_of(m.body, m.tags)
        if who:
            speaker[mid] = who
            if m.session_id:
                by_session.setdefault(m.session_id, []).append((m.created.timestamp(), mid))
    sessions = {sid: tuple(mid for _t, mid in sorted(rows)) for sid, rows in by_session.items()}
    place = {mid: (sid, i) for sid, ids in sessions.items() for i, mid in enumerate(ids)}
    return TurnLayout(sessions, place, speaker, frozenset(fold(s) for s in set(speaker.values())))


def layout(engine: StageContext) -> TurnLayout:
    """The engine's vault's layout, built once per vault (rebuilt on a vault change)."""
    return engine.memo("turn_layout", lambda: build(engine.vault))


def resort(engine: StageContext, st: RecallState) -> None:
    """Re-rank `st.order` by `st.score` with the pipeline's tie-breaks (newer, then id)."""
    st.order = by_score(engine, st.score, st.score)


def note(st: RecallState, mid: str, text: str) -> None:
    """Leave a line for the hit's explanation (shown under `notes`)."""
    st.turn_notes.setdefault(mid, []).append(text)
