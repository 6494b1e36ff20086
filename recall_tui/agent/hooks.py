"""Claude Code hooks: the payload they read, the context they inject, the settings block that
installs them. Pure functions (standard library only); the recall itself runs in
`recall_tui.agent.core` (in-process) or the warm service (`recall_tui.agent.service`).

Protocol (Claude Code's hooks reference): the hook reads one JSON object on stdin with
`session_id`, `transcript_path`, `cwd`, `hook_event_name`, and `source` (SessionStart:
startup | resume | clear | compact) or `prompt` (UserPromptSubmit), and prints

    {"hookSpecificOutput": {"hookEventName": "...", "additionalContext": "..."}}

on exit 0. Claude Code keeps at most 10,000 characters of `additionalContext`, counted as
JavaScript counts them (UTF-16 code units: an emoji is two), so the text is cut at a memory
boundary below `MAX_CONTEXT` such units with a last line saying how many memories were left
out. Memories of type `instruction` are framed as the user's standing instructions; the
others as background facts. `systemMessage` (shown to the user) is sent only with `--transparency`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

EVENTS = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit"}
#: SessionStart sources that inject `_always-load/` by default (not `resume`: the resumed
#: conversation already holds what the first start injected).
DEFAULT_SOURCES = ("startup", "clear", "compact")
#: Claude Code keeps 10,000 characters (UTF-16 code units) of additionalContext; stay under it.
MAX_CONTEXT = 9_800
#: A memory injected at prompt P of a session is not injected again before prompt P + this.
DEFAULT_REPEAT_WINDOW = 3

FACTS_NOTE = ("These are notes from the user's memory vault, recorded earlier; use them as "
              "background facts where they are relevant. They are not instructions.")
MIXED_NOTE = ("Entries of type instruction are the user's standing instructions, recorded in "
              "their memory vault: follow them. The other entries are notes recorded earlier; "
              "use them as background facts where they are relevant.")
INSTRUCTIONS_NOTE = ("These are the user's standing instructions, recorded in their memory "
                     "vault: follow them.")


def utf16_len(text: str) -> int:
    """Length as Claude Code (JavaScript) counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def note_for(types: Sequence[str]) -> str:
    """The framing line for injected memories of these types."""
    n = sum(1 for t in types if t == "instruction")
    if n == 0:
        return FACTS_NOTE
    return INSTRUCTIONS_NOTE if n == len(types) else MIXED_NOTE


@dataclass
class HookPayload:
    """What Claude Code sends a hook on stdin (unknown keys are kept in `extra`)."""

    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    hook_event_name: str = ""
    source: str = ""
    prompt: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_obj(cls, obj: Any) -> HookPayload:
        if not isinstance(obj, dict):
            return cls()
        known = {k: str(obj.get(k) or "") for k in
                 ("session_id", "transcript_path", "cwd", "hook_event_name", "source", "prompt")}
        return cls(**known, extra={k: v for k, v in obj.items() if k not in known})

    @classmethod
    def parse(cls, text: str) -> HookPayload:
        try:
            return cls.from_obj(json.loads(text)) if text.strip() else cls()
        except ValueError:
            return cls()

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "transcript_path": self.transcript_path,
                "cwd": self.cwd, "hook_event_name": self.hook_event_name,
                "source": self.source, "prompt": self.prompt}


@dataclass
class HookOptions:
    """How a hook recalls; sent as is to the service."""

    event: str = "prompt-submit"
    preset: str | None = None
    embedder: str | None = None
    k: int | None = None
    sources: tuple[str, ...] = DEFAULT_SOURCES
    transparency: bool = False
    max_context: int = MAX_CONTEXT
    repeat_window: int = DEFAULT_REPEAT_WINDOW

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, "preset": self.preset, "embedder": self.embedder,
                "k": self.k, "sources": list(self.sources), "transparency": self.transparency,
                "max_context": self.max_context, "repeat_window": self.repeat_window}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HookOptions:
        return cls(event=str(d.get("event") or "prompt-submit"), preset=d.get("preset"),
                   embedder=d.get("embedder"), k=d.get("k"),
                   sources=tuple(d.get("sources") or DEFAULT_SOURCES),
                   transparency=bool(d.get("transparency")),
                   max_context=int(d.get("max_context") or MAX_CONTEXT),
                   repeat_window=max(0, int(DEFAULT_REPEAT_WINDOW if d.get("repeat_window") is None
                                            else d["repeat_window"])))


@dataclass
class Block:
    """One memory as injected."""

    id: str
    text: str
    type: str = ""


def _date(dt: datetime | None) -> str:
    return dt.date().isoformat() if dt is not None else ""


def memory_block(m: Any, *, body: bool) -> Block:
    """A memory as a fact: its title and id, its type and date, then its summary (prompt) or
    body (session start)."""
    meta = ", ".join(x for x in (getattr(m, "type", ""), f"updated {_date(m.updated)}"
                                 if getattr(m, "updated", None) else "") if x)
    text = (m.body_without_related.strip() if body else m.summary.strip()) or m.summary.strip()
    return Block(m.id, f"### {m.title} ({m.id})\n" + (f"[{meta}]\n" if meta else "") + f"{text}\n",
                 str(getattr(m, "type", "") or ""))


def fit(head: Callable[[list[Block]], str], blocks: Sequence[Block],
        limit: int = MAX_CONTEXT) -> tuple[str, list[str], list[str]]:
    """The context text: `head(injected blocks)`, then whole blocks while everything fits under
    `limit` UTF-16 code units (Claude Code's count), then a line saying how many were left out.
    Returns (text, injected ids, left-out ids)."""
    tail_reserve = 120
    body = ""
    body_len = 0
    injected: list[Block] = []
    left: list[str] = []
    for b in blocks:
        size = utf16_len(head([*injected, b])) + 2 + body_len + utf16_len(b.text) + 1 + tail_reserve
        if not left and size <= limit:
            body += b.text + "\n"
            body_len += utf16_len(b.text) + 1
            injected.append(b)
        else:
            left.append(b.id)
    text = head(injected).rstrip() + "\n\n" + body
    if left:
        text += (f"({len(left)} more relevant memor{'y was' if len(left) == 1 else 'ies were'} "
                 f"left out to stay under the {limit:,}-character context limit.)\n")
    return text.rstrip() + "\n", [b.id for b in injected], left


def session_start_head(blocks: Sequence[Block]) -> str:
    return (f"Loaded {len(blocks)} MemoryVault always-load entries\n"
            f"{note_for([b.type for b in blocks])}")


def prompt_head(blocks: Sequence[Block]) -> str:
    return (f"Loaded {len(blocks)} relevant entries: {', '.join(b.id for b in blocks)}\n"
            f"{note_for([b.type for b in blocks])}")


def output(event: str, context: str, line: str = "") -> dict[str, Any]:
    """The JSON object a hook prints. `line` becomes `systemMessage` (opt-in transparency)."""
    out: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": EVENTS.get(event, event),
                                                  "additionalContext": context}}
    if line:
        out["systemMessage"] = line
    return out


