"""The calibrated floor's shipped probe vectors (recall_tui/data/probe-vectors.json): made
from today's probe texts by the local model, equal to what embedding the probes gives, and
giving the floor exactly the value the embedded probes give."""

from __future__ import annotations

import json
from importlib.resources import files

import numpy as np

from recall_tui.engine import calibration, probe_vectors
from recall_tui.engine.pipeline import open_engine
from recall_tui.index.embed import LOCAL_MODEL, LocalEmbedder


def test_the_file_matches_today_s_probes_and_model():
    data = json.loads((files("recall_tui") / "data" / probe_vectors.FILE).read_text("utf-8"))
    assert data["model"] == LOCAL_MODEL
    assert data["probes_sha256"] == calibration.probes_digest(), (
        "PROBES changed: run scripts/make_probe_vectors.py")
    assert len(data["vectors"]) == len(calibration.PROBES)
    assert probe_vectors.shipped(LOCAL_MODEL, calibration.probes_digest()) is not None
    # another model or other probe texts never get them
    assert probe_vectors.shipped("nomic-embed-text", calibration.probes_digest()) is None
    assert probe_vectors.shipped(LOCAL_MODEL, "0" * 64) is None


def test_shipped_vectors_are_what_the_local_model_gives():
    emb = LocalEmbedder()
    got = np.stack([emb.embed([t])[0] for t in calibration.PROBES])
    ship = np.stack(probe_vectors.shipped(LOCAL_MODEL, calibration.probes_digest()))
    # same model, same one-text runs: equal up to the float noise of another CPU's kernels
    assert np.allclose(got, ship, atol=1e-5), float(np.abs(got - ship).max())


def test_the_floor_is_the_same_with_shipped_or_embedded_probes(session_vault_copy,
                                                                monkeypatch):
    engine = open_engine(session_vault_copy, embedder="local")
    try:
        with_shipped = calibration.probe_bests(engine)
        assert calibration._shipped_for(engine.index) is not None
        engine._derived.pop("probe_bests")
        monkeypatch.setattr(calibration, "_shipped_for", lambda index: None)
        embedded = calibration.probe_bests(engine)
    finally:
        if engine.index is not None:
            engine.index.close()
    assert np.allclose(with_shipped, embedded, atol=1e-6)
    assert len(with_shipped) == len(calibration.PROBES) and max(with_shipped) > 0
