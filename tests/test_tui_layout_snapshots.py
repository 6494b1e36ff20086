"""SVG snapshots of the main screen (a query typed, the second hit's explanation open), of
the stage detail and of the tuning pane's knobs at the four sizes the layout is designed for:
80x24, 100x30, 160x45 and 200x60 (issue 11: nothing cut off without an ellipsis, columns take
the width there is; issue 22: the knob values show at every size).

Same conditions as tests/test_tui_snapshots.py (sample vault, `now` pinned, stable timings,
the real engine). Regenerate after an intended change with `--snapshot-update` and look at
each image before committing it.
"""

from __future__ import annotations

import pytest

from recall_tui.tui.app import make_app
from recall_tui.tui.screenshot_views import VIEWS
from tests.conftest import PINNED_NOW

SIZES = ((80, 24), (100, 30), (160, 45), (200, 60))
#: The knobs view: its values must show at every size (issue 22).
LAYOUT_VIEWS = [v for v in VIEWS if v.name in ("main", "stage", "knobs")]


#: A private copy of the sample vault, untouched by the hooks other tests run on the
#: session's shared copy (an active preset or agent log would change the status line).
pytestmark = pytest.mark.untouched


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("view", LAYOUT_VIEWS, ids=[v.name for v in LAYOUT_VIEWS])
def test_layout_snapshot(view, size, engine, snap_compare):
    engine.clear_cache()
    app = make_app(engine.vault.root, now=PINNED_NOW, preset=view.preset, engine=engine,
                   stable_timings=True)
    assert snap_compare(app, terminal_size=size, run_before=view.setup)
