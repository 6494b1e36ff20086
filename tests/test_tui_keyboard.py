"""Keys act on what the user sees and never lead to a dead end: the focus model, the keys of
the query bar, the lists and the dialogs, each driven as a user presses them in the app with
the real engine (local embedder) on the sample vault, `now` pinned. Every check reads the
screen (the focused widget, the dialog shown, the row under the cursor) and compares it with
the trace the engine produced.
"""

from __future__ import annotations

from recall_tui.tui.screens.edit import GradeScreen
from recall_tui.tui.widgets.results import ResultsTable
from tests.test_tui_app import QUERY, SIZE, new_app, set_query, settle
from tests.waiting import wait_until


async def test_judge_takes_the_highlighted_hit_not_the_opened_memory(engine):
    """`J` judges the hit under the cursor (what the user sees highlighted), not the memory
    opened last from the Vault pane."""
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        hits = [h.id for h in app.trace.hits]
        other = next(m for m in sorted(engine.vault.memories) if m not in hits)
        app.open_memory(other)  # what enter in the Vault pane does
        await wait_until(pilot, lambda: app.main().active_pane() == "memory", "the memory pane")
        assert app.current_id == other
        # pressed at once, before the Memory pane's deferred focus ran: that focus must not
        # switch the tabs back to the Memory pane (it did, one run in four)
        await pilot.press("1")  # from the Memory pane (escape would go to the query: issue 22)
        table = app.main().query_one(ResultsTable)
        # the pane shown and laid out: a resize redraws the table (and its cursor) first
        await wait_until(pilot, lambda: app.main().active_pane() == "recall" and table.size.width > 0
                         and table.row_count == len(hits), "the Recall pane laid out")
        await settle(pilot, app)
        table.move_cursor(row=0, animate=False)
        table.focus()
        await wait_until(pilot, lambda: app.focused is table, "the results focused")
        await pilot.press("j")  # what a user does: one row down
        await wait_until(pilot, lambda: table.current_id() == hits[1], "the cursor on the second hit")
        # J reads the table's cursor (what the user sees highlighted), not app.current_id
        await pilot.press("J")
        await wait_until(pilot, lambda: isinstance(app.screen, GradeScreen), "the judge dialog")
        assert app.screen.memory_id == hits[1]
        await pilot.press("escape")
