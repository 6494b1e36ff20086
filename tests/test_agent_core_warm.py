"""RecallCore's warm-up (what the first agent recall would build lazily, built before it) and
the release of the embedder's session after the bulk embedding (its arena is most of an idle
service's memory): the warm-up is not logged, the released model loads again on the next
query, and the recall gives the same hits either way."""

from __future__ import annotations

from recall_tui.agent.core import RecallCore
from recall_tui.agent.log import read_agent_log


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
        core.release_model_memory()
        assert not core.embedder.loaded
        assert [h.id for h in core.recall(query, k=5).hits] == hits
        # a query never embedded before needs the model: it is loaded again, and used
        other = core.recall("who rotates the kubernetes certificates", k=5)
        assert core.embedder.loaded and not other.stage("vector").skipped
    finally:
        core.close()
