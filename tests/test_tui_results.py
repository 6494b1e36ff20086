"""The Recall pane's hit table: which columns it shows for which question and preset, how it
marks what no score uses, and how titles fit the width. Driven with `run_test` with the real
engine (local embedder) on the shared copy of the sample vault, `now` pinned; every cell is
compared with the trace the engine produced or the vault file it came from.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import Input

from recall_tui.tui.app import make_app
from recall_tui.tui.widgets.results import STALENESS_STYLE, ResultsTable
from tests.conftest import PINNED_NOW
from tests.test_tui_app import QUERY, cell_text, new_app, screen_text, set_query, settle
from tests.waiting import wait_until

SIZE = (140, 40)


def column_keys(table) -> list[str]:
    return [c.key.value for c in table.ordered_columns]


def plain_column(table, key: str) -> dict[str, str]:
    return {row.value: str(table.get_cell(row, key)) for row in table.rows}


@pytest.mark.parametrize("size", [(140, 40), (80, 24)], ids=["140x40", "80x24"])
async def test_when_questions_show_each_memorys_date(engine, size):
    """A "when…" question adds a date column (the memory's event time, else its creation date),
    kept even at 80 columns."""

    app = new_app(engine)
    async with app.run_test(size=size) as pilot:
        await set_query(pilot, app, QUERY)
        results = app.main().query_one(ResultsTable)
        assert "date" not in column_keys(results)  # not a question about a time
        field = app.main().query_one("#query", Input)
        field.value = ""
        await settle(pilot, app)
        field.insert_text_at_cursor("When did the postgres upgrade happen?")
        await settle(pilot, app)
        await wait_until(pilot, lambda: "date" in column_keys(results), "the date column")
        assert app.trace.hits, "precondition: the question has hits"
        expected = {}
        for h in app.trace.hits:  # the vault file's own dates: event time, else created
            m = engine.vault.get(h.id)
            expected[h.id] = (m.valid_from or m.created).date().isoformat()
        await wait_until(pilot, lambda: plain_column(results, "date") == expected,
                         "the dates of the hits' memories")
        if size[0] == 80:  # narrow: the date stays, staleness and channels go first
            assert "staleness" not in column_keys(results)
            assert "title" in column_keys(results)


async def test_staleness_unused_by_the_preset_is_dimmed_and_labelled(engine):
    """Staleness a preset does not score is dimmed and its column says `(off)`; a preset that
    scores it shows each label's colour."""

    from recall_tui.tui.widgets.results import ResultsTable

    # ten years on, every memory of the vault is past its windows: `expired` on every row
    later = PINNED_NOW + timedelta(days=3650)
    engine.clear_cache()
    app = make_app(engine.vault.root, now=later, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        results = app.main().query_one(ResultsTable)
        assert {h.staleness for h in app.trace.hits} == {"expired"}, "precondition"
        assert app.trace.config["boosts"]["staleness"]["enabled"] is False, "precondition"
        head = {c.key.value: str(c.label) for c in results.ordered_columns}
        assert head["staleness"] == "staleness (off)"
        styles = {str(results.get_cell(r, "staleness").style) for r in results.rows}
        assert styles == {"dim"}, "no red `expired` on every row for a label no score uses"


    # a preset that scores staleness: the plain title and each label's colour
    engine.clear_cache()
    app = make_app(engine.vault.root, now=PINNED_NOW, engine=engine, preset="bastra")
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        results = app.main().query_one(ResultsTable)
        assert app.trace.config["boosts"]["staleness"]["enabled"] is True, "precondition"
        assert app.trace.hits, "precondition"
        head = {c.key.value: str(c.label) for c in results.ordered_columns}
        assert head["staleness"] == "staleness"
        assert {r.value: str(results.get_cell(r, "staleness").style) for r in results.rows} == {
            h.id: STALENESS_STYLE[h.staleness] for h in app.trace.hits}


@pytest.mark.fusion_max
async def test_mmr_scores_sit_beside_relevance(engine):
    app = new_app(engine, preset="abmind")
    async with app.run_test(size=(200, 60)) as pilot:
        await set_query(pilot, app, QUERY)
        assert any(h.explain.mmr for h in app.trace.hits), "abmind runs MMR (the premise)"
        table = app.main().query_one(ResultsTable)
        for r, h in enumerate(app.trace.hits):
            want = "—" if h.explain.mmr is None else f"{h.explain.mmr.mmr:.3f}"
            assert cell_text(table, r, "mmr") == want


@pytest.mark.fusion_max
@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_titles_take_the_width_there_is_and_cut_ones_end_in_an_ellipsis(engine, size):
    app = new_app(engine)
    async with app.run_test(size=size) as pilot:
        await set_query(pilot, app, QUERY)

        def shown(h) -> bool:  # in full, or cut after at least 8 characters and ending in …
            text = screen_text(app)
            return h.title in text or any(f"{h.title[:n]}…" in text
                                          for n in range(8, len(h.title)))

        await wait_until(pilot, lambda: all(shown(h) for h in app.trace.hits),
                         "every title in full or cut with …")
        text = screen_text(app)
        if size[0] >= 200:  # wide: every title in full
            assert all(h.title in text for h in app.trace.hits)
