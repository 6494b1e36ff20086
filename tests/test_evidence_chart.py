"""The evidence distribution (issue 20): `eval --plot`, `eval --json` and the Tuning pane's
chart show the same numbers, all from `recall_tui.tuning.distribution` over the traces. Real
engine and index (`--embedder none` to stay fast), a real Textual app for the widget."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.engine import open_engine
from recall_tui.engine.config import load_preset
from recall_tui.tuning import metrics
from recall_tui.tuning.distribution import histogram, spark_lines
from recall_tui.tuning.golden import run_golden
from tests.conftest import PINNED_NOW, SAMPLE_VAULT

BIN = Path(sys.executable).with_name("recall-tui")


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("chart") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


def test_histogram_by_hand():
    # bins of 0.2 over 0..2; 2.0 itself falls in the last bin
    assert histogram([0.0, 0.19, 0.2, 1.99, 2.0]) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]


def test_pane_chart_equals_eval_json(vault):
    r = subprocess.run([str(BIN), "eval", "--vault", str(vault), "--k", "10", "--now",
                        PINNED_NOW.isoformat(), "--embedder", "none", "--json"],
                       capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)["presets"]["default"]
    want = doc["evidence"]
    golden = metrics.read_golden(vault / "golden.jsonl")
    engine = open_engine(vault, embedder="none")
    try:
        run = run_golden(engine, golden, load_preset("default", vault), k=10, now=PINNED_NOW)
    finally:
        engine.index.close()
    assert dict(run.evidence) == want
    assert dict(run.off_topic) == doc["off_topic"]
    off = doc["off_topic"]
    assert off["queries"] == sum(1 for q in golden if q.off_topic) > 20

    from textual.app import App

    from recall_tui.tui.panes.tuning.evidence import EvidenceChart

    class One(App[None]):
        def compose(self):
            yield EvidenceChart(id="chart")

    async def shown() -> str:
        app = One()
        async with app.run_test() as pilot:
            chart = app.query_one("#chart", EvidenceChart)
            chart.show(run)
            await pilot.pause()
            return str(chart.render())

    text = asyncio.run(shown())
    lines = spark_lines(want) + [f"off-topic: abstained on {off['abstained']}/{off['queries']}, "
                                 f"mean injected {off['mean_injected']:.2f}"]
    assert text == "\n".join(lines)
    # each group's count and share under the floor are on screen as eval --json has them
    for g in want["groups"].values():
        assert f" {len(g['values'])}, {g['below_floor']} under the floor" in text
