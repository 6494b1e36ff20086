"""The Tuning pane's tune tab (`recall-tui tune` from the UI), `J` writing to the queries file
on screen, and the panes a replay cannot show. Driven with `run_test` on the planted vault of
tests/test_tune.py (30 judged queries whose base preset ranks a distractor first; keyword
channels only, `--embedder none`, so a search takes seconds) with the real engine and `now`
pinned.

Every figure the tab shows is checked against a `TuneResult` the test asks `tune` for itself
with the same arguments (the search is deterministic for a seed); applying a row is checked
against `apply_changes`; every write is checked on disk.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Button, Input, Static

from recall_tui.cli import tune as tune_cli
from recall_tui.engine import open_engine
from recall_tui.engine.config import load_preset
from recall_tui.tui.app import make_app
from recall_tui.tui.keymap import all_bindings
from recall_tui.tui.panes.tuning import TuningPane, knob_text
from recall_tui.tui.panes.tuning.tune import TUNE_BUDGET, TUNE_FOLDS, TUNE_SEED
from recall_tui.tui.replay import LIVE_PANES, NOT_IN_REPLAY, UnavailablePane, make_replay_app
from recall_tui.tui.screens.dialogs import ConfirmScreen
from recall_tui.tui.screens.edit import GradeScreen, SavePresetScreen
from recall_tui.tui.settings import Settings
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.metrics import read_golden
from recall_tui.tuning.tune import TuneVault, tune
from recall_tui.tuning.tune_space import apply_changes, describe
from tests.conftest import PINNED_NOW
from tests.test_tui_app import screen_text, settle, wait_for_text
from tests.test_tune import BASE_TOML, planted_vault
from tests.waiting import wait_until

SIZE = (140, 44)
PRESET = "title4"
#: A budget that keeps the search busy for minutes: time enough to see it run and cancel it.
LONG = 3000


@pytest.fixture()
def planted(tmp_path):
    """The planted vault with its base saved as the vault's preset `title4`, and the real
    engine (keyword channels only) on it."""
    root = tmp_path / "planted"
    qfile, _base_file = planted_vault(root)
    presets = root / ".recall" / "presets"
    presets.mkdir(parents=True, exist_ok=True)
    (presets / f"{PRESET}.toml").write_text(BASE_TOML, encoding="utf-8")
    base = load_preset(PRESET, root)
    engine = open_engine(root, config=base, preset=PRESET, embedder="none")
    yield root, qfile, base, engine
    engine.index.close()


def new_app(engine, **kw):
    engine.clear_cache()
    return make_app(engine.vault.root, now=PINNED_NOW, preset=PRESET, engine=engine, **kw)


def plain(value) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def rows(table: VimTable) -> list[list[str]]:
    return [[plain(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


def fig(x) -> str:
    return "—" if x is None else f"{x:.3f}"


async def open_pane(pilot, app, key: str) -> TuningPane:
    """The user's path: the vault open, a tuning key pressed from the hits."""
    await settle(pilot, app)
    app.main().query_one("#results").focus()
    await pilot.press(key)
    if key == "T":
        await confirm(pilot, app)
    await wait_until(pilot, lambda: app.main().query(TuningPane), "the tuning pane")
    pane = app.main().query_one(TuningPane)
    await wait_until(pilot, lambda: pane.config is not None, "the pane's state")
    return pane


async def confirm(pilot, app) -> None:
    """The tune key asks first (issue 22: a stray key started minutes of work): say yes."""
    await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirmation")
    await pilot.press("y")
    await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "it to close")


def set_fields(pane: TuningPane, **values: str) -> None:
    """Type the tune settings (the tab's fields exist once the pane is built)."""
    for name, value in values.items():
        pane.query_one(f"#tune-{name}", Input).value = value


def reference(engine, qfile: Path, base, budget: int, seed: int, knobs: tuple[str, ...] = ()):
    """The search the tab should have run, asked of the headless module directly."""
    label = Path(engine.vault.root).resolve().name
    return tune([TuneVault(engine, read_golden(qfile), label)], base, base_name=PRESET,
                budget=budget, folds=TUNE_FOLDS, seed=seed, k=10, now=PINNED_NOW, knobs=knobs)


def test_tab_defaults_are_the_commands():
    parser = argparse.ArgumentParser()
    tune_cli.add_arguments(parser)
    d = parser.parse_args([])
    assert (TUNE_BUDGET, TUNE_FOLDS, TUNE_SEED) == (d.budget, d.folds, d.seed)


def test_tune_bindings_are_listed_remappable_and_in_the_palette():
    ids = {b.id: b for b in all_bindings({"app.tune": "ctrl+t"})}
    assert ids["app.tune"].keys == "ctrl+t" and ids["app.tune"].default == "T"
    assert ids["tuning.cancel_tune"].default == "escape"


async def test_tune_shows_the_result_of_tune_and_applies_a_row(planted):
    root, qfile, base, engine = planted
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, app, "T")  # the tune key starts a search: the defaults
        assert pane.query_one("#tuning-tabs").active == "tune-tune"
        await wait_until(pilot, lambda: pane.tune.state == "done", "the search to end")
        assert pane.tune.request.budget == TUNE_BUDGET
        ref = reference(engine, qfile, base, TUNE_BUDGET, TUNE_SEED)
        assert pane.tune.result.to_json() == ref.to_json()  # the tab holds tune's own result
        # the paired test, as the command prints it; the planted fix found on held-out queries
        cmp_rows = {r[0]: r for r in rows(pane.query_one("#tune-compare", VimTable))}
        for name in ("recall", "mrr", "ndcg"):
            mc = ref.comparison.metrics[name]
            assert cmp_rows[name] == [name, fig(mc.baseline_mean), fig(mc.candidate_mean),
                                      f"{mc.mean_delta:+.3f}", str(mc.wins), str(mc.losses),
                                      str(mc.ties), f"{mc.sign_p:.3g}",
                                      f"{mc.randomisation_p:.3g}"]
        assert cmp_rows["mrr"][1:3] == ["0.500", "1.000"]
        board = rows(pane.query_one("#tune-board", VimTable))
        assert [r[1:4] + [r[5]] for r in board] == [
            [f"{c.objective:.3f}", fig(c.means["recall"]), fig(c.means["mrr"]),
             describe(c.changes)] for c in ref.leaderboard]
        assert board[0][4] == ", ".join(str(f.index) for f in ref.folds
                                        if f.changes == ref.leaderboard[0].changes) or "—"
        folds = rows(pane.query_one("#tune-folds-table", VimTable))
        assert folds[:-1] == [[str(f.index), str(f.train), str(f.test), fig(f.base["recall"]),
                               fig(f.heldout["recall"]), fig(f.base["mrr"]),
                               fig(f.heldout["mrr"]), describe(f.changes)] for f in ref.folds]
        assert folds[-1][3:7] == [fig(ref.fold_mean_base["recall"]),
                                  fig(ref.fold_mean["recall"]),
                                  fig(ref.fold_mean_base["mrr"]), fig(ref.fold_mean["mrr"])]
        summary = str(pane.query_one("#tune-summary", Static).render())
        assert f"chosen on all queries: {describe(ref.changes)}" in summary
        assert f"{ref.evaluated} configurations run" in summary
        status = str(pane.query_one("#tune-status", Static).render())
        assert str(qfile) in status and f"budget {TUNE_BUDGET}" in status

        # other settings, typed in the tab; enter in a field starts the search again
        set_fields(pane, budget="40", seed="7")
        pane.query_one("#tune-seed", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane.tune.state == "done"
                         and pane.tune.request.seed == 7, "the second search")
        ref = reference(engine, qfile, base, 40, 7)
        assert pane.tune.result.to_json() == ref.to_json()

        # enter on a row puts that configuration on the knobs on screen
        table = pane.query_one("#tune-board", VimTable)
        table.focus()
        row = 1 if len(ref.leaderboard) > 1 else 0
        table.move_cursor(row=row, animate=False)
        await wait_until(pilot, lambda: table.cursor_row == row, "the cursor on the row")
        await pilot.press("enter")
        chosen = apply_changes(base, ref.leaderboard[row].changes)
        await wait_until(pilot, lambda: pane.config == chosen, "the row on the knobs")
        assert pane.base == base  # the knobs show it as a change from the start
        knobs = pane.query_one("#knob-table", VimTable)
        for path, value in ref.leaderboard[row].changes:
            assert plain(knobs.get_cell(path, "value")) == knob_text(value), path
        # and S saves it as a preset (presets_io, through the save dialog)
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, SavePresetScreen), "the dialog")
        app.screen.query_one("#preset-name", Input).value = "planted-fix"
        await pilot.press("enter")
        saved = root / ".recall" / "presets" / "planted-fix.toml"
        await wait_until(pilot, saved.exists, "the preset file")
        loaded = load_preset("planted-fix", root)
        assert loaded == chosen.with_value("description", loaded.description)


async def test_progress_cancel_and_a_responsive_ui(planted):
    root, qfile, base, engine = planted
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, app, "M")
        set_fields(pane, budget=str(LONG))
        app.main().query_one("#results").focus()
        await pilot.press("T")
        await confirm(pilot, app)
        await wait_until(pilot, lambda: pane.tune.busy, "the search to start")
        # the status line shows the recalls done out of the total, as the command's bar
        await wait_until(pilot, lambda: pane.tune.progress[0] > 0, "some progress")
        await wait_until(pilot, lambda: f"/ {pane.tune.progress[1]:,} recalls" in str(
            pane.query_one("#tune-status", Static).render()), "the progress line")
        assert "esc cancels" in str(pane.query_one("#tune-status", Static).render())
        # the UI is not blocked: a recall typed now is answered while the search runs
        first = read_golden(qfile)[0].query
        field = app.main().query_one("#query", Input)
        field.focus()
        field.insert_text_at_cursor(first)
        await settle(pilot, app)
        assert app.trace is not None and app.trace.query == first
        assert pane.tune.busy
        # the tune key again does not start a second search; escape in the pane cancels
        app.main().query_one("#results").focus()
        await pilot.press("T")
        await wait_until(pilot, lambda: any("a tune is running" in str(n.message)
                                            for n in app._notifications), "the notice")
        assert app.main().active_pane() == "tuning"
        pane.query_one("#tune-board", VimTable).focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: pane.tune.state == "cancelled" and not pane.tune.busy,
                         "the cancel")
        await wait_until(pilot, lambda: all(w.is_finished for w in app.workers
                                            if w.group == "tune"), "the worker to end")
        assert pane.tune.result is None
        assert pane.config == base  # nothing changed
        assert "tune cancelled after" in str(pane.query_one("#tune-status", Static).render())


async def test_a_remapped_key_and_bad_settings(planted):
    root, qfile, base, engine = planted
    app = new_app(engine, settings=Settings(keymap={"app.tune": "ctrl+t"}))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, app, "M")
        assert any(c.name.startswith("Tune: search the knobs") and "(ctrl+t)" in c.name
                   for c in app.palette_commands())
        set_fields(pane, folds="1", budget=str(LONG))
        app.main().query_one("#results").focus()
        await pilot.press("ctrl+t")
        await confirm(pilot, app)
        await wait_until(pilot, lambda: pane.tune.state == "failed", "the refusal")
        assert "folds must be at least 2" in str(pane.query_one("#tune-status", Static).render())
        await wait_for_text(pilot, app, "start (ctrl+t)")
        set_fields(pane, folds="3")
        pane.query_one("#tune-start", Button).press()
        await wait_until(pilot, lambda: pane.tune.busy, "the search to start")
        await wait_for_text(pilot, app, "cancel (esc)")
        pane.query_one("#tune-start", Button).press()  # the same button cancels
        await wait_until(pilot, lambda: pane.tune.state == "cancelled", "the cancel")
        await wait_for_text(pilot, app, "start (ctrl+t)")


async def test_the_knobs_field_restricts_the_search(planted):
    root, qfile, base, engine = planted
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, app, "M")
        # a pattern that matches no knob is refused with its name and the knobs there are
        set_fields(pane, budget="30", globs="keyword.*, fuse.wieghts.*")
        pane.query_one("#tune-start", Button).press()
        await wait_until(pilot, lambda: pane.tune.state == "failed", "the refusal")
        status = " ".join(str(pane.query_one("#tune-status", Static).render()).split())
        assert "'fuse.wieghts.*' matches no knob" in status and "fuse.weights.keyword" in status
        assert pane.tune.result is None
        # glob patterns, comma-separated, as `recall-tui tune --knobs`; enter in the field starts
        set_fields(pane, globs="keyword.title, hops.*")
        pane.query_one("#tune-globs", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane.tune.state == "done", "the search to end")
        assert pane.tune.request.knobs == ("keyword.title", "hops.*")
        ref = reference(engine, qfile, base, 30, TUNE_SEED, ("keyword.title", "hops.*"))
        assert pane.tune.result.to_json() == ref.to_json()
        assert ref.searched == ("keyword.title", "hops.enabled", "hops.factor")
        assert all(p in ref.searched for c in ref.leaderboard for p, _v in c.changes)
        status = str(pane.query_one("#tune-status", Static).render())
        assert "knobs keyword.title,hops.*" in status
        summary = str(pane.query_one("#tune-summary", Static).render())
        assert "knobs keyword.title,hops.* only" in summary


async def test_judge_writes_to_the_queries_file_on_screen(planted, tmp_path):
    root, qfile, base, engine = planted
    other = tmp_path / "other.jsonl"
    first = read_golden(qfile)[0]
    other.write_text(json.dumps({"query": first.query, "relevant": {}}) + "\n", "utf-8")
    golden_before = qfile.read_bytes()
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("M")
        await wait_until(pilot, lambda: app.main().query(TuningPane)
                         and app.main().query_one(TuningPane).tab_shown("tune-golden"),
                         "the golden tab")
        await pilot.pause()  # the tab's own focus (its list, after a refresh) is given first
        pane = app.main().query_one(TuningPane)
        field = pane.query_one("#golden-file", Input)
        field.focus()
        await wait_until(pilot, lambda: app.focused is field, "the file field focused")
        field.value = str(other)
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane.golden.path == other and not pane.golden.busy,
                         "the other file loaded")
        query = app.main().query_one("#query", Input)
        query.focus()
        query.insert_text_at_cursor(first.query)
        await settle(pilot, app)
        app.main().action_show_pane("recall")
        app.main().query_one("#results").focus()
        hit = app.trace.hits[0].id
        await pilot.press("J")
        await wait_until(pilot, lambda: isinstance(app.screen, GradeScreen), "the grade dialog")
        await pilot.press("2")
        await wait_until(pilot, lambda: not isinstance(app.screen, GradeScreen), "the grade")
        assert qfile.read_bytes() == golden_before  # the vault's golden.jsonl is untouched
        assert read_golden(other)[0].relevant == {hit: 2}
        # the status line keeps it (its end may be cut at the screen's width: a long path)
        assert app.status_text.startswith(f"judged {hit} (2) in {str(other)[:20]}")
        await wait_for_text(pilot, app, f"judged {hit} (2) in ")


async def test_replay_shows_stand_ins_for_the_live_panes(planted):
    root, qfile, base, engine = planted
    traces = [engine.recall(q.query, now=PINNED_NOW) for q in read_golden(qfile)[:2]]
    app = make_replay_app(traces, "recording.jsonl")
    files = lambda: {p: p.read_bytes() for p in root.rglob("*")  # noqa: E731
                     if p.is_file() and "index" not in p.name}
    before = files()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.trace is traces[0] and app.main() is not None,
                         "the replay on screen")
        app.main().query_one("#results").focus()
        for key, name in (("0", "agent"), ("9", "tuning")):
            await pilot.press(key)
            await wait_for_text(pilot, app, f"{name}: {NOT_IN_REPLAY}")
            assert isinstance(app.main().pane_widget(name), UnavailablePane)
            assert LIVE_PANES[name].split(":")[0][:40] in screen_text(app)
        # every key of the live panes says why it does nothing here, and changes nothing
        for key in ("t", "D", "M", "T", "S", "X", "J", "E", "e", "c", "O"):
            app.main().query_one("#results").focus()
            # by identity, not by count: a notice expires after a few seconds, and a loaded
            # machine can take that long between keys, so the count can go down
            seen = {x.identity for x in app._notifications}
            await pilot.press(key)
            await pilot.pause()
            if key in ("c", "O"):  # the Agent pane's own keys: no pane, no binding
                assert not app.main().query("AgentPane")
                continue
            if key in ("t", "D", "M"):  # they show the stand-in
                await wait_until(pilot, lambda: app.main().active_pane() == "tuning", key)
                continue
            fresh = lambda seen=seen: [x for x in app._notifications  # noqa: E731
                                       if x.identity not in seen]
            await wait_until(pilot, fresh, f"{key}'s notice")
            assert "read only" in str(fresh()[-1].message)
        assert app.trace is traces[0]
    assert files() == before

