"""Literal display of untrusted text.

Everything that comes from a vault (titles, bodies, summaries, ids, frontmatter values, problem
reasons) is written by agents, not by us: it is shown as literal text, never interpreted as
Rich or Textual markup, and terminal control sequences are removed before it reaches the screen
(an OSC 52 sequence in a memory must not write the user's clipboard, `ESC[2J` must not clear it).
"""

from __future__ import annotations

import re

from rich.text import Text

# ESC-introduced sequences: CSI (ESC [ ... final byte), OSC/DCS/SOS/PM/APC strings (ESC ] ... BEL
# or ST), and two-byte escapes. Their 8-bit C1 forms (0x9b CSI, 0x9d OSC, ...) are handled too.
_ANSI = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]                         # CSI ... final
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)  # OSC/DCS/SOS/PM/APC
    | \x1b[ -/]*[0-~]                                          # other two-byte escapes
    """,
    re.VERBOSE | re.DOTALL,
)
# Remaining C0 controls except tab and newline, DEL, and C1 controls.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: object) -> str:
    """`text` as a string with escape sequences and control characters (but \\n, \\t) removed."""
    s = "" if text is None else str(text)
    s = s.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ANSI.sub("", s))


def one_line(text: object, limit: int | None = None) -> str:
    """`clean(text)` folded onto one line (for table cells), cut at `limit` characters."""
    s = " ".join(clean(text).split())
    if limit is not None and len(s) > limit:
        s = s[: max(1, limit - 1)] + "…"
    return s


def lit(text: object, style: str = "", *, single_line: bool = False) -> Text:
    """A Rich `Text` holding `text` literally: no markup, no emoji codes, no control bytes."""
    return Text(one_line(text) if single_line else clean(text), style=style, no_wrap=False)
