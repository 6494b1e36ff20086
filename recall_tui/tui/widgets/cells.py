"""A one-line table cell drawn straight to Segments, as Rich would draw it.

DataTable draws each cell through Rich's general layout: the cell's `Text` inside a `Padding`
inside a `Styled`, each layer a `render_lines` pass that wraps, justifies, splits and crops
lines and makes new Segments at every step. For the recall view's cells (one line, no tab, no
newline, printable text) every one of those steps has one outcome, worked out here directly:
cut the text to the cell (`…` for an ellipsis overflow), justify it, turn its spans into
styled runs, pad it, and lay the cell's styles over it. The Segments are equal (text and
style) to Rich's; `tests/test_tui_paint.py` compares the two over many cells. A cell outside
these bounds returns None and is drawn by Rich.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text

_NULL = Style.null()

#: Justifications drawn here ("default" leaves the text where it is, like None).
_JUSTIFY = (None, "default", "left", "right")


def _trim(spans: list[Span], length: int) -> list[Span]:
    """Spans cut to a text shortened to `length` characters (Rich drops those starting
    past the end and ends the others there)."""
    return [s if s.end < length else Span(s.start, min(length, s.end), s.style)
            for s in spans if s.start < length]


def one_line_cell(get_style: Callable[[str | Style], Style], text: Text, width: int, pad: int,
                  pre: Style, post: Style) -> list[Segment] | None:
    """The Segments of `text` drawn in a cell `width` cells wide (padding included) with
    `pad` blank cells each side, `pre` under the text's own styles and `post` over them; None
    when the cell is not a plain one-line case (the caller then asks Rich)."""
    plain = text.plain
    inner = width - 2 * pad
    justify, overflow = text.justify, text.overflow or "fold"
    if (inner < 1 or pad < 0 or text.no_wrap is False or justify not in _JUSTIFY
            or overflow == "ignore" or text.end not in ("\n", "") or not plain.isprintable()):
        return None
    spans = list(text.spans)
    if justify == "right":
        stripped = plain.rstrip()
        if stripped != plain:
            plain, spans = stripped, _trim(spans, len(stripped))
    length = cell_len(plain)
    if length > inner:  # cut, as Text.truncate does
        cut = (set_cell_size(plain, inner - 1) + "…" if overflow == "ellipsis"
               else set_cell_size(plain, inner))
        if cut != plain:
            if len(cut) < len(plain):
                spans = _trim(spans, len(cut))
            plain = cut
    if justify == "left" and length < inner:
        plain += " " * (inner - length)
    elif justify == "right":
        shift = inner - cell_len(plain)
        if shift:
            plain = " " * shift + plain
            spans = [Span(s.start + shift, s.end + shift, s.style) for s in spans]
    # the runs of the text: its base style over the whole line, then each span, combined in
    # their order over every stretch between two span edges
    if text.style:
        spans = [Span(0, len(plain), text.style), *spans]
    runs: list[Segment] = []
    if not spans:
        runs.append(Segment(plain))  # even "": Rich keeps empty runs, and so do its lines
    else:
        styles = [_NULL, *(get_style(s.style) for s in spans)]
        edges = sorted([(0, False, 0), *((s.start, False, i) for i, s in enumerate(spans, 1)),
                        *((s.end, True, i) for i, s in enumerate(spans, 1)),
                        (len(plain), True, 0)], key=lambda e: (e[0], e[1]))
        open_ids: list[int] = []
        combined: dict[tuple[int, ...], Style] = {}
        for (offset, leaving, sid), (following, _, _) in zip(edges, edges[1:], strict=False):
            if leaving:
                open_ids.remove(sid)
            else:
                open_ids.append(sid)
            if following > offset:
                piece = plain[offset:following]  # "" past the end is kept, as Rich does
                key = tuple(sorted(open_ids))
                style = combined.get(key)
                if style is None:
                    style = combined[key] = Style.combine([styles[i] for i in key])
                runs.append(Segment(piece, style))
    used = sum(r.cell_length for r in runs)
    if used > inner:
        return None
    if used < inner:
        runs.append(Segment(" " * (inner - used), _NULL))
    if pad:
        runs = [Segment(" " * pad, _NULL), *runs, Segment(" " * pad, _NULL)]
    out = []
    for r in runs:
        style = pre + r.style
        if post:
            style = style + post if style else post
        out.append(Segment(r.text, style))
    return out
