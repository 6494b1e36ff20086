"""A frame asks only the widgets it repaints for their lines.

Textual's compositor paints a partial frame by taking the box around every dirty region (the
crop) and asking each visible widget whose clip meets that box for its lines. A keystroke
dirties the stages and hits boxes and the status line at the bottom, so the box is nearly the
whole screen and ~20 unchanged widgets (containers, the tab strip, the footer, the settings
bar) were asked for their lines on every key, ~4-8 ms of the UI thread at 10k. Only the
spans of the dirty regions are written to the terminal; a widget whose visible part meets
none of them contributes nothing that is written.

`SparseCompositor` asks only the widgets whose visible part (their region within their clip)
meets a dirty region. The bytes of the frame are the same: every cell of a written span lies
in some dirty region, and the widget drawn there (the front-most covering it) meets that
region, as does every widget in front of it there, so each written piece has the same
winner; pieces outside the spans are left empty and are never written (Textual's update
skips them). A full frame (after a layout) asks every widget, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region

if TYPE_CHECKING:
    from textual.widget import Widget


class SparseCompositor(Compositor):
    """Textual's compositor; a partial frame renders only the widgets it repaints."""

    def __init__(self) -> None:
        super().__init__()
        self._painting: tuple[Region, ...] = ()
        """The dirty regions of the partial frame being rendered (empty otherwise)."""
        self.sparse = True
        """Off: every widget meeting the crop is asked, as Textual does (tests compare)."""

    def render_partial_update(self) -> ChopsUpdate | None:
        self._painting = tuple(self._dirty_regions) if self.sparse else ()
        try:
            return super().render_partial_update()
        finally:
            self._painting = ()

    @property
    def visible_widgets(self) -> dict[Widget, tuple[Region, Region]]:
        """Textual's map of the visible widgets to their region and clip; while a partial
        frame renders, only those whose visible part meets one of its dirty regions."""
        visible = super().visible_widgets
        dirty = self._painting
        if not dirty:
            return visible
        meets = _meets_any
        return {widget: rc for widget, rc in visible.items() if meets(rc, dirty)}


def _meets_any(region_clip: tuple[Region, Region], dirty: tuple[Region, ...]) -> bool:
    region, clip = region_clip
    shown = region.intersection(clip)
    overlaps = shown.overlaps
    return any(overlaps(d) for d in dirty)


def use_sparse_paint(screen: Any) -> None:
    """Give `screen` (before it is mounted) a `SparseCompositor`."""
    screen._compositor = SparseCompositor()
