"""Functional tests of the terminal UI, driven with `run_test` against the real engine on a
copy of the sample vault (index built once per module), with `now` pinned.

Every assertion compares what is on screen (table cells, tree labels, rendered text) with the
trace or the vault the engine produced, so a widget that drops or invents a value fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text
from textual.command import CommandList
from textual.widgets import Input, Markdown

from recall_tui.engine import open_engine
from recall_tui.engine.trace import STAGE_ORDER
from recall_tui.tui.app import RecallApp, make_app
from recall_tui.tui.keymap import all_bindings, display_keys
from recall_tui.tui.messages import RecallDone
from recall_tui.tui.panes.supersession import SupersessionPane
from recall_tui.tui.panes.vault import VaultTree
from recall_tui.tui.replay import make_replay_app
from recall_tui.tui.screens.dialogs import HelpScreen, PinScreen
from recall_tui.tui.screens.main import MainScreen
from recall_tui.tui.settings import load_settings
from recall_tui.tui.widgets.explain import ExplanationTree, StageDetail
from recall_tui.tui.widgets.query_bar import RecallRequest
from recall_tui.tui.widgets.results import ResultsTable
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tui.widgets.waterfall import Waterfall
from recall_tui.tui.widgets.whynot import PinnedTable
from tests.conftest import PINNED_NOW
from tests.waiting import TIMEOUT, wait_until

SIZE = (120, 36)
QUERY = "postgres upgrade"


def new_app(engine, **kw) -> RecallApp:
    engine.clear_cache()  # shared by the module (tests/conftest.py): each test starts cold
    return make_app(engine.vault.root, now=PINNED_NOW, engine=engine, **kw)


def recall_settled(app: RecallApp) -> bool:
    """No recall is pending and the trace applied is the one of the app's current request
    (or none, for an empty query)."""
    if app.main() is None or app.engine is None or app.recall_pending:
        return False
    query = app.request.query
    if not query.strip():
        return app.trace is None
    return app.trace is not None and app.trace.query == query


async def settle(pilot, app: RecallApp, timeout: float = TIMEOUT) -> None:
    """Wait until the recall of the query on screen is applied, then let the views paint."""
    await pilot.pause()  # deliver what is already posted (the bar's change -> a request)
    await wait_until(pilot, lambda: recall_settled(app),
                     f"the recall of the query on screen to be applied (pending="
                     f"{app.recall_pending})", timeout)
    await pilot.pause()


async def type_query(pilot, app: RecallApp, text: str) -> None:
    """Type `text` key by key into the query (the real keystroke path)."""
    app.main().query_one("#query").focus()
    await pilot.press(*text)
    await settle(pilot, app)


async def add_to_query(pilot, app: RecallApp, text: str) -> None:
    """Append `text` to the query in one edit, like a paste (one Input.Changed, one recall):
    the tests that are not about typing stay fast."""
    field = app.main().query_one("#query", Input)
    field.focus()
    field.insert_text_at_cursor(text)
    await settle(pilot, app)


def screen_text(app: RecallApp) -> str:
    """The plain text of every cell on screen."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_for_text(pilot, app: RecallApp, needle: str, timeout: float = TIMEOUT) -> str:
    """Poll the screen until `needle` is on it (widgets like Markdown render asynchronously)."""
    await wait_until(pilot, lambda: needle in screen_text(app),
                     f"{needle!r} on screen", timeout)
    return screen_text(app)


def cell_text(table: VimTable, row: int, column: str) -> str:
    value = table.get_cell(table.coordinate_to_cell_key((row, 0)).row_key, column)
    return value.plain if isinstance(value, Text) else str(value)


def tree_labels(tree) -> list[str]:
    out: list[str] = []

    def walk(node):
        out.append(node.label.plain)
        for child in node.children:
            walk(child)

    walk(tree.root)
    return out


async def set_query(pilot, app: RecallApp, text: str) -> None:
    """Replace the query with `text` in one edit and wait for its recall on screen."""
    await settle(pilot, app)
    field = app.main().query_one("#query", Input)
    field.focus()
    field.value = text
    await settle(pilot, app)


def row_ids(table: VimTable) -> list[str]:
    """The row keys of `table`, top to bottom (a hit table's are memory ids)."""
    return [r.value for r in table.rows]


async def test_typing_a_query_shows_the_traces_hits(engine):
    app = new_app(engine)
    seen: list[RecallDone] = []
    hook = lambda m: seen.append(m) if isinstance(m, RecallDone) else None  # noqa: E731
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot, app)
        await type_query(pilot, app, QUERY)
        trace = app.trace
        assert trace is not None and trace.query == QUERY and trace.hits
        # typing 16 characters ran the pipeline at most once a key (no debounce; a key typed
        # while a recall runs waits for it) and the last won (tests/test_tui_paint.py checks
        # the burst case)
        assert seen and seen[-1].trace is trace and len(seen) <= len(QUERY)
        table = app.main().query_one(ResultsTable)
        assert [table.coordinate_to_cell_key((r, 0)).row_key.value
                for r in range(table.row_count)] == [h.id for h in trace.hits]
        for r, h in enumerate(trace.hits):
            assert cell_text(table, r, "rank").removeprefix("▶") == str(h.rank)  # ▶: injected
            assert cell_text(table, r, "score") == f"{h.score:.3f}"
            assert cell_text(table, r, "title") == h.title
            assert cell_text(table, r, "channels") == ",".join(h.channels)
        # the default preset scores no staleness: at this width its column is the first to go
        # (its labels are checked in tests/test_tui_results.py)
        assert trace.config["boosts"]["staleness"]["enabled"] is False
        assert "staleness" not in [c.key.value for c in table.ordered_columns]
        # the same recall made headless gives the same ranking: the UI shows the engine's answer
        again = engine.recall(QUERY, k=app.request.k, now=PINNED_NOW)
        assert [h.id for h in again.hits] == [h.id for h in trace.hits]
        assert app.current_id == trace.hits[0].id
        assert trace.hits[0].title in screen_text(app)  # the explanation's root label


async def test_waterfall_shows_every_stage_with_its_ms_and_skip_reason(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, "vegetarian diet")
        trace = app.trace
        wf = app.main().query_one(Waterfall)
        names = [wf.coordinate_to_cell_key((r, 0)).row_key.value for r in range(wf.row_count)]
        assert names == [s.name for s in trace.stages] == list(STAGE_ORDER)
        skipped = 0
        for r, s in enumerate(trace.stages):
            assert cell_text(wf, r, "n") == str(len(s.candidates))
            if s.skipped:
                skipped += 1
                assert cell_text(wf, r, "ms") == "skip"
                assert cell_text(wf, r, "note") == " ".join(s.reason.split())
            else:
                assert cell_text(wf, r, "ms") == f"{s.ms:.1f}"
        assert skipped, "the default preset skips some stage; the test must see one"
        slowest = max(trace.stages, key=lambda s: s.ms)
        assert cell_text(wf, names.index(slowest.name), "bar") == "█" * 10
        # the same request again is answered by the cache, and the waterfall says so
        app.request_recall(app.request, typed=False)
        await settle(pilot, app)
        assert app.trace.cache_hit
        assert cell_text(wf, names.index("cache"), "note") == "cache hit"
        # the cached run's stages are shown, marked (issue 11: never blank stages)
        assert cell_text(wf, names.index("keyword"), "note").startswith("cached")
        assert "cache hit" in screen_text(app)


async def test_selecting_a_stage_lists_its_candidates(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, QUERY)
        keyword = app.trace.stage("keyword")
        assert keyword.candidates
        await pilot.press("escape")  # leave the query input
        await pilot.press("w")
        wf = app.main().query_one(Waterfall)
        assert app.focused is wf
        for _ in range(STAGE_ORDER.index("keyword")):
            await pilot.press("j")
        detail = app.main().query_one(StageDetail)
        await wait_until(pilot, lambda: app.main().query_one("#detail").current == "stage-detail"
                         and detail.row_count == len(keyword.candidates) + len(keyword.dropped),
                         "the keyword stage's candidates in the stage detail")
        assert app.main().query_one("#detail").current == "stage-detail"
        rows = [cell_text(detail, r, "id") for r in range(detail.row_count)]
        assert rows == [c.id for c in keyword.candidates] + [d.id for d in keyword.dropped]
        assert cell_text(detail, 0, "raw") == f"{keyword.candidates[0].score:.4f}"


async def test_explanation_tree_shows_channels_terms_and_boosts(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, QUERY)
        await pilot.press("escape", "r", "j")  # second hit
        hit = app.trace.hits[1]
        await wait_until(pilot, lambda: app.current_id == hit.id
                         and hit.title in tree_labels(app.main().query_one(ExplanationTree))[0],
                         "the second hit to be explained")
        assert app.current_id == hit.id
        labels = tree_labels(app.main().query_one(ExplanationTree))
        joined = "\n".join(labels)
        assert hit.title in labels[0] and f"{hit.score:.4f}" in labels[0]
        for c in hit.explain.channels:
            assert any(lb.startswith(c.channel) and f"rank {c.rank}" in lb and
                       f"{c.contribution:.5f}" in lb for lb in labels), c
        for m in hit.explain.matched_terms:
            assert f"{m.field} (×{m.weight:g}): {', '.join(m.terms)}" in joined
        for b in hit.explain.boosts:
            assert any(lb.startswith(b.name) and b.reason in lb for lb in labels), b
        assert f"final: {hit.explain.final:.4f}" in joined


async def test_pinning_a_missing_memory_shows_why_not(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, QUERY)
        hits = {h.id for h in app.trace.hits}
        # an archived memory is never recalled: the trace must say where it fell out
        missing = next(m.id for m in engine.vault.memories.values()
                       if m.role.value == "archive" and m.id not in hits)
        await pilot.press("escape", "P")
        assert isinstance(app.screen, PinScreen)
        await pilot.press(*missing, "enter")
        await settle(pilot, app)
        assert app.pinned == (missing,)
        why = app.trace.why_of(missing)
        assert why is not None and not why.found
        pinned = app.main().query_one(PinnedTable)
        answer = cell_text(pinned, 0, "answer")
        assert answer.startswith(f"out at {why.stage}: {' '.join(why.reason.split())}")
        # pin a memory that is found: the answer is its rank
        await pilot.press("r", "p")
        await settle(pilot, app)
        first = app.trace.hits[0]
        assert app.pinned == (missing, first.id)
        assert cell_text(pinned, 1, "answer").startswith(f"found at #{first.rank}")


async def test_stale_results_are_dropped_and_the_last_query_wins(engine):
    app = new_app(engine)
    done: list[int] = []
    hook = lambda m: done.append(m.seq) if isinstance(m, RecallDone) else None  # noqa: E731
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot, app)
        # two requests back to back, no debounce: the second replaces the first
        app.request_recall(RecallRequest(query="kubernetes", now=PINNED_NOW), typed=False)
        app.request_recall(RecallRequest(query="vegetarian diet", now=PINNED_NOW), typed=False)
        await settle(pilot, app)
        assert app.trace.query == "vegetarian diet"
        # an answer to an older request arriving late is dropped, not shown
        late = engine.recall("kubernetes", now=PINNED_NOW)
        before = app.recalls.stale_dropped
        app.post_message(RecallDone(app.recalls.seq - 1, late, 1.0))
        await wait_until(pilot, lambda: app.recalls.stale_dropped == before + 1,
                         "the late answer to be dropped")
        assert app.recalls.stale_dropped == before + 1
        assert app.trace.query == "vegetarian diet"
        table = app.main().query_one(ResultsTable)
        assert table.current_id() in {h.id for h in app.trace.hits}


async def test_memory_pane_shows_every_frontmatter_key_and_the_body(engine):
    memory = next(m for m in engine.vault.memories.values() if m.extra)
    app = new_app(engine)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot, app)
        app.open_memory(memory.id)
        text = await wait_for_text(pilot, app, memory.title)
        table = app.main().query_one("#memory-frontmatter", VimTable)
        keys = [cell_text(table, r, "key") for r in range(table.row_count)]
        assert keys == list(memory.frontmatter)  # every key as written, unknown ones too
        assert set(memory.extra) <= set(keys)
        assert app.main().query_one("#memory-body", Markdown).source == memory.body
        assert "recalled 0×" in text


async def test_supersession_entities_and_problems_panes(engine, tmp_path):
    chain = next(c for c in engine.vault.chains if len(c.ids) >= 3)
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.set_current(chain.ids[0])
        await pilot.press("escape", "3")
        await wait_until(pilot, lambda: app.main().query_one("#chain-table", VimTable).row_count
                         == len(chain.ids), "the chain table to list the chain")
        t = app.main().query_one("#chain-table", VimTable)
        assert [cell_text(t, r, "id") for r in range(t.row_count)] == list(chain.ids)
        for r, mid in enumerate(chain.ids):
            assert cell_text(t, r, "status") == engine.vault.get(mid).status

        with_edges = next(m for m in engine.vault.memories.values() if len(m.edges) >= 2)
        app.set_current(with_edges.id)
        await add_to_query(pilot, app, "postgres billing")
        app.set_current(with_edges.id)
        await pilot.press("escape", "4")
        await wait_until(pilot, lambda: app.main().query_one("#entity-edges", VimTable).row_count
                         == len(with_edges.edges), "the entity edges of the memory")
        edges = app.main().query_one("#entity-edges", VimTable)
        assert [(cell_text(edges, r, "subject"), cell_text(edges, r, "relation"),
                 cell_text(edges, r, "object")) for r in range(edges.row_count)] == \
            [(e.subject, e.relation, e.object) for e in with_edges.edges]
        graph = app.main().query_one("#graph-candidates", VimTable)
        stage = app.trace.stage("graph")
        assert [cell_text(graph, r, "id") for r in range(graph.row_count)] == \
            [c.id for c in stage.candidates]

        await pilot.press("8")
        await wait_for_text(pilot, app, f"{len(engine.vault.problems)} problem(s) in the vault")
        assert app.main().active_pane() == "problems"


async def test_problems_pane_lists_the_readers_problems(tmp_path):
    vault = tmp_path / "v"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "ok.md").write_text("---\ntitle: Fine memory\n---\nbody\n")
    (vault / "notes" / "bad.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    eng = open_engine(vault, embedder="none")
    assert eng.vault.problems
    app = make_app(vault, now=PINNED_NOW, engine=eng)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("escape", "8")
        await wait_until(pilot, lambda: app.main().query_one("#problems-table", VimTable).row_count
                         == len(eng.vault.problems), "the problems table to be filled")
        t = app.main().query_one("#problems-table", VimTable)
        assert t.row_count == len(eng.vault.problems)
        p = eng.vault.problems[0]
        assert cell_text(t, 0, "path") == p.path
        assert cell_text(t, 0, "reason") == " ".join(p.reason.split())


async def test_mmr_and_timings_panes_render_the_trace(engine):
    app = new_app(engine, preset="abmind")
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, "postgres")
        await add_to_query(pilot, app, " upgrade")
        trace = app.trace
        assert trace.preset == "abmind"
        await pilot.press("escape", "5")
        mmr = trace.stage("mmr")
        steps = sorted((h.explain.mmr for h in trace.hits if h.explain.mmr), key=lambda s: s.step)
        await wait_until(pilot, lambda: app.main().query_one("#mmr-table", VimTable).row_count
                         >= len(steps) and str(app.main().query_one("#mmr-head").content),
                         "the MMR pane to draw the trace")
        table = app.main().query_one("#mmr-table", VimTable)
        if mmr.skipped:
            assert f"mmr skipped: {mmr.reason}" in screen_text(app)
        else:
            assert steps, "abmind runs MMR: its picks must be in the trace"
        assert [cell_text(table, r, "id") for r in range(len(steps))] == [s.id for s in steps]
        for r, s in enumerate(steps):
            assert cell_text(table, r, "penalty") == f"{s.penalty:.4f}"
            assert cell_text(table, r, "closest") == (s.closest_id or "")
        await pilot.press("6")
        await wait_until(pilot, lambda: app.main().query_one("#timings-table", VimTable).row_count
                         >= len(app.timings), "the timings table to list every stage")
        timings = app.main().query_one("#timings-table", VimTable)
        rows = {cell_text(timings, r, "stage"): r for r in range(timings.row_count)}
        for name, values in app.timings.items():
            r = rows[name]
            assert cell_text(timings, r, "runs") == str(len(values))
            assert cell_text(timings, r, "last ms") == f"{values[-1]:.2f}"
        ran = [s for s in trace.stages if not s.skipped]
        assert all(app.timings[s.name][-1] == s.ms for s in ran)


async def test_vault_browser_filters_opens_and_pins(engine):
    target = next(iter(engine.vault.memories.values()))
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("escape", "7")
        await wait_until(pilot, lambda: app.main().query_one("#vault-filter"),
                         "the vault pane to be built")
        app.main().query_one("#vault-filter").focus()
        await pilot.press(*target.id[:3])
        app.main().query_one("#vault-filter", Input).insert_text_at_cursor(target.id[3:])
        tree = app.main().query_one(VaultTree)

        def filtered() -> list:
            return [n for n in tree.root.children for n in n.children]

        await wait_until(pilot, lambda: target.id in [n.data for n in filtered()]
                         and len(filtered()) < len(engine.vault.memories),
                         "the vault tree to be filtered down to the typed id")
        leaves = filtered()
        assert target.id in [n.data for n in leaves]
        assert len(leaves) < len(engine.vault.memories)
        await pilot.press("enter")  # to the tree
        assert app.focused is tree
        tree.move_cursor(next(n for n in leaves if n.data == target.id))
        await pilot.press("p")
        await settle(pilot, app)
        assert target.id in app.pinned
        await pilot.press("enter")
        await wait_for_text(pilot, app, target.title)
        assert app.main().active_pane() == "memory"


async def test_keymap_from_the_config_file_remaps_bindings(engine, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('theme = "nord"\n[keymap]\n"app.help" = "f1"\n"pane.memory" = "m"\n'
                      '"list.down" = "n"\n')
    monkeypatch.setenv("RECALL_TUI_CONFIG", str(config))
    settings = load_settings()
    app = new_app(engine, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, QUERY)
        assert app.theme == "nord"
        await pilot.press("escape", "question_mark")
        assert not isinstance(app.screen, HelpScreen)  # `?` is no longer help
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        help_rows = app.screen.query_one(VimTable)
        keys = {cell_text(help_rows, r, "binding id"): cell_text(help_rows, r, "keys")
                for r in range(help_rows.row_count)}
        assert keys["app.help"] == "f1" and keys["pane.memory"] == "m"
        await pilot.press("escape")
        await pilot.press("2")
        assert app.main().active_pane() == "recall"  # the old key is gone
        await pilot.press("m")
        assert app.main().active_pane() == "memory"
        await pilot.press("1", "r")
        await pilot.press("n")  # remapped list.down
        assert app.current_id == app.trace.hits[1].id


async def test_every_binding_has_an_id_and_is_in_help_and_palette(engine):
    infos = all_bindings()
    from textual.binding import Binding

    from recall_tui.tui.keymap import _owners

    for _where, cls in _owners():
        for b in cls.__dict__.get("BINDINGS", []):
            assert isinstance(b, Binding) and b.id, f"{cls.__name__} binding {b} has no id"
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("escape", "question_mark")
        table = app.screen.query_one(VimTable)
        assert table.row_count == len(infos)
        await pilot.press("escape")
        names = [c.name for c in app.palette_commands()]
        for b in infos:
            if b.where in ("global", "main screen") and b.id != "app.palette":
                assert f"{b.description} ({display_keys(b.keys)})" in names
        # a real trip through the palette: switch preset
        await pilot.press("ctrl+p")
        await pilot.press(*"Preset: memoturn")
        await wait_until(pilot, lambda: "Preset: memoturn" in str(
            app.screen.query_one(CommandList).get_option_at_index(0).prompt),
            "the palette to offer the memoturn preset first")
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        assert app.request.preset == "memoturn"


async def test_copy_verbosity_and_rank_change(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await add_to_query(pilot, app, "postgres")
        await add_to_query(pilot, app, " upgrade")
        first, second = app.previous, app.trace
        assert first.query.startswith("postgres") and second.query == "postgres upgrade"
        table = app.main().query_one(ResultsTable)
        for r, h in enumerate(second.hits):
            before = first.hit(h.id)
            delta = cell_text(table, r, "delta")
            if before is None:
                assert delta == "new"
            elif before.rank > h.rank:
                assert delta == f"↑{before.rank - h.rank}"
            elif before.rank < h.rank:
                assert delta == f"↓{h.rank - before.rank}"
            else:
                assert delta == "="
        await pilot.press("escape", "r", "y")
        assert app.clipboard == second.hits[0].id
        await pilot.press("ctrl+y")
        assert json.loads(app.clipboard) == second.to_dict()
        await pilot.press("Y")
        m = engine.vault.get(second.hits[0].id)
        assert app.clipboard == (Path(engine.vault.root) / m.path).read_text("utf-8")
        await pilot.press("v")
        await settle(pilot, app)
        assert app.trace.verbosity == "full"
        assert cell_text(table, 0, "summary") == " ".join(app.trace.hits[0].summary.split())


async def test_small_terminal_is_usable(engine):
    app = new_app(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_query(pilot, app, QUERY)
        text = screen_text(app)
        assert app.trace.hits[0].title[:15] in text
        assert "keyword" in text and "stages" in text and "hits" in text


HOSTILE_TITLE = "[bold red]x[/] [link=https://evil.example]click[/link] $accent"


async def test_hostile_memory_text_is_shown_literally(tmp_path):
    vault = tmp_path / "hostile"
    (vault / "work").mkdir(parents=True)
    (vault / "work" / "hostile.md").write_text(
        "---\nid: hostile-markup\n"
        'title: "[bold red]x[/] [link=https://evil.example]click[/link] $accent \\x1b[2J'
        '\\x07 postgres"\n'
        'summary: "sum [i]ital[/i] \\x1b]52;c;Zm9v\\x07 postgres"\n'
        'tags: [postgres, "[red]tag[/]"]\nweird_key: "$variable [blink]v[/]"\n---\n'
        "# Hostile\n\nRich [bold red]x[/] and [link=https://evil.example]click[/link], "
        "$variable, clear \x1b[2J screen, clip \x1b]52;c;aGVsbG8=\x07 done, bell \x07.\n\n"
        "<script>alert(1)</script> [md](javascript:alert(1))\n", encoding="utf-8")
    (vault / "work" / "plain.md").write_text("---\nid: plain\ntitle: Postgres plan\n---\nx\n")
    eng = open_engine(vault, embedder="none")
    app = make_app(vault, now=PINNED_NOW, engine=eng)
    async with app.run_test(size=(220, 50)) as pilot:
        await add_to_query(pilot, app, "postgres")
        assert "hostile-markup" in {h.id for h in app.trace.hits}
        shown = [screen_text(app)]
        app.set_current("hostile-markup")
        app.main().action_show_pane("memory")
        shown.append(await wait_for_text(pilot, app, "Rich [bold red]x[/] and"))
        app.main().action_show_pane("vault")
        shown.append(await wait_for_text(pilot, app, "[bold red]x[/] [link=https://evil.example]"))
        everything = "\n".join(shown)
        assert HOSTILE_TITLE in everything  # brackets and $ shown as typed
        assert "sum [i]ital[/i]" in everything
        assert "[red]tag[/]" in everything and "$variable [blink]v[/]" in everything
        assert "<script>alert(1)</script>" in everything
        for bad in ("\x1b", "\x07", "\x9b", "\x9d"):
            assert bad not in everything
        # and the bytes that would reach the terminal hold no escape from the memory
        output = app.screen._compositor.render_full_update().render_segments(app.console)
        assert "\x1b]52" not in output and "\x1b[2J" not in output and "\x07" not in output
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "[bold red]x[/]" in svg.replace("&#160;", " ")


async def test_a_cache_hit_shows_the_cached_stages(engine):
    """A cache hit shows the cached run's stages (candidates, counts, a `cached` note), not
    empty skipped ones."""
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, "why did the deploy fail")
        first = app.trace
        await set_query(pilot, app, "why did the deploy fails")
        await set_query(pilot, app, "why did the deploy fail")
        hit = app.trace
        assert hit.cache_hit
        wf = app.main().query_one(Waterfall)
        for s in hit.stages:
            if s.name in ("query.parse", "cache"):
                continue
            before = first.stage(s.name)
            assert s.cached and s.candidates == before.candidates, s.name
            assert cell_text(wf, wf.get_row_index(s.name), "n") == str(len(before.candidates))
            assert cell_text(wf, wf.get_row_index(s.name), "note").startswith("cached")
        assert hit.stage("mmr").skipped == first.stage("mmr").skipped
        assert "skipped: cache hit" not in str(hit.stages)


async def test_the_filter_count_and_a_superseded_drop_are_shown(engine):
    """The waterfall's n for the filter is its kept count, and the Supersession pane says at
    which stage and why a superseded memory was dropped."""
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await set_query(pilot, app, QUERY)
        f = app.trace.stage("filter")
        kept = f.info_dict()["kept"]
        wf = app.main().query_one(Waterfall)
        assert cell_text(wf, wf.get_row_index("filter"), "n") == kept != "0"
        gone = next(d for d in f.dropped if d.reason.startswith("superseded"))
        app.open_memory(gone.id)
        await pilot.press("3")  # focus is in the Memory pane; escape would go to the query
        await wait_until(pilot, lambda: bool(app.main().query(SupersessionPane)), "the pane")
        pane = app.main().query_one(SupersessionPane)
        table = pane.query_one("#chain-table", VimTable)
        await wait_until(pilot, lambda: table.row_count > 0, "the chain")
        cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
        assert f"dropped at filter: {gone.reason}" in cells


@pytest.mark.own_vault
async def test_a_cache_hit_adds_no_stage_times(engine):
    """The timings count runs, not cache hits: a hit adds the parse and the cache lookup, no
    later stage's time (live and in replay)."""
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


@pytest.mark.fusion_max
async def test_the_explanation_shows_the_fusion_formula_and_the_scaling_step(engine):
    """Every number traceable: the explanation prints the fusion rule with its terms and the
    scaling step that gives the score."""
    app = new_app(engine)
    async with app.run_test(size=(200, 60)) as pilot:
        await set_query(pilot, app, QUERY)
        hit = app.trace.hits[0]
        labels = tree_labels(app.main().query_one(ExplanationTree))
        rule, *parts = hit.explain.fusion.split("; ")
        assert app.trace.config["fuse"]["method"] == "convex"  # the default preset's fusion
        assert rule.startswith("convex: Σ w x (raw - worst) / (best - worst)") and rule in labels
        assert all(p in labels for p in parts)
        first, *rest = hit.explain.scaling.split("; ")
        assert f"scale: {first}" in labels and all(p in labels for p in rest)
        # the printed step gives the score: 100 x before / best = final
        before, best = (float(x) for x in first.split(" = ")[0][len("100 x "):].split(" / "))
        assert 100 * before / best == pytest.approx(hit.score, rel=1e-3)
