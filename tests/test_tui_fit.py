"""The layout fits: one app session resized through the four sizes the layout is
designed for (80x24, 100x30, 120x40, 200x60): the pane tab strip and the status line fit or
end in `…`, the settings bar shows every setting, the knobs list shows its values with
readable names and the knob's whole documentation, the side-by-side ids are whole; and the
figures shown agree (the golden summary's before → after (delta), the save dialog's count of
changed knobs against the saved file's). Real engine, local embedder, a copy of the sample
vault, `now` pinned. Each check failed before its fix. Also at small sizes: the stage list
cuts its notes with `…` and the knobs tab shows its values.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from rich.text import Text
from textual.widgets import Label

from recall_tui.tui.app import RecallApp, make_app
from recall_tui.tui.figures import change_figures
from recall_tui.tui.safe import one_line
from recall_tui.tui.screens.edit import SavePresetScreen
from recall_tui.tui.screens.main import PANES
from tests.conftest import PINNED_NOW
from tests.test_tui_app import cell_text, new_app, screen_text, set_query, settle
from tests.test_tui_tuning import open_knobs
from tests.waiting import wait_until

QUERY = "postgres upgrade"


def region_text(app: RecallApp, widget) -> list[str]:
    """The screen's cells under `widget`, a line per row."""
    lines = screen_text(app).split("\n")
    r = widget.region
    return [line[r.x:r.x + r.width] for line in lines[r.y:r.y + r.height]]


def strip_fits(app: RecallApp) -> bool:
    """Every pane's tab on the strip's row: its title whole or cut with `…` (never off the
    edge), the shown pane's title whole."""
    main = app.main()
    tabs = main.query_one("#panes").query_one("ContentTabs")
    row = region_text(app, tabs)[0]
    labels = {name: main.query_one("#panes").get_tab(name).label.plain for name in PANES}
    for name, label in labels.items():
        title = PANES[name][0]
        if f" {label} " not in f" {row} ":
            return False
        if label != title and not (label.endswith("…") and title.startswith(label[:-1])):
            return False
    return labels[main.active_pane()] == PANES[main.active_pane()][0]


def status_fits(app: RecallApp) -> bool:
    """The status line shows its whole text, or ends in `…`."""
    status = app.main().query_one("#status")
    content = status.content
    full = content.plain if isinstance(content, Text) else str(content)
    shown = region_text(app, status)[0].strip()
    return shown == full.strip() or (shown.endswith("…") and full.startswith(shown[:-1]))


def agree(summary: str) -> list[tuple[str, str, str, str]]:
    """The summary's `name before → after (delta)` figures; asserts each delta is after minus
    before as shown."""
    found = re.findall(r"(\S+) (\d\.\d+) → (\d\.\d+) \(([+-]\d\.\d+)\)",
                       " ".join(summary.split()))
    for name, before, after, delta in found:
        assert Decimal(after) - Decimal(before) == Decimal(delta), (name, before, after, delta)
    return found


def test_change_figures_agree_at_one_precision():
    # the issue's `0.652 → 0.652 (-0.001)`
    assert change_figures(0.6524, 0.6516, -0.0008) == ("0.6524", "0.6516", "-0.0008")
    assert change_figures(0.8676470588, 0.8372549019, -0.0303921569) == (
        "0.867647", "0.837255", "-0.030392")
    assert change_figures(0.8167, 0.8163, -0.0004) == ("0.8167", "0.8163", "-0.0004")
    assert change_figures(0.5, 0.6, 0.1) == ("0.500", "0.600", "+0.100")
    assert change_figures(None, 0.5, None) == ("—", "0.500", "—")


@pytest.mark.own_vault  # the test saves a preset into the vault
async def test_the_layout_fits_at_every_size_and_the_figures_agree(engine, vault_copy):
    app = make_app(engine.vault.root, now=PINNED_NOW, engine=engine, query=QUERY)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await wait_until(pilot, lambda: strip_fits(app), "the tab strip to fit 80 columns")
        await wait_until(pilot, lambda: status_fits(app), "the status line to fit or end in …")
        assert screen_text(app).count("^p Palette") == 1  # the footer had it twice

        # the knobs at 80x24: values whole, names readable, the doc whole (it wraps)
        app.main().query_one("#results").focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: app.tuning.pane() is not None
                         and app.tuning.pane().config is not None, "the tuning pane")
        pane = app.tuning.pane()
        table = pane.query_one("#knob-table")
        await wait_until(pilot, lambda: table.row_count > 3 and table.size.width, "the knobs")
        await wait_until(pilot, lambda: strip_fits(app), "the strip to refit for pane 9")
        table.move_cursor(row=1)  # verbosity: its doc is longer than the box is wide
        path = table.cursor_key()
        doc = one_line(pane.knobs.knob_info(path)[2], 200)
        msg = pane.query_one("#knob-msg", Label)
        await wait_until(pilot, lambda: " ".join(region_text(app, msg)).split() == doc.split(),
                         f"the whole doc of {path} under the knobs")
        lines = screen_text(app).split("\n")
        top = table.content_region.y + 1  # under the header
        for row in range(min(table.row_count, table.content_region.height - 1)):
            knob, value = cell_text(table, row, "knob"), cell_text(table, row, "value")
            line = lines[top + row]
            assert knob in line or any(knob[:n] + "…" in line for n in range(5, len(knob))), \
                (row, knob, line)
            if len(value) <= 6:
                assert f" {value} " in line, (row, value, line)
        assert "hits  (query not" in " ".join(region_text(app, pane.query_one("#tuned-head")))

        # two knobs changed: the dialog and the written file count the same
        assert pane.knobs.edit_knob("k", "7") and pane.knobs.edit_knob("parse.stem", "off")
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen),
                         "the save dialog")
        await wait_until(pilot, lambda: "2 knobs changed" in screen_text(app), "its count")
        await pilot.press(*"fit22", "enter")
        saved = vault_copy / ".recall" / "presets" / "fit22.toml"
        await wait_until(pilot, saved.exists, "the preset file")
        assert "# 2 knob(s) changed:" in saved.read_text(encoding="utf-8")

        # the golden summary under the changed knobs: before → after (delta) agree
        app.action_tuning("tune-golden")
        summary = pane.query_one("#golden-summary")
        await wait_until(pilot, lambda: "→" in " ".join(region_text(app, summary)),
                         "the golden figures")
        assert len(agree(" ".join(region_text(app, summary)))) == 3

        for size in ((100, 30), (120, 40), (200, 60)):
            await pilot.resize_terminal(*size)
            await wait_until(pilot, lambda s=size: app.size == s and strip_fits(app),
                             f"the tab strip to fit {size}")
            await wait_until(pilot, lambda: status_fits(app), f"the status line at {size}")
            bar = "\n".join(region_text(app, app.main().query_one("#settings-row")))
            assert "superseded" in bar and "as-of" in bar, (size, bar)

        # side by side at 200 columns: the ids whole (a long title no longer cuts them)
        app.action_tuning("tune-side")
        side = pane.query_one("#side-a")
        await wait_until(pilot, lambda: side.row_count >= 5 and not pane.knobs.busy, "side A")
        await wait_until(pilot, lambda: all(
            cell_text(side, r, "id") in "\n".join(region_text(app, side))
            for r in range(side.row_count)), "every id of side A whole")


async def test_the_stage_notes_end_in_an_ellipsis_at_80_columns(engine):
    """At 80 columns the stage list cuts its notes with … instead of scrolling sideways."""
    from recall_tui.tui.widgets.waterfall import Waterfall

    app = new_app(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await set_query(pilot, app, QUERY)
        wf = app.main().query_one(Waterfall)
        notes = {s.name: s.reason for s in app.trace.stages if s.reason}
        longest = max(notes.values(), key=len)
        assert len(longest) > wf.size.width, "precondition: a note longer than the box"

        def fitted() -> bool:
            note = wf.columns[next(k for k in wf.columns if k.value == "note")]
            return not note.auto_width and wf.virtual_size.width <= wf.size.width

        await wait_until(pilot, fitted, "the stage list to fit its box (no sideways scroll)")
        assert wf.max_scroll_x == 0
        text = "\n".join(strip.text for strip in wf.render_lines(wf.region.reset_offset))
        assert "…" in text, f"a cut note ends in …:\n{text}"


@pytest.mark.own_vault
@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_knob_values_show_on_small_terminals(engine, size):
    """The knobs tab shows each value (whole or cut with …) at 80x24 and 100x30."""
    from tests.test_tui_app import cell_text as cell

    app = new_app(engine, query=QUERY)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await open_knobs(pilot, app)
        table = app.tuning.pane().query_one("#knob-table")
        await wait_until(pilot, lambda: table.row_count > 3 and table.size.width, "the knobs")
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).split("\n")
        top = table.content_region.y + 1  # under the header
        shown = 0
        for row in range(min(table.row_count, table.content_region.height - 2)):
            value = cell(table, row, "value")
            line = lines[top + row]
            assert value[:6] in line or value[:5] + "…" in line, (row, value, line)
            shown += 1
        assert shown >= 3
