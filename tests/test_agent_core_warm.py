"""RecallCore's warm-up (what the first agent recall would build lazily, built before it) and
the release of the embedder's session after the bulk embedding (its arena is most of an idle
service's memory): the warm-up is not logged, the released model loads again on the next
query, and the recall gives the same hits either way."""

from __future__ import annotations

import threading

from recall_tui.agent import client
from recall_tui.agent.core import RecallCore
from recall_tui.agent.log import read_agent_log
from recall_tui.agent.service import RecallService
from tests.waiting import wait_until_sync


def test_warm_up_is_silent_and_a_released_model_loads_again(vault_copy):
    core = RecallCore(vault_copy, index="open", embedder="local", path="service")
    try:
        assert core.embedder is not None and not core.embedder.loaded
        core.warm_up()
        assert core.embedder.loaded  # the query embedder's session exists before any prompt
        assert read_agent_log(vault_copy) == []  # a warm-up is no agent's recall
        query = "postgres major upgrade analyze"
        trace = core.recall(query, k=5)
        assert not trace.stage("vector").skipped
        hits = [h.id for h in trace.hits]
        vec = core.embedder.embed([query])
        core.release_model_memory()
        assert not core.embedder.loaded
        assert core.embedder.release() is False  # nothing left to drop
        assert [h.id for h in core.recall(query, k=5).hits] == hits
        # the reloaded model (same model, same options) gives the very same vector
        again = core.embedder.embed([query])
        assert core.embedder.loaded and again.tobytes() == vec.tobytes()
        # a query never embedded before needs the model: it is loaded again, and used
        other = core.recall("who rotates the kubernetes certificates", k=5)
        assert core.embedder.loaded and not other.stage("vector").skipped
    finally:
        core.close()


def test_the_service_releases_an_idle_model_and_recalls_the_same_after(vault_copy):
    """`model_idle_s` (RECALL_TUI_MODEL_IDLE): a service with no request for that long drops
    the ONNX session; the next recall that embeds a query loads it again and ranks the same."""
    logs: list[str] = []
    svc = RecallService(vault_copy, idle_s=600, watch=False, model_idle_s=0.2, log=logs.append)
    runner = threading.Thread(target=svc.run, name="test-service", daemon=True)
    runner.start()
    try:
        assert client.wait_ready(vault_copy, timeout=120), logs
        query = {"op": "recall", "query": "postgres major upgrade analyze", "k": 8}

        def ranking(ans: dict) -> list[tuple[str, float]]:
            assert ans["ok"], ans
            vector = next(s for s in ans["trace"]["stages"] if s["name"] == "vector")
            assert not vector["skipped"], vector
            return [(h["id"], h["score"]) for h in ans["trace"]["hits"]]

        before = ranking(client.request(vault_copy, query))
        assert svc.core is not None and svc.core.embedder is not None
        emb = svc.core.embedder
        wait_until_sync(lambda: not emb.loaded and any("model released" in m for m in logs),
                        "the idle service to release its model", timeout=120)
        # forget the cached query vector and recall, so this recall must embed the query again
        assert svc.core.index is not None
        svc.core.index.vector_store.query_cache.clear()
        svc.core.engine.clear_cache()
        after = ranking(client.request(vault_copy, query))
        assert emb.loaded  # loaded again by that recall, and not released under it
        assert after == before
    finally:
        svc.stop()
        runner.join(60)


def test_always_load_is_kept_per_vault_read_and_follows_a_reread(bare_vault_copy):
    """`always_load` is worked out once per vault read (every prompt hook excludes those
    entries): a re-read vault with a new `_always-load/` entry has it at once (the list kept
    is for the vault it came from, never a stale one)."""
    core = RecallCore(bare_vault_copy, index="none", path="service")
    try:
        before = core.always_load()
        assert before and before == core.always_load() and before is not core.always_load()
        (bare_vault_copy / "_always-load" / "zz-late-rule.md").write_text(
            "---\nid: zz-late-rule\ntitle: A late rule\ntype: rule\nscope: global\n"
            "summary: Added while the service runs.\ncreated: 2026-11-01\nupdated: 2026-11-01\n"
            "---\n\nAlways say which vault a rule came from.\n", encoding="utf-8")
        core.engines.refresh()
        after = [m.id for m in core.always_load()]
        assert after == sorted([m.id for m in before] + ["zz-late-rule"],
                               key=lambda i: core.vault.memories[i].path)
    finally:
        core.close()
