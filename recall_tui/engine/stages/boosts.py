"""boosts: every multiplicative factor of the seeds, each recorded with its reason.

| factor | value | seed |
|---|---|---|
| staleness | fresh 1.0 / aging 0.85 / stale 0.5 / expired 0.2 by age since `updated` against the type's windows (past `expires`: expired) | bastra |
| recency | max(floor, 1 - age/decay_days) x (1 + abs(emotion) x 0.1), age since `updated`, clamped to 0 for a memory dated after `now` (said in the reason) | abmind |
| trust | 0.5 + 0.5 x trust / 3 | abmind |
| credibility | 1.25 if credibility <= 2, else 1.0 (as the seed states it) | abmind |
| tier | 1.3 for tier core | abmind |
| emotion | 1 + abs(emotion) x 0.02 | abmind |
| recall | 1 + 0.1 x recall count | abmind |
| relevance | 1.2 when relevance_score (else confidence) > 0 | abmind |
| spacing | 1.3 if the mean interval between recalls >= 7 days, 1.15 if >= 1 day | abmind |
| context | 1 + 0.02 (hour bucket) + 0.015 (weekday; half for the same weekday/weekend kind) + 0.03 (topic) | abmind |
| cross_channel | 0.5 for hits found only by keyword/fuzzy when the vector channel ran | abmind |
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from recall_tui.engine.config_sections import BoostsConfig, StalenessBoost
from recall_tui.engine.stages import StageContext
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.topk import by_score
from recall_tui.engine.trace import BoostFactor, Candidate
from recall_tui.vault.model import Memory

LEXICAL = frozenset({"keyword", "fuzzy"})
BUCKETS = ((0, 6, "night"), (6, 12, "morning"), (12, 18, "afternoon"), (18, 24, "evening"))


@dataclass(frozen=True)
class BoostContext:
    """What the boosts need to know beyond the memory itself."""

    now: datetime
    """The recall's time (as_of when given)."""
    channels: frozenset[str] = frozenset()
    """Channels that found the memory."""
    vector_ran: bool = False
    """Whether the vector channel ran in this recall."""
    recall_count: int = 0
    """Past recalls (tool store)."""
    recall_times: tuple[datetime, ...] = ()
    """Recent recall times (tool store, at most 20)."""
    hour: int | None = None
    """Current hour for the context boost."""
    weekday: int | None = None
    """Current weekday (0 = Monday)."""
    topic: str | None = None
    """Current topic."""


def bucket(hour: int) -> str:
    """Time-of-day bucket of an hour."""
    for lo, hi, name in BUCKETS:
        if lo <= hour < hi:
            return name
    return "night"


def staleness(m: Memory, now: datetime, cfg: StalenessBoost) -> tuple[str, float, str]:
    """(label, age in days, explanation) of a memory's lifecycle stage."""
    return _staleness(m, now, cfg, True)


def _staleness(m: Memory, now: datetime, cfg: StalenessBoost, why: bool
               ) -> tuple[str, float, str]:
    """`staleness`, its explanation written only when `why`."""
    age = (now - m.updated).total_seconds() / 86400
    if m.expires is not None and m.expires < now:
        return "expired", age, f"past expires {m.expires.date().isoformat()}" if why else ""
    w = cfg.windows.get(m.type) or cfg.windows.get("fact") or [90, 365, 1095]
    if age < 0:  # dated after `now`: not in the future's past, so as fresh as it gets
        return "fresh", age, (f"{m.type} dated {-age:.0f}d after now "
                              f"(updated {m.updated.date().isoformat()}): age taken as 0"
                              if why else "")
    if age < w[0]:
        return "fresh", age, f"{m.type} {age:.0f}d old < {w[0]}d" if why else ""
    if age < w[1]:
        return "aging", age, f"{m.type} {age:.0f}d old, aging after {w[0]}d" if why else ""
    if age < w[2]:
        return "stale", age, f"{m.type} {age:.0f}d old, stale after {w[1]}d" if why else ""
    return "expired", age, f"{m.type} {age:.0f}d old, expired after {w[2]}d" if why else ""


def compute(m: Memory, cfg: BoostsConfig, ctx: BoostContext) -> tuple[list[BoostFactor], str]:
    """The enabled factors for one memory, and its staleness label."""
    factors, label = _factors(m, cfg, ctx.now, ctx.channels, ctx.vector_ran, ctx.recall_count,
                              ctx.recall_times, ctx.hour, ctx.weekday, ctx.topic, True)
    return [BoostFactor(name, value, reason) for name, value, reason in factors], label


def _factors(m: Memory, cfg: BoostsConfig, now: datetime, channels: frozenset[str],
             vector_ran: bool, recall_count: int, recall_times: tuple[datetime, ...],
             hour: int | None, weekday: int | None, topic: str | None, why: bool
             ) -> tuple[list[tuple[str, float, str]], str]:
    """`compute` as (name, value, reason) triples (every factor is `mul`), each reason
    written only when `why`: the stage multiplies every candidate's values and writes the
    reasons out for the hits alone, with the same arguments, so they are the same."""
    out: list[tuple[str, float, str]] = []
    label, age, reason = _staleness(m, now, cfg.staleness, why)
    if cfg.staleness.enabled:
        out.append(("staleness", getattr(cfg.staleness, label),
                    f"{label}: {reason}" if why else ""))
    e = abs(m.emotion)
    if cfg.recency.enabled:
        r = cfg.recency
        used = max(age, 0.0)  # a memory dated after `now` is clamped to age 0, and says so
        base = max(r.floor, 1 - used / r.decay_days)
        v = base * (1 + e * r.emotion)
        reason = ""
        if why:
            reason = (f"max({r.floor:g}, 1 - {used:.4g}/{r.decay_days:g}) x (1 + {e:g} x "
                      f"{r.emotion:g}) = {v:.4g}")
            if age < 0:
                reason += f"; dated {-age:.0f}d after now: age clamped to 0"
        out.append(("recency", v, reason))
    if cfg.trust.enabled:
        out.append(("trust", 0.5 + 0.5 * m.trust / 3,
                    f"trust {m.trust:g}: 0.5 + 0.5 x {m.trust:g}/3" if why else ""))
    if cfg.credibility.enabled:
        c = cfg.credibility
        hit = m.credibility <= c.threshold
        out.append(("credibility", c.factor if hit else 1.0,
                    f"credibility {m.credibility:g} {'<=' if hit else '>'} {c.threshold:g}"
                    if why else ""))
    if cfg.tier.enabled:
        core = m.tier == "core"
        out.append(("tier", cfg.tier.core if core else 1.0, f"tier {m.tier}" if why else ""))
    if cfg.emotion.enabled:
        out.append(("emotion", 1 + e * cfg.emotion.per_unit,
                    f"|emotion| {e:g} x {cfg.emotion.per_unit:g}" if why else ""))
    if cfg.recall.enabled:
        out.append(("recall", 1 + cfg.recall.per_recall * recall_count,
                    f"recalled {recall_count} times" if why else ""))
    if cfg.relevance.enabled:
        rel = m.extra.get("relevance_score", m.confidence)
        try:
            relv = float(rel) if rel is not None else 0.0
        except (TypeError, ValueError):
            relv = 0.0
        out.append(("relevance", 1 + cfg.relevance.amount if relv > 0 else 1.0,
                    f"relevance {relv:g} {'> 0' if relv > 0 else '<= 0'}" if why else ""))
    if cfg.spacing.enabled:
        times = sorted(recall_times)
        if len(times) >= 2:
            avg = (times[-1] - times[0]).total_seconds() / 86400 / (len(times) - 1)
            v = cfg.spacing.week if avg >= 7 else cfg.spacing.day if avg >= 1 else 1.0
            out.append(("spacing", v,
                        f"mean interval {avg:.1f}d over {len(times)} recalls" if why else ""))
        else:
            out.append(("spacing", 1.0, f"{len(times)} recall(s): no interval" if why else ""))
    if cfg.context.enabled:
        cx = cfg.context
        add = 0.0
        parts = []
        if hour is not None and bucket(m.created.hour) == bucket(hour):
            add += cx.hour
            parts.append(f"{bucket(hour)} +{cx.hour:g}")
        if weekday is not None:
            wd = m.created.weekday()
            if wd == weekday:
                add += cx.weekday
                parts.append(f"same weekday +{cx.weekday:g}")
            elif (wd >= 5) == (weekday >= 5):
                add += cx.weekday / 2
                parts.append(f"same {'weekend' if wd >= 5 else 'weekday'} kind +{cx.weekday / 2:g}")
        if topic and (m.topic_key == topic or m.topic_path.startswith(topic)):
            add += cx.topic
            parts.append(f"topic {topic} +{cx.topic:g}")
        out.append(("context", 1 + add, ", ".join(parts) or "no context match"))
    if cfg.cross_channel.enabled:
        lexical_only = bool(channels) and channels <= LEXICAL
        if vector_ran and lexical_only:
            out.append(("cross_channel", cfg.cross_channel.penalty,
                        "found only by keyword/fuzzy, not confirmed by vector"))
        else:
            out.append(("cross_channel", 1.0,
                        "vector did not run" if not vector_ran else "confirmed"))
    return out, label


def apply(score: float, factors: list[BoostFactor]) -> float:
    """score x every `mul` factor + every `add` amount."""
    s = score
    for f in factors:
        if f.mode == "mul":
            s *= f.value
    for f in factors:
        if f.mode == "add":
            s += f.value
    return s


class Factors(Mapping[str, tuple[BoostFactor, ...]]):
    """id -> its boost factors with their reasons, written out the first time they are read
    (the trace reads the hits' only): the stage multiplies every candidate's values without
    writing a reason, then `build` runs `compute` with the same arguments for a memory read
    here, so its factors are the very ones `compute` gives."""

    def __init__(self, ids: list[str], build: Callable[[str], tuple[BoostFactor, ...]]):
        self._ids = ids
        self._known = frozenset(ids)
        self._build = build
        self._done: dict[str, tuple[BoostFactor, ...]] = {}

    def __getitem__(self, memory_id: str) -> tuple[BoostFactor, ...]:
        got = self._done.get(memory_id)
        if got is None:
            if memory_id not in self._known:
                raise KeyError(memory_id)
            got = self._done[memory_id] = self._build(memory_id)
        return got

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.boosts
    vault = engine.vault
    st.pre_boost_rank = {mid: i for i, mid in enumerate(st.order, 1)}
    t = st.as_of or st.now
    hour = st.filters.context_hour if st.filters.context_hour is not None else t.hour
    wday = st.filters.context_weekday if st.filters.context_weekday is not None else t.weekday()
    topic = st.filters.context_topic
    need_stats = cfg.recall.enabled or cfg.spacing.enabled
    args: dict[str, tuple[Memory, frozenset[str], int, tuple[datetime, ...]]] = {}
    values: dict[str, list[tuple[str, float, str]]] = {}
    for mid in st.order:
        m = vault.memories[mid]
        chans = frozenset(c.channel for c in st.channel_scores.get(mid, ()))
        count = 0
        times: tuple[datetime, ...] = ()
        if need_stats and engine.index is not None:
            try:
                rs = engine.index.recall_stats(mid)
                count, times = int(rs.count), tuple(rs.times)
            except Exception:  # a missing store means no history, not a failed recall
                count, times = 0, ()
        args[mid] = (m, chans, count, times)
        factors, label = _factors(m, cfg, t, chans, st.vector_ran, count, times, hour, wday,
                                  topic, False)
        values[mid] = factors
        st.staleness[mid] = label
        score = st.score[mid]  # `apply`: every factor is `mul`, in order
        for _name, value, _reason in factors:
            score *= value
        st.boosted[mid] = score

    vector_ran = st.vector_ran  # not `st` itself: a closure kept on `st` would make a cycle

    def written(mid: str) -> tuple[BoostFactor, ...]:
        m, chans, count, times = args[mid]
        return tuple(compute(m, cfg, BoostContext(t, chans, vector_ran, count, times, hour,
                                                  wday, topic))[0])

    st.boosts = Factors(list(args), written)
    st.score = dict(st.boosted)
    st.order = by_score(engine, st.score, st.order)
    enabled = [n for n in ("staleness", "recency", "trust", "credibility", "tier", "emotion",
                           "recall", "relevance", "spacing", "context", "cross_channel")
               if getattr(cfg, n).enabled]
    out = Out(info=[("enabled", " ".join(enabled) or "(none)")])
    if not enabled:
        out.reason = "no boost enabled"
    for rank, mid in enumerate(st.order, 1):
        prod = " ".join(f"{name}x{value:.3g}" for name, value, _ in values[mid] if value != 1.0)
        out.candidates.append(Candidate(mid, st.score[mid], rank, prod))
    return out
