"""The tuning pane and the editors, driven with `run_test` on copies of the sample vault with
the real engine (local embedder) and `now` pinned.

Every figure on screen is checked against the headless module that should have produced it
(`compare.rank_deltas` / `diff_rankings`, `golden.run_golden`), computed here from traces the
test asks the engine for itself; every write is checked byte for byte on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static, TextArea

from recall_tui.engine import open_engine
from recall_tui.engine.config import load_preset
from recall_tui.tui.app import RecallApp
from recall_tui.tui.panes.tuning import GOLDEN_K, TuningPane
from recall_tui.tui.screens.edit import GradeScreen, RecallWhenScreen
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.compare import diff_rankings, rank_deltas
from recall_tui.tuning.golden import run_golden
from recall_tui.tuning.metrics import read_golden
from tests.conftest import PINNED_NOW
from tests.test_tui_app import new_app, set_query, settle
from tests.waiting import TIMEOUT, wait_until

SIZE = (140, 40)
QUERY = "postgres upgrade"
#: A judged paraphrase whose grade-3 answer the default preset misses (docs/tuning.md).
PARAPHRASE = "what fee do we pay for family pictures sitting offsite"
MISSED = "homelab-backup-restic-b2"


async def until(pilot, cond, timeout: float = TIMEOUT, what: str = "condition") -> None:
    """Poll `cond()` between pauses of the app (bounded; see tests/waiting.py)."""
    await pilot.pause()
    await wait_until(pilot, cond, what, timeout)


async def open_tuning(pilot, app: RecallApp, query: str, key: str = "t") -> TuningPane:
    await settle(pilot, app)
    field = app.main().query_one("#query", Input)
    field.focus()
    field.insert_text_at_cursor(query)
    await settle(pilot, app)
    app.main().query_one("#results").focus()
    await pilot.press(key)
    await until(pilot, lambda: bool(app.main().query(TuningPane)), what="tuning pane")
    pane = app.main().query_one(TuningPane)
    await until(pilot, lambda: pane.knobs.runs is not None and not pane.knobs.busy, what="tuned runs")
    return pane


async def open_knobs(pilot, app: RecallApp):
    """From the hits, `t`: the tuning pane on its knobs tab, its configuration loaded."""
    app.main().query_one("#results").focus()
    await pilot.press("t")
    await wait_until(pilot, lambda: app.tuning.pane() is not None
                     and app.tuning.pane().config is not None, "the tuning pane")
    return app.tuning.pane()


def cells(table: VimTable, column: str) -> dict[str, str]:
    """Row key -> plain text of one column."""
    return {row.value: str(table.get_cell(row, column)) for row in table.rows}


def recall_with(engine, query: str, config, k: int) -> object:
    """The query as the app runs it (same k, same pinned now), under `config`."""
    return engine.recall(query, k=k, now=PINNED_NOW, config=config)


async def set_knob(pilot, pane: TuningPane, path: str, value: str) -> None:
    """Select the knob's row, enter to reach the edit field, type, enter (the user's path)."""
    table = pane.query_one("#knob-table", VimTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(path), animate=False)
    await until(pilot, lambda: table.cursor_row == table.get_row_index(path), what=f"{path}'s row")
    await pilot.press("enter")
    field = pane.query_one("#knob-input", Input)
    await until(pilot, lambda: field.has_focus, what=f"{path}'s field focused")
    field.value = value
    await pilot.press("enter")


async def test_knob_change_reranks_and_delta_column_follows_compare(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_tuning(pilot, app, QUERY)
        base = engine.config
        assert pane.base == base and pane.config == base
        # every knob of the configuration has a row, grouped by stage
        table = pane.query_one("#knob-table", VimTable)
        assert {r.value for r in table.rows} >= {"fuse.rrf_k", "mmr.lam", "floor.min_score",
                                                 "hops.factor", "boosts.staleness.windows"}
        # a bad value is refused with a clear message and changes nothing
        await set_knob(pilot, pane, "fuse.rrf_k", "sixty")
        assert "expected a whole number" in str(pane.query_one("#knob-msg").render())
        assert pane.config == base
        # enter on a switch flips it: the keyword channel off changes the ranking
        table.focus()
        table.move_cursor(row=table.get_row_index("keyword.enabled"), animate=False)
        await until(pilot, lambda: table.cursor_row == table.get_row_index("keyword.enabled"),
                    what="the keyword.enabled row")
        await pilot.press("enter")
        await until(pilot, lambda: not pane.knobs.busy and pane.config != base, what="re-run")
        await until(pilot, lambda: not pane.knobs.busy)
        tuned = base.with_value("keyword.enabled", False)
        assert pane.config == tuned
        k = app.request.k
        before, after = recall_with(engine, QUERY, base, k), recall_with(engine, QUERY, tuned, k)
        assert [h.id for h in before.hits] != [h.id for h in after.hits]
        expected = {mid: m.label for mid, m in rank_deltas(before, after).items()}
        shown = cells(pane.query_one("#tuned-hits", VimTable), "delta")
        assert shown == expected
        assert [r.value for r in pane.query_one("#tuned-hits", VimTable).rows] == \
            [h.id for h in after.hits]
        # reset: back to the starting configuration, every delta "="
        await pilot.press("X")
        await until(pilot, lambda: not pane.knobs.busy and pane.config == base)
        await until(pilot, lambda: not pane.knobs.busy)
        assert set(cells(pane.query_one("#tuned-hits", VimTable), "delta").values()) == {"="}


async def test_side_by_side_shows_movements_and_figures(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_tuning(pilot, app, QUERY, key="D")
        pane.query_one("#side-preset", Select).value = "memoria"
        await until(pilot, lambda: not pane.knobs.busy and pane.knobs.runs.side_name == "memoria")
        a = recall_with(engine, QUERY, load_preset("memoria"), pane.config.k)
        b = recall_with(engine, QUERY, engine.config, pane.config.k)
        d = diff_rankings(a, b)
        assert pane.knobs.runs.side_diff.movements == d.movements
        figures = str(pane.query_one("#side-figures", Static).render())
        assert f"overlap@{d.k} {d.overlap:.2f}" in figures and f"RBO {d.rbo:.3f}" in figures
        assert f"new {d.count('new')}" in figures and f"dropped {d.count('dropped')}" in figures
        shown = cells(pane.query_one("#side-b", VimTable), "move")
        assert shown == {mid: d.by_id[mid].label for mid in d.b}
        assert d.a != d.b  # two presets that really disagree on this query


async def test_golden_pane_equals_run_golden(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_tuning(pilot, app, QUERY, key="M")
        await until(pilot, lambda: not pane.golden.busy and pane.golden.current is not None,
                    what="golden run")
        queries = read_golden(Path(engine.vault.root) / "golden.jsonl")
        ref = run_golden(engine, queries, engine.config, k=GOLDEN_K, now=PINNED_NOW)
        assert dict(pane.golden.current.means) == dict(ref.means)
        text = str(pane.query_one("#golden-summary", Static).render())
        assert f"recall@{GOLDEN_K} {ref.means['recall']:.3f}" in text
        assert f"nDCG@{GOLDEN_K} {ref.means['ndcg']:.3f}" in text
        # a knob change re-scores the set (debounced) against the unchanged baseline
        pane.knobs.edit_knob("vector.enabled", "off")
        await until(pilot, lambda: not pane.golden.busy
                    and pane.golden.current.config_hash != engine.config.hash(), what="re-score")
        tuned = run_golden(engine, queries, engine.config.with_value("vector.enabled", False),
                           k=GOLDEN_K, now=PINNED_NOW)
        assert dict(pane.golden.current.means) == dict(tuned.means)
        assert dict(pane.golden.baseline.means) == dict(ref.means)
        table = pane.query_one("#golden-table", VimTable)
        assert table.row_count == len(queries)


async def test_judging_a_hit_writes_only_that_line(vault_copy):
    eng = open_engine(vault_copy, preset="default", embedder="local")
    own = vault_copy / "golden.jsonl"  # the vault's own file: read, never written (issue 22)
    before = own.read_text("utf-8").split("\n")
    path = vault_copy / ".recall" / "golden.jsonl"  # J writes only under .recall/
    query = "BILL-2310"
    app = new_app(eng)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_tuning(pilot, app, query)
        await until(pilot, lambda: not pane.golden.busy)
        judged = cells(pane.query_one("#tuned-hits", VimTable), "judged")
        target = next(mid for mid, j in judged.items() if j == "unjudged")
        hits = pane.query_one("#tuned-hits", VimTable)
        hits.focus()
        hits.move_cursor(row=hits.get_row_index(target), animate=False)
        await pilot.press("J")
        await until(pilot, lambda: isinstance(app.screen, GradeScreen))
        await pilot.press("2")
        await until(pilot, lambda: not isinstance(app.screen, GradeScreen))
        after = path.read_text("utf-8").split("\n")
        assert own.read_text("utf-8").split("\n") == before
        # the judged set continues the vault's: every other line is the vault file's
        changed = [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y]
        assert len(changed) == 1
        obj = json.loads(after[changed[0]])
        assert obj["query"] == query and obj["relevant"][target] == 2
        await until(pilot, lambda: cells(pane.query_one("#tuned-hits", VimTable),
                                         "judged").get(target) == "grade 2", what="judged col")


async def test_recall_when_preview_save_and_conflict(vault_copy):
    eng = open_engine(vault_copy, preset="default", embedder="local")
    memory = eng.vault.get(MISSED)
    file = vault_copy / memory.path
    original = file.read_text("utf-8")
    app = new_app(eng)
    async with app.run_test(size=SIZE) as pilot:
        await open_tuning(pilot, app, PARAPHRASE)
        assert app.trace.hit(MISSED) is None
        app.set_current(MISSED)
        app.follow_results = False
        app.main().action_show_pane("memory")  # E acts on the memory shown (issue 11: on Recall, the highlighted hit)
        await pilot.pause()
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, RecallWhenScreen))
        screen = app.screen
        area = screen.query_one("#rw-text", TextArea)
        area.text = area.text + "\nfee for family pictures offsite"
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not screen.busy and screen.preview is not None, what="preview")
        p = screen.preview
        assert p.before.rank is None and p.after.rank is not None
        shown = str(screen.query_one("#rw-result", Static).render())
        assert f"after {p.after.rank}" in shown
        # issue 22: the preview says which configuration and k its figures were measured at
        # (here the Tuning pane's knobs on the Recall pane's preset, at the golden k)
        assert screen.config_label.startswith("the Tuning pane's knobs (preset default")
        assert shown.startswith(f"measured under {screen.config_label}, at k {p.k}\n")
        assert file.read_text("utf-8") == original  # preview writes nothing
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, RecallWhenScreen))
        saved = file.read_text("utf-8")
        # only the recall_when list changed: one item line added, every other byte kept
        added = "  - fee for family pictures offsite\n"
        assert added in saved and saved.replace(added, "", 1) == original
        await until(pilot, lambda: not app.recall_pending and app.trace.hit(MISSED) is not None,
                    what="re-run after save")

        # a conflicting change on disk: nothing written, both versions shown
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, RecallWhenScreen))
        screen = app.screen
        outside = saved + "\nEdited elsewhere.\n"
        file.write_text(outside, "utf-8")
        screen.query_one("#rw-text", TextArea).text = "only this phrase"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(screen.query("#conflict")), what="conflict view")
        assert file.read_text("utf-8") == outside
        texts = " ".join(str(s.render()) for s in screen.query("#conflict Static"))
        assert "Edited elsewhere." in texts and "only this phrase" in texts


async def test_watcher_picks_up_an_outside_edit(vault_copy):
    eng = open_engine(vault_copy, preset="default", embedder="local")
    app = new_app(eng)
    app.tuning.watch_vault = True
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.tuning.watcher is not None and app.tuning.watcher.running,
                    what="watcher start")
        field = app.main().query_one("#query", Input)
        field.focus()
        field.insert_text_at_cursor("zorblaxian")
        await until(pilot, lambda: not app.recall_pending and app.trace is not None)
        hit = app.trace.hit(MISSED)
        assert hit is None or "keyword" not in hit.channels
        file = vault_copy / eng.vault.get(MISSED).path
        file.write_text(file.read_text("utf-8") + "\nThe zorblaxian bucket.\n", "utf-8")
        await until(pilot, lambda: not app.recall_pending and app.trace is not None
                    and app.trace.hit(MISSED) is not None
                    and "keyword" in app.trace.hit(MISSED).channels, timeout=30,
                    what="re-run on change")
        # the refresh updates the tuning pane only if it was built: it must not mount the
        # hidden pane (it did, and a refresh arriving while the app closed crashed the exit)
        assert not app.main().query("TuningPane")
        watcher = app.tuning.watcher
    assert not watcher.running  # stopped with the app


async def test_editor_key_without_editor_says_so(engine, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_tuning(pilot, app, QUERY)
        before = Path(engine.vault.root, engine.vault.get(app.current_id).path).read_bytes()
        await pilot.press("e")
        await until(pilot, lambda: any("$EDITOR is not set" in str(n.message)
                                       for n in app._notifications), what="the $EDITOR notice")
        assert Path(engine.vault.root, engine.vault.get(app.current_id).path).read_bytes() == before


async def test_the_bar_the_k_knob_and_the_hits_use_one_k(engine):
    """One k for the query bar, the knobs tab and the hits: the preset's k (the CLI's rule, and
    the status line says so), and the k knob set to 3 gives 3 hits."""
    app = new_app(engine)
    async with app.run_test(size=(140, 40)) as pilot:
        await set_query(pilot, app, QUERY)
        # the CLI's rule: the preset's k, and the screen says where it came from
        assert app.trace.k == engine.config.k and app.request.k is None
        assert f"k {engine.config.k} (preset)" in str(app.main().query_one("#status").render())
        app.main().query_one("#results").focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: bool(app.main().query(TuningPane)), "the tuning pane")
        pane = app.main().query_one(TuningPane)
        await wait_until(pilot, lambda: pane.knobs.runs is not None and not pane.knobs.busy, "the tuned runs")
        knobs = pane.query_one("#knob-table", VimTable)
        assert str(knobs.get_cell("k", "value")) == str(app.trace.k)
        assert len(pane.knobs.runs.current.hits) == len(app.trace.hits)
        # the k knob set to 3 gives 3 hits
        knobs.focus()
        knobs.move_cursor(row=knobs.get_row_index("k"), animate=False)
        await wait_until(pilot, lambda: pane.knobs.selected_knob() == "k", "the k knob highlighted")
        await pilot.press("enter")
        field = pane.query_one("#knob-input", Input)
        await wait_until(pilot, lambda: field.has_focus, "the k knob's field focused")
        field.value = "3"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not pane.knobs.busy and pane.knobs.runs.current.k == 3, "k 3 applied")
        assert pane.query_one("#tuned-hits", VimTable).row_count == 3


@pytest.mark.own_vault
async def test_side_by_side_compares_any_two_configurations(engine, vault_copy):
    """Side by side (`D`) runs any two presets or saved configurations, with titles and scores;
    a configuration saved since the app opened is a choice once the tab is shown again."""
    from textual.widgets import Select

    from recall_tui.engine.config import load_preset
    from recall_tui.tui.panes.tuning import START
    from recall_tui.tui.widgets.table import VimTable
    from recall_tui.tuning.compare import diff_rankings

    eng = engine
    app = new_app(eng)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
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


async def test_the_golden_tab_loads_another_queries_file(engine, tmp_path):
    """The golden tab scores another queries file, names a bad or missing one with the line and
    the reason, and an empty path goes back to the vault's own golden.jsonl."""
    from recall_tui.tui.panes.tuning import GOLDEN_K
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
        await set_query(pilot, app, QUERY)
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


@pytest.mark.own_vault
async def test_loading_a_queries_file_moves_focus_to_its_list(engine, vault_copy):
    """Loading a queries file in the golden tab moves the focus to its list; an integer
    category is accepted (it is a label)."""
    qfile = vault_copy / "other.jsonl"
    qfile.write_text('{"query": "postgres upgrade", "relevant": {"billing-db-postgres16": 2},'
                     ' "category": 3}\n', encoding="utf-8")
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=(120, 36)) as pilot:
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


@pytest.mark.own_vault
async def test_side_by_side_compares_at_one_depth(engine):
    """Both sides of side by side run at the knobs' k, and the figures say so."""
    app = new_app(engine, query=QUERY)
    async with app.run_test(size=(120, 36)) as pilot:
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
