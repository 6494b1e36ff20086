"""Keys act on what the user sees and never lead to a dead end: the focus model, the keys of
the query bar, the lists and the dialogs, each driven as a user presses them in the app with
the real engine (local embedder) on the sample vault, `now` pinned. Every check reads the
screen (the focused widget, the dialog shown, the row under the cursor) and compares it with
the trace the engine produced.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from recall_tui.tui.screens.dialogs import ConfirmScreen
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


#: (keys pressed from the query, the focused widget's id after them). Each row starts with the
#: query focused on the Recall pane with its hits on screen.
FOCUS = [
    (["escape"], "results"),
    (["escape", "w", "escape"], "query"),
    (["escape", "x", "escape"], "query"),
    (["escape", "2"], "memory-frontmatter"),
    (["escape", "3"], "chain-table"),
    (["escape", "4"], "entity-edges"),
    (["escape", "5"], "mmr-table"),
    (["escape", "6"], "timings-table"),
    (["escape", "7"], "vault-tree"),
    (["escape", "7", "escape"], "query"),
    (["escape", "8"], "problems-table"),
    (["escape", "9"], "knob-table"),
    (["escape", "0"], "agent-table"),
    (["escape", "0", "escape"], "query"),
    (["escape", "t"], "knob-table"),
    (["escape", "t", "escape"], "query"),
    (["escape", "M"], "golden-table"),
    (["escape", "D"], "side-b"),
    (["escape", "2", "slash"], "query"),
    (["escape", "t", "j", "slash"], "query"),
    (["escape", "enter"], "memory-frontmatter"),
    (["enter"], "memory-frontmatter"),
    (["escape", "j", "enter"], "memory-frontmatter"),
]


@pytest.mark.own_vault
async def test_the_focus_model(engine):
    """The focus model, as a table of key sequences from the query (docs/tui.md, Focus)."""
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        main = app.main()
        field = main.query_one("#query", Input)
        for n, (keys, want) in enumerate(FOCUS):
            main.action_show_pane("recall")
            await wait_until(pilot, lambda: main.active_pane() == "recall", "the Recall pane")
            await pilot.pause()
            app.action_focus_query()

            def at_start() -> bool:  # the reset, not the model: focus the query till it holds
                if not field.has_focus:
                    app.action_focus_query()
                return field.has_focus

            await wait_until(pilot, at_start,
                             f"row {n} {keys}: the query focused (focused: "
                             f"{getattr(app.focused, 'id', None)})", timeout=20)
            await pilot.press(*keys)
            await wait_until(pilot, lambda w=want: app.focused is not None
                             and app.focused.id == w,
                             f"{' '.join(keys)} -> #{want} (focused: "
                             f"{getattr(app.focused, 'id', None)})", timeout=20)
            assert field.value == QUERY, keys  # no key landed in the query
        # `/` reaches the query without selecting its text: what is typed adds to it
        main.query_one("#results").focus()
        await pilot.press("slash")
        assert field.has_focus and field.selection.is_empty
        await pilot.press("s")
        assert field.value == QUERY + "s"
        await settle(pilot, app)


@pytest.mark.own_vault
async def test_a_stray_tune_key_asks_first(engine):
    """`T` (a long tune) asks before it starts; `n` starts nothing."""
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "no")
        pane = app.tuning_pane()
        assert pane is not None and not pane.tune.busy and pane.tune.state != "running"
