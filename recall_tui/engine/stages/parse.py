"""query.parse: tokenise, fold, drop stop words, stem; read inline filters.

Inline filters are `key:value` words anywhere in the query; they are removed from the text
that the channels search:

| filter | effect |
|---|---|
| `type:decision` | only memories of that type (repeat for several) |
| `scope:project:billing` | only that scope (everything after the first colon is the value) |
| `tag:postgres` | only memories carrying that tag |
| `source:claude-code` | only memories written by that source |
| `session:s-417` | only memories of that session |
| `as_of:2026-03-01` | bi-temporal as-of time (ISO date or datetime; UTC when no zone) |
| `topic:user.diet` | exact topic_key for the topic channel |

A type filter naming no memory type (`type:decsion`, `--type bogus`) keeps nothing; the stage
records a `warning` naming it and listing the known types (`unknown_type_warnings`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from recall_tui.engine.config import Config
from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages import filter as filter_stage
from recall_tui.engine.state import Out, ParsedQuery, RecallState
from recall_tui.engine.text import STOP_WORDS, analyze, porter_stem, words
from recall_tui.vault.model import MEMORY_TYPES

INLINE_KEYS = ("type", "scope", "tag", "source", "session", "as_of", "topic")
_INLINE = re.compile(r"(?<!\S)(" + "|".join(INLINE_KEYS) + r"):(\S+)", re.IGNORECASE)
_TOPIC_KEY = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)+$")


def parse_time(value: str) -> datetime:
    """An ISO date or datetime as an aware datetime (UTC when no zone is given)."""
    v = value.strip()
    if v.endswith("Z"):
        v = v[:-1] + "+00:00"
    dt = datetime.fromisoformat(v)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def parse_query(raw: str, cfg: Config) -> ParsedQuery:
    """Analyse a query. Never raises: bad inline values become notes."""
    raw = raw if isinstance(raw, str) else str(raw)
    inline: list[tuple[str, str]] = []
    notes: list[str] = []
    text = raw
    if cfg.parse.inline_filters:
        for m in _INLINE.finditer(raw):
            key, value = m.group(1).lower(), m.group(2)
            if key == "as_of":
                try:
                    parse_time(value)
                except ValueError:
                    notes.append(f"as_of:{value} is not an ISO date; ignored")
                    continue
            inline.append((key, value))
        text = _INLINE.sub(" ", raw)
        text = " ".join(text.split())
    terms = analyze(text, stem=cfg.parse.stem, stop_words=cfg.parse.stop_words)
    ws: list[str] = []
    term_words: dict[str, str] = {}
    for w in words(text):
        if cfg.parse.stop_words and w in STOP_WORDS:
            continue
        if w not in ws:
            ws.append(w)
        term_words.setdefault(porter_stem(w) if cfg.parse.stem else w, w)
    return ParsedQuery(raw, text, tuple(terms), tuple(ws), term_words, tuple(inline), tuple(notes))


def run(engine: StageContext, st: RecallState) -> Out:
    """The query.parse stage: parse `st.query.raw`, add the inline filters to the call's
    (`st.filters`), take an inline as_of when the call gave none, and judge the eligibility
    of every memory under the effective filters (lazily, `filter.Eligibility`)."""
    cfg = st.cfg
    pq = parse_query(st.query.raw, cfg)
    filters = f = st.filters
    inline_as_of = None
    adds: dict[str, list[str]] = {"types": [], "scopes": [], "tags": []}
    for key, value in pq.inline:
        if key == "type":
            adds["types"].append(value)
        elif key == "scope":
            adds["scopes"].append(value)
        elif key == "tag":
            adds["tags"].append(value)
        elif key == "source":
            f = dataclasses.replace(f, source=value)
        elif key == "session":
            f = dataclasses.replace(f, session_id=value)
        elif key == "as_of":
            inline_as_of = parse_time(value)
    for name, vals in adds.items():
        if vals:
            more: dict[str, Any] = {name: tuple(getattr(f, name)) + tuple(vals)}
            f = dataclasses.replace(f, **more)
    st.query, st.filters = pq, f
    st.as_of = st.as_of or inline_as_of
    fc = filter_stage.effective_filter(cfg.filter, f)
    st.include_turns = bool(f.include_turns)
    st.eligible = filter_stage.eligibility(engine.vault, fc, st.now, st.as_of, engine.chains())
    info = [("terms", " ".join(pq.terms)), ("words", " ".join(pq.words))]
    info += [(f"inline {a}", b) for a, b in pq.inline]
    # the per-call filters the caller asked for (so a report or a replay shows them)
    for fname in filters.__dataclass_fields__:
        value = getattr(filters, fname)
        if value is not None and value != ():
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
            info.append((f"filter {fname}", shown))
    info += [("note", n) for n in pq.notes]
    info += [("warning", w) for w in unknown_type_warnings(fc.types)]
    return Out(info=info, reason="" if not pq.empty else "no query terms")


def unknown_type_warnings(types: Iterable[str]) -> list[str]:
    """One warning per type filter value that is not a memory type (such a filter matches
    no memory), naming the value, the closest known type if any, and every known type."""
    out = []
    for t in dict.fromkeys(types):
        if t in MEMORY_TYPES:
            continue
        close = difflib.get_close_matches(str(t).lower(), MEMORY_TYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        out.append(f"unknown type {t!r}: the type filter keeps nothing{hint}; known types: "
                   + ", ".join(MEMORY_TYPES))
    return out


def looks_like_topic_key(text: str) -> bool:
    """A dotted lower-case key such as `user.diet`."""
    return bool(_TOPIC_KEY.match(text.strip()))
