"""Re-running a recorded recall (`recall-tui log show ID --rerun [PRESET]`): the same query,
k, recall time (`now`), as-of time and per-call filters as the record's trace, under another
preset (or the vault's active one), and the difference: ids gained and lost, rank moves.

The filters come back from the trace's `query.parse` stage, which lists every per-call filter
the caller asked for (`filter types = decision,lesson`, ...).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_tui.agent.log import AgentRecall
from recall_tui.engine import Filters
from recall_tui.engine.trace import Trace, trace_time


def filters_of(trace: Trace) -> Filters:
    """The per-call filters a recall ran with, read back from its trace."""
    st = trace.stage("query.parse")
    kw: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(Filters)}
    for key, value in (st.info if st is not None else ()):
        if not key.startswith("filter "):
            continue
        name = key[len("filter "):]
        f = fields.get(name)
        if f is None:
            continue
        default = f.default
        if isinstance(default, tuple):
            kw[name] = tuple(v for v in value.split(",") if v)
        elif value in ("True", "False"):
            kw[name] = value == "True"
        else:
            for conv in (int, float):
                try:
                    kw[name] = conv(value)
                    break
                except ValueError:
                    continue
            else:
                kw[name] = value
    return Filters(**kw)


@dataclass(frozen=True)
class RerunDiff:
    """The recorded hits against the re-run's."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    moved: tuple[tuple[str, int, int], ...]
    """(id, rank before, rank after) for the ids in both whose rank changed."""

    def to_dict(self) -> dict[str, Any]:
        return {"before": list(self.before), "after": list(self.after), "gained": list(self.gained),
                "lost": list(self.lost),
                "moved": [{"id": i, "from": a, "to": b} for i, a, b in self.moved]}


def diff(before: Trace, after: Trace) -> RerunDiff:
    b = [h.id for h in before.hits]
    a = [h.id for h in after.hits]
    rank_b = {i: n for n, i in enumerate(b, 1)}
    rank_a = {i: n for n, i in enumerate(a, 1)}
    return RerunDiff(tuple(b), tuple(a), tuple(i for i in a if i not in rank_b),
                     tuple(i for i in b if i not in rank_a),
                     tuple((i, rank_b[i], rank_a[i]) for i in a if i in rank_b and rank_b[i] != rank_a[i]))


def rerun(root: str | os.PathLike, rec: AgentRecall, preset: str | None = None) -> tuple[Trace, RerunDiff, str]:
    """Re-run `rec`'s recall under `preset` (None: the vault's active preset). Returns the new
    trace, the difference, and a warning ("" or why the active preset was replaced). The vault
    is read as it is now, with its index read-only when there is one (nothing is written).
    Raises ValueError for a record without a trace (a SessionStart) or an unknown preset."""
    from recall_tui.agent.core import RecallCore

    old = rec.trace
    if old is None:
        raise ValueError(f"record {rec.id} ran no recall (event {rec.event}): nothing to re-run")
    root = Path(root)
    has_index = (root / ".recall" / "index.sqlite").exists()
    core = RecallCore(root, preset=preset, index="read-only" if has_index else "none")
    try:
        eng = core.engine_for(preset)
        new = eng.recall(old.query, k=old.k, now=trace_time(old.now), as_of=trace_time(old.as_of),
                         filters=filters_of(old))
    finally:
        core.close()
    return new, diff(old, new), core.warning


__all__ = ["RerunDiff", "diff", "filters_of", "rerun"]
