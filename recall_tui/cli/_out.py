"""Rich output for the commands, with untrusted text kept literal.

Built on `recall_tui.vault.literal.literal`: `lit(x)` is a `rich.text.Text` (never parsed as
markup, no emoji codes, control characters visible) for table cells and `console.print`;
`esc(x)` is the same text escaped for use inside a markup string. Every value that comes from a
vault, a file or the user goes through one of them; the markup around it is ours.
A new command prints plain lines with `recall_tui.vault.literal.safe_print` and Rich renderables
with `lit`/`esc`.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from recall_tui.vault.literal import literal, literal_line

__all__ = ["console", "esc", "lit"]


def console(*, stderr: bool = False, highlight: bool = False) -> Console:
    """A Console that never turns `:name:` into emoji (markup stays ours: see `esc`)."""
    return Console(stderr=stderr, highlight=highlight, emoji=False)


def lit(text: object, style: str = "", *, single_line: bool = False) -> Text:
    """`text` as a Rich Text shown literally (`literal`, or `literal_line` when single_line)."""
    return Text(literal_line(text) if single_line else literal(text), style=style)


def esc(text: object) -> str:
    """`literal(text)` escaped for a Rich markup string: `f"[bold]{esc(title)}[/]"`."""
    return escape(literal(text))
