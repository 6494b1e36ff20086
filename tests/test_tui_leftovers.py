"""Issue 11's leftovers, driven with `run_test` on copies of the sample vault with the real
engine (local embedder) and `now` pinned: side by side between any two configurations, the
golden tab loading another queries file, the recall_when preview naming the queries that got
worse, the date column for "when…" questions, staleness shown only when the preset uses it,
and the stage list's note column cut with `…` at 80 columns.

Every figure on screen is checked against what the headless modules produced for the same
run (the trace, `compare.diff_rankings`, `golden.compare_runs`), never against numbers
written here.
"""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Static, TextArea

from recall_tui.engine import open_engine
from recall_tui.tui.app import RecallApp, make_app
from recall_tui.tui.screens.edit import RecallWhenScreen
from recall_tui.tuning.preview import preview_recall_when
from tests.conftest import PINNED_NOW
from tests.test_tui_app import settle
from tests.waiting import wait_until

SIZE = (140, 40)
QUERY = "postgres upgrade"


@pytest.fixture(scope="module")
def engine(session_vault_copy):
    """The real engine on the shared read-only copy, index built once for the module."""
    return open_engine(session_vault_copy, preset="default", embedder="local")


def new_app(engine, **kw) -> RecallApp:
    engine.clear_cache()
    return make_app(engine.vault.root, now=PINNED_NOW, engine=engine, **kw)


async def query(pilot, app: RecallApp, text: str) -> None:
    """Put `text` in the query bar in one edit and wait for its recall on screen."""
    await settle(pilot, app)
    field = app.main().query_one("#query", Input)
    field.focus()
    field.insert_text_at_cursor(text)
    await settle(pilot, app)


# --- 3. the recall_when preview names the queries that got worse ------------------------------


async def test_recall_when_preview_names_the_queries_that_got_worse(vault_copy):
    eng = open_engine(vault_copy, preset="default", embedder="local")
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
        await query(pilot, app, QUERY)
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


# --- 6. at 80 columns the stage list cuts its notes with … instead of scrolling sideways -----


async def test_stage_notes_end_in_ellipsis_at_80_columns(engine):
    from recall_tui.tui.widgets.waterfall import Waterfall

    app = new_app(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await query(pilot, app, QUERY)
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


# --- 4. a date column for "when…" questions ----------------------------------------------------


def column_keys(table) -> list[str]:
    return [c.key.value for c in table.ordered_columns]


def plain_column(table, key: str) -> dict[str, str]:
    return {row.value: str(table.get_cell(row, key)) for row in table.rows}


@pytest.mark.parametrize("size", [(140, 40), (80, 24)], ids=["140x40", "80x24"])
async def test_when_questions_show_each_memorys_date(engine, size):
    from recall_tui.tui.widgets.results import ResultsTable

    app = new_app(engine)
    async with app.run_test(size=size) as pilot:
        await query(pilot, app, QUERY)
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


# --- 5. staleness the preset does not score is dimmed and says so -------------------------------


async def test_staleness_unused_by_the_preset_is_dimmed_and_labelled(engine):
    from datetime import timedelta

    from recall_tui.tui.widgets.results import STALENESS_STYLE, ResultsTable

    # ten years on, every memory of the vault is past its windows: `expired` on every row
    later = PINNED_NOW + timedelta(days=3650)
    engine.clear_cache()
    app = make_app(engine.vault.root, now=later, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await query(pilot, app, QUERY)
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
        await query(pilot, app, QUERY)
        results = app.main().query_one(ResultsTable)
        assert app.trace.config["boosts"]["staleness"]["enabled"] is True, "precondition"
        assert app.trace.hits, "precondition"
        head = {c.key.value: str(c.label) for c in results.ordered_columns}
        assert head["staleness"] == "staleness"
        assert {r.value: str(results.get_cell(r, "staleness").style) for r in results.rows} == {
            h.id: STALENESS_STYLE[h.staleness] for h in app.trace.hits}


# --- 1. side by side: any two presets or saved configurations, with titles and scores --------


async def test_side_by_side_compares_any_two_configurations(vault_copy):
    from textual.widgets import Select

    from recall_tui.engine.config import load_preset
    from recall_tui.tui.panes.tuning import START, TuningPane
    from recall_tui.tui.widgets.table import VimTable
    from recall_tui.tuning.compare import diff_rankings

    eng = open_engine(vault_copy, preset="default", embedder="local")
    app = new_app(eng)
    async with app.run_test(size=SIZE) as pilot:
        await query(pilot, app, QUERY)
        app.main().query_one("#results").focus()
        await pilot.press("D")
        await wait_until(pilot, lambda: app.tuning.pane() is not None, "the tuning pane")
        pane: TuningPane = app.tuning.pane()
        await wait_until(pilot, lambda: pane.knobs.runs is not None and not pane.knobs.busy, "tuned runs")
        k = pane.config.k  # the side by side runs both sides at the knobs' k

        async def compare(a: str, b: str) -> None:
            pane.query_one("#side-preset", Select).value = a
            pane.query_one("#side-b-preset", Select).value = b
            await wait_until(pilot, lambda: not pane.knobs.busy and pane.knobs.runs is not None and (
                pane.knobs.runs.side_name, pane.knobs.runs.side_b_name) == (a, b), f"{a} vs {b}")

        def check(trace_a, trace_b, title_a: str, title_b: str) -> None:
            d = diff_rankings(trace_a, trace_b)
            assert pane.knobs.runs.side_diff.movements == d.movements
            for side, trace, ids, title in (("#side-a", trace_a, d.a, title_a),
                                            ("#side-b", trace_b, d.b, title_b)):
                table = pane.query_one(side, VimTable)
                assert table.border_title == title
                assert [r.value for r in table.rows] == list(ids)
                for r in table.rows:
                    hit = trace.hit(r.value)
                    assert str(table.get_cell(r, "score")) == f"{hit.score:.3f}"
                    assert str(table.get_cell(r, "title")) == hit.title

        # two presets, neither of them the tuned one
        await compare("memoria", "bastra")
        a = eng.recall(QUERY, k=k, now=PINNED_NOW, config=load_preset("memoria", vault_copy))
        b = eng.recall(QUERY, k=k, now=PINNED_NOW, config=load_preset("bastra", vault_copy))
        assert [h.id for h in a.hits] != [h.id for h in b.hits], "precondition: they disagree"
        check(a, b, "A: preset memoria", "B: preset bastra")
        figures = str(pane.query_one("#side-figures", Static).render())
        assert figures.startswith("A preset memoria vs B preset bastra")

        # a configuration saved since the app opened is a choice once the tab is shown again
        saved = vault_copy / ".recall" / "presets" / "mine.toml"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text('extends = "memoria"\nk = 3\n', "utf-8")
        await pilot.press("t")
        await pilot.press("D")
        select = pane.query_one("#side-b-preset", Select)
        await wait_until(pilot, lambda: ("mine (saved in the vault)", "mine")
                         in select._options, "the saved configuration among the choices")
        await compare(START, "mine")
        mine = eng.recall(QUERY, k=k, now=PINNED_NOW, config=load_preset("mine", vault_copy))
        check(pane.knobs.runs.baseline, mine, "A: start (default)", "B: preset mine")


# --- 2. the golden tab loads another queries file ------------------------------------------------


async def test_golden_tab_loads_another_queries_file(engine, tmp_path):
    from recall_tui.tui.panes.tuning import GOLDEN_K, TuningPane
    from recall_tui.tui.widgets.table import VimTable
    from recall_tui.tuning.golden import run_golden
    from recall_tui.tuning.metrics import read_golden

    other = tmp_path / "more-queries.jsonl"
    other.write_text(json.dumps({"query": QUERY, "relevant": {"billing-pg16-upgrade": 3}})
                     + "\n" + json.dumps({"query": "E_BILLING_4012",
                                          "relevant": ["billing-error-codes"]}) + "\n", "utf-8")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "ok", "relevant": ["a"]}\n{"query": 3}\n', "utf-8")
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await query(pilot, app, QUERY)
        app.main().query_one("#results").focus()
        await pilot.press("M")
        await wait_until(pilot, lambda: app.tuning.pane() is not None, "the tuning pane")
        pane: TuningPane = app.tuning.pane()
        await wait_until(pilot, lambda: pane.golden.current is not None and not pane.golden.busy,
                         "the vault's golden set scored")
        assert len(pane.golden.queries) > 2, "precondition: the vault's own set is bigger"
        field = pane.query_one("#golden-file", Input)
        summary = pane.query_one("#golden-summary", Static)
        table = pane.query_one("#golden-table", VimTable)

        async def load(text: str) -> None:
            field.focus()
            field.value = text
            await pilot.press("enter")

        await load(str(other))
        await wait_until(pilot, lambda: not pane.golden.busy and pane.golden.current is not None
                         and len(pane.golden.current.queries) == 2, "the other file scored")
        want = run_golden(engine, read_golden(other), pane.config, k=GOLDEN_K, now=PINNED_NOW)
        assert pane.golden.current.means == want.means
        assert [str(table.get_cell_at((r, 5))) for r in range(table.row_count)] == [
            QUERY, "E_BILLING_4012"]
        assert f"from {other}" in str(summary.render())

        # a bad file: the message names the file and the line and the reason; nothing scored
        await load(str(broken))
        await wait_until(pilot, lambda: pane.golden.error is not None, "the bad file refused")
        shown = str(summary.render())
        assert f"{broken}:2:" in shown and '"query" must be a non-empty string' in shown
        assert table.row_count == 0
        await load(str(tmp_path / "missing.jsonl"))
        await wait_until(pilot, lambda: "missing.jsonl" in str(summary.render()),
                         "the missing file named")
        assert "no such file" in str(summary.render()).lower()

        # empty: back to the vault's own golden.jsonl
        await load("")
        await wait_until(pilot, lambda: not pane.golden.busy and pane.golden.error is None
                         and pane.golden.current is not None
                         and len(pane.golden.current.queries) == len(pane.golden.queries) > 2,
                         "the vault's golden set again")
