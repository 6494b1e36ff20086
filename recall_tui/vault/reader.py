"""Read a vault folder into a `Vault`: memories, problems, chains, entity graph, digests, turns.

A vault is written by agents and people, so any file may be wrong in its own way. The reader
never raises for content: each defect becomes a `Problem` naming the file, the line and what
was done about it, and the rest of the vault loads. A bad key falls back to its default; a
file that cannot be parsed at all is skipped. Reading never writes anything, not even
`.recall/` (the index creates that).

Frontmatter detection follows python-frontmatter's YAML handler (a first line of three or
more dashes) and the YAML is loaded with the same safe loader it uses (libyaml's when
present). The reader does its own split and load instead of `frontmatter.loads` because that
strips the body (the body must stay byte-exact for edits), gives no line numbers, and lets
one impossible date (`2026-02-30`) fail the whole file.

The rules this module implements are written down for users in docs/vault-format.md.
"""

from __future__ import annotations

import difflib
import errno
import functools
import hashlib
import heapq
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from types import MappingProxyType
from typing import Any

import yaml
from frontmatter.default_handlers import SafeLoader as _FrontmatterLoader
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from recall_tui.vault.model import (
    KNOWN_KEYS,
    MEMORY_TYPES,
    STATUSES,
    TIERS,
    Chain,
    DigestParagraph,
    Edge,
    EntityGraph,
    Memory,
    Problem,
    RelatedLink,
    Role,
    Turn,
    Vault,
)

#: Files larger than this are not memories (or digests); they are skipped and reported.
MAX_FILE_BYTES = 1 << 20
#: A NUL byte within this many leading bytes marks a file as binary.
BINARY_SNIFF_BYTES = 8192
#: Top-level folders that give a memory its role (vault-format.md, Layout).
ROLE_FOLDERS: dict[str, Role] = {
    "_always-load": Role.ALWAYS_LOAD,
    "_inbox": Role.INBOX,
    "_archive": Role.ARCHIVE,
}
DIGESTS_DIR = "consolidation"
DIGEST_PERIODS: tuple[str, ...] = ("daily", "weekly", "quarterly")
SESSIONS_DIR = "sessions"
TURN_ROLES: tuple[str, ...] = ("user", "assistant")

_UTF8_BOM = b"\xef\xbb\xbf"
_YAML_HANDLER = YAMLHandler()
_CLOSING_LINE = re.compile(r"^-{3,}[ \t\r\f\v]*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}(\s|$)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_EDGE_TEXT = re.compile(r"^(?P<s>.+?)\s*-\[(?P<r>[^\]]*)\]->\s*(?P<o>.+)$", re.DOTALL)
_UTC = timezone.utc


# --------------------------------------------------------------------------------------------
# YAML loading
# --------------------------------------------------------------------------------------------


class _Loader(_FrontmatterLoader):  # type: ignore[misc, valid-type]
    """python-frontmatter's safe loader, except that an impossible date stays text.

    PyYAML raises for `2026-02-30` while constructing, which would lose the whole file; kept
    as text, the date check reports it on its own key and the other keys still load.
    """


def _timestamp_or_text(loader: SafeConstructor, node: ScalarNode) -> Any:
    try:
        return SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        return node.value


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)


@dataclass
class _Front:
    """The frontmatter of one file, parsed, with where each key and list item sits."""

    raw: dict[str, Any] = field(default_factory=dict)
    """Top-level keys in file order (of duplicate keys the later value wins)."""
    lines: dict[str, int] = field(default_factory=dict)
    """1-based file line of each key."""
    source: dict[str, str] = field(default_factory=dict)
    """Source text of each top-level scalar value, to undo YAML's typing (`title: 2026`)."""
    items: dict[str, list[tuple[int, str | None]]] = field(default_factory=dict)
    """For list values: each item's file line and source text (None for non-scalars)."""

    def add(self, key: str, value: Any, line: int, rel: str, problems: list[Problem]) -> None:
        """Record one top-level key; a repeated key is reported and the later value kept."""
        if key in self.raw:
            problems.append(
                Problem(
                    rel,
                    line,
                    f"{key}: appears again (first on line {self.lines[key]}); "
                    "the later value is used",
                    "warning",
                )
            )
            del self.raw[key]  # re-insert so the mapping keeps the order of the value used
        self.raw[key] = value
        self.lines[key] = line


class _SkipFile(Exception):
    """A file that cannot be read as a memory; carries the problem to report."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def _split_frontmatter(text: str) -> tuple[str | None, int, str, int]:
    """Split text into (frontmatter YAML or None, its first line, body, body's first line).

    Lines are 1-based. Raises `_SkipFile` when an opening `---` has no closing line.
    """
    if not _YAML_HANDLER.detect(text):
        return None, 0, text, 1
    first_nl = text.find("\n")
    close = _CLOSING_LINE.search(text, first_nl + 1) if first_nl >= 0 else None
    if close is None:
        raise _SkipFile(1, "frontmatter opens with `---` on line 1 but never closes; file skipped")
    fm = text[first_nl + 1 : close.start()]
    after = close.end()
    if text.startswith("\n", after):
        after += 1
    close_line = text.count("\n", 0, close.start()) + 1
    return fm, 2, text[after:], close_line + 1


def _load_frontmatter(rel: str, fm: str, first_line: int, problems: list[Problem]) -> _Front:
    """Parse one file's frontmatter YAML (raises `_SkipFile` when it is not YAML).

    Frontmatter written by agents is nearly always plain `key: value` lines and simple lists;
    `_fast_front` reads that subset about ten times faster than PyYAML (the index benchmark
    reads 100k files) and gives up on anything else, which PyYAML then reads. Tests check
    that both give the same result on every file the fast path accepts.
    """
    front = _fast_front(fm, first_line, rel, problems)
    return front if front is not None else _yaml_front(rel, fm, first_line, problems)


def _yaml_front(rel: str, fm: str, first_line: int, problems: list[Problem]) -> _Front:
    """Parse frontmatter with PyYAML, keeping each key's line and each scalar's source text."""
    loader = _Loader(fm)
    front = _Front()
    try:
        node = loader.get_single_node()
        if node is None:
            return front
        if not isinstance(node, MappingNode):
            kind = "a list" if isinstance(node, SequenceNode) else "a single value"
            problems.append(
                Problem(
                    rel,
                    first_line + node.start_mark.line,
                    f"frontmatter is {kind}, not a mapping of keys; every key uses its default",
                )
            )
            return front
        loader.flatten_mapping(node)
        for key_node, value_node in node.value:
            line = first_line + key_node.start_mark.line
            if not isinstance(key_node, ScalarNode):
                problems.append(
                    Problem(rel, line, "a frontmatter key that is not plain text; ignored")
                )
                continue
            key = key_node.value
            front.add(key, loader.construct_object(value_node, deep=True), line, rel, problems)
            front.source.pop(key, None)
            front.items.pop(key, None)
            if isinstance(value_node, ScalarNode):
                front.source[key] = value_node.value
            elif isinstance(value_node, SequenceNode):
                front.items[key] = [
                    (
                        first_line + item.start_mark.line,
                        item.value if isinstance(item, ScalarNode) else None,
                    )
                    for item in value_node.value
                ]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else None
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        raise _SkipFile(line, f"frontmatter is not valid YAML ({what}); file skipped") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise _SkipFile(
            first_line, f"frontmatter is not valid YAML ({exc}); file skipped"
        ) from None
    finally:
        loader.dispose()
    return front


# --- the fast path --------------------------------------------------------------------------

_FAST_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?:[ ]+(.*?))?[ ]*$")
_FAST_ITEM = re.compile(r"( *)-(?:[ ]+(.*?))?[ ]*$")
#: Characters a plain YAML scalar may not start with (then PyYAML decides).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NOT_PLAIN = re.compile(r"^[?:,\[\]{}#&*!|>'\"%@`]|^-(?: |$)|: | #|:$")
_NOT_PLAIN_FLOW = re.compile(r"^[?:,\[\]{}#&*!|>'\"%@`]|^-(?: |$)|: | #|:$|[,\[\]{}]")
_SCALAR_LOADER = _Loader("")
#: First characters some implicit YAML type (number, bool, null, date, ...) can start with.
_TYPED_FIRST = frozenset(k for k in _Loader.yaml_implicit_resolvers if k)
#: Whether some implicit type may start with any character (not so in PyYAML's safe loader).
_TYPED_ANY_FIRST = None in _Loader.yaml_implicit_resolvers
_STR_TAG = "tag:yaml.org,2002:str"


_FLOW_SPECIAL = re.compile(r"[\"'\[\]{}]")
#: Characters PyYAML refuses (control characters) or reads as line breaks (NEL, LS, PS) or
#: treats specially (BOM): frontmatter holding any of them is left to PyYAML.
_NOT_FAST_CHARS = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


class _NotFast(Exception):
    """The frontmatter uses YAML beyond the fast path's subset."""


def _fast_front(fm: str, first_line: int, rel: str, problems: list[Problem]) -> _Front | None:
    """Read the common subset of frontmatter YAML, or None to let PyYAML read it.

    The subset: `key: scalar`, `key: [flow, list]`, `key: {flow: map}` and `key:` followed
    by `- item` lines, with plain or simply quoted scalars. Anything else (block scalars,
    nested block maps, anchors, tags, comments after values, tabs, quoted escapes) is
    refused rather than guessed.
    """
    if "\r" in fm:
        fm = fm.replace("\r\n", "\n")
        if "\r" in fm:
            return None
    if "\t" in fm or _NOT_FAST_CHARS.search(fm):
        return None
    lines = fm.split("\n")
    front = _Front()
    raw, where, source, items = front.raw, front.lines, front.source, front.items
    key_match, item_match = _FAST_KEY.match, _FAST_ITEM.match
    pending: list[Problem] = []  # reported only if the fast path finishes
    try:
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            if not line or line[0] == "#" or line.isspace():
                i += 1
                continue
            m = key_match(line)
            if m is None:
                return None
            key, rest = m.groups()
            key_line = first_line + i
            i += 1
            if key in raw:
                front.add(key, None, key_line, rel, pending)
                source.pop(key, None)
                items.pop(key, None)
            where[key] = key_line
            if rest:
                value, text = _fast_value(rest, False)
                raw[key] = value
                if text is not None:
                    source[key] = text
                elif type(value) is list:
                    items[key] = [(key_line, s) for s in _fast_sources(rest)]
                continue
            values: list[Any] = []
            spots: list[tuple[int, str | None]] = []
            indent = -1
            while i < n:
                line = lines[i]
                if not line or line.isspace():
                    i += 1
                    continue
                im = item_match(line)
                if im is None:
                    if line[0] == " ":
                        return None
                    break
                lead, item = im.groups()
                if indent < 0:
                    indent = len(lead)
                elif len(lead) != indent:
                    return None
                if not item:
                    return None
                value, text = _fast_value(item, False)
                values.append(value)
                spots.append((first_line + i, text))
                i += 1
            if indent < 0:
                raw[key] = None
                source[key] = ""  # what PyYAML's node holds for an empty value
            else:
                raw[key] = values
                items[key] = spots
    except _NotFast:
        return None
    problems.extend(pending)
    return front


def _fast_value(text: str, flow: bool) -> tuple[Any, str | None]:
    """One value: (parsed, source text when it is a scalar)."""
    if not text:
        raise _NotFast
    first = text[0]
    if first == "[" or first == "{":
        if flow or text[-1] != ("]" if first == "[" else "}"):
            raise _NotFast
        parts = _flow_split(text[1:-1])
        if first == "[":
            return [_fast_value(p, True)[0] for p in parts], None
        out: dict[Any, Any] = {}
        for part in parts:
            k, sep, v = part.partition(": ")
            if not sep or not k or k[0] in _INDICATORS or k in out:
                raise _NotFast
            out[_fast_value(k, True)[0]] = _fast_value(v.strip(), True)[0]
        return out, None
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _NotFast
        return inner, inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _NotFast
        return inner.replace("''", "'"), inner.replace("''", "'")
    if (_NOT_PLAIN_FLOW if flow else _NOT_PLAIN).search(text):
        raise _NotFast
    if first not in _TYPED_FIRST and not _TYPED_ANY_FIRST:  # no typed value starts so
        return text, text
    return _resolve_plain(text), text


@functools.lru_cache(maxsize=1 << 16)
def _resolve_plain(text: str) -> Any:
    """Type a plain scalar exactly as PyYAML would (its own resolver and constructors)."""
    resolvers = _Loader.yaml_implicit_resolvers
    for tag, regexp in [*resolvers.get(text[0], ()), *resolvers.get(None, ())]:
        if regexp.match(text):
            if tag == _STR_TAG:
                return text
            try:
                return _Loader.yaml_constructors[tag](_SCALAR_LOADER, ScalarNode(tag, text))
            except Exception as exc:  # leave odd cases to PyYAML's own error reporting
                raise _NotFast from exc
    return text


def _flow_split(inner: str) -> list[str]:
    """Split flow-collection content on top-level commas; quotes may hold commas."""
    if not _FLOW_SPECIAL.search(inner):
        parts = [p.strip() for p in inner.split(",")]
        if parts[-1] == "":
            if len(parts) == 1:
                return []
            raise _NotFast  # a trailing comma: leave it to PyYAML
        if "" in parts:
            raise _NotFast
        return parts
    parts = []
    buf: list[str] = []
    quote = ""
    for ch in inner:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            buf.append(ch)
        elif ch in "[]{}":
            raise _NotFast
        elif ch == ",":
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    if quote:
        raise _NotFast
    last = "".join(buf).strip()
    if last:
        parts.append(last)
    elif parts:
        raise _NotFast  # a trailing comma: leave it to PyYAML
    if any(not p for p in parts):
        raise _NotFast
    return parts


def _fast_sources(text: str) -> list[str | None]:
    """Source text of each item of a one-line flow list (quotes removed)."""
    out: list[str | None] = []
    for part in _flow_split(text[1:-1]):
        out.append(_fast_value(part, True)[1])
    return out


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A short, unambiguous rendering of a bad value for a problem message."""
    if isinstance(value, datetime | date):
        text = value.isoformat()
    elif isinstance(value, str):
        text = repr(value)
    elif value is None:
        text = "nothing"
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _scalar_text(value: Any, source: str | None) -> str | None:
    """Text of a scalar as written: YAML turns `2026` or `yes` into other types; take the
    source text back so a title `2026` stays "2026". None for lists and mappings."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return None
    if source is not None:
        return source
    if isinstance(value, bool | int | float | date):
        return str(value)
    return None


def _to_datetime(value: Any) -> datetime | None:
    """A timezone-aware datetime from a YAML date/datetime or an ISO-8601 string, else None."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=_UTC)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text[-1] in "Zz":  # Python 3.10's fromisoformat does not know `Z`
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=_UTC)
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@functools.lru_cache(maxsize=1 << 16)
def _normalise_name(text: str) -> str:
    """Entity and relation names: trimmed, inner whitespace collapsed, lower-cased."""
    return " ".join(text.split()).lower()


class _Keys:
    """Resolves one file's frontmatter keys to typed values, reporting each bad key."""

    def __init__(self, rel: str, front: _Front, problems: list[Problem]) -> None:
        self.rel = rel
        self.raw = front.raw
        self.lines = front.lines
        self.source = front.source
        self.items = front.items
        self.problems = problems

    def given(self, key: str) -> bool:
        """A key counts as given when present and not null."""
        return self.raw.get(key) is not None

    def bad(
        self, key: str, got: Any, expected: str, using: str, *, line: int | None = None
    ) -> None:
        self.problems.append(
            Problem(
                self.rel,
                line if line is not None else self.lines.get(key),
                f"{key}: expected {expected}, got {_show(got)}; using {using}",
            )
        )

    def text(self, key: str, default: str | None, using: str | None = None) -> str | None:
        """A string key; `using` names a computed default in the problem message."""
        if not self.given(key):
            return default
        value = self.raw[key]
        text = _scalar_text(value, self.source.get(key))
        if text is None:
            shown = using or (_show(default) if default is not None else "none")
            self.bad(key, value, "text", shown)
            return default
        text = text.strip()
        return text if text else default

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        text = self.text(key, None)
        if text is None:
            return default
        if text.lower() in options:
            return text.lower()
        self.bad(key, self.raw[key], "one of " + ", ".join(options), default)
        return default

    def number(self, key: str, lo: float, hi: float, default: float) -> float:
        """A required-with-default number in lo..hi."""
        value = self.optional_number(key, lo, hi, default)
        return default if value is None else value

    def optional_number(
        self, key: str, lo: float, hi: float, default: float | None = None
    ) -> float | None:
        if not self.given(key):
            return default
        value = _number(self.raw[key])
        if value is None or not lo <= value <= hi:
            using = _fmt_num(default) if default is not None else "none"
            self.bad(key, self.raw[key], f"a number {_fmt_num(lo)}..{_fmt_num(hi)}", using)
            return default
        return value

    def when(self, key: str, default: datetime | None, using: str = "none") -> datetime | None:
        """A date or datetime key; `using` names the default in the problem message."""
        if not self.given(key):
            return default
        value = _to_datetime(self.raw[key])
        if value is None:
            self.bad(key, self.raw[key], "an ISO-8601 date or datetime", using)
            return default
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        """A list of strings; one string is a list of one. Bad items are dropped."""
        if not self.given(key):
            return ()
        value = self.raw[key]
        if not isinstance(value, list):
            text = _scalar_text(value, self.source.get(key))
            if text is None:
                self.bad(key, value, "a list of text", "[]")
                return ()
            return (text.strip(),) if text.strip() else ()
        out: list[str] = []
        for i, item in enumerate(value):
            line, source = self._item(key, i)
            text = _scalar_text(item, source)
            if text is None:
                self.problems.append(
                    Problem(
                        self.rel,
                        line,
                        f"{key}[{i}]: expected text, got {_show(item)}; item dropped",
                    )
                )
                continue
            if text.strip():
                out.append(text.strip())
        return tuple(out)

    def _item(self, key: str, index: int) -> tuple[int | None, str | None]:
        """File line and source text of one list item (the key's line when unknown)."""
        spots = self.items.get(key)
        if spots is not None and index < len(spots):
            return spots[index]
        return self.lines.get(key), None

    def keywords(self) -> tuple[str, ...]:
        """`keywords`: a string is split on commas; a list is taken item by item."""
        if not self.given("keywords"):
            return ()
        value = self.raw["keywords"]
        if isinstance(value, list):
            return self.texts("keywords")
        text = _scalar_text(value, self.source.get("keywords"))
        if text is None:
            self.bad("keywords", value, "text or a list of text", "none")
            return ()
        return tuple(part.strip() for part in text.split(",") if part.strip())

    def related(self) -> tuple[RelatedLink, ...]:
        if not self.given("related_via"):
            return ()
        value = self.raw["related_via"]
        if not isinstance(value, list):
            value = [value]
        out: list[RelatedLink] = []
        for i, item in enumerate(value):
            line = self._item("related_via", i)[0]
            if isinstance(item, str) and item.strip():
                out.append(RelatedLink(item.strip()))
                continue
            if not isinstance(item, dict) or _scalar_text(item.get("id"), None) in (None, ""):
                self.problems.append(
                    Problem(
                        self.rel,
                        line,
                        f"related_via[{i}]: expected {{id, score, relation}} with an id, "
                        f"got {_show(item)}; "
                        "link dropped",
                    )
                )
                continue
            link_id = str(_scalar_text(item["id"], None)).strip()
            where = f"related_via[{i}]"
            score = 1.0
            if item.get("score") is not None:
                got = _number(item["score"])
                if got is None or not 0.0 <= got <= 1.0:
                    self.bad(f"{where}.score", item["score"], "a number 0..1", "1", line=line)
                else:
                    score = got
            relation = "related"
            if item.get("relation") is not None:
                rel_text = _scalar_text(item["relation"], None)
                if rel_text is None or not rel_text.strip():
                    self.bad(f"{where}.relation", item["relation"], "text", "'related'", line=line)
                else:
                    relation = rel_text.strip()
            out.append(RelatedLink(link_id, score, relation))
        return tuple(out)

    def edges(self, memory_id: str) -> tuple[Edge, ...]:
        if not self.given("edges"):
            return ()
        value = self.raw["edges"]
        if not isinstance(value, list):
            value = [value]
        out: list[Edge] = []
        for i, item in enumerate(value):
            parts: tuple[Any, Any, Any] | None = None
            if isinstance(item, str):
                m = _EDGE_TEXT.match(item.strip())
                if m:
                    parts = (m["s"], m["r"], m["o"])
            elif isinstance(item, dict):
                parts = (item.get("subject"), item.get("relation"), item.get("object"))
            names = (
                tuple(_normalise_name(_scalar_text(p, None) or "") for p in parts)
                if parts
                else ("", "", "")
            )
            if not all(names):
                self.problems.append(
                    Problem(
                        self.rel,
                        self._item("edges", i)[0],
                        f'edges[{i}]: expected "subject -[relation]-> object" or '
                        f"{{subject, relation, object}}, got {_show(item)}; edge dropped",
                    )
                )
                continue
            edge = Edge(names[0], names[1], names[2], memory_id)
            if edge not in out:
                out.append(edge)
        return tuple(out)


# --------------------------------------------------------------------------------------------
# Body helpers
# --------------------------------------------------------------------------------------------


def _title_from_body(body: str) -> str | None:
    """The first `# ` heading outside code fences."""
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence and line.startswith("# "):
            title = line[2:].strip().rstrip("#").strip()
            if title:
                return title
    return None


def _first_paragraph(body: str) -> str:
    """The first paragraph: headings, blank lines, rules, comments and code fences skipped."""
    in_fence = False
    collected: list[str] = []
    for line in body.splitlines():
        if _FENCE.match(line):
            if collected:
                break
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        stripped = line.strip()
        if not stripped or _HEADING.match(stripped) or _RULE.match(stripped):
            if collected:
                break
            continue
        if stripped.startswith("<!--") and stripped.endswith("-->"):
            continue
        collected.append(stripped)
    return " ".join(" ".join(collected).split())


# --------------------------------------------------------------------------------------------
# Walking the folder
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    rel: str
    """Path relative to the vault root, posix separators (the link's path for symlinks)."""
    path: str
    """Path to open."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _walk(root: str, problems: list[Problem]) -> list[_File]:
    """Every regular file below root, skipping dot-names; symlinks are followed only when
    they stay inside the vault. Symlinks are resolved after the real tree is walked, so a
    file or folder is always read under its own path and a link to it is not read twice."""
    root_real = os.path.realpath(root)
    files: list[_File] = []
    real_files: dict[str, str] = {}  # real path -> rel, for links to files read directly
    visited: dict[str, str] = {root_real: ""}
    linked_dirs: list[tuple[str, str, str, str]] = []  # rel, path, target, real parent
    linked_files: list[tuple[str, str, str]] = []  # rel, path, target
    stack: list[tuple[str, str, str]] = [("", root, root_real)]

    def scan(rel_dir: str, abs_dir: str, real_dir: str) -> None:
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(
                Problem(rel_dir or ".", None, f"cannot list this folder ({exc.strerror})")
            )
            return
        for entry in reversed(entries):  # the stack pops in sorted order
            name = entry.name
            if name.startswith("."):
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_link = entry.is_symlink()
                if not is_link and entry.is_dir(follow_symlinks=False):
                    stack.append((rel, entry.path, os.path.join(real_dir, name)))
                    continue
            except OSError:
                continue
            if is_link:
                link_text = os.readlink(entry.path)
                try:
                    st = os.stat(entry.path)
                except OSError as exc:
                    why = "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
                    problems.append(Problem(rel, None, f"{why} (-> {link_text}); skipped"))
                    continue
                target = os.path.realpath(entry.path)
                if not _inside(target, root_real):
                    problems.append(
                        Problem(
                            rel, None, f"symlink to {link_text} leads outside the vault; skipped"
                        )
                    )
                    continue
                if stat.S_ISDIR(st.st_mode):
                    linked_dirs.append((rel, entry.path, target, real_dir))
                    continue
                if not stat.S_ISREG(st.st_mode):
                    if name.endswith(".md"):
                        problems.append(Problem(rel, None, "not a regular file; skipped"))
                    continue
                linked_files.append((rel, entry.path, target))
            elif entry.is_file(follow_symlinks=False):
                files.append(_File(rel, entry.path))
                real_files[os.path.join(real_dir, name)] = rel
            elif name.endswith(".md"):
                problems.append(Problem(rel, None, "not a regular file; skipped"))

    while True:
        while stack:
            rel_dir, abs_dir, real_dir = stack.pop()
            visited.setdefault(real_dir, rel_dir)
            scan(rel_dir, abs_dir, real_dir)
        if not linked_dirs:
            break
        linked_dirs.sort()
        rel, path, target, real_parent = linked_dirs.pop(0)
        link_text = os.readlink(path)
        if _inside(real_parent, target):
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink loop: folder link to {link_text} leads back to its own parent; skipped",
                )
            )
        elif target in visited:
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink to folder {link_text} is already read as '{visited[target] or '.'}'; skipped",
                    "warning",
                )
            )
        else:
            visited[target] = rel
            stack.append((rel, path, target))
    for rel, path, target in sorted(linked_files):
        if target in real_files:
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink to {os.readlink(path)} is already read as "
                    f"'{real_files[target]}'; skipped",
                    "warning",
                )
            )
        else:
            real_files[target] = rel
            files.append(_File(rel, path))
    files.sort(key=lambda f: f.rel)
    return files


def _read_text(f: _File, problems: list[Problem]) -> tuple[str, bytes, os.stat_result] | None:
    """The file's text (BOM removed), bytes and stat, or None after reporting why not."""
    try:
        with open(f.path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > MAX_FILE_BYTES:
                problems.append(Problem(f.rel, None, _too_big(st.st_size)))
                return None
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        problems.append(Problem(f.rel, None, f"cannot read the file ({exc.strerror}); skipped"))
        return None
    if len(data) > MAX_FILE_BYTES:
        problems.append(Problem(f.rel, None, _too_big(len(data))))
        return None
    nul = data.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        problems.append(Problem(f.rel, None, f"binary file (NUL byte at offset {nul}); skipped"))
        return None
    start = 3 if data.startswith(_UTF8_BOM) else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        line = data.count(b"\n", 0, offset) + 1
        problems.append(Problem(f.rel, line, f"not valid UTF-8 (byte offset {offset}); skipped"))
        return None
    return text, data, st


def _too_big(size: int) -> str:
    return f"file is {size / (1 << 20):.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit; skipped"


# --------------------------------------------------------------------------------------------
# Memories
# --------------------------------------------------------------------------------------------


def _role_and_topic(rel: str) -> tuple[Role, str]:
    parts = rel.split("/")
    folders = parts[:-1]
    role = Role.NORMAL
    if folders and folders[0] in ROLE_FOLDERS:
        role = ROLE_FOLDERS[folders[0]]
        folders = folders[1:]
    return role, "/".join(folders)


def _read_memory(f: _File, problems: list[Problem]) -> Memory | None:
    got = _read_text(f, problems)
    if got is None:
        return None
    text, data, st = got
    file_problems: list[Problem] = []
    try:
        fm, fm_line, body, _ = _split_frontmatter(text)
        front = _load_frontmatter(f.rel, fm, fm_line, file_problems) if fm is not None else _Front()
    except _SkipFile as skip:
        problems.extend(file_problems)
        problems.append(Problem(f.rel, skip.line, skip.reason))
        return None
    memory = _build_memory(f.rel, front, body, data, st.st_mtime, file_problems)
    problems.extend(file_problems)
    return memory


def _build_memory(
    rel: str, front: _Front, body: str, data: bytes, mtime: float, problems: list[Problem]
) -> Memory:
    keys = _Keys(rel, front, problems)
    stem = rel.rsplit("/", 1)[-1][: -len(".md")]
    role, folder_topic = _role_and_topic(rel)
    memory_id = keys.text("id", stem, f"the file name {stem!r}") or stem
    created = keys.when("created", None, "the file's modification time") or datetime.fromtimestamp(
        mtime, _UTC
    )
    superseded_by = keys.texts("superseded_by")
    if len(superseded_by) > 1:
        keys.bad("superseded_by", front.raw["superseded_by"], "one id", "none")
        superseded_by = ()
    topic_path = keys.text("topic_path", None, "the folder path")
    extra = {k: v for k, v in front.raw.items() if k not in KNOWN_KEYS}
    for key in extra:
        guess = _did_you_mean(key)
        if guess:
            problems.append(
                Problem(
                    rel,
                    front.lines.get(key),
                    f"unknown key '{key}' kept as an extra; did you mean '{guess}'?",
                    "warning",
                )
            )
    return Memory(
        id=memory_id,
        path=rel,
        role=role,
        title=keys.text("title", None, "the first heading or the file name")
        or _title_from_body(body)
        or stem,
        type=keys.choice("type", MEMORY_TYPES, "fact"),
        scope=keys.text("scope", "global") or "global",
        summary=keys.text("summary", None, "the first paragraph") or _first_paragraph(body),
        recall_when=keys.texts("recall_when"),
        tags=keys.texts("tags"),
        keywords=keys.keywords(),
        topic_path=topic_path.strip("/") if topic_path is not None else folder_topic,
        topic_key=keys.text("topic_key", None),
        status=keys.choice("status", STATUSES, "active"),
        supersedes=keys.texts("supersedes"),
        superseded_by=superseded_by[0] if superseded_by else None,
        related_via=keys.related(),
        edges=keys.edges(memory_id),
        created=created,
        updated=keys.when("updated", created, "created") or created,
        valid_from=keys.when("valid_from", None),
        valid_to=keys.when("valid_to", None),
        ingested_at=keys.when("ingested_at", created, "created") or created,
        expires=keys.when("expires", None),
        trust=keys.number("trust", 0, 3, 2.0),
        credibility=keys.number("credibility", 1, 5, 3.0),
        confidence=keys.optional_number("confidence", 0, 1),
        emotion=keys.number("emotion", -5, 5, 0.0),
        tier=keys.choice("tier", TIERS, "normal"),
        source=keys.text("source", None),
        session_id=keys.text("session_id", None),
        lang=keys.text("lang", "en") or "en",
        original=keys.text("original", None),
        body=body,
        content_hash=hashlib.sha256(data).hexdigest(),
        mtime=mtime,
        extra=MappingProxyType(extra),
        frontmatter=MappingProxyType(dict(front.raw)),
        key_lines=MappingProxyType(dict(front.lines)),
    )


@functools.lru_cache(maxsize=1024)
def _did_you_mean(key: str) -> str | None:
    """A known key an unknown one is probably a typo of (`recall-when`, `tag`), else None."""
    folded = key.strip().lower().replace("-", "_").replace(" ", "_")
    if folded in KNOWN_KEYS:
        return folded
    close = difflib.get_close_matches(folded, KNOWN_KEYS, n=1, cutoff=0.85)
    return close[0] if close else None


# --------------------------------------------------------------------------------------------
# Links between memories: unknown ids, supersession, chains
# --------------------------------------------------------------------------------------------


def _drop_unknown_links(memories: dict[str, Memory], problems: list[Problem]) -> dict[str, Memory]:
    """Links to ids that are not in the vault (or to the memory itself) are dropped."""
    out: dict[str, Memory] = {}
    for mid, m in memories.items():
        changes: dict[str, Any] = {}

        def report(key: str, target: str, m: Memory = m) -> None:
            why = "links to itself" if target == m.id else f"unknown id '{target}'"
            problems.append(Problem(m.path, m.key_lines.get(key), f"{key}: {why}; link dropped"))

        sup = []
        for target in m.supersedes:
            if target in memories or target == m.id:  # self-links are reported as cycles
                sup.append(target)
            else:
                report("supersedes", target)
        if len(sup) != len(m.supersedes):
            changes["supersedes"] = tuple(sup)
        if m.superseded_by is not None and m.superseded_by not in memories:
            report("superseded_by", m.superseded_by)
            changes["superseded_by"] = None
        rel = []
        for link in m.related_via:
            if link.id in memories and link.id != m.id:
                rel.append(link)
            else:
                report("related_via", link.id)
        if len(rel) != len(m.related_via):
            changes["related_via"] = tuple(rel)
        out[mid] = replace(m, **changes) if changes else m
    return out


@dataclass
class _Link:
    """One supersession link older -> newer and who declared it."""

    older: str
    newer: str
    by_newer: bool = False
    """Declared as `supersedes` on the newer memory."""
    by_older: bool = False
    """Declared as `superseded_by` on the older memory."""


def _supersession_links(
    memories: dict[str, Memory], problems: list[Problem]
) -> tuple[dict[tuple[str, str], _Link], dict[str, Memory]]:
    """Collect the links from both ends, resolve contradictions, break cycles.

    Returns the surviving links and the memories with every dropped declaration removed, so
    a memory's `supersedes`/`superseded_by` always agree with the chains.
    """
    links: dict[tuple[str, str], _Link] = {}
    for m in memories.values():
        for older in m.supersedes:
            links.setdefault((older, m.id), _Link(older, m.id)).by_newer = True
        if m.superseded_by is not None:
            links.setdefault((m.id, m.superseded_by), _Link(m.id, m.superseded_by)).by_older = True

    dropped: list[_Link] = []
    # An explicit `superseded_by` names the one successor; another memory claiming to supersede
    # the same older memory contradicts it, and the explicit end wins.
    for key, link in sorted(links.items()):
        older = memories[link.older]
        if link.by_older or older.superseded_by is None or link.older == link.newer:
            continue
        newer = memories[link.newer]
        problems.append(
            Problem(
                newer.path,
                newer.key_lines.get("supersedes"),
                f"supersedes: '{older.id}' but '{older.id}' says superseded_by: "
                f"'{older.superseded_by}'; link dropped",
            )
        )
        dropped.append(links.pop(key))

    for key in [k for k in sorted(links) if k[0] == k[1]]:
        link = links.pop(key)
        m = memories[link.older]
        k = "supersedes" if link.by_newer else "superseded_by"
        problems.append(
            Problem(m.path, m.key_lines.get(k), f"{k}: '{m.id}' supersedes itself; link dropped")
        )
        dropped.append(link)

    while True:
        cycle = _find_cycle(links)
        if cycle is None:
            break
        pairs = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        older_id, newer_id = min(
            pairs,
            key=lambda p: (memories[p[1]].created - memories[p[0]].created, p[0], p[1]),
        )
        link = links.pop((older_id, newer_id))
        declarer, k = (
            (memories[newer_id], "supersedes")
            if link.by_newer
            else (memories[older_id], "superseded_by")
        )
        shown = " -> ".join([*cycle, cycle[0]])
        problems.append(
            Problem(
                declarer.path,
                declarer.key_lines.get(k),
                f"supersession cycle {shown} (each superseded by the next); "
                f"dropped the link {older_id} -> {newer_id}",
            )
        )
        dropped.append(link)

    if dropped:
        memories = dict(memories)
        for link in dropped:
            if link.by_newer:
                m = memories[link.newer]
                memories[m.id] = replace(
                    m, supersedes=tuple(x for x in m.supersedes if x != link.older)
                )
            if link.by_older:
                m = memories[link.older]
                memories[m.id] = replace(m, superseded_by=None)
    return links, memories


def _find_cycle(links: Iterable[tuple[str, str]]) -> list[str] | None:
    """One cycle in the link graph (nodes in order), found deterministically, or None."""
    succ: dict[str, list[str]] = {}
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
    for targets in succ.values():
        targets.sort()
    colour: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in sorted(succ):
        if colour.get(start):
            continue
        path = [start]
        iters = [iter(succ.get(start, ()))]
        colour[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                iters.pop()
                continue
            state = colour.get(nxt, 0)
            if state == 1:
                return path[path.index(nxt) :]
            if state == 0:
                colour[nxt] = 1
                path.append(nxt)
                iters.append(iter(succ.get(nxt, ())))
    return None


def _build_chains(links: Iterable[tuple[str, str]], order: dict[str, int]) -> tuple[Chain, ...]:
    """Chains as linear paths through the (acyclic) supersession graph.

    Per connected group the longest path is taken first (ties: members earlier in path
    order), then the longest among the memories left, and so on, so each memory is in at
    most one chain. Paths of one memory are not chains.
    """
    succ: dict[str, list[str]] = {}
    pred: dict[str, list[str]] = {}
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
        pred.setdefault(newer, []).append(older)
    nodes = sorted(set(succ) | set(pred), key=order.__getitem__)
    # connected groups
    group: dict[str, int] = {}
    groups: list[list[str]] = []
    for start in nodes:
        if start in group:
            continue
        members, todo = [], [start]
        group[start] = len(groups)
        while todo:
            n = todo.pop()
            members.append(n)
            for other in succ.get(n, []) + pred.get(n, []):
                if other not in group:
                    group[other] = len(groups)
                    todo.append(other)
        groups.append(sorted(members, key=order.__getitem__))

    chains: list[Chain] = []
    for members in groups:
        topo = _topological(members, succ, pred, order)
        left = set(members)
        while len(left) > 1:
            best: dict[str, int] = {}
            back: dict[str, str | None] = {}
            for n in topo:
                if n not in left:
                    continue
                best[n], back[n] = 1, None
                for p in sorted(pred.get(n, ()), key=order.__getitem__):
                    if p in left and best[p] + 1 > best[n]:
                        best[n], back[n] = best[p] + 1, p
            end = min(best, key=lambda n: (-best[n], order[n]))
            if best[end] < 2:
                break
            path: list[str] = []
            cur: str | None = end
            while cur is not None:
                path.append(cur)
                cur = back[cur]
            path.reverse()
            chains.append(Chain(tuple(path)))
            left.difference_update(path)
    chains.sort(key=lambda c: order[c.head])
    return tuple(chains)


def _topological(
    members: list[str],
    succ: dict[str, list[str]],
    pred: dict[str, list[str]],
    order: dict[str, int],
) -> list[str]:
    """Members oldest first (Kahn's algorithm; ties in path order, so the result is stable)."""
    indegree = {n: len(pred.get(n, ())) for n in members}
    ready = [(order[n], n) for n in members if indegree[n] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        n = heapq.heappop(ready)[1]
        out.append(n)
        for s in succ.get(n, ()):
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (order[s], s))
    return out


def _status_warnings(
    memories: dict[str, Memory], links: Iterable[tuple[str, str]], problems: list[Problem]
) -> None:
    """An older memory still `active`, or a newest one marked `superseded`, is suspicious."""
    succ: dict[str, list[str]] = {}
    has_pred: set[str] = set()
    for older, newer in links:
        succ.setdefault(older, []).append(newer)
        has_pred.add(newer)
    for m in memories.values():
        line = m.key_lines.get("status")
        if m.id in succ and m.status == "active":
            newer = ", ".join(f"'{x}'" for x in sorted(succ[m.id]))
            problems.append(
                Problem(
                    m.path,
                    line,
                    f"status is active but {newer} supersedes it; it will still be recalled",
                    "warning",
                )
            )
        if m.id in has_pred and m.id not in succ and m.status == "superseded":
            problems.append(
                Problem(
                    m.path,
                    line,
                    "status is superseded but it is the newest in its chain; nothing replaces it",
                    "warning",
                )
            )


# --------------------------------------------------------------------------------------------
# Digests and turns
# --------------------------------------------------------------------------------------------


def _read_digest(f: _File, period: str, problems: list[Problem]) -> list[DigestParagraph]:
    got = _read_text(f, problems)
    if got is None:
        return []
    text = got[0]
    try:
        _, _, body, first_line = _split_frontmatter(text)
    except _SkipFile as skip:
        problems.append(Problem(f.rel, skip.line, skip.reason))
        return []
    label = f.rel.rsplit("/", 1)[-1][: -len(".md")]
    out: list[DigestParagraph] = []
    block: list[str] = []
    block_line = 0

    def flush() -> None:
        if block:
            para = "\n".join(block).strip()
            if para:
                out.append(
                    DigestParagraph(
                        path=f.rel,
                        period=period,
                        label=label,
                        index=len(out),
                        line=block_line,
                        text=para,
                        content_hash=hashlib.sha256(para.encode("utf-8")).hexdigest(),
                    )
                )
            block.clear()

    for offset, line in enumerate(body.splitlines()):
        stripped = line.strip()
        if not stripped or _HEADING.match(stripped):
            flush()
            continue
        if not block:
            block_line = first_line + offset
        block.append(line.rstrip())
    flush()
    return out


def _read_turns(f: _File, problems: list[Problem]) -> list[Turn]:
    session_id = f.rel.rsplit("/", 1)[-1][: -len(".jsonl")]
    try:
        with open(f.path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        problems.append(Problem(f.rel, None, f"cannot read the file ({exc.strerror}); skipped"))
        return []
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    turns: list[Turn] = []
    seen: dict[int, int] = {}
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue

        def bad(why: str, lineno: int = lineno) -> None:
            problems.append(Problem(f.rel, lineno, f"{why}; line skipped"))

        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad(f"not valid UTF-8 (byte {exc.start} of the line)")
            continue
        except ValueError as exc:
            bad(f"not valid JSON ({exc.args[0].split(':')[0]})")
            continue
        if not isinstance(obj, dict):
            bad(f"expected a JSON object, got {_show(obj)}")
            continue
        seq, role, text, at_raw = obj.get("seq"), obj.get("role"), obj.get("text"), obj.get("at")
        if isinstance(seq, bool) or not isinstance(seq, int):
            bad(f"seq: expected an integer, got {_show(seq)}")
            continue
        if role not in TURN_ROLES:
            bad(f"role: expected user or assistant, got {_show(role)}")
            continue
        if not isinstance(text, str):
            bad(f"text: expected a string, got {_show(text)}")
            continue
        at = None
        if at_raw is not None:
            at = _to_datetime(at_raw) if isinstance(at_raw, str) else None
            if at is None:
                bad(f"at: expected an ISO-8601 datetime, got {_show(at_raw)}")
                continue
        if seq in seen:
            bad(f"seq {seq} already used on line {seen[seq]}")
            continue
        seen[seq] = lineno
        turns.append(Turn(session_id, seq, role, text, at, f.rel, lineno))
    return turns


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def read_vault(root: str | os.PathLike[str]) -> Vault:
    """Read every memory, digest and transcript below `root` into a `Vault`.

    Raises only when the root itself is missing (`FileNotFoundError`) or not a folder
    (`NotADirectoryError`); every other defect is a `Problem` in the result.
    """
    root_path = os.path.abspath(os.fspath(root))
    if not os.path.exists(root_path):
        raise FileNotFoundError(errno.ENOENT, "no vault folder here", root_path)
    if not os.path.isdir(root_path):
        raise NotADirectoryError(errno.ENOTDIR, "the vault must be a folder", root_path)

    problems: list[Problem] = []
    memories: dict[str, Memory] = {}
    digests: list[DigestParagraph] = []
    turns: list[Turn] = []
    for f in _walk(root_path, problems):
        parts = f.rel.split("/")
        if parts[0] == DIGESTS_DIR and len(parts) > 1:
            if len(parts) == 3 and parts[1] in DIGEST_PERIODS and parts[2].endswith(".md"):
                digests.extend(_read_digest(f, parts[1], problems))
            elif f.rel.endswith(".md"):
                problems.append(
                    _not_read(f.rel, "digests live in consolidation/{daily,weekly,quarterly}/")
                )
        elif parts[0] == SESSIONS_DIR and len(parts) > 1:
            if len(parts) == 2 and parts[1].endswith(".jsonl"):
                turns.extend(_read_turns(f, problems))
            elif f.rel.endswith(".md"):
                problems.append(
                    _not_read(f.rel, "sessions/ holds transcripts (<session_id>.jsonl)")
                )
        elif f.rel.endswith(".md"):
            memory = _read_memory(f, problems)
            if memory is None:
                continue
            first = memories.get(memory.id)
            if first is not None:
                problems.append(
                    Problem(
                        memory.path,
                        memory.key_lines.get("id"),
                        f"duplicate id '{memory.id}' (first used by {first.path}); file skipped",
                    )
                )
                continue
            memories[memory.id] = memory

    memories = _drop_unknown_links(memories, problems)
    links, memories = _supersession_links(memories, problems)
    order = {mid: i for i, mid in enumerate(memories)}
    chains = _build_chains(links, order)
    _status_warnings(memories, links, problems)
    edges = tuple(e for m in memories.values() for e in m.edges)

    problems.sort(key=_problem_order)
    return Vault(
        root=root_path,
        memories=MappingProxyType(memories),
        problems=tuple(problems),
        digests=tuple(digests),
        turns=tuple(turns),
        chains=chains,
        graph=EntityGraph.build(edges),
    )


def _not_read(rel: str, why: str) -> Problem:
    return Problem(rel, None, f"not read: {why}", "warning")


def _problem_order(p: Problem) -> tuple[str, int, str]:
    return (p.path, p.line or 0, p.reason)
