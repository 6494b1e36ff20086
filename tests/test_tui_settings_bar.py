"""The settings bar (k, now, as-of, type filter, preset, the include checkboxes) and presets:
reached from the keyboard and the palette, a saved preset offered and chosen, and every box
redrawn from the new trace after a change. Driven with `run_test` with the real engine (local
embedder) on a private copy of the sample vault, `now` pinned.
"""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Select

from recall_tui.tui.app import RecallApp
from recall_tui.tui.screens.edit import SavePresetScreen
from recall_tui.tui.settings import Settings
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from tests.test_tui_app import QUERY, SIZE, cell_text, new_app, screen_text, settle
from tests.test_tui_tuning import open_knobs
from tests.waiting import wait_until

#: The tests save presets into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault


def preset_options(app: RecallApp) -> list[str]:
    select = app.main().query_one("#preset", Select)
    return [str(value) for _label, value in select._options]


async def test_a_saved_preset_can_be_chosen_with_o_and_the_palette(engine, vault_copy):
    """A preset saved from the knobs tab (`S`) is offered at once and can be chosen with the
    palette and with `o`; saving does not make the agent use it; a preset deleted meanwhile
    leaves the select. (Choosing a saved preset once crashed the app.)"""
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        pane = await open_knobs(pilot, app)
        assert pane.knobs.edit_knob("k", "7")
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen),
                         "the save dialog")
        # saving is not deploying: the dialog says what the held-out test knows (no tune
        # ran: nothing) and asks separately, unticked, whether the agent should use it
        dialog = app.screen
        await wait_until(pilot, lambda: dialog.query("#preset-activate"), "the dialog drawn")
        assert "no held-out test" in str(dialog.query_one("#preset-verdict").render())
        assert dialog.query_one("#preset-activate", Checkbox).value is False
        await pilot.press(*"mine", "enter")
        saved = vault_copy / ".recall" / "presets" / "mine.toml"
        await wait_until(pilot, saved.exists, "the preset file")
        assert not (vault_copy / ".recall" / "active.json").exists()
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


def rendered_again(app: RecallApp) -> str:
    """The screen after every widget was told to paint itself from scratch."""
    for widget in app.screen.query("*"):
        widget.refresh()
    return screen_text(app)


async def test_after_another_preset_every_box_shows_the_new_trace(engine):
    """After `o` switches the preset, every box (status, waterfall, pinned, explanation) shows
    the new trace and nothing painted is left from the old one."""
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


async def test_the_settings_bar_from_the_keyboard_and_the_palette(engine):
    """Every setting has a key (remappable) and a palette entry; tab goes from setting to
    setting, escape back to the query."""
    app = new_app(engine, query=QUERY, settings=Settings(keymap={"app.toggle_inbox": "ctrl+t"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        main = app.main()
        main.query_one("#results").focus()
        await pilot.press("K")
        assert app.focused.id == "k"
        await pilot.press("3", "enter")
        await settle(pilot, app)
        assert app.trace.k == 3 and app.focused.id == "query"
        # tab goes from setting to setting; escape goes back to the query
        await pilot.press("escape", "N")
        assert app.focused.id == "now"
        await pilot.press("tab")
        assert app.focused.id == "as-of"
        await pilot.press("escape")
        assert app.focused.id == "query"
        # the checkboxes toggle from anywhere (remapped here: every binding has an id)
        await pilot.press("escape", "ctrl+t")
        await settle(pilot, app)
        assert app.request.include_inbox and app.main().query_one("#inbox").value
        await pilot.press("H")
        await settle(pilot, app)
        assert app.request.include_superseded
        names = [c.name for c in app.palette_commands()]
        for wanted in ("Settings: k (K)", "Settings: now (N)", "Settings: as-of (A)",
                       "Settings: type filter (F)", "Settings: preset (,)",
                       "Settings: include inbox on/off (ctrl+t)",
                       "Settings: include superseded on/off (H)"):
            assert wanted in names, wanted
