"""Frontmatter keys to typed `Memory` fields: per-key checks, defaults, and the problems.

`_Keys` resolves one file's keys; a bad key is reported with its line and falls back to its
default. The body helpers give the defaults taken from the body (title, summary).
"""

from __future__ import annotations

import functools
import json
import math
import re
from datetime import date, datetime, timezone
from typing import Any

from recall_tui.vault.frontmatter import _Front
from recall_tui.vault.model import Edge, Problem, RelatedLink

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_EDGE_TEXT = re.compile(r"^(?P<s>.+?)\s*-\[(?P<r>[^\]]*)\]->\s*(?P<o>.+)$", re.DOTALL)
_UTC = timezone.utc
#: isinstance() with a tuple: a union (`int | float`) checks half as fast, and these run for
#: nearly every key of every file of a first read.
_COLLECTIONS = (list, dict)
_SCALARS = (bool, int, float, date)
_NUMBERS = (int, float)


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A short, unambiguous rendering of a bad value for a problem message."""
    if isinstance(value, datetime | date):
        text = value.isoformat()
    elif isinstance(value, str):
        text = repr(value[:81])
    elif value is None:
        text = "nothing"
    else:
        # Encoded lazily and stopped past 80 characters: a long list costs what is shown.
        parts: list[str] = []
        size = 0
        try:
            for part in _ENCODER.iterencode(value):
                parts.append(part[:81])
                size += len(part)
                if size > 80:
                    break
            text = "".join(parts)
        except (TypeError, ValueError, RecursionError):
            text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


def _scalar_text(value: Any, source: str | None) -> str | None:
    """Text of a scalar as written: YAML turns `2026` or `yes` into other types; take the
    source text back so a title `2026` stays "2026". None for lists and mappings."""
    if isinstance(value, str):
        return value
    if isinstance(value, _COLLECTIONS):
        return None
    if source is not None:
        return source
    if isinstance(value, _SCALARS):
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
    if isinstance(value, bool) or not isinstance(value, _NUMBERS):
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
        value = self.raw.get(key)  # (`given`, inline: most keys of most files are absent)
        if value is None:
            return default
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
        raw = self.raw.get(key)  # (`given`, inline)
        if raw is None:
            return default
        value = _number(raw)
        if value is None or not lo <= value <= hi:
            using = _fmt_num(default) if default is not None else "none"
            self.bad(key, self.raw[key], f"a number {_fmt_num(lo)}..{_fmt_num(hi)}", using)
            return default
        return value

    def when(self, key: str, default: datetime | None, using: str = "none") -> datetime | None:
        """A date or datetime key; `using` names the default in the problem message."""
        raw = self.raw.get(key)  # (`given`, inline)
        if raw is None:
            return default
        value = _to_datetime(raw)
        if value is None:
            self.bad(key, self.raw[key], "an ISO-8601 date or datetime", using)
            return default
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        """A list of strings; one string is a list of one. Bad items are dropped."""
        value = self.raw.get(key)  # (`given`, inline)
        if value is None:
            return ()
        if not isinstance(value, list):
            text = _scalar_text(value, self.source.get(key))
            if text is None:
                self.bad(key, value, "a list of text", "[]")
                return ()
            return (text.strip(),) if text.strip() else ()
        if all(type(item) is str for item in value):  # (each item its own text, no problem)
            return tuple([t for t in [item.strip() for item in value] if t])
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
