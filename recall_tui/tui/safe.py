"""Literal display of untrusted text in the UI.

Everything that comes from a vault (titles, bodies, summaries, ids, frontmatter values, problem
reasons) is written by agents, not by us: it is shown as literal text, never interpreted as
Rich or Textual markup, and terminal control characters are made visible before they reach the
screen (an OSC 52 sequence in a memory shows as `␛]52;…␇` and does not write the clipboard,
`ESC[2J` shows as `␛[2J` and does not clear it). The rule itself lives in the headless
`recall_tui.vault.literal`, shared with the command line; this module adds the Rich side.
"""

from __future__ import annotations

from rich.text import Text

from recall_tui.vault.literal import literal, literal_line


def clean(text: object) -> str:
    """`text` as a string with control characters made visible (but \\n, \\t kept)."""
    return literal(text)


def one_line(text: object, limit: int | None = None) -> str:
    """`clean(text)` folded onto one line (for table cells), cut at `limit` characters."""
    return literal_line(text, limit)


def lit(text: object, style: str = "", *, single_line: bool = False) -> Text:
    """A Rich `Text` holding `text` literally: no markup, no emoji codes, no control bytes."""
    return Text(one_line(text) if single_line else clean(text), style=style, no_wrap=False)
