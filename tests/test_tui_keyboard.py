"""Keys act on what the user sees and never lead to a dead end: the focus model, the keys of
the query bar, the lists and the dialogs, each driven as a user presses them in the app with
the real engine (local embedder) on the sample vault, `now` pinned. Every check reads the
screen (the focused widget, the dialog shown, the row under the cursor) and compares it with
the trace the engine produced.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList

from recall_tui.tui.keymap import all_bindings
from recall_tui.tui.panes.vault import VaultTree
from recall_tui.tui.screens.dialogs import ConfirmScreen, PinScreen
from recall_tui.tui.screens.edit import GradeScreen
from recall_tui.tui.widgets.popups import FindScreen, RowScreen
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.whynot import PinnedTable
from tests.test_tui_app import QUERY, SIZE, new_app, screen_text, set_query, settle
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
        await pilot.press("1")  # from the Memory pane (escape would go to the query)
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
        pane = app.tuning.pane()
        assert pane is not None and not pane.tune.busy and pane.tune.state != "running"


async def open_pinned_in_full(pilot, app, memory_id: str) -> None:
    """Pin `memory_id`, then open its pinned row in full (enter on the Pinned box)."""
    app.pin(memory_id)
    await settle(pilot, app)
    app.main().query_one(PinnedTable).focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, RowScreen), "the pinned row in full")


@pytest.mark.fusion_max
async def test_f_shows_a_row_in_full_and_enter_on_a_pinned_row_opens_it(engine):
    app = new_app(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await set_query(pilot, app, QUERY)
        gone = app.trace.stage("filter").dropped[0]
        await open_pinned_in_full(pilot, app, gone.id)
        assert gone.reason in screen_text(app)
        await pilot.press("escape")
        app.main().query_one(ResultsTable).focus()
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, RowScreen), "the hit in full")
        assert app.trace.hits[0].title in screen_text(app)
        await pilot.press("escape")


@pytest.mark.fusion_max
async def test_down_up_and_enter_from_the_query_bar(engine):
    app = new_app(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await set_query(pilot, app, QUERY)
        field = app.main().query_one("#query", Input)
        assert field.has_focus
        table = app.main().query_one(ResultsTable)
        await pilot.press("down", "down")
        assert field.has_focus and table.cursor_row == 2
        await pilot.press("up")
        await wait_until(pilot, lambda: app.current_id == app.trace.hits[1].id, "the hit followed")
        assert field.has_focus
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.main().active_pane() == "memory", "the memory pane")
        assert app.current_id == app.trace.hits[1].id


@pytest.mark.fusion_max
async def test_ctrl_o_moves_between_the_boxes_of_the_pane(engine):
    app = new_app(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await set_query(pilot, app, QUERY)
        await pilot.press("escape")
        seen = []
        for _ in range(5):
            await pilot.press("ctrl+o")
            seen.append(app.focused.id)
        assert {"waterfall", "pinned", "results", "explain"} <= set(seen)


@pytest.mark.fusion_max
async def test_ctrl_f_searches_the_focused_table(engine):
    app = new_app(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await set_query(pilot, app, QUERY)
        table = app.main().query_one(ResultsTable)
        table.focus()
        target = app.trace.hits[-1]
        await pilot.press("ctrl+f")  # `/` is the query's, from anywhere
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen), "the search box")
        await pilot.press(*target.title.lower(), "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, FindScreen), "the search closed")
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == target.id
        assert table.has_focus


@pytest.mark.fusion_max
async def test_vault_filter_escape_and_down_reach_the_tree_and_sort_by_date(engine):
    app = new_app(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("7")
        await wait_until(pilot, lambda: bool(app.main().query(VaultTree)), "the vault pane")
        field = app.main().query_one("#vault-filter", Input)
        field.focus()
        await pilot.press(*"postgres")
        await pilot.press("escape")
        tree = app.main().query_one(VaultTree)
        assert tree.has_focus
        field.focus()
        await pilot.press("down")
        assert tree.has_focus
        await pilot.press("s")
        assert tree.sort_by == "date"
        leaves = [n for n in tree.root.children[0].children if n.data]
        dates = [engine.vault.get(n.data).updated for n in leaves]
        assert dates == sorted(dates, reverse=True)
        assert leaves[0].label.plain.startswith(dates[0].date().isoformat())


@pytest.mark.fusion_max
async def test_pin_by_id_matches_substrings_of_ids_and_titles(engine):
    app = new_app(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        m = next(m for m in engine.vault.memories.values() if len(m.title.split()) > 2)
        word = max(m.title.split(), key=len)
        app.main().query_one("#results").focus()
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, PinScreen), "the pin dialog")
        screen = app.screen
        await pilot.press(*word)
        options = screen.query_one(OptionList)
        found = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert m.id in found
        for _ in range(found.index(m.id)):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.pinned == (m.id,)


def test_the_navigation_bindings_have_ids():
    ids = {b.id for b in all_bindings()}
    assert {"list.find", "list.full", "tree.find", "query.hit_down", "query.hit_up",
            "focus.next_box", "focus.previous_box", "vault.sort", "vault.to_tree",
            "find.cancel", "row.close", "pin.next", "replay_list.close"} <= ids
