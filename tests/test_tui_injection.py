"""What the agent gets, on screen: the Recall pane marks the hits the agent's prompt hook injects
(the preset's k, as the trace's config says) against those shown only because the bar's k is
larger, says when the floor abstained, and a linear-merge explanation names each divisor.
One app run on the shared engine; the abstention and linear checks read real traces."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from recall_tui.engine import Engine
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.popups import RowScreen
from recall_tui.tui.widgets.results import INJECTED, ResultsTable, agent_cut, injection_legend
from tests.conftest import PINNED_NOW
from tests.test_tui_app import (
    QUERY,
    cell_text,
    new_app,
    screen_text,
    set_query,
    settle,
    tree_labels,
)
from tests.test_tui_keyboard import open_pinned_in_full
from tests.waiting import wait_until

#: The tests read scores on the fusion_max scale (tests/conftest.py).
pytestmark = pytest.mark.fusion_max


async def test_hits_the_agent_gets_are_marked(engine):
    app = new_app(engine)
    async with app.run_test(size=(160, 40)) as pilot:
        await set_query(pilot, app, QUERY)
        bar_k = engine.config.k + 3
        app.main().query_one("#k", Input).value = str(bar_k)
        await settle(pilot, app)
        trace = app.trace
        cut = agent_cut(trace)
        assert cut == engine.config.k and trace.k == bar_k
        assert len(trace.hits) > cut, "the premise: more hits on screen than the hook injects"
        table = app.main().query_one(ResultsTable)
        for row, hit in enumerate(trace.hits):
            shown = cell_text(table, row, "rank")
            assert shown == (f"{INJECTED}{hit.rank}" if hit.rank <= cut else str(hit.rank))
        decided = dict(trace.stage("floor").info)["decision"]  # the calibrated floor's
        assert str(table.border_title) == f"hits · {decided}" and decided.endswith(": kept")
        legend = str(table.border_subtitle)
        assert f"preset k {cut}" in legend
        assert f"#{cut + 1}-{len(trace.hits)} shown only (bar k {bar_k})" in legend

        # polish: a pinned answer in full reads a line per fact (the CLI's way), not one line
        gone = next(d for s in trace.stages for d in s.dropped)
        await open_pinned_in_full(pilot, app, gone.id)
        w = app.trace.why_of(gone.id)
        answer = [str(c.render()) for c in app.screen.query(".row-cell")][-1]
        lines = answer.split("\n")
        assert lines[0].startswith(f"answer: out at {w.stage}: ")
        if w.channel_ranks:
            assert lines[1] == "channel ranks: " + ", ".join(f"{c} #{r}" for c, r in w.channel_ranks)
        assert len(lines) == 1 + bool(w.channel_ranks) + len(w.details)
        await pilot.press("escape")


def test_abstention_and_linear_divisors_come_from_the_trace(engine):
    # the calibrated floor abstains on a query with no evidence: the agent gets nothing
    off = engine.recall("zzqx vlorp quintessence", now=PINNED_NOW)
    if not off.hits:  # (the floor's decision, word for word)
        legend = injection_legend(off)
        assert legend is not None and legend.startswith("abstained, the agent gets nothing: ")
        assert legend.endswith(dict(off.stage("floor").info)["decision"])
    # linear merge: every other channel's term names its divisor, as the stage info does
    linear = Engine(engine.vault, engine.index, engine.config.with_value("fuse.method", "linear"))
    tr = linear.recall(QUERY, now=PINNED_NOW)
    divisors = dict(tr.stage("fuse").info)["divisors"]
    others = [(h, c) for h in tr.hits for c in h.explain.channels
              if c.channel not in ("vector", "keyword")]
    assert others, "the premise: a hit found by a channel the linear merge divides"
    hit, part = others[0]
    assert f"{part.channel} " in divisors
    assert f"x {part.raw:.4g}/" in hit.explain.fusion and "÷ its best raw" in hit.explain.fusion


async def test_the_explanation_tree_shows_a_hop_hit_as_such(engine):
    from recall_tui.engine.trace import Explanation, Hit, HopInfo

    title = "a title long enough to pass the box's right edge " * 6
    hit = Hit("m", 3, 12.0, title, "fact", "", "", "", (), hop="1-hop",
              explain=Explanation(hop=HopInfo("a", "related", 0.8, 0.5)))
    app = new_app(engine)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        tree = app.main().query_one(ExplanationTree)
        tree.show(hit)
        await pilot.pause()
        labels = tree_labels(tree)
        assert "found by no channel: a hop brought it in (see hop below)" in labels
        assert "no channel scores recorded" not in labels
        # polish: a line cut at the box's edge ends in …, and f shows it (and its lines) whole
        first = screen_text(app).split("\n")
        row = next(r for r in first if "#3 a title long enough" in r)
        assert row.rstrip(" │▌").endswith("…")
        tree.focus()
        tree.move_cursor(tree.root)
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, RowScreen), "the line in full")
        shown = str(app.screen.query_one(".row-cell").render())
        assert " ".join(title.split()) in " ".join(shown.split())
        assert "found by no channel" in shown  # the lines under it too
        await pilot.press("escape")


def test_fair_share_keeps_short_key_columns_whole():
    from recall_tui.tui.widgets.table import _fair_share, _share

    # a long title and the channels in 46 cells: greedy cuts the channels to the floor,
    # the fair share gives them what they need and the title the rest
    assert _share([37, 20], 46) == [37, 9] and _fair_share([37, 20], 46) == [26, 20]
    assert _fair_share([60, 20, 200], 80) == [30, 20, 30]  # v's summary gets room
    assert _fair_share([50, 50], 10) == [8, 8]  # never under the floor
