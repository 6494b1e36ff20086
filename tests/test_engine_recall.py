"""Engine.recall as a whole: the cache, empty and hostile queries, every stage in every trace,
cancel, why-not answers naming the stage, load_memory, the JSON round trip."""

from __future__ import annotations

import pytest

from recall_tui.engine import Cancelled, Engine
from recall_tui.engine.config import Config
from recall_tui.engine.trace import STAGE_ORDER, Trace
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT


@pytest.fixture(scope="module")
def engine():
    return Engine(read_vault(SAMPLE_VAULT), None, Config())


def test_every_stage_present_in_order(engine):
    tr = engine.recall("postgres upgrade", now=PINNED_NOW)
    assert [s.name for s in tr.stages] == list(STAGE_ORDER)
    for s in tr.stages:
        if s.skipped:
            assert s.reason, f"{s.name} skipped without a reason"
            assert s.ms == 0.0
        for i, c in enumerate(s.candidates, 1):
            assert c.rank == i
    assert tr.hits and tr.config_hash == Config().hash() and tr.config == Config().to_dict()
    assert tr.vault["memories"] == len(engine.vault.memories)


@pytest.mark.parametrize("q", ["", "   ", "the of and to", "!!!", "\x00\x01", "a" * 5000,
                               "\"unbalanced OR (", "type:", "as_of:notadate foo", "🦀🦀"])
def test_never_raises_and_empty_is_valid(engine, q):
    tr = engine.recall(q, now=PINNED_NOW)
    assert [s.name for s in tr.stages] == list(STAGE_ORDER)
    Trace.from_json(tr.to_json())  # valid and round-trips
    if q.strip() in ("", "the of and to", "!!!"):
        assert tr.hits == ()
        assert tr.stage("keyword").skipped and tr.stage("keyword").reason == "no query terms"


def test_cache_hit_then_clear(engine):
    engine.clear_cache()
    first = engine.recall("kubectl production", now=PINNED_NOW)
    assert not first.cache_hit and first.stage("cache").reason == "miss"
    second = engine.recall("kubectl production", now=PINNED_NOW, why=[first.hits[0].id])
    assert second.cache_hit and second.stage("cache").reason == "cache hit"
    assert [h.id for h in second.hits] == [h.id for h in first.hits]
    for s in second.stages:  # a cache hit shows the cached run's stages, marked as cached
        if s.name not in ("query.parse", "cache"):
            before = first.stage(s.name)
            assert s.cached and not before.cached
            assert (s.skipped, s.reason, s.candidates, s.dropped, s.info) == (
                before.skipped, before.reason, before.candidates, before.dropped, before.info)
    assert second.why[0].found and second.why[0].rank == 1
    other = engine.recall("kubectl production", now=PINNED_NOW, k=2)
    assert not other.cache_hit  # k is part of the key
    engine.clear_cache()
    assert not engine.recall("kubectl production", now=PINNED_NOW).cache_hit


def test_cache_cleared_on_vault_change(engine, vault_copy):
    eng = Engine(read_vault(vault_copy), None, Config())
    eng.recall("kubectl production", now=PINNED_NOW)
    p = next(vault_copy.rglob("prod-safety-rules.md"))
    p.write_text(p.read_text().replace("Never touch production", "Never touch prod"))
    eng.set_vault(read_vault(vault_copy))
    assert not eng.recall("kubectl production", now=PINNED_NOW).cache_hit


def test_cancel_between_stages(engine):
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        engine.recall("postgres", now=PINNED_NOW, cancel=cancel, config=Config().with_value("cache.enabled", False))


def test_why_answers_name_the_stage(engine):
    tr = engine.recall("postgres version billing database", now=PINNED_NOW,
                       why=["billing-db-postgres14", "no-such-id", "diet-vegan"],
                       config=Config().with_value("cache.enabled", False))
    w = {x.id: x for x in tr.why}
    assert w["no-such-id"].stage == "vault" and "unknown id" in w["no-such-id"].reason
    assert w["billing-db-postgres14"].stage == "filter"
    assert w["billing-db-postgres14"].reason.startswith("superseded by")
    assert ("keyword", w["billing-db-postgres14"].channel_ranks[0][1]) in w["billing-db-postgres14"].channel_ranks
    v = w["diet-vegan"]
    assert v.stage == "fuse" and v.reason == "not matched by any channel"
    assert any(d.startswith("keyword: none of the query terms") for d in v.details)
    top = tr.hits[0].id
    tr2 = engine.recall("postgres version billing database", now=PINNED_NOW, why=[top])
    assert tr2.why[0].found and tr2.why[0].stage == "hits" and tr2.why[0].rank == 1


def test_lean_and_full_payloads(engine):
    lean = engine.recall("kubectl production", now=PINNED_NOW, verbosity="lean")
    full = engine.recall("kubectl production", now=PINNED_NOW, verbosity="full")
    assert all(len(h.summary) <= 161 for h in lean.hits)
    assert all(len(h.summary) <= 401 for h in full.hits)
    assert any(len(f.summary) > len(s.summary) for f, s in zip(full.hits, lean.hits, strict=True))


def test_load_memory(engine):
    m = next(m for m in engine.vault.memories.values() if "## Related" in m.body)
    lean = engine.load_memory(m.id)
    full = engine.load_memory(m.id, "full")
    assert "## Related" not in lean["body"] and full["body"] == m.body
    assert set(lean["frontmatter"]) <= set(full["frontmatter"]) | {"id", "title", "type", "scope",
                                                                  "summary", "tags", "topic_path",
                                                                  "status", "created", "updated"}
    assert len(full["frontmatter"]) >= len(m.frontmatter)
    with pytest.raises(KeyError):
        engine.load_memory("no-such-id")


@pytest.mark.parametrize("preset", ["default", "abmind", "bastra", "memoria", "memoryvault", "memoturn"])
def test_empty_vault_gives_a_valid_empty_trace(tmp_path, preset):
    from recall_tui.engine.config import load_preset

    (tmp_path / "v").mkdir()
    eng = Engine(read_vault(tmp_path / "v"), None, load_preset(preset))
    tr = eng.recall("postgres", now=PINNED_NOW, why=["x"])
    assert tr.hits == () and len(tr.stages) == len(STAGE_ORDER)
    assert tr.why[0].stage == "vault"
