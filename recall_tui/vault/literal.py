"""Memory text shown literally: the one place that decides how untrusted text reaches a screen.

Everything read from a vault (titles, summaries, bodies, tags, `recall_when` phrases, ids,
paths, problem reasons) and everything typed by a user is written by someone else: printed as
is, `ESC[2J` clears the screen, an OSC 52 sequence writes the clipboard, OSC 8 hides a link, BEL
rings, and the 8-bit C1 forms (`0x9b` is CSI) do the same on terminals that honour them.

`literal(text)` returns the text with every such character made *visible* instead:

- C0 controls (0x00-0x1f) become their Unicode control pictures: ESC is `␛`, BEL `␇`, so
  `ESC[2J` reads `␛[2J`; newline and tab are kept unless `newlines=False`; a lone CR is `␍`
  (it would overwrite the start of the line), CR LF is a newline;
- DEL is `␡`; C1 controls (0x80-0x9f) are written `\\x9b`; the bidirectional overrides and
  isolates (U+202A-202E, U+2066-2069), which reorder what the eye reads, are written `\\u202e`.

It never removes anything, so what is shown is what the file holds. Rich markup is not this
module's business (it is headless): the front ends wrap the result in a `rich.text.Text`
(`recall_tui.cli._out.lit`, `recall_tui.tui.safe.lit`), which Rich never parses as markup.
JSON output keeps the exact text: `json_text` escapes the same characters as `\\uXXXX`, which a
JSON reader turns back into the original.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

#: Bidirectional embedding, override and isolate controls.
_BIDI = tuple(range(0x202A, 0x202F)) + tuple(range(0x2066, 0x206A))


def _table(newlines: bool) -> dict[int, str]:
    t: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
    if newlines:
        del t[0x0A], t[0x09]
    t[0x7F] = "\u2421"
    t.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
    t.update({c: f"\\u{c:04x}" for c in _BIDI})
    return t


_KEEP_LINES = _table(True)
_ONE_LINE = _table(False)
#: What `json_text` escapes beyond what `json.dumps` already does (C0 controls).
_JSON_EXTRA = {c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *_BIDI)}


def literal(text: object, *, newlines: bool = True) -> str:
    """`text` as a string with every control character visible (see the module docstring).
    With `newlines=False` newlines and tabs are made visible too (`␊`, `␉`)."""
    s = "" if text is None else str(text)
    if "\r" in s:
        s = s.replace("\r\n", "\n")
    return s.translate(_KEEP_LINES if newlines else _ONE_LINE)


def literal_line(text: object, limit: int | None = None) -> str:
    """`literal(text)` folded onto one line (runs of whitespace become one space), cut at
    `limit` characters with an ellipsis: for table cells and one-line messages."""
    s = " ".join(literal(text).split())
    if limit is not None and len(s) > limit:
        s = s[: max(1, limit - 1)] + "…"
    return s


def safe_print(*values: object, sep: str = " ", end: str = "\n", file: TextIO | None = None,
               flush: bool = False) -> None:
    """`print` for text that may hold untrusted parts: each value goes through `literal`.
    (For Rich consoles use `recall_tui.cli._out.lit` / `esc` instead.)"""
    print(*(literal(v) for v in values), sep=sep, end=end, file=file or sys.stdout, flush=flush)


def json_text(obj: Any, **kwargs: Any) -> str:
    """`json.dumps(obj, ensure_ascii=False, **kwargs)` with DEL, the C1 controls and the bidi
    controls escaped as `\\uXXXX` too: the parsed value is exactly `obj`, and the printed bytes
    hold no control character (`json.dumps` escapes the C0 ones itself). Safe because these
    characters can only occur inside JSON strings."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(obj, **kwargs).translate(_JSON_EXTRA)


def dump_json(obj: Any, file: TextIO | None = None, **kwargs: Any) -> None:
    """Write `json_text(obj, **kwargs)` and a newline to `file` (default stdout)."""
    out = file or sys.stdout
    out.write(json_text(obj, **kwargs))
    out.write("\n")
