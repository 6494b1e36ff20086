"""A refresh that leaves every memory as it was keeps what is built from the memories alone.

Appending a session of raw turns (or a digest) to a live vault re-reads it and swaps the new
vault into every engine. The keyword indexes and the floor's calibration depend on the
memories only, and rebuilding them took seconds at 100k memories on every such refresh; they
are kept when the memories' ids, file contents and vectors are the same, and rebuilt when one
memory changes. Either way a recall gives exactly what a fresh engine over the new vault gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_tui.diagnostics.engine_bench_child import BENCH_NOW, make_bench_embedder
from recall_tui.diagnostics.synth import write_synth_vault
from recall_tui.engine import Engine, calibration
from recall_tui.engine.config import load_preset
from recall_tui.engine.engines import EngineSet
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault

QUERIES = ("capacity plan owner", "who runs the release calendar", "hotel reservation",
           "what is the population of canada")


@pytest.fixture()
def live(tmp_path: Path):
    root = tmp_path / "vault"
    write_synth_vault(root, 120, turns=40)
    vault = read_vault(root, cache=True)
    index = Index.open(vault, make_bench_embedder("standin"), path=tmp_path / "index.sqlite")
    cfg = load_preset("default", root).with_value("turns.enabled", True)
    engine = Engine(vault, index, cfg, preset="default")
    yield root, index, cfg, engine
    index.close()


def _ranked(engine: Engine) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        engine.clear_cache()
        trace = engine.recall(q, now=BENCH_NOW)
        out.append([(h.id, h.score) for h in trace.hits]
                   + [(f"{t.session_id}#{t.seq}", t.score) for t in trace.turns])
    return out


def _fresh(root: Path, index: Index, cfg) -> list[list[tuple[str, float]]]:
    return _ranked(Engine(read_vault(root, cache=True), index, cfg, preset="default"))


def test_a_new_session_keeps_the_keyword_index_and_the_calibration(live):
    root, index, cfg, engine = live
    _ranked(engine)
    cal, kw = calibration.for_engine(engine), engine.keyword_index(cfg)
    bests = calibration.probe_bests(engine)
    lines = [json.dumps({"seq": i, "role": "user", "text": f"turn {i} about the capacity plan"})
             for i in range(30)]
    (root / "sessions" / "appended.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = EngineSet.of(engine).refresh()
    assert summary.error is None and not summary.added and not summary.changed
    assert any(t.session_id == "appended" for t in engine.vault.turns)
    assert engine.keyword_index(cfg) is kw
    assert calibration.for_engine(engine) is cal
    assert calibration.probe_bests(engine) is bests
    assert _ranked(engine) == _fresh(root, index, cfg)


def test_two_refreshes_with_no_recall_between_keep_the_calibration(live):
    """The watcher's first batch re-reads the folder and the next one patches it, often with
    no recall in between: the calibration kept by the first swap must survive the second."""
    root, index, cfg, engine = live
    _ranked(engine)
    cal, bests = calibration.for_engine(engine), calibration.probe_bests(engine)
    engines = EngineSet.of(engine)
    for name in ("first.jsonl", "second.jsonl"):
        (root / "sessions" / name).write_text(
            json.dumps({"seq": 0, "role": "user", "text": "the capacity plan"}) + "\n",
            encoding="utf-8")
        assert engines.refresh().error is None
    assert calibration.for_engine(engine) is cal
    assert calibration.probe_bests(engine) is bests
    assert _ranked(engine) == _fresh(root, index, cfg)


def test_a_changed_memory_rebuilds_them(live):
    root, index, cfg, engine = live
    _ranked(engine)
    cal, kw = calibration.for_engine(engine), engine.keyword_index(cfg)
    path = sorted(root.rglob("*.md"), key=str)[0]
    memory = next(m for m in engine.vault.memories.values() if Path(m.path).name == path.name)
    path.write_text(path.read_text(encoding="utf-8") + "\nA new line about zebras.\n",
                    encoding="utf-8")
    summary = EngineSet.of(engine).refresh()
    assert summary.error is None and memory.id in summary.changed
    assert engine.keyword_index(cfg) is not kw
    assert calibration.for_engine(engine) is not cal
    assert _ranked(engine) == _fresh(root, index, cfg)
