"""The Tuning pane's side-by-side tab in its query-set view (issue 23, item 3): the judged set
under the active preset and the tuned knobs, a row per query as `tuning/snapshot.py`'s `diff`
compares them, enter/escape between a row and its one-query view, a snapshot file as A, and
the export that writes what `recall-tui diff --json` prints.

One app session on a private copy of the sample vault (its prebuilt index, the real local
embedder), with a four-query judged set so a whole run is a few recalls. Every figure is
checked against a diff the test asks `tuning/snapshot.py` for itself on the same rankings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text

from recall_tui.cli import main as cli_main
from recall_tui.engine import open_engine
from recall_tui.tui.app import make_app
from recall_tui.tui.keymap import all_bindings
from recall_tui.tui.panes.tuning import TuningPane
from recall_tui.tui.panes.tuning.side_set import SUMMARY_KEY
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning import snapshot as S
from recall_tui.tuning.golden import JUDGED
from tests.conftest import PINNED_NOW, SAMPLE_VAULT, _copy_sample_vault
from tests.test_tui_app import settle
from tests.waiting import wait_until

#: Lines of the sample vault's golden.jsonl: with the recency boost on, lines 1 and 7 lose
#: ids, line 39 gains one, line 3 does not move.
LINES = (1, 3, 7, 39)
KNOB = "boosts.recency.enabled"


@pytest.fixture(scope="module")
def vault(tmp_path_factory, prebuilt_index) -> Path:
    root = _copy_sample_vault(tmp_path_factory.mktemp("side-diff") / "vault", prebuilt_index)
    lines = (SAMPLE_VAULT / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    (root / JUDGED).write_text("".join(lines[n - 1] + "\n" for n in LINES), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def engine(vault):
    e = open_engine(vault, preset="default", embedder="local")
    yield e
    e.index.close()


def plain(value) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def row_cells(table: VimTable, key: str) -> dict[str, str]:
    return {str(c.key.value): plain(table.get_cell(key, c.key)) for c in table.columns.values()}


def reference(engine, qfile: Path, base, tuned, k: int) -> S.SnapshotDiff:
    """The diff the set view should show, asked of `tuning/snapshot.py` directly."""
    queries = S.read_query_set(qfile)
    a = S.take(engine, queries, k=k, now=PINNED_NOW, config=base, preset="default")
    b = S.take(engine, queries, k=k, now=PINNED_NOW, config=tuned, preset="tuned")
    return S.diff(a, b)


def test_bindings_are_listed_and_remappable():
    ids = {b.id: b for b in all_bindings({"side.export": "ctrl+x"})}
    assert ids["side.set"].keys == "s" and ids["side.snapshot"].keys == "L"
    assert ids["side.export"].keys == "ctrl+x" and ids["side.export"].default == "ctrl+e"
    assert ids["side.back"].keys == "escape"


async def test_set_view_rows_enter_escape_export(engine, vault, capsys):
    qfile = vault / JUDGED
    app = make_app(vault, now=PINNED_NOW, preset="default", engine=engine)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.main().query_one("#results").focus()
        await pilot.press("D")  # the side-by-side tab
        await wait_until(pilot, lambda: app.main().query(TuningPane)
                         and app.main().query_one(TuningPane).config is not None, "the pane")
        pane = app.main().query_one(TuningPane)
        side = pane.side
        view = side.set_view
        table = view.query_one("#side-set-table", VimTable)
        await wait_until(pilot, lambda: pane.tab_shown("tune-side"), "the side-by-side tab")
        await wait_until(pilot, lambda: app.focused is not None
                         and side in app.focused.ancestors, "focus in the tab")

        # s: the set view, one row per judged query (and the summary row first)
        await pilot.press("s")
        await wait_until(pilot, lambda: view.run is not None and not view.busy, "the set's run")
        assert table.row_count == 1 + len(LINES)
        assert str(table.coordinate_to_cell_key((0, 0)).row_key.value) == SUMMARY_KEY
        want = [(str(q.line), q.query) for q in S.read_query_set(qfile)]
        assert [(row_cells(table, f"q{n}")["line"], row_cells(table, f"q{n}")["query"])
                for n in range(len(LINES))] == want
        assert view.run.a.config_hash == view.run.b.config_hash  # nothing tuned yet
        assert row_cells(table, SUMMARY_KEY)["verdict"] == f"W0 L0 T{len(LINES)}"

        # a large set runs with its progress on screen, and escape cancels it
        head = view.query_one("#side-set-head")
        total = len(S.read_query_set(SAMPLE_VAULT / "golden.jsonl"))
        pane.golden.load_file(str(SAMPLE_VAULT / "golden.jsonl"))
        await pilot.press("s", "s")  # out of the set view and back: it runs the new set
        await wait_until(pilot, lambda: view.busy and f"/{total} queries" in plain(head.render()),
                         "the large set's progress")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not view.busy and "cancelled" in plain(head.render())
                         and not [w for w in app.workers if w.group == "side-set"
                                  and w.is_running], "the run cancelled")
        assert side.query_one("#side-views").current == "side-set"
        pane.golden.load_file("")  # back to the four-query set

        # a knob changed: the set re-runs, and every row is snapshot.diff's
        base = pane.config
        assert pane.knobs.edit_knob(KNOB, "true")
        tuned = pane.config
        await wait_until(pilot, lambda: view.run is not None and not view.busy
                         and view.run.b.config_hash == tuned.hash(), "the set under the knobs")
        ref = reference(engine, qfile, base, tuned, tuned.k)
        assert view.run.diff.to_dict() == ref.to_dict()
        moved = [n for n, q in enumerate(ref.queries) if q.gained or q.lost]
        assert moved and len(moved) < len(LINES)  # the set holds both kinds
        for n, q in enumerate(ref.queries):
            cells = row_cells(table, f"q{n}")
            assert cells["gained"] == ", ".join(q.gained)
            assert cells["lost"] == ", ".join(q.lost)
            assert cells["jaccard"] == f"{q.jaccard:.3f}" and cells["rbo"] == f"{q.rbo:.3f}"
        s = ref.summary()
        assert row_cells(table, SUMMARY_KEY)["verdict"] == \
            f"W{s['better']} L{s['worse']} T{s['same']}"
        foot = plain(view.query_one("#side-set-foot").render())
        assert tuned.hash()[:12] in foot and base.hash()[:12] in foot and f"set {JUDGED} " in foot

        # enter on a query that moved: its one-query view (live), with B's ranking the set's
        n = moved[0]
        table.move_cursor(row=n + 1, animate=False)
        await pilot.press("enter")
        q = ref.queries[n]
        side_b = side.query_one("#side-b", VimTable)
        await wait_until(pilot, lambda: side.runs is not None and side.runs.current.query == q.query
                         and side.query_one("#side-views").current == "side-one",
                         "the row's one-query view")
        await settle(pilot, app)
        eb = next(e for e in view.run.b.entries if e.line == q.line)
        await wait_until(pilot, lambda: [str(k.value) for k in side_b.rows] == eb.ids[:tuned.k],
                         "B's ranking of the row's query")
        assert pane.tab_shown("tune-side")  # the pane did not switch away

        # escape: back to the set, on the same row
        await pilot.press("escape")
        await wait_until(pilot, lambda: side.query_one("#side-views").current == "side-set",
                         "the set view again")
        assert table.cursor_row == n + 1 and not side.from_set

        # ctrl+e: the diff as `recall-tui diff --json` writes it, beside its two snapshots
        await wait_until(pilot, lambda: view.run is not None and not view.busy, "the set")
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: view.exported is not None, "the export")
        out = view.exported
        assert out.parent == vault / ".recall"
        stem = out.name.removesuffix(".json")
        snap_a, snap_b = out.parent / f"{stem}-a.snapshot.json", out.parent / f"{stem}-b.snapshot.json"
        assert json.loads(out.read_text(encoding="utf-8")) == ref.to_dict()

        # L: the exported A snapshot as side A; enter shows its frozen row
        await pilot.press("L")
        field = side.query_one("#side-snapshot-path")
        await wait_until(pilot, lambda: field.display and app.focused is field, "the path field")
        field.value = str(snap_a)
        await pilot.press("enter")
        await wait_until(pilot, lambda: view.snapshot is not None and view.run is not None
                         and not view.busy and view.run.a is view.snapshot, "the snapshot run")
        assert view.run.diff.to_dict() == ref.to_dict()  # A frozen, B re-run: the same pair
        table.focus()
        table.move_cursor(row=n + 1, animate=False)
        await pilot.press("enter")
        side_a = side.query_one("#side-a", VimTable)
        ea = next(e for e in view.run.a.entries if e.line == q.line)
        await wait_until(pilot, lambda: side.frozen is not None
                         and [str(k.value) for k in side_a.rows] == ea.ids[:tuned.k],
                         "the frozen row")
        await pilot.press("escape")
        await wait_until(pilot, lambda: side.frozen is None
                         and side.query_one("#side-views").current == "side-set", "the set")

    # the command on the exported snapshots prints the exported file, byte for byte (run
    # once the app has given stdout back)
    capsys.readouterr()
    assert cli_main(["diff", str(snap_a), str(snap_b), "--json"]) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")
