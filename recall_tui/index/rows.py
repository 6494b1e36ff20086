"""What the index stores about a memory: its row fields and their hash (`RowFields`,
`row_fields`, `row_hash`), the text its vector and signature are made from (`embed_text`),
the text its trigrams are made from (`trigram_content`). Pure functions of a `Memory`, shared
by the sync, the vector sync and the trigram build. Headless.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

from recall_tui.vault.model import Memory


def embed_text(memory: Memory) -> str:
    """The text a memory's vector (and signature) is made from.

    Title, recall_when phrases, summary and the body without its generated `## Related`
    section: the fields that say what the memory is about. Tags, keywords and paths are left
    to the keyword channels, where exact tokens matter more than meaning.
    """
    parts = [memory.title, *memory.recall_when, memory.summary, memory.body_without_related]
    return "\n".join(p.strip() for p in parts if p and p.strip())


def trigram_content(memory: Memory) -> str:
    """The `content` column of the trigram table: every text field a fuzzy match may hit."""
    parts = [
        memory.title,
        *memory.recall_when,
        *memory.tags,
        *memory.keywords,
        memory.summary,
        memory.body_without_related,
    ]
    return "\n".join(p for p in parts if p)


def sha(text: str) -> str:
    """The hex SHA-256 of `text` (row hashes, text hashes of the embedding cache)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RowFields(NamedTuple):
    """Everything the index stores about a memory but its mtime (the row hash covers these,
    in this order: a NamedTuple is hashed as the plain tuple it is)."""

    id: str
    path: str
    content_hash: str
    role: str
    status: str
    type: str
    scope: str
    topic_key: str
    title: str
    recall_when: str
    tags: str
    keywords: str
    summary: str
    topic_path: str
    body: str
    original: str
    edges: tuple[tuple[str, str, str], ...]


def row_fields(m: Memory) -> RowFields:
    """The memory's `RowFields`."""
    return RowFields(
        m.id,
        m.path,
        m.content_hash,
        m.role.value,
        m.status,
        m.type,
        m.scope,
        m.topic_key or "",
        m.title,
        "\n".join(m.recall_when),
        "\n".join(m.tags),
        "\n".join(m.keywords),
        m.summary,
        m.topic_path,
        m.body,
        m.original or "",
        tuple((e.subject, e.relation, e.object) for e in m.edges),
    )


def row_hash(fields: RowFields) -> str:
    """The hash the sync compares to decide whether a memory is re-indexed.

    The reader resolves some fields from more than the file's bytes (defaults, links checked
    against the rest of the vault), so comparing what is stored is safer than the file hash.
    The mtime is left out: touching a file must not re-index it."""
    return sha(json.dumps(fields, default=str, ensure_ascii=False))
