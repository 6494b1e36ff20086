"""Progressive open (engine side): the engine answers keyword/fuzzy/topic recalls while the
vectors are still being made, the vector stage says `embedding N / M` until they exist, the
statuses go reading -> indexing -> turns -> embedding -> ready, and the vectors then take
part. The session logs are read and indexed after the engine is usable (phase `turns`): until
then the turn stage says so.

The embedder is the bench's deterministic stand-in (a real embedder of this project), held at
a gate so the intermediate state can be observed without racing it."""

from __future__ import annotations

import re
import shutil
import threading

import pytest

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.engine.opening import PHASES, open_progressive
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.waiting import wait_until_sync


class GatedStandin(StandinEmbedder):
    """The stand-in embedder, waiting for `gate` before embedding memories (not queries)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.calls = 0

    def embed(self, texts):
        if len(texts) > 1 or self.calls == 0:
            assert self.gate.wait(120), "the test never opened the gate"
        self.calls += 1
        return super().embed(texts)


@pytest.fixture()
def vault_dir(tmp_path):
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


def _stage(trace, name):
    return next(s for s in trace.stages if s.name == name)


def test_usable_before_the_vectors_then_ready(vault_dir):
    emb = GatedStandin()
    seen = []
    opening = open_progressive(vault_dir, embedder=emb, on_status=seen.append)
    engine = opening.wait_usable(timeout=120)
    assert engine is not None, opening.status
    assert opening.status.usable and opening.status.phase in ("turns", "embedding")
    wait_until_sync(lambda: opening.status.phase == "embedding", "the embedding phase",
                    timeout=120)
    assert re.fullmatch(r"embedding \d[\d,]* / [\d,]+", opening.status.message)
    trace = engine.recall("postgres upgrade", now=PINNED_NOW)
    vec = _stage(trace, "vector")
    assert vec.skipped and re.fullmatch(r"embedding \d[\d,]* / [\d,]+", vec.reason), vec.reason
    assert int(vec.reason.rsplit(" ", 1)[1].replace(",", "")) > 0, vec.reason
    assert trace.hits, "keyword and fuzzy answer while the vectors are pending"
    assert not _stage(trace, "keyword").skipped

    emb.gate.set()
    assert opening.wait_ready(timeout=300), "the open did not finish"
    assert opening.status.phase == "ready", opening.status
    trace = engine.recall("postgres upgrade", now=PINNED_NOW)
    vec = _stage(trace, "vector")
    assert not vec.skipped, vec.reason
    info = dict(vec.info)  # stand-in vectors are random: most fall under the threshold
    assert len(vec.candidates) + int(info["under_threshold"]) > 0
    assert engine.index.embedding_progress() is None
    assert engine.index.report.vectors == len(engine.vault.memories)
    # Phases in order, each known, progress never past its total.
    phases = [s.phase for s in seen]
    assert all(p in PHASES for p in phases)
    order = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
    assert order == ["reading", "indexing", "turns", "embedding", "ready"]
    assert all(s.done <= s.total for s in seen if s.total)
    assert opening.first_usable_ms is not None and opening.ready_ms >= opening.first_usable_ms
    engine.index.close()


def test_reopen_uses_the_stored_vectors(vault_dir):
    emb = StandinEmbedder()
    first = open_progressive(vault_dir, embedder=emb)
    assert first.wait_ready(300) and first.status.phase == "ready"
    first.engine.index.close()
    again = open_progressive(vault_dir, embedder=emb)
    assert again.wait_ready(300) and again.status.phase == "ready"
    rep = again.engine.index.report
    assert rep.embedded == 0 and rep.vectors == len(again.engine.vault.memories)
    # every vector exists: nothing is deferred, the vector stage runs from the first recall
    assert not again.vectors_deferred and again.engine.index.embedding_progress() is None
    again.engine.index.close()


def test_a_failure_is_reported(tmp_path):
    opening = open_progressive(tmp_path / "missing", embedder=StandinEmbedder())
    assert opening.wait_ready(60)
    assert opening.status.phase == "failed" and "FileNotFoundError" in opening.status.error
    assert opening.wait_usable(1) is None


def test_deferred_index_open_and_fill(vault_dir):
    vault = read_vault(vault_dir)
    idx = Index.open(vault, StandinEmbedder(), defer_vectors=True)
    assert idx.report.vectors == 0 and idx.embedding_progress() == (0, len(vault.memories))
    assert idx.fts("postgres", 5)
    rep = idx.fill_vectors()
    assert idx.embedding_progress() is None
    assert rep.vectors == len(vault.memories) and rep.added == len(vault.memories)
    idx.close()


class LazyStandin(StandinEmbedder):
    """The stand-in behaving like the local model: `loaded` False until the first embedding,
    which records the open's phase at that moment."""

    def __init__(self, seen: list) -> None:
        self.seen = seen
        self.loaded = False
        self.first_call_phase: str | None = None

    def embed(self, texts):
        if not self.loaded:
            self.first_call_phase = self.seen[-1].phase if self.seen else "starting"
            self.loaded = True
        return super().embed(texts)


def test_a_first_open_loads_the_model_only_after_the_text_is_usable(vault_dir):
    # Loading the model (a second of imports holding the GIL) while the vault is read and
    # its text indexed would only delay the first results of a new vault.
    seen: list = []
    emb = LazyStandin(seen)
    opening = open_progressive(vault_dir, embedder=emb, on_status=seen.append)
    assert opening.wait_ready(300) and opening.status.phase == "ready", opening.status
    assert emb.first_call_phase == "embedding", emb.first_call_phase
    opening.engine.index.close()
    # A re-open (the index exists) loads it while reading: the first recall embeds its query.
    seen2: list = []
    emb2 = LazyStandin(seen2)
    again = open_progressive(vault_dir, embedder=emb2, on_status=seen2.append)
    assert again.wait_ready(300) and again.status.phase == "ready", again.status
    assert not again.vectors_deferred
    wait_until_sync(lambda: emb2.loaded, "the model preloaded on a re-open")
    again.engine.index.close()


def test_the_turns_are_indexed_after_the_memories(vault_dir):
    # The open is held in its `turns` phase (its status callback waits): the engine answers,
    # the turn stage says the turns are still being indexed; then the turns arrive.
    from recall_tui.engine.config import Config
    from recall_tui.engine.stages.turns import TURNS_PENDING

    hold = threading.Event()

    def on_status(st):
        if st.phase == "turns" and st.total and st.done == 0:  # (the read, after usable)
            assert hold.wait(120), "the test never let the open go on"

    opening = open_progressive(vault_dir, embedder=StandinEmbedder(), on_status=on_status)
    engine = opening.wait_usable(timeout=120)
    assert engine is not None, opening.status
    assert engine.vault.turns == () and engine.index.turns_pending()
    first = engine.vault
    cfg = Config().with_value("turns.enabled", True).with_value("turns.threshold", -1.0)
    trace = engine.recall("postgres upgrade", now=PINNED_NOW, config=cfg)
    turns = _stage(trace, "turns")
    assert turns.skipped and turns.reason == TURNS_PENDING, turns.reason
    assert trace.hits and not trace.turns
    hold.set()
    assert opening.wait_ready(timeout=300) and opening.status.phase == "ready", opening.status
    full = read_vault(vault_dir)
    assert len(engine.vault.turns) == len(full.turns) > 0
    assert engine.index.report.turns == len(full.turns) and not engine.index.turns_pending()
    assert opening.turns_ms is not None and opening.turns_ms >= opening.first_usable_ms
    trace = engine.recall("postgres upgrade", now=PINNED_NOW, config=cfg)
    assert not _stage(trace, "turns").skipped and trace.turns
    # The memories are the first read's objects (the memo): nothing built from them is redone.
    assert engine.vault is not first
    assert all(engine.vault.memories[k] is m for k, m in first.memories.items())
    engine.index.close()


def test_a_failed_turns_phase_is_said_by_the_turn_stage(vault_dir, monkeypatch):
    # The session logs cannot be indexed (the turns phase fails after the engine answers):
    # the open says failed, the engine keeps answering, and its turn stage says why instead
    # of "still being indexed" for ever.
    from recall_tui.engine.config import Config
    from recall_tui.engine.stages.turns import TURNS_PENDING

    def refuse(self, vault, progress=None):
        raise OSError("disk full while indexing the turns")

    monkeypatch.setattr(Index, "index_turns", refuse)
    opening = open_progressive(vault_dir, embedder=StandinEmbedder())
    assert opening.wait_ready(timeout=300)
    assert opening.status.phase == "failed" and "disk full" in opening.status.error
    engine = opening.engine
    assert engine is not None and not engine.index.turns_pending()
    cfg = Config().with_value("turns.enabled", True)
    trace = engine.recall("postgres upgrade", now=PINNED_NOW, config=cfg)
    turns = _stage(trace, "turns")
    assert turns.skipped and turns.reason != TURNS_PENDING
    assert turns.reason.startswith("turns not indexed: OSError: disk full"), turns.reason
    assert trace.hits
    engine.index.close()
