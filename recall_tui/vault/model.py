"""Typed, immutable records for what a vault holds: memories, links, edges, digests, turns.

This module is the contract between the vault reader, the index, the engine and the UI.
Everything here is a frozen dataclass; collections are tuples so records can be shared
between threads without copies. Headless: no textual, no rich.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

MEMORY_TYPES: tuple[str, ...] = (
    "fact",
    "event",
    "instruction",
    "task",
    "lesson",
    "preference",
    "project-fact",
    "decision",
)
STATUSES: tuple[str, ...] = ("active", "superseded", "archived")
TIERS: tuple[str, ...] = ("core", "normal")

#: Every frontmatter key of vault-format v1, in the order the contract lists them.
KNOWN_KEYS: tuple[str, ...] = (
    "id",
    "title",
    "type",
    "scope",
    "summary",
    "recall_when",
    "tags",
    "keywords",
    "topic_path",
    "topic_key",
    "status",
    "supersedes",
    "superseded_by",
    "related_via",
    "edges",
    "created",
    "updated",
    "valid_from",
    "valid_to",
    "ingested_at",
    "expires",
    "trust",
    "credibility",
    "confidence",
    "emotion",
    "tier",
    "source",
    "session_id",
    "lang",
    "original",
)


class Role(str, enum.Enum):
    """Which reserved folder a memory lives in (vault-format.md, Layout)."""

    ALWAYS_LOAD = "always-load"
    INBOX = "inbox"
    ARCHIVE = "archive"
    NORMAL = "normal"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the vault, reported instead of raised."""

    path: str
    """Path relative to the vault root (posix separators)."""
    line: int | None
    """1-based line in the file where known, else None."""
    reason: str
    """What is wrong, in words a user can act on."""
    severity: str = "error"
    """`error` (the file or the key was not loaded as written) or `warning`."""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RelatedLink:
    """One `related_via` entry: a link used by 1-hop expansion."""

    id: str
    score: float = 1.0
    relation: str = "related"


@dataclass(frozen=True, slots=True)
class Edge:
    """One entity edge `subject -[relation]-> object`, with the memory that declared it."""

    subject: str
    relation: str
    object: str
    memory_id: str = ""

    def __str__(self) -> str:
        return f"{self.subject} -[{self.relation}]-> {self.object}"


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory file, with every key of the contract resolved to its default."""

    id: str
    path: str
    """Path relative to the vault root (posix separators)."""
    role: Role
    title: str
    type: str
    scope: str
    summary: str
    recall_when: tuple[str, ...]
    tags: tuple[str, ...]
    keywords: tuple[str, ...]
    topic_path: str
    topic_key: str | None
    status: str
    supersedes: tuple[str, ...]
    superseded_by: str | None
    related_via: tuple[RelatedLink, ...]
    edges: tuple[Edge, ...]
    created: datetime
    """Timezone-aware (UTC when the file gave no zone)."""
    updated: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    ingested_at: datetime
    expires: datetime | None
    trust: float
    credibility: float
    confidence: float | None
    emotion: float
    tier: str
    source: str | None
    session_id: str | None
    lang: str
    original: str | None
    body: str
    """The Markdown body exactly as in the file."""
    content_hash: str
    """sha256 of the file's bytes."""
    mtime: float
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Unknown frontmatter keys, kept as read."""
    frontmatter: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    """The raw frontmatter mapping as parsed, every key, in file order."""
    key_lines: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    """1-based line of each top-level frontmatter key in the file."""

    @property
    def body_without_related(self) -> str:
        """The body with a final generated `## Related` section left out (lean views)."""
        return strip_related_section(self.body)

    @property
    def is_recallable_by_default(self) -> bool:
        """Active, not in `_archive/` or `_inbox/` (expiry is checked against a `now`)."""
        return self.status == "active" and self.role in (Role.NORMAL, Role.ALWAYS_LOAD)


@dataclass(frozen=True)
class DigestParagraph:
    """One paragraph of a consolidation digest."""

    path: str
    period: str
    """`daily`, `weekly` or `quarterly`."""
    label: str
    """The digest's stem, e.g. `2026-11-18` or `2026-W46`."""
    index: int
    """0-based paragraph number within the digest."""
    line: int
    text: str
    content_hash: str

    @property
    def id(self) -> str:
        return f"digest:{self.label}#{self.index}"


@dataclass(frozen=True, slots=True)
class Turn:
    """One raw transcript turn from `sessions/<session_id>.jsonl`. Slotted: a vault may hold a
    million of them (no per-turn `__dict__`); a log's turns share its session id and path
    strings, and `role` is one of the two `TURN_ROLES` objects."""

    session_id: str
    seq: int
    role: str
    text: str
    at: datetime | None
    path: str
    line: int

    @property
    def id(self) -> str:
        return f"turn:{self.session_id}#{self.seq}"


@dataclass(frozen=True)
class Chain:
    """A supersession chain, oldest first. The last member is the current one."""

    ids: tuple[str, ...]

    @property
    def head(self) -> str:
        return self.ids[-1]

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self.ids


@dataclass(frozen=True)
class EntityGraph:
    """Entities (lower-cased names) and the edges between them, from every memory's `edges`."""

    edges: tuple[Edge, ...]
    adjacency: Mapping[str, tuple[Edge, ...]] = field(hash=False, compare=False)
    """Entity -> edges touching it (as subject or object)."""

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(sorted(self.adjacency))

    def neighbours(self, entity: str) -> tuple[str, ...]:
        out: list[str] = []
        for e in self.adjacency.get(entity, ()):
            other = e.object if e.subject == entity else e.subject
            if other not in out:
                out.append(other)
        return tuple(out)

    @staticmethod
    def build(edges: tuple[Edge, ...]) -> EntityGraph:
        adj: dict[str, list[Edge]] = {}
        for e in edges:
            adj.setdefault(e.subject, []).append(e)
            if e.object != e.subject:
                adj.setdefault(e.object, []).append(e)
        return EntityGraph(edges, MappingProxyType({k: tuple(v) for k, v in adj.items()}))


@dataclass(frozen=True)
class Vault:
    """Everything read from one vault folder. Built by `recall_tui.vault.reader.read_vault`."""

    root: str
    memories: Mapping[str, Memory] = field(hash=False)
    """id -> memory, in path order."""
    problems: tuple[Problem, ...]
    digests: tuple[DigestParagraph, ...]
    turns: tuple[Turn, ...]
    chains: tuple[Chain, ...]
    graph: EntityGraph
    turn_logs: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    """Session log path -> the signature of its turns as read (size, mtime and a digest of
    the bytes parsed, see `vault/digests.py`); a log that could not be read has none. The
    index sync skips a log whose signature it stored with the log's rows."""

    def chain_of(self, memory_id: str) -> Chain | None:
        for c in self.chains:
            if memory_id in c.ids:
                return c
        return None

    def get(self, memory_id: str) -> Memory | None:
        return self.memories.get(memory_id)

    def memories_with_entity(self, entity: str) -> tuple[str, ...]:
        """Ids of the memories whose edges mention `entity`."""
        seen: list[str] = []
        for e in self.graph.adjacency.get(entity, ()):
            if e.memory_id and e.memory_id not in seen:
                seen.append(e.memory_id)
        return tuple(seen)


def same_memories(new: Mapping[str, Memory], old: Mapping[str, Memory]) -> bool:
    """Whether two reads' memories are the same: the very mapping (a patch that touched no
    memory file hands it on), or the same ids in the same order, each memory the same object
    or read from the same file (path), bytes (content hash) and modification time: what the
    reader builds a memory from (a memory without `created` takes the file's time), so a file
    touched or moved counts as a change here though a fingerprint of the texts does not see
    it. The engine's swap (`Engine.set_vault`) and the watch's catch-up
    (`index.watch.same_vault`) both ask this."""
    if new is old:
        return True
    if len(new) != len(old) or list(new) != list(old):
        return False
    return all(a is b or (a.content_hash == b.content_hash and a.path == b.path
                          and a.mtime == b.mtime)
               for a, b in zip(new.values(), old.values(), strict=True))


def strip_related_section(body: str) -> str:
    """Remove a final `## Related` section (generated links) from a Markdown body."""
    lines = body.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        s = lines[i].strip()
        if s.lower() == "## related":
            return "\n".join(lines[:i]).rstrip() + ("\n" if body.endswith("\n") else "")
        if s.startswith("## ") or s.startswith("# "):
            break
    return body


def lean_summary(text: str, limit: int = 160) -> str:
    """Cut a summary at a word boundary near `limit` characters, adding an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    sp = cut.rfind(" ")
    if sp > limit // 2:
        cut = cut[:sp]
    return cut.rstrip(" ,;:.-") + "…"
