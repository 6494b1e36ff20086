"""SVG snapshots of the main screen and each pane, at 120x36, on the sample vault with `now`
pinned and live timings hidden (`stable_timings=True`), with the real engine.

Regenerate after an intended change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the images before committing them.
"""

from __future__ import annotations

import pytest

from recall_tui.tui.app import make_app
from recall_tui.tui.screenshot_views import VIEWS
from tests.conftest import PINNED_NOW

#: A private copy of the sample vault: other tests run hooks on the session's shared copy,
#: and what they log would show up in the Agent pane's snapshot.
pytestmark = pytest.mark.untouched


@pytest.mark.parametrize("view", VIEWS, ids=[v.name for v in VIEWS])
def test_view_snapshot(view, engine, snap_compare):
    engine.clear_cache()
    app = make_app(engine.vault.root, now=PINNED_NOW, preset=view.preset, engine=engine,
                   stable_timings=True)
    assert snap_compare(app, terminal_size=(120, 36), run_before=view.setup)
