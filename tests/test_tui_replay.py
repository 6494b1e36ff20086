"""Replay: a recording made by the live app (real engine, private vault copy, `now` pinned)
opened with the replay app shows the same hits, waterfall rows and explanation as the live app
showed, refuses edits, says when the vault is not here, and `recall-tui replay FILE --print`
still prints from the command line."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from rich.text import Text
from textual.widgets import Input

from recall_tui.diagnostics.recording import read_recording
from recall_tui.engine import open_engine
from recall_tui.tui.app import make_app
from recall_tui.tui.replay import NOT_AVAILABLE, ReplayApp, TraceListScreen, make_replay_app
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tui.widgets.waterfall import Waterfall
from tests.conftest import PINNED_NOW
from tests.test_tui_app import (
    QUERY,
    SIZE,
    add_to_query,
    screen_text,
    settle,
    tree_labels,
    wait_for_text,
)
from tests.waiting import wait_until

QUERIES = ("postgres upgrade", " billing")


def rows(table) -> list[list[str]]:
    """Every cell of a table as plain text, row by row."""
    return [[c.plain if isinstance(c, Text) else str(c) for c in table.get_row_at(r)]
            for r in range(table.row_count)]


def rendered(app) -> dict[str, object]:
    main = app.main()
    return {"results": rows(main.query_one(ResultsTable)),
            "waterfall": rows(main.query_one(Waterfall)),
            "explain": tree_labels(main.query_one(ExplanationTree))}


@pytest.fixture()
def recording(vault_copy):
    """Makes (inside the test's event loop) a recording through the live app's record key;
    returns its path and what the UI showed for each recall."""
    engine = open_engine(vault_copy, preset="default", embedder="local")

    async def record():
        app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
        shown = []
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            app.main().query_one("#results").focus()
            await pilot.press("R")
            for q in QUERIES:
                await add_to_query(pilot, app, q)
                shown.append(rendered(app))
            app.main().query_one("#results").focus()
            await pilot.press("R")
        return app.session.recorder.path, shown

    return record


async def test_replay_shows_what_the_live_app_showed(recording):
    path, shown = await recording()
    traces = read_recording(path)
    assert [t.query for t in traces] == ["postgres upgrade", "postgres upgrade billing"]
    app = make_replay_app(traces, path)
    assert isinstance(app, ReplayApp) and app.engine is None and app.vault is not None
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: rendered(app) == shown[0],
                         "the first recorded trace drawn as the live app drew it")
        await wait_for_text(pilot, app, "trace 1 of 2")
        text = screen_text(app)
        assert "REPLAY" in text and "trace 1 of 2" in text
        assert str(path) in str(app.main().query_one("#replay-bar").content)  # the source
        app.main().query_one("#results").focus()
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: app.trace is traces[1] and rendered(app) == shown[1],
                         "the second recorded trace drawn as the live app drew it")
        assert app.main().query_one("#query", Input).value == traces[1].query
        assert "trace 2 of 2" in screen_text(app)
        # the vault is here: the memory pane shows the highlighted hit
        await pilot.press("2")
        await wait_for_text(pilot, app, traces[1].hits[0].title)
        # editing the query is refused: the recorded query stays, a notice says why
        app.main().query_one("#query", Input).focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: any("read only" in str(n.message)
                                            for n in app._notifications),
                         "the notice that a replay is read only")
        assert app.main().query_one("#query", Input).value == traces[1].query
        assert app.trace is traces[1]
        assert any("read only" in str(n.message) for n in app._notifications)


async def test_replay_without_the_vault_says_not_available(recording, tmp_path):
    path, shown = await recording()
    gone = str(tmp_path / "no-such-vault")
    traces = [dataclasses.replace(t, vault={**t.vault, "root": gone})
              for t in read_recording(path)]
    app = make_replay_app(traces, path)
    assert app.vault is None
    async with app.run_test(size=SIZE) as pilot:
        # the trace panes need no vault
        await wait_until(pilot, lambda: rendered(app) == shown[0],
                         "the first recorded trace drawn without the vault")
        app.main().query_one("#results").focus()
        for key, name in (("2", "memory"), ("4", "entities"), ("7", "vault")):
            await pilot.press(key)
            await wait_for_text(pilot, app, f"{name}: {NOT_AVAILABLE}")
        await pilot.press("5")  # MMR is drawn from the trace: no stand-in there
        await wait_until(pilot, lambda: app.main().active_pane() == "mmr"
                         and str(app.main().query_one("#mmr-head").content),
                         "the MMR pane drawn from the trace")
        assert f"mmr: {NOT_AVAILABLE}" not in screen_text(app)
        assert type(app.main().pane_widget("mmr")).__name__ == "MMRPane"


def test_replay_print_from_the_command_line(vault_copy):
    engine = open_engine(vault_copy, preset="default", embedder="local")
    trace = engine.recall("postgres upgrade", now=PINNED_NOW)
    f = vault_copy / ".recall" / "one.jsonl"
    f.write_text(trace.to_json() + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "recall_tui", "replay", str(f), "--print"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "#1 query 'postgres upgrade'" in proc.stdout
    assert trace.hits[0].id in proc.stdout


async def test_the_trace_list_opens_the_chosen_trace(engine):
    """The trace list (`L`) lists every trace of a recording and `enter` opens the chosen one."""
    traces = [engine.recall(q, now=PINNED_NOW) for q in (QUERY, "billing", "vegetarian diet")]
    app = make_replay_app(traces, "recording.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "L")
        await wait_until(pilot, lambda: isinstance(app.screen, TraceListScreen), "the trace list")
        table = app.screen.query_one("#trace-list", VimTable)
        assert table.row_count == len(traces)
        await pilot.press("j", "enter")
        await wait_until(pilot, lambda: app.index_at == 1, "trace 2 opened from the list")
        assert app.return_code in (None, 0)


@pytest.mark.fusion_max
async def test_replay_starts_where_brackets_step(engine):
    traces = [engine.recall(q, now=PINNED_NOW) for q in (QUERY, "billing")]
    app = make_replay_app(traces, "recording.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.main() is not None and isinstance(app.focused, VimTable),
                         "the replay screen with a table focused")
        await pilot.press("right_square_bracket")
        assert app.index_at == 1


@pytest.mark.fusion_max
def test_old_traces_without_the_cached_fusion_and_scaling_fields_still_read(engine):
    from recall_tui.engine.trace import Trace

    data = engine.recall(QUERY, now=PINNED_NOW).to_dict()
    for s in data["stages"]:
        s.pop("cached")
    for h in data["hits"]:
        h["explain"].pop("fusion")
        h["explain"].pop("scaling")
    old = Trace.from_dict(data)
    assert not any(s.cached for s in old.stages)
    assert all(h.explain.fusion == "" for h in old.hits)
    assert isinstance(Text(old.hits[0].title), Text)
