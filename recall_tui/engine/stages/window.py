"""window: context from the neighbouring turns of the same session.

A raw chat turn often holds the answer while its neighbour holds the words of the question
("where did you end up going?" / "Lisbon!"). For every turn within `size` turns of a scored
turn of the same session, this stage adds

    weight x decay^(distance - 1) x (the neighbour's score before this stage)

taking the best such neighbour, so a turn next to a strong hit rises and an unscored turn
next to one comes in. Only turns take part (a `session_id` and a speaker; see turn_layout),
so a vault of extracted memories is unchanged. The neighbour, its distance and the added
amount are in the trace."""

from __future__ import annotations

from collections.abc import Mapping

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.turn_layout import layout, note, resort
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.trace import Candidate


def spread(scores: dict[str, float], sessions: Mapping[str, tuple[str, ...]],
           place: Mapping[str, tuple[str, int]], size: int, weight: float,
           decay: float) -> dict[str, tuple[float, str, int]]:
    """turn id -> (amount added, the neighbour it came from, distance): for every turn
    within `size` of a scored turn, the best `weight x decay^(d-1) x score`."""
    out: dict[str, tuple[float, str, int]] = {}
    for src, s in scores.items():
        if s <= 0 or src not in place:
            continue
        sid, i = place[src]
        ids = sessions[sid]
        for d in range(1, size + 1):
            add = weight * decay ** (d - 1) * s
            for j in (i - d, i + d):
                if 0 <= j < len(ids):
                    tid = ids[j]
                    if tid not in out or add > out[tid][0]:
                        out[tid] = (add, src, d)
    return out


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.window
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if not st.order:
        return Out(skipped=True, reason="no candidates")
    lay = layout(engine)
    if not lay.sessions:
        return Out(skipped=True, reason="no turns (no memory has both a session_id and a speaker)")
    before = dict(st.score)
    added = spread(before, lay.sessions, lay.place, cfg.size, cfg.weight, cfg.decay)
    new = 0
    for tid, (add, src, d) in added.items():
        if tid not in st.score:
            new += 1
        st.score[tid] = st.score.get(tid, 0.0) + add
        note(st, tid, f"window: +{add:.4g} from {src} ({d} turn{'s' if d > 1 else ''} away, "
                      f"{cfg.weight:g} x {cfg.decay:g}^{d - 1} x {before[src]:.4g})")
    st.window_added.update({t: (a, s, d) for t, (a, s, d) in added.items()})
    resort(engine, st)
    out = Out(info=[("size", str(cfg.size)), ("weight", f"{cfg.weight:g}"),
                    ("decay", f"{cfg.decay:g}"), ("raised", str(len(added) - new)),
                    ("added", str(new))])
    ranked = sorted(added.items(), key=lambda kv: (-kv[1][0], kv[0]))
    for rank, (tid, (add, src, d)) in enumerate(ranked[:200], 1):
        out.candidates.append(Candidate(tid, st.score[tid], rank, f"+{add:.4g} from {src} "
                                        f"at distance {d}"))
    return out
