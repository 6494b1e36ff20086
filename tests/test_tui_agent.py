"""The Agent pane on real agent recalls: each record is written by running the real hook
command (`recall-tui hook prompt-submit --no-serve`) on a private vault copy, then the app
(real engine, `now` pinned) lists it, opens its recorded trace exactly, re-runs its prompt
under the configuration on screen side by side, judges into golden.jsonl, follows the log
live, says which preset the agent uses, and shows the trace's warnings."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Checkbox, Input, Static

from recall_tui.agent.active import read_active, write_active
from recall_tui.agent.log import read_agent_log
from recall_tui.engine.trace import trace_time
from recall_tui.tui.app import make_app
from recall_tui.tui.panes.agent import AgentPane
from recall_tui.tui.screens.edit import GradeScreen, SavePresetScreen
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.metrics import read_golden
from tests.conftest import PINNED_NOW
from tests.test_tui_app import QUERY, SIZE, new_app, screen_text, settle, wait_for_text
from tests.waiting import wait_until

PROMPT = "upgrade the billing database to postgres 16"
HOOK_TIMEOUT = 240


def payload(vault: Path, prompt: str, session: str) -> str:
    return json.dumps({"session_id": session, "transcript_path": "/tmp/t.jsonl",
                       "cwd": str(vault), "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt})


def hook_command(vault: Path, event: str = "prompt-submit") -> list[str]:
    return [sys.executable, "-m", "recall_tui", "hook", event, "--no-serve",
            "--vault", str(vault)]


def run_hook(vault: Path, prompt: str = PROMPT, session: str = "s1") -> dict:
    """Run the real prompt hook as Claude Code would; return the JSON it printed."""
    done = subprocess.run(hook_command(vault), input=payload(vault, prompt, session),
                          capture_output=True, text=True, timeout=HOOK_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def run_hook_async(vault: Path, prompt: str, session: str,
                         event: str = "prompt-submit", data: str | None = None) -> None:
    """The same, without blocking the app's event loop (the app is open meanwhile)."""
    proc = await asyncio.create_subprocess_exec(
        *hook_command(vault, event), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    data = data or payload(vault, prompt, session)
    out, err = await asyncio.wait_for(proc.communicate(data.encode()), HOOK_TIMEOUT)
    assert proc.returncode == 0, err.decode()
    json.loads(out)


def cells(table: VimTable) -> list[list[str]]:
    return [[c.plain if isinstance(c, Text) else str(c) for c in table.get_row_at(r)]
            for r in range(table.row_count)]


def column(table: VimTable, index: int) -> list[str]:
    return [row[index] for row in cells(table)]


def status_text(app) -> str:
    return str(app.main().query_one("#status", Static).render())


async def show_agent_pane(pilot, app) -> AgentPane:
    await settle(pilot, app)
    app.main().query_one("#results").focus()
    await pilot.press("0")
    await wait_until(pilot, lambda: app.agent.pane() is not None and app.agent.pane().loaded,
                     "the Agent pane to read the log")
    return app.agent.pane()


#: The tests write into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault


async def test_agent_pane_lists_opens_exactly_compares_and_judges(vault_copy, engine):
    run_hook(vault_copy)
    (rec,) = read_agent_log(vault_copy)
    assert rec.prompt == PROMPT and rec.injected_ids
    logged = rec.trace
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await show_agent_pane(pilot, app)
        table = pane.query_one("#agent-table", VimTable)
        await wait_until(pilot, lambda: table.row_count == 1, "the hook's recall to be listed")
        (row,) = cells(table)
        assert row[0] == rec.time.replace("T", " ")[:19]
        assert row[1] == "prompt" and row[2] == "s1" and row[3] == PROMPT
        assert row[4] == ", ".join(rec.injected_ids)
        assert row[5].startswith("hook")

        # enter: the recorded trace in the usual panes, as the agent got it (nothing re-runs)
        table.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.main().active_pane() == "recall",
                         "enter to open the recall view")
        assert app.trace is app.agent.opened[1]
        assert [(h.id, h.score) for h in app.trace.hits] == \
            [(h.id, h.score) for h in logged.hits]
        assert app.trace.config_hash == logged.config_hash
        results = app.main().query_one(ResultsTable)
        await wait_until(pilot, lambda: results.row_count == len(logged.hits),
                         "the results table to show the logged hits")
        shown = [results.coordinate_to_cell_key((r, 0)).row_key.value
                 for r in range(results.row_count)]
        assert shown == [h.id for h in logged.hits]
        assert app.main().query_one("#query", Input).value == PROMPT
        assert not app.recall_pending
        assert "AGENT RECALL" in status_text(app)

        # c: the same prompt under the preset on screen (memoria here), side by side, with a
        # pinned memory the agent did not get asked about
        missed = next(m for m in sorted(app.vault.memories)
                      if logged.hit(m) is None and m.startswith("billing"))
        app.pin(missed)
        app.set_preset("memoria")
        await wait_until(pilot, lambda: app.request.preset == "memoria" and not app.recall_pending,
                         "the preset change to apply")
        await pilot.press("0")
        await wait_until(pilot, lambda: app.main().active_pane() == "agent", "the Agent pane")
        table.focus()
        await pilot.press("c")
        await wait_until(pilot, lambda: pane.compare is not None and not pane.busy,
                         "the side-by-side re-run")
        expected = app.recalls.engine_for("memoria").recall(
            PROMPT, k=max(logged.k, app.recalls.engine_for("memoria").config.k), now=trace_time(logged.now), filters=app.recalls.recall_filters(
                app.request))
        a, b = pane.query_one("#agent-a", VimTable), pane.query_one("#agent-b", VimTable)
        assert [x.removesuffix(" ✓") for x in column(a, 2)] == [h.id for h in logged.hits]
        assert column(b, 2) == [h.id for h in expected.hits]
        for mid, move in zip(column(b, 2), column(b, 1), strict=True):
            assert move == pane.compare.diff.by_id[mid].label
        assert "preset memoria" in str(b.border_title)
        figures = str(pane.query_one("#agent-figures", Static).render())
        d = pane.compare.diff
        assert f"new {d.count('new')}" in figures and f"dropped {d.count('dropped')}" in figures
        assert f"pinned {missed}: agent missed it, now " in figures
        (why,) = pane.compare.now.why
        assert (f"#{why.rank}" if why.found else f"out at {why.stage}") in figures

        # J: judge the highlighted memory of B for the agent's prompt, into .recall/
        b.focus()
        await pilot.press("j")
        target = pane.selected_hit()
        assert target == expected.hits[1].id
        assert PROMPT not in [q.query for q in read_golden(vault_copy / "golden.jsonl")]
        golden = vault_copy / ".recall" / "golden.jsonl"  # J writes only under .recall/
        await pilot.press("J")
        await wait_until(pilot, lambda: isinstance(app.screen, GradeScreen), "the judge dialog")
        await pilot.press("3")

        def judged():
            return {q.query: q.relevant for q in read_golden(golden)}.get(PROMPT)

        await wait_until(pilot, judged, "the judgement to be written to golden.jsonl")
        assert judged() == {target: 3}


async def test_a_recall_arrives_live_and_the_empty_state_says_how(vault_copy, engine):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await show_agent_pane(pilot, app)
        await wait_for_text(pilot, app, "no agent recalls yet")
        # the command with the vault's path (a long path is cut, and wraps at the screen's edge)
        text = await wait_for_text(pilot, app, "recall-tui hook install --vault")
        assert str(vault_copy)[:12] in text
        await run_hook_async(vault_copy, "who owns the billing database", "live-7")
        table = pane.query_one("#agent-table", VimTable)
        await wait_until(pilot, lambda: table.row_count == 1, "the live recall's row")
        assert cells(table)[0][2] == "live-7"
        await run_hook_async(vault_copy, PROMPT, "live-8")
        await wait_until(pilot, lambda: table.row_count == 2, "the second live recall")
        assert column(table, 2) == ["live-8", "live-7"]  # newest first
        assert column(table, 3) == [PROMPT, "who owns the billing database"]
        # a SessionStart lists _always-load/ and runs no recall: enter says so, opens nothing
        start = json.dumps({"session_id": "live-9", "transcript_path": "/tmp/t.jsonl",
                            "cwd": str(vault_copy), "hook_event_name": "SessionStart",
                            "source": "startup"})
        await run_hook_async(vault_copy, "", "live-9", "session-start", start)
        await wait_until(pilot, lambda: table.row_count == 3, "the session start's row")
        first = cells(table)[0]
        assert first[1] == "session start (startup)" and first[2] == "live-9"
        (rec,) = read_agent_log(vault_copy, session="live-9")
        assert first[4] == ", ".join(rec.injected_ids) and rec.injected_ids
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("runs no recall" in n.message
                                            for n in app._notifications),
                         "a notice that a session start runs no recall")
        assert app.agent.opened is None and app.main().active_pane() == "agent"


async def test_saving_a_preset_makes_it_the_agents_and_the_status_says_so(vault_copy, engine):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "agent uses" not in status_text(app)  # no active.json: default, as on screen
        app.main().query_one("#results").focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: app.tuning.pane() is not None
                         and app.tuning.pane().config is not None, "the tuning pane")
        assert app.tuning.pane().knobs.edit_knob("k", "7")
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen),
                         "the save dialog")
        await pilot.press(*"agent-tuned")
        # making it the agent's is its own choice in the dialog (issue 22), off by default
        app.screen.query_one("#preset-activate", Checkbox).value = True
        app.screen.query_one("#preset-gate", Checkbox).value = False  # gated: test_tui_judge_set
        await pilot.press("enter")
        await wait_until(pilot, lambda: read_active(vault_copy).preset == "agent-tuned",
                         "the saved preset to become the active one")
        assert json.loads((vault_copy / ".recall" / "active.json").read_text())["set_by"] == "tui"
        await wait_until(pilot, lambda: "agent uses preset agent-tuned" in status_text(app),
                         "the status line to name the agent's preset")
        # changed elsewhere (`recall-tui preset use`): the status line follows the file
        write_active(vault_copy, preset="default", set_by="preset use")
        await wait_until(pilot, lambda: "agent uses" not in status_text(app),
                         "the status line to see the agent back on the preset on screen")
        write_active(vault_copy, preset="memoria", set_by="preset use")
        await wait_until(pilot, lambda: "agent uses preset memoria" in status_text(app),
                         "the status line to follow active.json")
        # the active preset's file deleted (active.json untouched): the agent recalls with
        # `default`, and the status line says so
        from recall_tui.agent.active import _preset_file
        write_active(vault_copy, preset="agent-tuned", set_by="preset use")
        await wait_until(pilot, lambda: "agent uses preset agent-tuned" in status_text(app),
                         "the status line to name the saved preset again")
        saved = _preset_file(vault_copy, "agent-tuned")
        assert saved is not None
        saved.unlink()
        await wait_until(pilot, lambda: "active preset 'agent-tuned'" in status_text(app)
                         and "not found" in status_text(app), "the missing-preset warning")
        assert app.agent.active.preset == "default"


async def test_trace_warnings_show_in_the_status_line(vault_copy, engine):
    app = make_app(vault_copy, now=PINNED_NOW, engine=engine, query="postgres type:decsion")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        warnings = app.trace.warnings()
        assert warnings, "the engine should warn about the unknown type"
        await wait_until(pilot, lambda: f"⚠ {warnings[0][:40]}" in status_text(app),
                         "the warning in the status line")


def test_the_tui_starts_with_the_vaults_active_configuration(bare_vault_copy, capsys):
    from recall_tui.cli.tui_cmd import _active_or_flags

    vault = bare_vault_copy
    assert _active_or_flags(vault, None, None) == (None, None)  # no active.json: the config's
    write_active(vault, preset="memoria", set_by="preset use")
    assert _active_or_flags(vault, None, None) == ("memoria", None)
    write_active(vault, embedder="none", set_by="preset use")
    assert _active_or_flags(vault, None, None) == ("memoria", "none")
    assert _active_or_flags(vault, "abmind", "local") == ("abmind", "local")  # flags win
    write_active(vault, preset="gone-away", set_by="preset use")
    assert _active_or_flags(vault, None, None) == (None, "none")
    assert "gone-away" in capsys.readouterr().err


async def test_the_agent_pane_shows_the_injected_text_and_c_works_after_o_and_0(engine):
    """The Agent pane shows the exact text the agent got, markup literally, and `c` re-runs it
    side by side after `o` and `0`."""
    from recall_tui.agent.log import AgentRecall, append_recall

    root = engine.vault.root
    trace = engine.recall(QUERY, now=PINNED_NOW)
    text = "<memory id=\"x\">[bold]literal[/bold] text\nsecond line</memory>"
    append_recall(root, AgentRecall(
        id="issue22rec", time="2026-11-21T09:00:00.000Z", served_by="hook",
        event="UserPromptSubmit", session_id="s22", prompt=QUERY, preset="default",
        config_hash=trace.config_hash, injected_ids=[h.id for h in trace.hits[:2]],
        injected_text=text, path="in-process", trace_dict=trace.to_dict()))
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("o")
        await settle(pilot, app)
        await pilot.press("0")
        await wait_until(pilot, lambda: app.main().query("#agent-table")
                         and app.main().query_one("#agent-table").row_count, "the recall")
        await wait_until(pilot, lambda: "[bold]literal[/bold] text" in screen_text(app),
                         "the injected text, literally")
        assert "second line" in screen_text(app)
        assert app.focused.id == "agent-table"
        await pilot.press("c")
        pane = app.main().query_one("#pane-agent")
        await wait_until(pilot, lambda: pane.compare is not None and not pane.busy,
                         "c: the side-by-side re-run")
