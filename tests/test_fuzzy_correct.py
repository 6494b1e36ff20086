"""The fuzzy channel's `correct` mode: query words missing from the index's vocabulary are
corrected (edit distance) or completed (substring) against the indexed words, the trace says
which word became what, and the seed's trigram scan stays available (`trigram_mode = scan`,
abmind's preset). Real reader, real apsw index, no embedder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.index.embed import make_embedder
from recall_tui.index.store import Index
from recall_tui.index.vocab import osa_distance
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


@pytest.fixture()
def small(tmp_path):
    files = dict(
        [
            mem("pg", "Postgres upgrade runbook", "How we upgraded Postgres 15 to 16",
                tags=["postgresql"]),
            mem("k8s", "Kubernetes ingress notes", "Ingress controller on the homelab cluster"),
            mem("bread", "Sourdough starter", "Feed the starter twice a day"),
            mem("cafe", "Café in Zürich", "Meeting spot near the station"),
        ]
    )
    vault = write_vault(tmp_path / "v", files)
    idx = Index.open(vault, make_embedder("none")[0])
    yield vault, idx
    idx.close()


def _fuzzy(engine: Engine, query: str, mode: str):
    cfg = load_preset("default")
    cfg = replace(cfg, fuzzy=replace(cfg.fuzzy, trigram_mode=mode))
    trace = engine.recall(query, now=PINNED_NOW, config=cfg)
    return next(s for s in trace.stages if s.name == "fuzzy")


def test_osa_distance():
    assert osa_distance("postgress", "postgres", 2) == 1
    assert osa_distance("upgarde", "upgrade", 2) == 1  # one transposition
    assert osa_distance("kitten", "sitting", 3) == 3
    assert osa_distance("kitten", "sitting", 1) == 2  # stops early: limit + 1


def test_vocabulary_corrects_and_completes(small):
    _, idx = small
    fixes = {c.word: c for c in idx.correct_terms(["postgress", "ingres", "sourdo", "zurich",
                                                   "runbook", "qqqqq"])}
    assert "runbook" not in fixes  # known words are left alone
    assert "zurich" not in fixes  # diacritics folded on both sides
    assert fixes["postgress"].corrected == ("postgres",)
    assert fixes["postgress"].distance == 1
    assert "ingress" in fixes["ingres"].terms
    assert fixes["sourdo"].completed == ("sourdough",)
    assert fixes["qqqqq"].terms == ()
    assert "postgress→postgres (1 edit)" == fixes["postgress"].describe()


def test_correct_mode_finds_typos_and_says_what_it_did(small):
    vault, idx = small
    engine = Engine(vault, idx, load_preset("default"))
    st = _fuzzy(engine, "postgress upgarde", "correct")
    info = dict(st.info)
    assert "postgress→postgres" in info["corrections"]
    assert "upgarde→upgrade" in info["corrections"]
    assert [c.id for c in st.candidates][:1] == ["pg"]
    assert any(c.note == "corrected" for c in st.candidates)
    # A fragment being typed is completed.
    st = _fuzzy(engine, "kuberne", "correct")
    assert "kuberne→kubernetes" in dict(st.info)["corrections"]
    assert [c.id for c in st.candidates] == ["k8s"]


def test_scan_mode_is_the_seed_trigram_query(small):
    vault, idx = small
    engine = Engine(vault, idx, load_preset("default"))
    st = _fuzzy(engine, "postgress", "scan")
    info = dict(st.info)
    assert "corrections" not in info and "trigram" in info
    assert st.candidates[0].id == "pg"
    assert load_preset("abmind").fuzzy.trigram_mode == "scan"
    assert load_preset("default").fuzzy.trigram_mode == "correct"


def test_vocabulary_follows_changes(small):
    vault, idx = small
    root = Path(vault.root)
    assert "ingress" in idx.vocabulary()
    (root / "k8s.md").unlink()
    (root / "new.md").write_text(
        "---\nid: new\ntitle: Zeppelin hangar\nsummary: airships\n"
        "created: 2026-11-01T10:00:00Z\n---\nairships\n", encoding="utf-8")
    idx.update_files(read_vault(root))
    voc = idx.vocabulary()
    assert "zeppelin" in voc
    assert idx.correct_terms(["zeppelim"])[0].corrected == ("zeppelin",)
    # A word no memory holds any more may stay in the vocabulary (refreshed, not rebuilt),
    # with no document left: a correction to it finds nothing.
    if "ingress" in voc:
        assert voc.df[voc.ids["ingress"]] == 0
    engine = Engine(read_vault(root), idx, load_preset("default"))
    st = _fuzzy(engine, "ingres", "correct")
    assert not [c for c in st.candidates if c.note == "corrected"]
