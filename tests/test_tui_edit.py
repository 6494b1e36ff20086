"""Editing a memory's `recall_when` from the app (`E`): the preview, the save, a conflict with
an edit made elsewhere, and the ranks after the re-run. Driven with `run_test` on private
copies of the sample vault with the real engine (local embedder) and `now` pinned; the file is
checked on disk, the figures against the headless preview (`tuning.preview`).
"""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from recall_tui.engine.engines import refresh
from recall_tui.tui.screens.edit import RecallWhenScreen
from recall_tui.tui.widgets.results import ResultsTable
from tests.test_tui_app import cell_text, new_app, row_ids, set_query, settle
from tests.waiting import wait_until

#: The tests write into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault

QUERY = "postgres upgrade"
#: A query where rewriting a lower hit's recall_when lifts it.
LIFT_QUERY = "stripe webhook retries"


async def test_the_delta_survives_the_rerun_after_a_recall_when_save(engine, vault_copy):
    """After a recall_when save lifts a hit, the Δ column keeps showing the move once the
    watcher's re-run lands."""
    app = new_app(engine)
    # a query where rewriting a lower hit's recall_when lifts it ("postgres upgrade", the
    # other tests' query, has every hit matching it fully already)
    async with app.run_test(size=(140, 40)) as pilot:
        await set_query(pilot, app, LIFT_QUERY)
        before = [h.id for h in app.trace.hits]
        # the lowest hit the phrase lifts (found with the headless preview, which measures the
        # edit without writing it; the premise is checked again below on the real save)
        from recall_tui.tuning.preview import preview_recall_when

        target = next((mid for mid in reversed(before[1:])
                       if (r := preview_recall_when(engine, mid, [LIFT_QUERY], LIFT_QUERY,
                                                    now=app.request.now, k=len(before))
                           .after.rank) is not None and r < before.index(mid) + 1), None)
        assert target is not None, "the phrase should lift some hit (the test's premise)"
        last = before.index(target) + 1
        table = app.main().query_one(ResultsTable)
        table.focus()
        table.move_cursor(row=last - 1, animate=False)
        await wait_until(pilot, lambda: app.current_id == target, "the last hit current")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, RecallWhenScreen), "the editor")
        app.screen.query_one("#rw-text", TextArea).text = LIFT_QUERY
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, RecallWhenScreen), "the save")
        await settle(pilot, app)
        rank = app.trace.hit(target).rank
        assert rank < last, "the phrase should lift the memory (the test's premise)"
        app.vault_changed(refresh(engine))  # what the watcher does when it sees the file
        await settle(pilot, app)
        row = row_ids(table).index(target)
        assert cell_text(table, row, "delta") == f"↑{last - rank}"


async def test_escape_on_an_edit_conflict_keeps_the_typed_phrases(engine, vault_copy):
    """Escape on the conflict view (the file changed elsewhere) goes back to the editor with
    the typed phrases kept; saving again merges both edits."""
    app = new_app(engine)
    async with app.run_test(size=(140, 40)) as pilot:
        await set_query(pilot, app, QUERY)
        mid = app.trace.hits[0].id
        app.main().query_one("#results").focus()
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, RecallWhenScreen), "the editor")
        editor = app.screen
        editor.query_one("#rw-text", TextArea).text = "after the postgres jump"
        path = vault_copy / engine.vault.get(mid).path
        path.write_text(path.read_text("utf-8") + "\nEdited elsewhere.\n", "utf-8")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(editor.query("#conflict")), "the conflict view")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not editor.query("#conflict"), "the comparison to close")
        assert app.screen is editor
        assert editor.query_one("#rw-text", TextArea).text == "after the postgres jump"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.screen is not editor, "the save")
        text = path.read_text("utf-8")
        assert "after the postgres jump" in text and "Edited elsewhere." in text
