"""Issue 22 ("the debugger as a newcomer meets it, round two"), driven through the app with
the real engine (local embedder) on a copy of the sample vault, `now` pinned. Each test failed
before its fix.
"""

from __future__ import annotations

import pytest
from textual.widgets import Select

from recall_tui.engine import open_engine
from recall_tui.tui.app import RecallApp, make_app
from recall_tui.tui.screens.edit import SavePresetScreen
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from tests.conftest import PINNED_NOW
from tests.test_tui_app import SIZE, cell_text, screen_text, settle
from tests.waiting import wait_until

QUERY = "postgres upgrade"


@pytest.fixture()
def engine(vault_copy):
    """A private copy: these tests save presets and judgements into the vault."""
    return open_engine(vault_copy, preset="default", embedder="local")


def new_app(engine, **kw) -> RecallApp:
    engine.clear_cache()
    return make_app(engine.vault.root, now=PINNED_NOW, engine=engine, **kw)


def preset_options(app: RecallApp) -> list[str]:
    select = app.main().query_one("#preset", Select)
    return [str(value) for _label, value in select._options]


async def open_knobs(pilot, app: RecallApp):
    app.main().query_one("#results").focus()
    await pilot.press("t")
    await wait_until(pilot, lambda: app.tuning_pane() is not None
                     and app.tuning_pane().config is not None, "the tuning pane")
    return app.tuning_pane()


async def save_as(pilot, app: RecallApp, name: str) -> None:
    await pilot.press("S")
    await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen), "the save dialog")
    await pilot.press(*name, "enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, SavePresetScreen),
                     "the dialog to close")


# --- the crash ---------------------------------------------------------------------------------


async def test_a_saved_preset_can_be_chosen_with_o_and_the_palette(engine, vault_copy):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        pane = await open_knobs(pilot, app)
        assert pane.edit_knob("k", "7")
        await save_as(pilot, app, "mine")
        saved = vault_copy / ".recall" / "presets" / "mine.toml"
        await wait_until(pilot, saved.exists, "the preset file")
        assert "mine" in preset_options(app)
        # the palette's route
        app.set_preset("mine")
        await wait_until(pilot, lambda: app.trace is not None and app.trace.preset == "mine",
                         "a recall under the saved preset")
        assert app.main().query_one("#preset", Select).value == "mine"
        assert app.trace.k == 7
        # o cycles through it too (back to it after a full round)
        app.main().query_one("#results").focus()
        for _ in range(len(app.presets)):
            await pilot.press("o")
            await settle(pilot, app)
        assert app.request.preset == "mine" and app.trace.preset == "mine"
        # a preset deleted meanwhile leaves the select (the current one stays)
        (vault_copy / ".recall" / "presets" / "mine.toml").unlink()
        await pilot.press("o")
        await settle(pilot, app)
        assert "mine" not in app.presets
        await pilot.press("o")
        await settle(pilot, app)
        assert "mine" not in preset_options(app)
        assert app.return_code is None


# --- stale and mixed panes -----------------------------------------------------------------------


def rendered_again(app: RecallApp) -> str:
    """The screen after every widget was told to paint itself from scratch."""
    for widget in app.screen.query("*"):
        widget.refresh()
    return screen_text(app)


async def test_after_another_preset_every_box_shows_the_new_trace(engine):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        main = app.main()
        gone = app.trace.stage("filter").dropped[0].id
        app.pin(gone)
        await settle(pilot, app)
        main.query_one(ResultsTable).focus()
        first = app.trace
        await pilot.press("2", "o")
        await wait_until(pilot, lambda: app.trace is not None and app.trace is not first
                         and app.trace.preset != first.preset, "the recall under the next preset")
        await settle(pilot, app)
        await pilot.press("1")
        await pilot.pause()
        trace = app.trace
        assert f"preset {trace.preset}" in str(main.query_one("#status").render())
        wf = main.query_one(Waterfall)
        assert wf.trace is trace
        for r, stage in enumerate(s for s in trace.stages if s.name in
                                  [k.value for k in wf.rows]):
            assert cell_text(wf, [k.value for k in wf.rows].index(stage.name), "n") == \
                str(len(stage.candidates)), (r, stage.name)
        pinned = main.query_one(PinnedTable)
        answer = cell_text(pinned, 0, "answer")
        w = trace.why_of(gone)
        assert w is not None and w.stage in answer if w.stage else True
        tree = main.query_one(ExplanationTree)
        assert trace.hits and tree._shown is not None
        assert tree._shown == trace.hit(app.current_id)
        # and what is painted is what the widgets hold (no row left from the other trace)
        await pilot.pause()
        shown = screen_text(app)
        await pilot.pause()
        assert shown == rendered_again(app)
