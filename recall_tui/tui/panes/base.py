"""The base of every side pane (`StatePane`) and the helpers panes share.

Each pane draws a `UIState` in `show_state`; none computes anything about scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from markdown_it import MarkdownIt
from textual.message import Message
from textual.widget import Widget

from recall_tui.tui.state import UIState
from recall_tui.vault.model import Memory

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp


def safe_markdown_parser() -> MarkdownIt:
    """CommonMark with raw HTML disabled: HTML in a memory body is shown as text, not run."""
    return MarkdownIt("gfm-like", {"html": False})


def frontmatter_value(v: Any) -> str:
    """A frontmatter value on one line, as YAML-ish text."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(frontmatter_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {frontmatter_value(x)}" for k, x in v.items()) + "}"
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def date_text(m: Memory | None, attr: str) -> str:
    v = getattr(m, attr, None) if m is not None else None
    return v.strftime("%Y-%m-%d") if v is not None else "—"


class StatePane(Widget):
    """A pane that draws the app's state. Once built it asks for the state (`NeedsState`)."""

    @dataclass
    class NeedsState(Message):
        """The pane was just built and has nothing to show yet."""

        pane: StatePane

    def on_mount(self) -> None:
        self.call_after_refresh(lambda: self.post_message(self.NeedsState(self)))

    @property
    def recall_app(self) -> RecallApp:
        """The app, typed: a pane uses its public surface (the request, the engine, its
        controllers), never its state behind `show_state`'s back."""
        return cast("RecallApp", self.app)

    def show_state(self, state: UIState) -> None:  # pragma: no cover - interface
        raise NotImplementedError
