"""The error-analysis view (issue 21) through the app, with the real engine on a small turn
vault (no embedder: the channels that need none). The active preset is `blind` (keyword and
fuzzy off), which finds nothing, so it loses every question a seed preset answers: the
screen must list exactly what `recall_tui.tuning.errors.losses` returns, grouped by
category, and open one question side by side with the engine's own why-answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.command import CommandList

from recall_tui.engine import open_engine
from recall_tui.tui.app import make_app
from recall_tui.tui.keymap import all_bindings
from recall_tui.tui.screens.errors import ErrorsScreen, LossScreen
from recall_tui.tui.screens.main import MainScreen
from recall_tui.tui.settings import Settings
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning import errors
from recall_tui.tuning.metrics import read_golden
from tests.conftest import PINNED_NOW
from tests.engine_vaults import write_vault
from tests.test_tui_app import SIZE, cell_text
from tests.waiting import wait_until

TURNS = ["Lena: we went to Lisbon in the end", "Tomas: Pepper the greyhound hates stairs",
         "Lena: the ferry to Porto was cancelled"]
QUESTIONS = [
    {"query": "lisbon", "relevant": ["t0"], "category": "single"},
    {"query": "greyhound stairs", "relevant": {"t1": 2, "t2": 0}, "category": "single"},
    {"query": "ferry porto cancelled", "relevant": ["t2"], "category": "temporal"},
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("errors") / "v"
    write_vault(root, {f"s/t{i}.md": ({"id": f"t{i}", "session_id": "s",
                                       "created": f"2025-03-01T10:0{i}:00Z"}, text + "\n")
                       for i, text in enumerate(TURNS)})
    (root / "golden.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS),
                                       encoding="utf-8")
    presets = root / ".recall" / "presets"
    presets.mkdir(parents=True)
    (presets / "blind.toml").write_text(
        'extends = "default"\n[keyword]\nenabled = false\n[fuzzy]\nenabled = false\n',
        encoding="utf-8")
    return open_engine(root, preset="blind", embedder="none")


def expected_losses(engine) -> dict[str, list[errors.Loss]]:
    """What the CLI's function says, computed here without the UI."""
    golden = read_golden(Path(engine.vault.root) / "golden.jsonl")
    from recall_tui.engine import Engine
    from recall_tui.engine.config import load_preset

    names = errors.compared("blind")
    engines = {n: engine if n == "blind" else
               Engine(engine.vault, engine.index, load_preset(n, engine.vault.root), preset=n)
               for n in names}
    results = errors.score_presets(engines, golden, k=10, now=PINNED_NOW)
    return errors.losses(golden, results, "blind", top=10, text=errors.hit_text(engine.vault))


async def test_losses_listed_by_category_and_opened_side_by_side(engine):
    want = expected_losses(engine)
    assert want, "the premise: a seed preset answers what blind cannot"
    # remapped key: the binding is remappable; the palette offers it under the new key
    app = make_app(engine.vault.root, now=PINNED_NOW, engine=engine, preset="blind",
                   settings=Settings(keymap={"app.errors": "Z"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and app.main() is not None,
                         "the engine in the app")
        app.main().query_one("#results").focus()
        await pilot.press("W")  # the default key is remapped away
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await pilot.press("Z")
        await wait_until(pilot, lambda: isinstance(app.screen, ErrorsScreen)
                         and app.screen.grouped is not None, "the losses scored")
        screen = app.screen
        assert screen.error is None and screen.grouped == want
        table = screen.query_one("#errors-table", VimTable)
        # grouped as `recall-tui errors` prints them: a category row, then its losses
        rows = [(cell_text(table, r, "category"), cell_text(table, r, "query"),
                 cell_text(table, r, "lost to")) for r in range(table.row_count)]
        shown = []
        for cat, losses in want.items():
            shown.append((f"{cat}: {len(losses)}", "", ""))
            shown += [("", x.query, x.other.preset) for x in losses]
        assert rows == shown
        head = str(screen.query_one("#errors-head").render())
        assert errors.summary(want, errors.compared("blind"), 3, 10) in head
        # j/k move; the cursor starts on the first loss
        assert table.cursor_row == 1
        await pilot.press("j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        first = screen.rows[table.cursor_key()]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LossScreen)
                         and app.screen.traces is not None, "the question side by side")
        side = app.screen
        base, other = side.query_one("#loss-base", VimTable), side.query_one("#loss-other",
                                                                            VimTable)
        assert base.row_count == 0 and "no hits" in str(base.border_subtitle)
        assert [cell_text(other, r, "id") for r in range(other.row_count)] == \
            [mid for mid, _g, _t in first.other.hits]
        expected = side.query_one("#loss-expected", VimTable)
        rel = [m for m, g in first.relevant.items() if g > 0]
        # each expected memory twice: its answer under blind, then under the other preset
        assert [(cell_text(expected, r, "id"), cell_text(expected, r, "preset"))
                for r in range(expected.row_count)] == \
            [(m, p) for m in rel for p in ("blind", first.other.preset)]
        mid = rel[0]
        rank = [h[0] for h in first.other.hits].index(mid) + 1 if mid in \
            [h[0] for h in first.other.hits] else None
        this, that = cell_text(expected, 0, "answer"), cell_text(expected, 1, "answer")
        assert this.startswith("out at ")  # blind: lost, with the stage that lost it
        if rank is not None:
            assert that.startswith(f"found at #{rank}")
            tree = side.query_one("#loss-explain-other", ExplanationTree)
            assert tree.root.label.plain.startswith(f"#{rank} ")
        assert side.query_one("#loss-explain-base", ExplanationTree).root.label.plain == this
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back to the losses")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "closed")
        # the palette's entry runs the same action
        entry = [c for c in app.palette_commands() if c.name.startswith("Error analysis")]
        assert [c.name.endswith("(Z)") for c in entry] == [True]
        await pilot.press("ctrl+p", *"Error analysis")
        await wait_until(pilot, lambda: "Error analysis" in str(
            app.screen.query_one(CommandList).get_option_at_index(0).prompt),
            "the palette to offer the error analysis first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ErrorsScreen), "from the palette")
    ids = {b.id: b.default for b in all_bindings()}
    assert ids["app.errors"] == "W" and {"errors.close", "loss.close"} <= set(ids)
