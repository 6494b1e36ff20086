"""The Textual front end: `make_app` in `app.py`; see docs/tui.md.

May import every layer below it (agent, tuning, diagnostics, engine, index, vault), never
`recall_tui.cli`. Renders what the trace says; computes no score.
"""

import os

#: Frames per second Textual paints at most (`TEXTUAL_FPS`, read when Textual is first
#: imported; a value set by the user wins). Textual's default, 60, spaces frames 16.7 ms
#: apart: a keystroke's echo is painted at once, and its recall's answer, ready ~10 ms later,
#: then waited for the next frame. At 120 it waits at most 8.3 ms. A frame repaints only
#: what changed, so more frames cost nothing while nothing moves.
FRAME_RATE = 120

os.environ.setdefault("TEXTUAL_FPS", str(FRAME_RATE))
