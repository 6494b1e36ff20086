"""The recall trace: what every stage did, why every hit ranked, where a missing memory fell out.

Typed frozen dataclasses, serialised to a versioned JSON schema (`TRACE_VERSION`, documented in
docs/trace.md). `to_json` / `from_json` round-trip exactly, so a recorded trace can be replayed
in the UI on another machine. Headless: no textual, no rich.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TRACE_VERSION = 1

#: Pipeline stages in order (pipeline.md). The engine emits a StageRecord for each, run or skipped.
STAGE_ORDER: tuple[str, ...] = (
    "query.parse",
    "cache",
    "keyword",
    "fuzzy",
    "vector",
    "signature",
    "topic",
    "graph",
    "consolidation",
    "turns",
    "fuse",
    "short-circuit",
    "speaker",
    "window",
    "hop2",
    "hops",
    "filter",
    "boosts",
    "rerank",
    "mmr",
    "floor",
    "enrich",
)

#: Stages whose candidates are channel rankings that take part in fusion.
CHANNELS: tuple[str, ...] = ("keyword", "fuzzy", "vector", "signature", "topic", "graph")


@dataclass(frozen=True, init=False)
class Candidate:
    """One candidate a stage produced."""

    id: str
    """Memory id (or `digest:...` / `turn:...` for the consolidation and turns stages)."""
    score: float
    """The stage's raw score (BM25, cosine, Hamming similarity, RRF sum, boosted score...)."""
    rank: int
    """1-based rank within the stage."""
    note: str = ""
    """Short stage-specific detail, e.g. the matched snippet or the sub-query that found it."""

    def __init__(self, id: str, score: float, rank: int, note: str = "") -> None:
        # The frozen dataclass's own __init__ sets each field through object.__setattr__;
        # every stage makes one of these per candidate per recall, so the fields go straight
        # into the instance dict (where that __init__ puts them: equality, hash, repr,
        # `fields` and `replace` are the dataclass's).
        d = self.__dict__
        d["id"] = id
        d["score"] = score
        d["rank"] = rank
        d["note"] = note


@dataclass(frozen=True, init=False)
class Dropped:
    """A memory a stage removed, and why."""

    id: str
    reason: str

    def __init__(self, id: str, reason: str) -> None:  # as Candidate's
        d = self.__dict__
        d["id"] = id
        d["reason"] = reason


@dataclass(frozen=True)
class StageRecord:
    """What one stage did."""

    name: str
    start_ms: float
    """Start, in ms since the recall began."""
    ms: float
    """Duration in ms (0 when skipped)."""
    skipped: bool = False
    reason: str = ""
    """Why the stage was skipped, or a note on how it ran (e.g. `cache hit`)."""
    candidates: tuple[Candidate, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    info: tuple[tuple[str, str], ...] = ()
    """Extra key/value facts (e.g. ("terms", "postgres upgrade"), ("embedder", "local"))."""
    cached: bool = False
    """This record was copied from the cached recall a cache hit answered with (its ms are
    the original run's). Absent in traces written before it existed: read as False."""

    def info_dict(self) -> dict[str, str]:
        return dict(self.info)


@dataclass(frozen=True, init=False)
class ChannelScore:
    """One channel's view of a hit: raw score, rank, and its share of the fused score."""

    channel: str
    raw: float
    rank: int
    weight: float = 1.0
    contribution: float = 0.0
    """RRF share `weight / (k + rank)`, the convex term `weight x min-max normalised raw`, or
    the linear-merge term."""

    def __init__(self, channel: str, raw: float, rank: int, weight: float = 1.0,
                 contribution: float = 0.0) -> None:  # as Candidate's: fuse makes one per
        d = self.__dict__  # channel per candidate per recall
        d["channel"] = channel
        d["raw"] = raw
        d["rank"] = rank
        d["weight"] = weight
        d["contribution"] = contribution


@dataclass(frozen=True)
class MatchedTerms:
    """Query terms matched in one field by the keyword stage."""

    field: str
    terms: tuple[str, ...]
    weight: float = 1.0


@dataclass(frozen=True)
class BoostFactor:
    """One multiplicative (or additive) factor applied in the boosts stage."""

    name: str
    value: float
    """The factor (for `mul`) or the amount (for `add`)."""
    reason: str
    mode: str = "mul"
    """`mul` or `add`."""


@dataclass(frozen=True, init=False)
class HopInfo:
    """How a 1-hop neighbour came in."""

    from_id: str
    relation: str
    link_score: float
    factor: float

    def __init__(self, from_id: str, relation: str, link_score: float, factor: float) -> None:
        d = self.__dict__  # as Candidate's: hops makes one per neighbour reached per recall
        d["from_id"] = from_id
        d["relation"] = relation
        d["link_score"] = link_score
        d["factor"] = factor


@dataclass(frozen=True)
class MMRStep:
    """One pick of the MMR stage."""

    step: int
    """1-based pick number."""
    id: str
    relevance: float
    """The candidate's normalised relevance at that step."""
    penalty: float
    """Max similarity to the already selected memories."""
    lam: float
    mmr: float
    """`lam * relevance - (1 - lam) * penalty`."""
    closest_id: str | None = None
    """The selected memory it was most similar to."""
    runner_up: str | None = None
    """The candidate with the next best MMR score at that step."""


@dataclass(frozen=True)
class Explanation:
    """The full story of one hit's score."""

    channels: tuple[ChannelScore, ...] = ()
    fused: float = 0.0
    """Score after fusion (before hops and boosts)."""
    hop: HopInfo | None = None
    boosts: tuple[BoostFactor, ...] = ()
    boosted: float = 0.0
    """Score after the boosts stage."""
    rerank: float | None = None
    mmr: MMRStep | None = None
    matched_terms: tuple[MatchedTerms, ...] = ()
    final: float = 0.0
    """The reported score (on the preset's scale)."""
    notes: tuple[str, ...] = ()
    fusion: str = ""
    """How `fused` was computed, as a formula with its numbers (RRF with its k, the convex
    combination with each channel's worst and best score, or the linear merge). Empty in traces written before it existed."""
    scaling: str = ""
    """How `final` was put on the reported scale from the score before it, with the
    divisor named (and why a score can pass 100). Empty in older traces."""


@dataclass(frozen=True)
class Hit:
    """One recalled memory."""

    id: str
    rank: int
    score: float
    title: str
    type: str
    scope: str
    summary: str
    """Lean (cut near 160 characters) or full (at most 400), per verbosity."""
    topic_path: str
    channels: tuple[str, ...]
    """Names of the channels that found it (memoturn's `channels`)."""
    hop: str | None = None
    """`1-hop` when brought in by expansion."""
    staleness: str = "fresh"
    """fresh / aging / stale / expired."""
    path: str = ""
    explain: Explanation = field(default_factory=Explanation)
    warnings: tuple[str, ...] = ()
    """Enrichment: conflict and supersession warnings."""


@dataclass(frozen=True)
class WhyNot:
    """For an asked-about id: where it fell out of the pipeline and why (or where it ranked)."""

    id: str
    found: bool
    """True when it is among the hits."""
    rank: int | None
    stage: str
    """The stage where it fell out (or `hits` when found)."""
    reason: str
    channel_ranks: tuple[tuple[str, int], ...] = ()
    """Its rank in each channel that saw it."""
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnHit:
    """A raw transcript turn, reported beside the ranking (never fused)."""

    session_id: str
    seq: int
    role: str
    text: str
    score: float


@dataclass(frozen=True)
class TimelineEntry:
    """Enrichment: memories sharing a topic, in time order."""

    topic: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Trace:
    """One recall: its inputs, its hits, every stage, and the answers to `why` questions."""

    trace_version: int
    query: str
    preset: str
    k: int
    now: str
    """ISO-8601 time the recall ran at (pinned or real)."""
    as_of: str | None
    verbosity: str
    hits: tuple[Hit, ...]
    stages: tuple[StageRecord, ...]
    why: tuple[WhyNot, ...] = ()
    turns: tuple[TurnHit, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()
    total_ms: float = 0.0
    cache_hit: bool = False
    config: dict[str, Any] = field(default_factory=dict, hash=False)
    """The full configuration the recall ran with (as in the preset TOML)."""
    config_hash: str = ""
    vault: dict[str, Any] = field(default_factory=dict, hash=False)
    """Vault and index facts: root, memory count, schema version, embedder, model, dimension."""

    def stage(self, name: str) -> StageRecord | None:
        for s in self.stages:
            if s.name == name:
                return s
        return None

    def warnings(self) -> tuple[str, ...]:
        """What the user should be told about the query itself (e.g. an unknown type filter):
        the `warning` facts of the query.parse stage."""
        st = self.stage("query.parse")
        return tuple(v for k, v in st.info if k == "warning") if st is not None else ()

    def hit(self, memory_id: str) -> Hit | None:
        for h in self.hits:
            if h.id == memory_id:
                return h
        return None

    def dropped_at(self, memory_id: str) -> tuple[str, str] | None:
        """(stage, reason) of the first stage that dropped `memory_id` in this recall, None
        when no stage dropped it (a hit, or never a candidate)."""
        for s in self.stages:
            for d in s.dropped:
                if d.id == memory_id:
                    return s.name, d.reason
        return None

    def why_of(self, memory_id: str) -> WhyNot | None:
        for w in self.why:
            if w.id == memory_id:
                return w
        return None

    def to_dict(self) -> dict[str, Any]:
        plain: dict[str, Any] = _to_plain(self)
        return plain

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, sort_keys=False)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Trace:
        version = data.get("trace_version")
        if version != TRACE_VERSION:
            raise ValueError(
                f"trace_version {version!r} is not supported (this build reads {TRACE_VERSION})"
            )
        trace: Trace = _from_plain(Trace, data)
        return trace

    @staticmethod
    def from_json(text: str) -> Trace:
        return Trace.from_dict(json.loads(text))


def trace_time(text: str | None) -> datetime | None:
    """A trace's ISO time (`now`, `as_of`, a record's `time`) as a datetime; None when absent
    or unreadable. The one reader of these strings for the front ends (replay, Agent pane)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


#: Field names per dataclass type (None: not a dataclass instance), for `_to_plain`: asking
#: `dataclasses.fields` per object was most of `Trace.to_dict`, which every agent recall pays.
_PLAIN_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _to_plain(obj: Any) -> Any:
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        return round(obj, 6)
    try:
        names = _PLAIN_FIELDS[t]
    except KeyError:
        names = _PLAIN_FIELDS[t] = (
            tuple(f.name for f in dataclasses.fields(obj))
            if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else None)
    if names is not None:
        return {n: _to_plain(getattr(obj, n)) for n in names}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, float):
        return round(obj, 6)
    return obj


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _from_plain(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from_plain(args[0], value) if len(args) == 1 else value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                kwargs[f.name] = _from_plain(hints[f.name], value[f.name])
        return tp(**kwargs)
    if origin is tuple:
        targs = typing.get_args(tp)
        if len(targs) == 2 and targs[1] is Ellipsis:
            return tuple(_from_plain(targs[0], v) for v in value)
        return tuple(_from_plain(a, v) for a, v in zip(targs, value, strict=True))
    if tp is float and isinstance(value, int):
        return float(value)
    return value
