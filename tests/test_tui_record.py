"""The live app's session tools, driven with `run_test` on a private copy of the sample vault
with the real engine and `now` pinned: the record toggle (one trace line per applied recall,
read back equal to what the UI showed), the bug-report action (Markdown + JSON written, the
Markdown on the clipboard), the embedder warm start, and key names shown as typed."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select

from recall_tui.diagnostics.recording import (
    RECORDINGS_DIR,
    load_report_traces,
    load_traces,
    read_recording,
)
from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.index.embed import make_embedder
from recall_tui.index.store import Index
from recall_tui.tui.app import make_app
from recall_tui.tui.replay import make_replay_app
from recall_tui.tui.screens.dialogs import HelpScreen
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.table import VimTable
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW
from tests.test_tui_app import (
    QUERY,
    SIZE,
    add_to_query,
    new_app,
    row_ids,
    screen_text,
    set_query,
    settle,
)
from tests.waiting import wait_until


def status_text(app) -> str:
    """The status line's text (toasts can cover its right end on the screen)."""
    return str(app.main().query_one("#status").content)


#: The tests write into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault


async def test_record_toggle_writes_one_line_per_recall_and_reads_back_equal(engine, vault_copy):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("R")  # the binding, as a user presses it
        assert app.session.recorder is not None and app.session.recorder.active
        assert status_text(app).startswith("● REC 0 traces")
        assert "● REC 0 traces" in screen_text(app)
        shown = []
        for q in ("postgres upgrade", " plan", "x"):
            await add_to_query(pilot, app, q)
            shown.append(app.trace)
        assert status_text(app).startswith("● REC 3 traces")
        path = app.session.recorder.path
        assert path.parent == vault_copy / RECORDINGS_DIR and path.suffix == ".jsonl"
        assert str(path.relative_to(vault_copy)) in status_text(app)
        app.main().query_one("#results").focus()
        await pilot.press("R")
        assert not app.session.recorder.active and "● REC" not in status_text(app)
        await add_to_query(pilot, app, "y")  # after the stop: not recorded
    lines = [ln for ln in path.read_text("utf-8").splitlines() if ln.strip()]
    assert len(lines) == 3
    back = read_recording(path)
    # equal as recorded: the JSON keeps floats to 6 decimals, so compare the serialized form
    assert [t.to_json() for t in back] == [t.to_json() for t in shown]
    assert [[h.id for h in t.hits] for t in back] == [[h.id for h in t.hits] for t in shown]
    assert [t.query for t in back] == ["postgres upgrade", "postgres upgrade plan",
                                      "postgres upgrade planx"]


async def test_bug_report_action_writes_markdown_and_json_and_copies(engine, vault_copy):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine, query="postgres upgrade")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("B")
        await wait_until(pilot, lambda: app.session.last_report is not None, "the bug report")
        md, js = app.session.last_report
        assert md.parent == vault_copy / ".recall" / "reports"
        text = md.read_text("utf-8")
        assert text.startswith("# recall-tui report: `postgres upgrade`")
        assert app.clipboard == text
        data = json.loads(js.read_text("utf-8"))
        assert data["kind"] == "recall-tui-report" and data["repeat"] == 10
        (trace,) = load_traces(js)
        assert trace.query == "postgres upgrade"
        # the report runs the preset's own k; its ranking is the head of what the UI shows
        ids = [h.id for h in trace.hits]
        assert ids and ids == [h.id for h in app.trace.hits][:len(ids)]


async def test_bug_report_without_a_query_says_so(engine, vault_copy):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("B")
        await wait_until(pilot, lambda: any("type a query first" in str(n.message)
                                            for n in app._notifications),
                         "the notice that a report needs a query")
        assert app.session.last_report is None
        assert any("type a query first" in str(n.message) for n in app._notifications)


async def test_the_embedder_is_warmed_before_the_first_query(vault_copy):
    # Built by hand, not with open_engine (which starts loading the model in the background
    # itself), so the model is surely not loaded until the app warms it.
    vault = read_vault(vault_copy)
    embedder, _ = make_embedder("local")
    engine = Engine(vault, Index.open(vault, embedder), load_preset("default", vault.root))
    assert not embedder.loaded  # lazy: nothing embedded yet
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await wait_until(pilot, lambda: app.session.warm_ms is not None, "the warm-up")
        assert embedder.loaded and app.trace is None  # loaded with no query typed


async def test_help_shows_keys_as_typed(engine, vault_copy):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen)
                         and app.screen.query_one(VimTable).row_count > 0, "the help screen")
        table = app.screen.query_one(VimTable)
        rows = {str(table.get_row_at(r)[2]): str(table.get_row_at(r)[1])
                for r in range(table.row_count)}
        assert rows["app.help"] == "?" and rows["app.focus_query"] == "/"
        assert rows["app.palette"] == "ctrl+p" and rows["help.close"] == "esc, q, ?"
        assert rows["app.record"] == "R" and rows["app.bug_report"] == "B"
        assert "question_mark" not in screen_text(app)


def test_tui_keystroke_bench_times_every_key(vault_copy):
    """`bench --tui` on the sample vault: one sample per key, each at least the engine's time
    (the latency includes the recall it waited for)."""
    from recall_tui.tui.paint_timing import tui_keystroke_bench

    r = tui_keystroke_bench(vault_copy, embedder="standin", queries=["pg up", "billing"],
                            keystrokes=7, modes=("paced",))
    assert r["keystrokes"] == 7 and r["typed"] == ["pg up", "bi"]
    (ps,) = r["passes"]
    assert ps["latency_ms"]["n"] == 7 and len(ps["samples"]) == 7
    assert ps["latency_ms"]["p50"] >= ps["engine_total_ms"]["p50"] > 0


async def test_the_bug_report_records_k_pins_and_filters_and_replays_them(engine, vault_copy):
    """The bug report (`B`) describes the screen: the bar's k, the pins and the filters are in
    its trace, and replaying it shows the same hits and pins."""
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        bar = app.main()
        bar.query_one("#k", Input).value = "7"
        bar.query_one("#type", Select).value = "fact"
        await settle(pilot, app)
        pins = ("billing-db-postgres15", "lesson-pg-upgrade-analyze")
        for p in pins:
            app.pin(p)
        await settle(pilot, app)
        shown = app.trace
        assert shown.k == 7 and {w.id for w in shown.why} == set(pins)
        bar.query_one("#results").focus()
        await pilot.press("B")
        await wait_until(pilot, lambda: app.session.last_report is not None, "the bug report", 120)
        (recorded,) = load_report_traces(app.session.last_report[1])
        assert recorded.k == 7
        assert [h.id for h in recorded.hits] == [h.id for h in shown.hits]
        assert [w.id for w in recorded.why] == list(pins)
        assert ("filter types", "fact") in recorded.stage("query.parse").info
        md = app.session.last_report[0].read_text("utf-8")
        assert "Filters asked for: types = `fact`" in md and "Pinned (why not?)" in md
    replay = make_replay_app([recorded], app.session.last_report[1])
    async with replay.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: replay.main() is not None and row_ids(
            replay.main().query_one(ResultsTable)), "the replayed hits")
        assert row_ids(replay.main().query_one(ResultsTable)) == [h.id for h in shown.hits]
        assert replay.pinned == pins


def test_the_bug_report_fits_an_issue_and_labels_its_first_run(engine):
    """A big bug report fits an issue body (the full trace goes to its .json twin), and its
    first run says whether the process was warm or cold."""
    from recall_tui.diagnostics.report import (
        ISSUE_BODY_LIMIT,
        build_report,
        render_markdown,
        report_to_json,
    )

    report = build_report(engine, QUERY, 0, PINNED_NOW, k=40, verbosity="full",
                          warm_process=True)
    md = render_markdown(report)
    assert len(report.trace.to_json(indent=2)) > ISSUE_BODY_LIMIT, "the premise: a big trace"
    assert len(md) <= ISSUE_BODY_LIMIT
    assert "The full trace is in the report's .json twin" in md
    assert "first (warm process) run" in md and "| cold |" not in md
    assert report.trace.to_dict() in __import__("json").loads(report_to_json(report))["traces"]
    # a small report keeps the trace in its collapsed block, and a cold one says cold
    small = build_report(engine, QUERY, 0, PINNED_NOW)
    text = render_markdown(small)
    assert "Full trace JSON" in text and "cold run" in text
