"""Editing a memory's `recall_when` from the app (`E`): the preview, the save, a conflict with
an edit made elsewhere, and the ranks after the re-run. Driven with `run_test` on private
copies of the sample vault with the real engine (local embedder) and `now` pinned; the file is
checked on disk, the figures against the headless preview (`tuning.preview`).
"""

from __future__ import annotations

import json

import pytest
from textual.widgets import Static, TextArea

from recall_tui.engine.engines import refresh
from recall_tui.tui.screens.edit import RecallWhenScreen
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tuning.preview import preview_recall_when
from tests.conftest import PINNED_NOW
from tests.test_tui_app import cell_text, new_app, row_ids, set_query, settle
from tests.waiting import wait_until

#: The tests write into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault

SIZE = (140, 40)
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
        app.tuning.vault_changed(refresh(engine))  # what the watcher does when it sees the file
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


async def test_the_recall_when_preview_names_the_queries_that_got_worse(engine, vault_copy):
    eng = engine
    ranked = eng.recall(QUERY, now=PINNED_NOW, k=10)
    # find a hit that the query, taken word for word as a phrase, lifts over another hit (the
    # headless preview writes nothing); that other hit is judged the answer, so the edit hurts
    # the judged query, while a second judged query is left alone
    phrases = [QUERY, f"{QUERY} steps"]
    other = passed = None
    for h in ranked.hits[1:]:
        p = preview_recall_when(eng, h.id, [*eng.vault.get(h.id).recall_when, *phrases], QUERY,
                                now=PINNED_NOW, k=10)
        if p.after.rank is not None and p.after.rank < h.rank:
            other, passed = h.id, p.before.hits[p.after.rank - 1]
            break
    assert other is not None, "precondition: some hit is lifted by the query as a phrase"
    (vault_copy / "golden.jsonl").write_text(
        json.dumps({"query": QUERY, "relevant": {passed: 3}}) + "\n"
        + json.dumps({"query": "E_BILLING_4012",
                      "relevant": {"billing-invoice-rounding-bug": 3}}) + "\n", "utf-8")
    app = new_app(eng)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        app.main().query_one("#results").focus()  # E is a key of the lists, not of the bar
        await pilot.press("t")  # the tuning pane holds the golden set the preview scores
        await wait_until(pilot, lambda: len(app.tuning.pane().golden.queries) == 2,
                         "the golden set read by the tuning pane")
        app.set_current(other)
        app.follow_results = False
        app.main().action_show_pane("memory")
        await pilot.pause()
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, RecallWhenScreen),
                         "the recall_when editor")
        screen = app.screen
        area = screen.query_one("#rw-text", TextArea)
        area.text = "\n".join([area.text, *phrases])
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: not screen.busy and screen.preview is not None,
                         "the preview")
        change = screen.preview.golden_change
        assert change is not None
        worse = [b for b in change.badges if b.badge == "worse"]
        assert [b.query for b in worse] == [QUERY], "precondition: the edit hurts that query"
        shown = str(screen.query_one("#rw-result", Static).render())
        assert "got worse:" in shown
        b = worse[0]
        assert (f'"{QUERY}"  {b.metric} {b.baseline.metrics[b.metric]:.3f} → '
                f'{b.current.metrics[b.metric]:.3f}') in shown
        assert "E_BILLING_4012" not in shown  # a query that did not get worse is not named
