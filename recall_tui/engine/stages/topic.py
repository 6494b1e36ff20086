"""topic: exact topic_key lookup (memoturn), newest first."""

from __future__ import annotations

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.parse import looks_like_topic_key
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate


def resolve_key(engine: StageContext, st: RecallState) -> tuple[str | None, str]:
    """The topic key of this recall and where it came from."""
    if st.topic_key:
        return st.topic_key, "topic_key argument"
    for key, value in st.query.inline:
        if key == "topic":
            return value, "inline topic: filter"
    raw = st.query.raw.strip()
    if st.cfg.topic.detect_in_query and looks_like_topic_key(raw) and raw in engine.topic_keys():
        return raw, "the query is a topic key"
    return None, ""


def run(engine: StageContext, st: RecallState) -> Out:
    if not st.cfg.topic.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    key, source = resolve_key(engine, st)
    if key is None:
        return Out(skipped=True, reason="no topic_key given or detected")
    members = [m for m in engine.vault.memories.values() if m.topic_key == key]
    members.sort(key=lambda m: (-m.updated.timestamp(), m.id))
    out = Out(info=[("topic_key", key), ("from", source), ("members", str(len(members)))])
    for rank, m in enumerate(members, 1):
        out.candidates.append(Candidate(m.id, 1.0, rank, key))
    return out
