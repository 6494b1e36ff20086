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

from collections.abc import Iterable
from typing import Any

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


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

    def _get_renders(self, crop: Region | None = None,
                     ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        """Textual's `_get_renders`; while a partial frame renders, only for the widgets whose
        visible part meets one of its dirty regions. (The map of visible widgets itself is
        left whole: the compositor derives and keeps other things from it, the cuts of each
        line among them.)"""
        dirty = self._painting
        if not dirty or crop is None:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in list(self.visible_widgets.items()):
            shown = region.intersection(clip)
            if not any(shown.overlaps(d) for d in dirty):
                continue
            if clip.contains_region(region):
                yield region, clip, widget.render_lines(Region(0, 0, region.width, region.height))
            else:
                x, y, width, height = shown
                if width and height:
                    yield region, clip, widget.render_lines(
                        Region(x - region.x, y - region.y, width, height))


def use_sparse_paint(screen: Any) -> None:
    """Give `screen` (before it is mounted) a `SparseCompositor`."""
    screen._compositor = SparseCompositor()
