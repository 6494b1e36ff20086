"""Keystroke to paint: no debounce, only the newest request waits, and what is repainted.

The engine is the real one over a copy of the sample vault. To type "while a recall runs"
without depending on the machine's speed, `GatedEngine` holds each recall's thread at a gate
(a `threading.Event`) before the real `Engine.recall` runs; the test opens the gate when it
has typed what it wants. Everything waits for conditions (tests/waiting.py), never a time.
"""

from __future__ import annotations

import threading
from typing import Any

from recall_tui.tui.app import make_app
from recall_tui.tui.messages import RecallDone
from recall_tui.tui.settings import load_settings
from tests.conftest import PINNED_NOW
from tests.test_tui_app import new_app
from tests.waiting import wait_until

SIZE = (120, 36)


class GatedEngine:
    """The real engine; each `recall` first waits for `gate` and counts itself in `started`."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.gate = threading.Event()
        self.started: list[str] = []
        self.threads_inside = 0
        self.most_inside = 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def recall(self, query: str, **kw: Any) -> Any:
        with self._lock:
            self.started.append(query)
            self.threads_inside += 1
            self.most_inside = max(self.most_inside, self.threads_inside)
        try:
            assert self.gate.wait(120), "the test never opened the gate"
            return self._engine.recall(query, **kw)
        finally:
            with self._lock:
                self.threads_inside -= 1


async def recall_postgres(app: Any, pilot: Any) -> None:
    """Type "postgres upgrade" into the query and wait for its recall (3 hits or more)."""
    field = app.main().query_one("#query")
    field.focus()
    field.insert_text_at_cursor("postgres upgrade")
    await wait_until(pilot, lambda: not app.recall_pending and app.trace is not None
                     and len(app.trace.hits) >= 3, "the recall")


async def test_a_key_runs_its_recall_at_once_without_a_timer(engine):
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and not app.recall_pending,
                         "the engine to open")
        app.main().query_one("#query").focus()
        runs = app.recalls.recall_runs
        await pilot.press("k")
        # pilot.press returns once the key's messages are handled: the recall thread has
        # already been started (a debounce would still be waiting on its timer here)
        assert app.recalls.recall_runs == runs + 1
        assert app.recalls.running_seq == app.recalls.seq or app.recalls.applied_seq == app.recalls.seq
        await wait_until(pilot, lambda: not app.recall_pending and app.trace is not None
                         and app.trace.query == "k", "the recall of 'k' to be applied")


async def test_keys_typed_while_a_recall_runs_cost_one_more_recall_of_the_final_text(engine):
    gated = GatedEngine(engine)
    app = new_app(gated)
    done: list[RecallDone] = []
    hook = lambda m: done.append(m) if isinstance(m, RecallDone) else None  # noqa: E731
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and not app.recall_pending,
                         "the engine to open")
        app.main().query_one("#query").focus()
        await pilot.press("p")
        await wait_until(pilot, lambda: gated.started == ["p"],
                         "the first recall to reach the engine")
        # five more keys while that recall is held: none starts a thread of its own
        await pilot.press(*"ostgr")
        await wait_until(pilot, lambda: app.request.query == "postgr", "the keys to land")
        assert gated.started == ["p"] and app.recalls.recall_runs == 1
        assert app.recall_pending
        gated.gate.set()
        await wait_until(pilot, lambda: not app.recall_pending and app.trace is not None,
                         "the waiting request to be recalled and applied")
        await wait_until(pilot, lambda: app.recalls.running_seq is None, "the last thread to end")
        # exactly two recalls: the one that was running (cancelled, its answer never shown)
        # and the final text's; never two threads at once; one answer applied
        assert gated.started == ["p", "postgr"]
        assert app.recalls.recall_runs == 2 and gated.most_inside == 1
        assert app.trace.query == "postgr"
        assert [m.trace.query for m in done] == ["postgr"]
        assert app.main().query_one("#results").row_count == len(app.trace.hits)


async def test_clearing_the_query_while_a_recall_runs_starts_nothing_more(engine):
    gated = GatedEngine(engine)
    app = new_app(gated)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and not app.recall_pending,
                         "the engine to open")
        app.main().query_one("#query").focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: gated.started == ["x"], "the recall of 'x' to start")
        await pilot.press("y", "backspace", "backspace")
        await wait_until(pilot, lambda: app.request.query == "", "the query to be empty")
        gated.gate.set()
        await wait_until(pilot, lambda: app.recalls.running_seq is None, "the held thread to end")
        assert gated.started == ["x"] and app.trace is None and not app.recall_pending


def test_the_deprecated_debounce_key_still_loads_and_says_it_is_ignored(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[ui]\ndebounce_ms = 120\n", encoding="utf-8")
    s = load_settings(cfg, environ={})
    assert s.debounce_ms == 120
    assert len(s.notices) == 1 and "debounce_ms" in s.notices[0] and str(cfg) in s.notices[0]
    assert load_settings(tmp_path / "none.toml", environ={}).notices == ()


class GatedEmbedder:
    """The real local embedder; its first batch of documents (the index's embedding) waits
    for `gate`, so the test sees the app between 'text indexed' and 'vectors made'."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.gate = threading.Event()
        self.held = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed(self, texts: Any) -> Any:
        if len(texts) > 1 and not self.gate.is_set():
            self.held.set()
            assert self.gate.wait(300), "the test never opened the gate"
        return self._inner.embed(texts)


async def test_progressive_first_open_answers_by_text_then_updates_with_vectors(bare_vault_copy):
    from recall_tui.index.embed import make_embedder
    from recall_tui.tui.widgets.results import ResultsTable
    from recall_tui.tui.widgets.waterfall import Waterfall

    gated = GatedEmbedder(make_embedder("local")[0])
    app = make_app(bare_vault_copy, now=PINNED_NOW, embedder=gated)
    query = "postgres upgrade"
    async with app.run_test(size=SIZE) as pilot:
        # the engine is handed over while the index is still embedding (the gate holds it)
        await wait_until(pilot, lambda: app.engine is not None and app.opening.vectors_pending,
                         "the engine to answer before the vectors exist", timeout=120)
        # (the engine is handed over just before the first batch is embedded)
        await wait_until(pilot, gated.held.is_set, "the first batch to reach the embedder")
        assert not gated.gate.is_set()
        results = app.main().query_one(ResultsTable)
        assert "embedding 0 / " in str(results.border_subtitle)
        field = app.main().query_one("#query")
        field.focus()
        field.insert_text_at_cursor(query)
        await wait_until(pilot, lambda: not app.answer_pending and app.trace is not None
                         and app.trace.query == query, "the text-only recall")
        assert app.recall_pending  # the re-run with vectors is still to come
        vector = app.trace.stage("vector")
        assert vector.skipped and vector.reason.startswith("embedding 0 / ")
        total = int(vector.reason.split("/")[1].replace(",", ""))
        assert total >= len(app.vault.memories)
        assert app.trace.stage("keyword").candidates and app.trace.hits
        wf = app.main().query_one(Waterfall)
        assert str(wf.get_cell("vector", "note")) == vector.reason
        text_only = app.trace
        # the vectors arrive: the query runs again by itself, now with the vector channel
        gated.gate.set()
        await wait_until(pilot, lambda: not app.opening.vectors_pending and not app.recall_pending
                         and app.trace is not text_only and app.trace.query == query,
                         "the results to update when the vectors arrive", timeout=300)
        vector = app.trace.stage("vector")
        assert not vector.skipped and vector.candidates
        assert "vector" in {c for h in app.trace.hits for c in h.channels}
        # the opening's progress note is gone: what is left is the injection legend
        from recall_tui.tui.widgets.results import INJECTED
        assert results.border_subtitle is None or results.border_subtitle.startswith(INJECTED)
        assert app.opening.progress is None


def _renumbered(trace: Any) -> Any:
    """The same trace with every hit's score and every stage's ms changed (the numbers of a
    re-run that ranked the same memories the same way)."""
    from dataclasses import replace

    hits = tuple(replace(h, score=h.score / 2 + 0.0001) for h in trace.hits)
    stages = tuple(replace(s, ms=s.ms + 1.25) for s in trace.stages)
    return replace(trace, hits=hits, stages=stages)


async def test_changed_numbers_redraw_only_their_cells(engine):
    from rich.text import Text

    from recall_tui.tui.widgets.explain import ExplanationTree
    from recall_tui.tui.widgets.results import ResultsTable
    from recall_tui.tui.widgets.waterfall import Waterfall

    app = new_app(engine)
    chosen: list[Any] = []
    hook = (lambda m: chosen.append(m)  # noqa: E731
            if isinstance(m, ResultsTable.HitChosen) else None)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, "the engine to open")
        await recall_postgres(app, pilot)
        results = app.main().query_one(ResultsTable)
        wf = app.main().query_one(Waterfall)
        tree = app.main().query_one(ExplanationTree)
        results.focus()
        results.move_cursor(row=2, animate=False)
        await wait_until(pilot, lambda: app.current_id == app.trace.hits[2].id,
                         "the third hit to be current")
        first = app.trace
        keys = [h.id for h in first.hits]
        titles = [results.get_cell(k, "title") for k in keys]
        names = [wf.get_cell(s.name, "stage") for s in first.stages]
        branches = list(tree.root.children)
        await pilot.pause()  # deliver what the cursor move already posted
        chosen.clear()

        again = _renumbered(first)
        app.recalls.apply(again)
        await pilot.pause()
        # the rows stayed (same keys, cursor on the same memory, no highlight event), the
        # unchanged cells are the very objects drawn before, the numbers are the new ones
        assert [r.key.value for r in results.ordered_rows] == keys
        # (a rebuild would clear the cursor to row 0 first, choosing the top hit)
        assert results.cursor_row == 2 and app.current_id == keys[2]
        assert all(m.id == keys[2] for m in chosen)
        assert [results.get_cell(k, "title") for k in keys] == titles
        assert all(a is b for a, b in zip(
            [results.get_cell(k, "title") for k in keys], titles, strict=True))
        for h in again.hits:
            assert results.get_cell(h.id, "score").plain == f"{h.score:.3f}"
        assert all(a is b for a, b in zip(
            [wf.get_cell(s.name, "stage") for s in first.stages], names, strict=True))
        for s in again.stages:
            if not s.skipped:
                assert wf.get_cell(s.name, "ms").plain == f"{s.ms:.1f}"
        # the explanation shows the new score: rebuilt, because its hit changed
        assert f"{again.hits[2].score:.4f}" in str(tree.root.label)
        assert list(tree.root.children) != branches
        # an equal hit again: the tree is not rebuilt (same nodes)
        kept = list(tree.root.children)
        app.refresh_views()
        assert list(tree.root.children) == kept and all(
            a is b for a, b in zip(tree.root.children, kept, strict=True))

        # a different set of hits rebuilds the rows
        from dataclasses import replace

        other = replace(first, hits=tuple(reversed(first.hits)))
        app.recalls.apply(other)
        await pilot.pause()
        assert [r.key.value for r in results.ordered_rows] == [h.id for h in other.hits]
        assert isinstance(results.get_cell(other.hits[0].id, "title"), Text)


def painted_rows(app: Any, table: Any) -> list[str]:
    """The table's data rows as the screen draws them now (the compositor renders every
    line from the widgets' kept lines: a row whose repaint was never asked for shows its
    old text here, as it would on the terminal)."""
    from tests.test_tui_app import screen_text

    region = table.content_region
    lines = screen_text(app).split("\n")
    top = region.y + 1  # under the header row
    return [line[region.x:region.right] for line in lines[top:region.bottom]]


def shows_hits(app: Any, trace: Any) -> bool:
    """Each hit's row on screen shows its rank and score, in the trace's order."""
    from recall_tui.tui.widgets.results import INJECTED, ResultsTable

    rows = painted_rows(app, app.main().query_one(ResultsTable))
    return len(rows) >= len(trace.hits) and all(
        [w.lstrip(INJECTED) for w in row.split()[:1]] == [str(h.rank)]
        and f"{h.score:.3f}" in row
        for row, h in zip(rows, trace.hits, strict=False))


async def test_fast_typing_paints_the_final_texts_results_and_nothing_stale(engine):
    """Keys typed while a recall is held: the painted hits are the final text's, row by row,
    and a later re-run with new numbers only (same hits) repaints every changed score."""
    gated = GatedEngine(engine)
    app = new_app(gated)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and not app.recall_pending,
                         "the engine to open")
        app.main().query_one("#query").focus()
        await pilot.press("b")
        await wait_until(pilot, lambda: gated.started == ["b"], "the first recall to start")
        await pilot.press(*"illing postgres")
        await wait_until(pilot, lambda: app.request.query == "billing postgres",
                         "the keys to land")
        gated.gate.set()
        await wait_until(pilot, lambda: not app.recall_pending and app.trace is not None
                         and app.trace.query == "billing postgres", "the final text's recall")
        assert gated.started == ["b", "billing postgres"] and len(app.trace.hits) >= 3
        final = app.trace
        await wait_until(pilot, lambda: shows_hits(app, final), "the final hits painted")

        again = _renumbered(final)
        app.recalls.apply(again)
        await wait_until(pilot, lambda: shows_hits(app, again), "the new scores painted")
        assert not shows_hits(app, final)


async def test_in_place_updates_repaint_every_changed_row(engine):
    """The same stages and hits with new numbers: the tables change their cells in place
    and repaint only those rows; every changed number must reach the screen (the kept lines
    are keyed by the cells they show, so an old line must never come back)."""
    from recall_tui.tui.widgets.waterfall import Waterfall

    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, "the engine to open")
        await recall_postgres(app, pilot)
        first = app.trace
        await wait_until(pilot, lambda: shows_hits(app, first), "the hits painted")
        wf = app.main().query_one(Waterfall)

        def shows_ms(trace: Any) -> bool:
            rows = painted_rows(app, wf)
            shown = {row.split()[0]: row for row in rows if row.strip()}
            return all(f"{s.ms:.1f}" in shown[s.name].split()
                       for s in trace.stages if not s.skipped and s.name in shown)

        trace = first
        for _ in range(3):  # each time every number changes, the rows stay the same
            trace = _renumbered(trace)
            app.recalls.apply(trace)
            await wait_until(pilot, lambda t=trace: shows_hits(app, t) and shows_ms(t),
                             "every changed number painted")
        # back to the first numbers: lines kept from the first paint may come back, and are
        # the right ones
        app.recalls.apply(first)
        await wait_until(pilot, lambda: shows_hits(app, first) and shows_ms(first),
                         "the first numbers painted again")


async def test_hits_to_none_and_back_lay_nothing_out_and_warm_up_calibrates(engine):
    """A prefix the floor abstains on (no hits) between two that keep: the hits and stages
    boxes change their content's size, not their own, so they ask for no screen layout (each
    used to lay the whole screen out); the screen still shows each answer. The warm-up built
    the floor's calibration, the turn layout and the fuzzy channel's postings of the most
    frequent words, which the first keystrokes used to pay for."""
    from dataclasses import replace

    from recall_tui.tui.widgets.results import ResultsTable
    from recall_tui.tui.widgets.waterfall import Waterfall

    # shared engine: make the warm-up build them (the turn layout; the fuzzy channel's bm25)
    engine._derived.pop("probe_bests", None)
    engine._derived.pop("turn_layout", None)
    engine.index.keyword.reset()
    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and app.session.warm_ms
                         is not None, "the engine to open and warm up")
        assert "probe_bests" in engine._derived
        assert "turn_layout" in engine._derived
        rep = engine.index.keyword.replicas.get("memories_fts")
        assert rep is not None and rep._held > 0  # the most frequent words' postings
        await recall_postgres(app, pilot)
        first = app.trace
        results, wf = app.main().query_one(ResultsTable), app.main().query_one(Waterfall)
        layouts: list[str] = []
        for box in (results, wf):
            inner = box.refresh

            def refresh(*a: Any, layout: bool = False, _inner: Any = inner, _box: Any = box,
                        **kw: Any) -> Any:
                if layout:
                    layouts.append(type(_box).__name__)
                return _inner(*a, layout=layout, **kw)

            box.refresh = refresh  # type: ignore[method-assign]  # counts the layouts asked
        none = replace(first, hits=())
        scrolled: set[str] = set()
        for trace in (none, first, none, first):
            app.recalls.apply(trace)
            await wait_until(pilot, lambda t=trace: results.row_count == len(t.hits)
                             and (not t.hits or shows_hits(app, t)), "the answer painted")
            await pilot.pause()  # the tables' idle measuring
            for box in (results, wf):  # a shown scrollbar follows the box's new content
                if box.show_vertical_scrollbar:
                    scrolled.add(type(box).__name__)
                    bar = box.vertical_scrollbar
                    assert bar.window_virtual_size == box.virtual_size.height
                    assert bar.window_size == box.container_size.height - box.scrollbar_size_horizontal
        assert results.virtual_size.height > 1  # its content did change size meanwhile
        assert scrolled  # some box had a scrollbar to check
        assert layouts == []


def _drawn(table: Any, direct: bool) -> list[list[tuple[str, Any]]]:
    """Every line of `table`'s rows as (text, style) pairs, drawn from empty caches by the
    direct path or by DataTable's own (Rich's layout for each cell)."""
    table.DIRECT = direct
    table.__dict__.pop("_cells_by_content", None)
    table.__dict__.pop("_lines_by_content", None)
    table._clear_caches()
    table._pass = {}
    try:
        return [[(s.text, s.style) for s in table.render_line(y)]
                for y in range(table.size.height)]
    finally:
        table._pass = None
        del table.DIRECT


def test_one_line_cells_draw_as_rich_draws_them():
    """`one_line_cell` gives Rich's Segments (text and style, meta included) for the cells it
    takes: justified left, right or not, cut with … or not, styled spans over and past the
    text, wide characters, empty text, padding 0-2, a cursor's post style; None otherwise."""
    import random

    from rich.console import Console
    from rich.padding import Padding
    from rich.style import Style
    from rich.text import Span, Text
    from textual.renderables.styled import Styled

    from recall_tui.tui.widgets.cells import one_line_cell

    console = Console(width=120)
    rng = random.Random(7)
    words = ["abc", "memory", "ünïcode", "あい", "😀x", "  ", " lead", "trail ", "—", "…",
             "\t", "a\nb", "[b]x[/b]"]
    styles = ["", "dim", "bold green", "cyan", "dim italic", Style(color="red"), Style.null()]
    drawn = passed = 0
    for i in range(1500):
        plain = "".join(rng.choice(words) for _ in range(rng.randint(0, 5)))
        text = Text(plain, style=rng.choice(styles),
                    justify=rng.choice([None, "left", "right", "default", "center"]),
                    overflow=rng.choice([None, "ellipsis", "crop", "fold"]),
                    no_wrap=rng.choice([None, True, False]), end=rng.choice(["\n", ""]))
        for _ in range(rng.randint(0, 3)):
            a = rng.randint(0, len(plain))
            text.spans.append(Span(a, rng.randint(a, len(plain) + 2), rng.choice(styles)))
        width, pad = rng.randint(1, 14), rng.choice([0, 1, 2])
        pre = Style(bgcolor="grey11") + Style.from_meta({"row": i, "column": 1})
        post = rng.choice([Style.null(), Style(color="yellow")])
        mine = one_line_cell(console.get_style, text, width, pad, pre, post)
        if mine is None:
            passed += 1
            continue
        options = console.options.update_dimensions(width, 1).update(no_wrap=True)
        rich = console.render_lines(Styled(Padding(text, (0, pad)), pre_style=pre,
                                           post_style=post), options)[0]
        assert [(s.text, s.style) for s in mine] == [(s.text, s.style) for s in rich], (
            text, text.spans, width, pad)
        drawn += 1
    assert drawn > 400 and passed > 400  # both paths were taken


async def test_tables_draw_the_same_lines_as_datatable(engine):
    """The stages and hits boxes' lines (zebra rows, the cursor's row focused and not, cells
    cut with …) from the direct path equal DataTable's own, segment for segment."""
    from recall_tui.tui.widgets.explain import ExplanationTree
    from recall_tui.tui.widgets.results import ResultsTable
    from recall_tui.tui.widgets.waterfall import Waterfall

    app = new_app(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, "the engine to open")
        await recall_postgres(app, pilot)
        await pilot.pause()
        for table in (app.main().query_one(Waterfall), app.main().query_one(ResultsTable)):
            for focused in (False, True):
                if focused:
                    table.focus()
                    table.move_cursor(row=1, animate=False)
                    await pilot.pause()
                direct = _drawn(table, True)
                assert any("…" in t for line in direct for t, _ in line) or focused
                assert direct == _drawn(table, False), type(table).__name__
        # the explanation tree's lines with one paint's styles worked out once (`PaintPass`)
        # equal Tree's own, which asks for them on every line
        tree = app.main().query_one(ExplanationTree)
        tree.focus()
        for hit in app.trace.hits[:3]:
            tree.show(hit)
            tree.move_cursor_to_line(2)
            await pilot.pause()
            once = _tree_drawn(tree, memo=True)
            assert len(once) == tree.size.height and any("…" in t for line in once
                                                         for t, _ in line)
            assert once == _tree_drawn(tree, memo=False)


def _tree_drawn(tree: Any, memo: bool) -> list[list[tuple[str, Any]]]:
    """Every visible line of `tree` as (text, style) pairs, drawn from empty caches with the
    per-paint memo (`PaintPass.render_lines`) or without it (Tree's own `render_lines`, each
    line asking for its styles)."""
    from textual.geometry import Region
    from textual.widgets import Tree

    tree._line_cache.clear()
    tree._styles_cache.clear()
    crop = Region(0, 0, tree.size.width, tree.size.height)
    strips = tree.render_lines(crop) if memo else Tree.render_lines(tree, crop)
    return [[(s.text, s.style) for s in strip] for strip in strips]


async def test_a_frame_asks_only_the_widgets_it_repaints_and_writes_the_same_bytes(engine):
    """Each partial frame while typing, changing hits and clearing the query is rendered both
    ways: Textual's (every widget meeting the crop asked for its lines) and the recall view's
    (`SparseCompositor`: only the widgets meeting a dirty region). The terminal bytes are the
    same in every frame, and the footer, far from what a keystroke changes, is asked by
    Textual's way only."""
    from textual.widgets import Footer

    from recall_tui.tui.sparse_paint import SparseCompositor

    app = new_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and not app.recall_pending,
                         "the engine to open")
        comp = app.main()._compositor
        assert isinstance(comp, SparseCompositor)
        footer = app.main().query_one(Footer)
        asked = {True: 0, False: 0}
        footer_lines = footer.render_lines

        def count_footer(crop: Any) -> Any:
            asked[comp.sparse] += 1
            return footer_lines(crop)

        footer.render_lines = count_footer  # type: ignore[method-assign]
        frames: list[tuple[str, str]] = []
        inner = comp.render_partial_update

        def both() -> Any:
            dirty = set(comp._dirty_regions)
            # a paint can change what the next one draws (a tree builds its lines on its
            # first paint and its scrollbar follows): paint once to settle (the recall
            # view's way, first after a layout: what the compositor derives and keeps from
            # the widgets' map, the cuts of each line, must stay whole), then compare
            inner()
            comp._dirty_regions.update(dirty)
            comp.sparse = False
            try:
                full = inner()
            finally:
                comp.sparse = True
            comp._dirty_regions.update(dirty)
            comp._cuts = None  # as after a scroll: the partial frame works the cuts out
            sparse = inner()
            kept = comp._cuts
            comp._cuts = None  # ...from the whole map of widgets, as outside a frame
            assert kept is None or kept == comp.cuts
            assert (full is None) == (sparse is None)
            if full is not None and sparse is not None:
                frames.append((full.render_segments(app.console),
                               sparse.render_segments(app.console)))
            return sparse

        comp.render_partial_update = both  # type: ignore[method-assign]
        await recall_postgres(app, pilot)
        for text in ("postgres upgradx", "qqqqzzz", "postgres", ""):
            app.main().query_one("#query").value = text
            await wait_until(pilot, lambda t=text: not app.recall_pending and (
                app.trace is None if not t else app.trace is not None
                and app.trace.query == t), f"the recall of {text!r}")
            await pilot.pause()
        await pilot.press("j", "j")  # a cursor move in the hits box: a small frame
        await pilot.pause()
        assert len(frames) >= 5
        for full, sparse in frames:
            assert sparse == full
        assert asked[False] > 0 and asked[True] < asked[False]
        # a whole frame after them (a screenshot) still draws every row: the query bar too
        await pilot.resize_terminal(SIZE[0], SIZE[1] + 1)  # a layout: the cuts are new
        await pilot.pause()
        app.main().query_one("#query").value = "postgres upgrade"
        await wait_until(pilot, lambda: not app.recall_pending and app.trace is not None
                         and app.trace.query == "postgres upgrade", "the recall")
        await pilot.pause()
        from tests.test_tui_app import screen_text

        rows = screen_text(app).split("\n")
        assert "postgres upgrade" in rows[0] and "1 Recall" in "".join(rows[1:5])


def test_warm_turns_builds_the_turn_stages_structures(vault_copy):
    """`SessionTools._warm_turns` (the warm-up's part for the turn channel, and what a
    progressive open runs once its turns phase is done) makes the turns' codes and the turns
    by id when the preset's turn channel is on, and nothing when it is off."""
    from types import SimpleNamespace

    from recall_tui.engine import Engine
    from recall_tui.engine.config import load_preset
    from recall_tui.index.embed import LocalEmbedder
    from recall_tui.index.store import Index
    from recall_tui.tui.session import SessionTools
    from recall_tui.vault.reader import read_vault

    vault = read_vault(vault_copy)
    assert vault.turns
    with Index.open(vault, LocalEmbedder()) as idx:
        off = Engine(vault, idx, load_preset("default"))
        assert not off.config.turns.enabled
        SessionTools(SimpleNamespace(engine=off))._warm_turns()  # type: ignore[arg-type]  # only .engine is read
        assert idx.vector_store._turn_codes is None and "turns" not in off._derived
        on = Engine(vault, idx, load_preset("default").with_value("turns.enabled", True))
        SessionTools(SimpleNamespace(engine=on))._warm_turns()  # type: ignore[arg-type]  # only .engine is read
        codes = idx.vector_store._turn_codes
        assert codes is not None and codes.n == len(vault.turns)
        assert "turns" in on._derived
