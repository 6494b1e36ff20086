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


def _comparable(trace) -> dict:
    """A trace as a plain dict without its clock readings (every ms, the query embedding's
    time): hits, scores, every stage's candidates, drops, info and reasons, the why lines."""
    def strip(obj):
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if k not in ("ms", "start_ms", "total_ms")}
        if isinstance(obj, list):
            return [strip(v) for v in obj
                    if not (isinstance(v, list) and len(v) == 2 and str(v[0]).endswith("_ms"))]
        return obj
    return strip(trace.to_dict())


def _first_difference(a, b, at: str = "") -> str:
    """Where two plain values first differ (for the assertion's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{at}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{at}[{i}]")
    return f"{at}: {a!r:.300} != {b!r:.300}"


def test_a_session_patched_in_recalls_exactly_as_a_fresh_engine_and_index(live, tmp_path):
    """The watcher's path (a patch with the new log alone): every preset's engine keeps what
    it built from the memories (and the index its memories' caches: only turns were written),
    and every recall, with a why question, equals one by a fresh engine over a freshly opened
    index, stage by stage, candidate by candidate."""
    from recall_tui.engine.config import list_presets

    root, index, cfg, engine = live
    engines = EngineSet.of(engine)
    presets = [p for p in list_presets(root) if p != "default"]
    configs = {"default": cfg} | {p: load_preset(p, root).with_value("turns.enabled", True)
                                  for p in presets}
    for p in presets:
        engines.for_preset(p, configs[p])
    asked = sorted(engine.vault.memories)[:2]
    for e in engines.engines():  # every per-vault structure built before the append
        for q in QUERIES:
            e.clear_cache()
            e.recall(q, now=BENCH_NOW, why=asked)
    before = {e.preset: dict(e._derived) for e in engines.engines()}
    matrix = index.vectors()
    (root / "sessions" / "patched.jsonl").write_text("\n".join(
        json.dumps({"seq": i, "role": "user", "text": f"turn {i}: the capacity plan owner"})
        for i in range(30)) + "\n", encoding="utf-8")
    summary = engines.refresh(files=("sessions/patched.jsonl",))
    assert summary.error is None and summary.patched
    assert sum(t.session_id == "patched" for t in engine.vault.turns) == 30
    assert index.vectors() is matrix  # the index kept its memories' matrix
    same_matrix = 0
    for e in engines.engines():
        kept = [k for k in ("turn_layout", "topk.newer", "chains", "words") if k in before[e.preset]]
        assert kept and all(e._derived[k] is before[e.preset][k] for k in kept), e.preset
        # (An engine made before the trigram table was built holds an older matrix object:
        # it reads the index's again, as a fresh engine would.)
        if before[e.preset].get("vector_matrix", (None, None))[1] is matrix[1]:
            assert e.memory_vectors() is before[e.preset]["vectors"]
            same_matrix += 1
    assert same_matrix
    fresh_index = Index.open(read_vault(root, cache=True), make_bench_embedder("standin"),
                             path=index.path)
    try:
        fresh_vault = read_vault(root, cache=True)
        for name, c in configs.items():
            kept_engine = engines.for_preset(name)
            fresh = Engine(fresh_vault, fresh_index, c, preset=name)
            for q in (*QUERIES, "turn 7: the capacity plan owner"):
                kept_engine.clear_cache()
                fresh.clear_cache()  # (the cache stage counts its entries)
                got = kept_engine.recall(q, now=BENCH_NOW, why=asked)
                want = fresh.recall(q, now=BENCH_NOW, why=asked)
                a, b = _comparable(got), _comparable(want)
                assert a == b, (name, q, _first_difference(a, b))
            assert any(t.session_id == "patched" for t in got.turns) or not c.turns.enabled
    finally:
        fresh_index.close()
