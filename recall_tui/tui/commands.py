"""Command palette provider: every action of the app, plus pin/open per memory and presets.

Names that contain memory titles are built as plain `Content` (Textual's fuzzy highlighter
would parse a `str` as markup), so a title like `[bold]x[/]` shows literally here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from recall_tui.tui.safe import one_line

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp


@dataclass(frozen=True)
class PaletteCommand:
    """One entry of the palette."""

    name: str
    """What the user searches for and sees (may include a memory title)."""
    help: str
    """One line under the name."""
    run: Callable[[], object]
    """What choosing it does."""
    discover: bool = True
    """Listed before anything is typed (per-memory entries only show up when searched)."""


class RecallCommands(Provider):
    """Every app action (from its bindings), presets, and pin/open for each memory."""

    def _commands(self) -> list[PaletteCommand]:
        app = cast("RecallApp", self.app)  # it provides `palette_commands()`
        return app.palette_commands()

    async def discover(self) -> Hits:
        for c in self._commands():
            if c.discover:
                yield DiscoveryHit(Content(c.name), c.run, text=c.name, help=c.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for c in self._commands():
            score = matcher.match(c.name)
            if score > 0:
                yield Hit(score, Content(one_line(c.name)), c.run, text=c.name, help=c.help)
