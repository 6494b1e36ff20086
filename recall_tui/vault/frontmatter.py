"""Frontmatter: split a memory file at its `---` lines and load the YAML, fast path first.

Frontmatter detection follows python-frontmatter's YAML handler (a first line of three or
more dashes) and the YAML is loaded with the same safe loader it uses (libyaml's when
present). The reader does its own split and load instead of `frontmatter.loads` because that
strips the body (the body must stay byte-exact for edits), gives no line numbers, and lets
one impossible date (`2026-02-30`) fail the whole file.

Most frontmatter is plain `key: value` lines and simple lists; `_fast_front` reads that subset
and hands anything else to `_yaml_front` (PyYAML). Both record where each key and list item
sits, in a `_Front`, so problems can name the line.

Whatever a file holds, what it becomes is bounded (docs/data-safety.md, "Bounded on any
vault"; the limits and the node-graph check live in `yamlbounds.py`): YAML aliases may add at most MAX_ALIAS_NODES values to a file once expanded (a
365-byte alias bomb expands to 387 million), a value may nest at most MAX_DEPTH levels, a
value that refers to itself is refused, at most MAX_EXTRA_KEYS unknown keys are kept, and a
text value is cut at MAX_VALUE_CHARS. Each refusal or cut is a problem naming the key and
line; the rest of the file loads.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

import yaml
from frontmatter.default_handlers import SafeLoader as _FrontmatterLoader
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from recall_tui.vault.model import KNOWN_KEYS, Problem
from recall_tui.vault.yamlbounds import (
    MAX_EXTRA_KEYS,
    MAX_VALUE_CHARS,
    _cut_value,
    _refuse_unbounded,
)

_YAML_HANDLER = YAMLHandler()
_CLOSING_LINE = re.compile(r"^-{3,}[ \t\r\f\v]*$", re.MULTILINE)


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
    close = _closing_line(text, first_nl + 1) if first_nl >= 0 else None
    if close is None:
        raise _SkipFile(1, "frontmatter opens with `---` on line 1 but never closes; file skipped")
    fm = text[first_nl + 1 : close.start()]
    after = close.end()
    if text.startswith("\n", after):
        after += 1
    close_line = text.count("\n", 0, close.start()) + 1
    return fm, 2, text[after:], close_line + 1


def _closing_line(text: str, at: int) -> re.Match[str] | None:
    """`_CLOSING_LINE.search(text, at)`, trying only the lines that start with `---` (found
    by `str.find`: the pattern's search tried every character of the frontmatter)."""
    while True:
        if text.startswith("---", at):
            close = _CLOSING_LINE.match(text, at)
            if close is not None:
                return close
        nl = text.find("\n---", at)
        if nl < 0:
            return None
        at = nl + 1


def _load_frontmatter(rel: str, fm: str, first_line: int, problems: list[Problem]) -> _Front:
    """Parse one file's frontmatter YAML (raises `_SkipFile` when it is not YAML).

    Frontmatter written by agents is nearly always plain `key: value` lines and simple lists;
    `_fast_front` reads that subset about ten times faster than PyYAML (the index benchmark
    reads 100k files) and gives up on anything else, which PyYAML then reads. Tests check
    that both give the same result on every file the fast path accepts.
    """
    front = _fast_front(fm, first_line, rel, problems)
    if front is None:
        front = _yaml_front(rel, fm, first_line, problems)
    _bound_front(front, rel, problems, cut=len(fm) > MAX_VALUE_CHARS)
    return front


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
        _refuse_unbounded(node, rel, first_line, problems)
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


# --- bounds ---------------------------------------------------------------------------------


def _bound_front(front: _Front, rel: str, problems: list[Problem], cut: bool = True) -> None:
    """Keep at most MAX_EXTRA_KEYS unknown keys and cut text values at MAX_VALUE_CHARS, each
    with a problem (the same for both parsers: they give the same `_Front`). `cut=False`
    skips looking for long texts: no text YAML gives is longer than its source (escapes and
    folding only shrink it, aliases share the object), so frontmatter of at most
    MAX_VALUE_CHARS characters holds none (the walk over every value was ~6 % of a parse)."""
    extra = [k for k in front.raw if k not in _KNOWN]
    if len(extra) > MAX_EXTRA_KEYS:
        dropped = extra[MAX_EXTRA_KEYS:]
        problems.append(
            Problem(
                rel,
                front.lines.get(dropped[0]),
                f"{len(extra):,} unknown keys, over the {MAX_EXTRA_KEYS} kept; "
                f"the {len(dropped):,} from here on ignored",
            )
        )
        for k in dropped:
            del front.raw[k]
            front.lines.pop(k, None)
            front.source.pop(k, None)
            front.items.pop(k, None)
    if not cut:
        return
    for key, value in front.raw.items():
        short = _cut_value(value)
        if short is value:
            continue
        front.raw[key] = short
        if key in front.source:
            front.source[key] = front.source[key][:MAX_VALUE_CHARS]
        if key in front.items:
            front.items[key] = [
                (line, None if text is None else text[:MAX_VALUE_CHARS])
                for line, text in front.items[key]
            ]
        problems.append(
            Problem(
                rel,
                front.lines.get(key),
                f"{key}: a text over {MAX_VALUE_CHARS:,} characters; cut to the first "
                f"{MAX_VALUE_CHARS:,}",
                "warning",
            )
        )


_KNOWN = frozenset(KNOWN_KEYS)


# --- the fast path --------------------------------------------------------------------------

#: A `key: value` line and a `- item` line; the value's trailing spaces are stripped after the
#: match (a greedy group and `rstrip`, not a lazy one: the lazy group tried the end at every
#: character of a long summary).
_FAST_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: +(.*))?$")
_FAST_ITEM = re.compile(r"( *)-(?: +(.*))?$")
#: Characters a plain YAML scalar may not start with (then PyYAML decides).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: Plain scalars the fast path leaves to PyYAML: those matching `_NOT_PLAIN` (in a flow
#: collection, `_NOT_PLAIN_FLOW`); `_fast_scalar` checks the same with `str` searches.
_NOT_PLAIN = re.compile(r"^[?:,\[\]{}#&*!|>'\"%@`]|^-(?: |$)|: | #|:$")
_NOT_PLAIN_FLOW = re.compile(r"^[?:,\[\]{}#&*!|>'\"%@`]|^-(?: |$)|: | #|:$|[,\[\]{}]")
_NOT_PLAIN_FIRST = frozenset("?:,[]{}#&*!|>'\"%@`")
_SCALAR_LOADER = _Loader("")
#: First characters some implicit YAML type (number, bool, null, date, ...) can start with.
_TYPED_FIRST = frozenset(k for k in _Loader.yaml_implicit_resolvers if k)
#: Whether some implicit type may start with any character (not so in PyYAML's safe loader).
_TYPED_ANY_FIRST = None in _Loader.yaml_implicit_resolvers
_STR_TAG = "tag:yaml.org,2002:str"


_FLOW_SPECIAL = re.compile(r"[\"'\[\]{}]")
#: Characters PyYAML refuses (control characters) or reads as line breaks (NEL, LS, PS) or
#: treats specially (BOM): frontmatter holding any of them is left to PyYAML.
_NOT_FAST_CHARS = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


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
            if rest:
                rest = rest.rstrip(" ")
            key_line = first_line + i
            i += 1
            if key in raw:
                front.add(key, None, key_line, rel, pending)
                source.pop(key, None)
                items.pop(key, None)
            where[key] = key_line
            if rest:
                if rest[0] == "[":  # a flow list: its items and their sources in one pass
                    if rest[-1] != "]":
                        return None
                    got = [_fast_value(p, True) for p in _flow_split(rest[1:-1])]
                    raw[key] = [v for v, _ in got]
                    items[key] = [(key_line, s) for _, s in got]
                    continue
                value, text = _fast_value(rest, False)
                raw[key] = value
                if text is not None:
                    source[key] = text
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
                if item:
                    item = item.rstrip(" ")
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
    if len(text) > _SCALAR_CACHE_CHARS:
        got = _fast_scalar(text, first, flow)
    else:
        cache = _FLOW_SCALARS if flow else _BLOCK_SCALARS
        got = cache.get(text)
        if got is None:
            got = _fast_scalar(text, first, flow)
            if len(cache) >= _SCALAR_CACHE_MAX:
                cache.clear()
            cache[text] = got
    if got is _REFUSED:
        raise _NotFast
    value: tuple[Any, str | None] = got  # (not `typing.cast`: a call per value, ~30 a file)
    return value


#: Short scalars seen before, by text (one table for block values, one for flow items): their
#: (value, source) or _REFUSED. Values, tags, ids and numbers repeat across a vault's files;
#: every cached value is immutable (text, number, bool, None, date), so sharing it is safe.
_BLOCK_SCALARS: dict[str, Any] = {}
_FLOW_SCALARS: dict[str, Any] = {}
_SCALAR_CACHE_CHARS = 48
_SCALAR_CACHE_MAX = 1 << 15
_REFUSED = object()


def _fast_scalar(text: str, first: str, flow: bool) -> Any:
    """One scalar (`_fast_value` without the collections): (value, source) or _REFUSED."""
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _REFUSED
        return inner, inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            return _REFUSED
        return inner.replace("''", "'"), inner.replace("''", "'")
    if (
        first in _NOT_PLAIN_FIRST
        or (first == "-" and (len(text) == 1 or text[1] == " "))
        or ": " in text or " #" in text or text[-1] == ":"
        or (flow and ("," in text or "[" in text or "]" in text or "{" in text or "}" in text))
    ):  # (what `_NOT_PLAIN` or `_NOT_PLAIN_FLOW` finds, by `str` searches: ~20x faster)
        return _REFUSED
    if first not in _TYPED_FIRST and not _TYPED_ANY_FIRST:  # no typed value starts so
        return text, text
    if _PLAIN_STAMP.match(text):  # the common timestamp shapes, built as PyYAML builds them
        try:
            if len(text) == 10:
                return date(int(text[:4]), int(text[5:7]), int(text[8:10])), text
            return datetime(int(text[:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]),
                            int(text[14:16]), int(text[17:19]), tzinfo=timezone.utc), text
        except ValueError:  # (an impossible date: PyYAML's path keeps it as text)
            pass
    try:
        return _resolve_plain(text), text
    except _NotFast:
        return _REFUSED


#: `2026-01-31` and `2026-01-31T10:00:00Z`: what PyYAML's implicit timestamp resolver matches
#: in these shapes (ASCII digits only) and builds as a `date`, or a `datetime` in UTC.
_PLAIN_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?\Z")


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
