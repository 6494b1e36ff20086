"""Issue 22 ("the debugger as a newcomer meets it, round two"), driven through the app with
the real engine (local embedder) on a copy of the sample vault, `now` pinned. Each test failed
before its fix.
"""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Input, Select

from recall_tui.engine import open_engine
from recall_tui.tui.app import RecallApp, make_app
from recall_tui.tui.replay import make_replay_app
from recall_tui.tui.screens.dialogs import ConfirmScreen
from recall_tui.tui.screens.edit import SavePresetScreen
from recall_tui.tui.settings import Settings
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from tests.conftest import PINNED_NOW
from tests.test_tui_app import SIZE, cell_text, screen_text, settle
from tests.waiting import wait_until

QUERY = "postgres upgrade"


@pytest.fixture()
def engine(vault_copy):
    """A private copy: these tests save presets and judgements into the vault."""
    return open_engine(vault_copy, preset="default", embedder="local")


def new_app(engine, **kw) -> RecallApp:
    engine.clear_cache()
    return make_app(engine.vault.root, now=PINNED_NOW, engine=engine, **kw)


def preset_options(app: RecallApp) -> list[str]:
    select = app.main().query_one("#preset", Select)
    return [str(value) for _label, value in select._options]


async def open_knobs(pilot, app: RecallApp):
    app.main().query_one("#results").focus()
    await pilot.press("t")
    await wait_until(pilot, lambda: app.tuning.pane() is not None
                     and app.tuning.pane().config is not None, "the tuning pane")
    return app.tuning.pane()


# --- the crash ---------------------------------------------------------------------------------


async def test_a_saved_preset_can_be_chosen_with_o_and_the_palette(engine, vault_copy):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        pane = await open_knobs(pilot, app)
        assert pane.knobs.edit_knob("k", "7")
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen),
                         "the save dialog")
        # saving is not deploying: the dialog says what the held-out test knows (no tune
        # ran: nothing) and asks separately, unticked, whether the agent should use it
        dialog = app.screen
        await wait_until(pilot, lambda: dialog.query("#preset-activate"), "the dialog drawn")
        assert "no held-out test" in str(dialog.query_one("#preset-verdict").render())
        assert dialog.query_one("#preset-activate", Checkbox).value is False
        await pilot.press(*"mine", "enter")
        saved = vault_copy / ".recall" / "presets" / "mine.toml"
        await wait_until(pilot, saved.exists, "the preset file")
        assert not (vault_copy / ".recall" / "active.json").exists()
        assert "mine" in preset_options(app)
        # the palette's route
        app.set_preset("mine")
        await wait_until(pilot, lambda: app.trace is not None and app.trace.preset == "mine",
                         "a recall under the saved preset")
        assert app.main().query_one("#preset", Select).value == "mine"
        assert app.trace.k == 7
        # o cycles through it too (back to it after a full round)
        app.main().query_one("#results").focus()
        for _ in range(len(app.presets)):
            await pilot.press("o")
            await settle(pilot, app)
        assert app.request.preset == "mine" and app.trace.preset == "mine"
        # a preset deleted meanwhile leaves the select (the current one stays)
        (vault_copy / ".recall" / "presets" / "mine.toml").unlink()
        await pilot.press("o")
        await settle(pilot, app)
        assert "mine" not in app.presets
        await pilot.press("o")
        await settle(pilot, app)
        assert "mine" not in preset_options(app)
        assert app.return_code is None


# --- stale and mixed panes -----------------------------------------------------------------------


def rendered_again(app: RecallApp) -> str:
    """The screen after every widget was told to paint itself from scratch."""
    for widget in app.screen.query("*"):
        widget.refresh()
    return screen_text(app)


async def test_after_another_preset_every_box_shows_the_new_trace(engine):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        main = app.main()
        gone = app.trace.stage("filter").dropped[0].id
        app.pin(gone)
        await settle(pilot, app)
        main.query_one(ResultsTable).focus()
        first = app.trace
        await pilot.press("2", "o")
        await wait_until(pilot, lambda: app.trace is not None and app.trace is not first
                         and app.trace.preset != first.preset, "the recall under the next preset")
        await settle(pilot, app)
        await pilot.press("1")
        await pilot.pause()
        trace = app.trace
        assert f"preset {trace.preset}" in str(main.query_one("#status").render())
        wf = main.query_one(Waterfall)
        assert wf.trace is trace
        for r, stage in enumerate(s for s in trace.stages if s.name in
                                  [k.value for k in wf.rows]):
            assert cell_text(wf, [k.value for k in wf.rows].index(stage.name), "n") == \
                str(len(stage.candidates)), (r, stage.name)
        pinned = main.query_one(PinnedTable)
        answer = cell_text(pinned, 0, "answer")
        w = trace.why_of(gone)
        assert w is not None and w.stage in answer if w.stage else True
        tree = main.query_one(ExplanationTree)
        assert trace.hits and tree._shown is not None
        assert tree._shown == trace.hit(app.current_id)
        # and what is painted is what the widgets hold (no row left from the other trace)
        await pilot.pause()
        shown = screen_text(app)
        await pilot.pause()
        assert shown == rendered_again(app)


# --- timings count runs, not cache hits -----------------------------------------------------------


async def test_a_cache_hit_adds_no_stage_times(engine):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.trace.config["cache"]["enabled"], "the premise: the default preset caches"
        field = app.main().query_one("#query", Input)
        field.value = "billing"
        await settle(pilot, app)
        assert not app.trace.cache_hit
        runs = {name: len(ms) for name, ms in app.timings.items()}
        field.value = QUERY
        await settle(pilot, app)
        assert app.trace.cache_hit, "the same query again is a cache hit"
        # the hit ran the parse and the cache lookup; every later stage is the cached run's
        # record, whose time was counted when it ran
        assert len(app.timings["cache"]) == runs["cache"] + 1
        for name in ("fuse", "keyword", "filter"):
            assert len(app.timings[name]) == runs[name], name
    first = engine.recall("vegetarian diet", now=PINNED_NOW)
    again = engine.recall("vegetarian diet", now=PINNED_NOW)
    assert again.cache_hit
    replay = make_replay_app([first, again], "recording.jsonl")
    assert len(replay.timings["fuse"]) == 1 and len(replay.timings["cache"]) == 2


# --- the focus model ---------------------------------------------------------------------------

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


async def test_the_focus_model(engine):
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


async def test_a_stray_tune_key_asks_first(engine):
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


async def test_loading_a_queries_file_moves_focus_to_its_list(engine, vault_copy):
    qfile = vault_copy / "other.jsonl"
    qfile.write_text('{"query": "postgres upgrade", "relevant": {"billing-db-postgres16": 2},'
                     ' "category": 3}\n', encoding="utf-8")
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("M")
        await wait_until(pilot, lambda: app.tuning.pane() is not None
                         and app.tuning.pane().config is not None, "the golden tab")
        pane = app.tuning.pane()
        path = pane.query_one("#golden-file", Input)
        path.focus()
        path.value = str(qfile)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is not None
                         and app.focused.id == "golden-table", "the golden list focused")
        await wait_until(pilot, lambda: pane.golden.current is not None
                         or pane.golden.error, "the file scored")
        # an integer category is accepted (it is a label)
        assert not pane.golden.error, pane.golden.error


# --- the settings bar from the keyboard -----------------------------------------------------------


async def test_the_settings_bar_from_the_keyboard_and_the_palette(engine):
    app = new_app(engine, query=QUERY, settings=Settings(keymap={"app.toggle_inbox": "ctrl+t"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        main = app.main()
        main.query_one("#results").focus()
        await pilot.press("K")
        assert app.focused.id == "k"
        await pilot.press("3", "enter")
        await settle(pilot, app)
        assert app.trace.k == 3 and app.focused.id == "query"
        # tab goes from setting to setting; escape goes back to the query
        await pilot.press("escape", "N")
        assert app.focused.id == "now"
        await pilot.press("tab")
        assert app.focused.id == "as-of"
        await pilot.press("escape")
        assert app.focused.id == "query"
        # the checkboxes toggle from anywhere (remapped here: every binding has an id)
        await pilot.press("escape", "ctrl+t")
        await settle(pilot, app)
        assert app.request.include_inbox and app.main().query_one("#inbox").value
        await pilot.press("H")
        await settle(pilot, app)
        assert app.request.include_superseded
        names = [c.name for c in app.palette_commands()]
        for wanted in ("Settings: k (K)", "Settings: now (N)", "Settings: as-of (A)",
                       "Settings: type filter (F)", "Settings: preset (,)",
                       "Settings: include inbox on/off (ctrl+t)",
                       "Settings: include superseded on/off (H)"):
            assert wanted in names, wanted


# --- side by side at one depth ---------------------------------------------------------------------


async def test_side_by_side_compares_at_one_depth(engine):
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        pane = await open_knobs(pilot, app)
        assert engine.config.k == 5, "the premise: the default preset asks for 5"
        assert pane.knobs.edit_knob("k", "10")
        await pilot.press("D")
        pane.query_one("#side-preset", Select).value = "default"
        await wait_until(pilot, lambda: pane.knobs.runs is not None and not pane.knobs.busy
                         and pane.knobs.runs.side_name == "default"
                         and pane.knobs.runs.current.k == 10, "the two sides")
        runs = pane.knobs.runs
        assert runs.side.k == runs.current.k == runs.side_diff.k == 10
        await wait_until(pilot, lambda: "both at k 10" in str(
            pane.query_one("#side-figures").render()), "the depth on screen")


# --- the bug report fits in an issue, and its first run says what it was ---------------------------


def test_the_bug_report_fits_an_issue_and_labels_its_first_run(engine):
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


# --- recall-tui demo ---------------------------------------------------------------------------------


def test_demo_opens_a_private_copy_of_the_bundled_sample(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from recall_tui.cli import main
    from recall_tui.cli.demo import SAMPLE, demo_folder, pack_sample

    root = Path(__file__).resolve().parent.parent
    # the shipped archive is the tracked sample-vault/ (re-pack it after changing the sample)
    assert SAMPLE.read_bytes() == pack_sample(root / "sample-vault")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert main(["demo", "--path-only"]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert folder == demo_folder() and folder.is_relative_to(tmp_path)
    tracked = sorted(p.relative_to(root / "sample-vault") for p in (root / "sample-vault")
                     .rglob("*") if p.is_file() and ".recall" not in p.parts)
    copied = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert copied == tracked
    # the copy is the user's: an edit stays until --fresh
    (folder / "golden.jsonl").write_text("", encoding="utf-8")
    assert main(["demo", "--path-only"]) == 0
    assert (folder / "golden.jsonl").read_text(encoding="utf-8") == ""
    assert main(["demo", "--path-only", "--fresh"]) == 0
    assert (folder / "golden.jsonl").read_bytes() == (root / "sample-vault" /
                                                      "golden.jsonl").read_bytes()


# --- knob values at 80x24 and 100x30 ------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_knob_values_show_on_small_terminals(engine, size):
    from tests.test_tui_app import cell_text as cell

    app = new_app(engine, query=QUERY)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await open_knobs(pilot, app)
        table = app.tuning.pane().query_one("#knob-table")
        await wait_until(pilot, lambda: table.row_count > 3 and table.size.width, "the knobs")
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).split("\n")
        top = table.content_region.y + 1  # under the header
        shown = 0
        for row in range(min(table.row_count, table.content_region.height - 2)):
            value = cell(table, row, "value")
            line = lines[top + row]
            assert value[:6] in line or value[:5] + "…" in line, (row, value, line)
            shown += 1
        assert shown >= 3


# --- the Agent pane shows the exact text the agent got -----------------------------------------------


async def test_the_agent_pane_shows_the_injected_text_and_c_works_after_o_and_0(engine):
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
