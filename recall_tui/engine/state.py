"""The records passed between stages: per-call filters, the parsed query, a stage's output,
and the mutable state of one recall (private to the engine; the public result is a Trace).
Headless."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from recall_tui.engine.config import Config

if TYPE_CHECKING:
    from recall_tui.engine.calibration import Evidence
from recall_tui.engine.trace import (
    BoostFactor,
    Candidate,
    ChannelScore,
    Dropped,
    HopInfo,
    MatchedTerms,
    MMRStep,
    TurnHit,
)


class Cancelled(Exception):
    """Raised by `Engine.recall` when its `cancel` callable returned True between stages;
    the caller (a UI worker) drops the recall."""


@dataclass(frozen=True)
class Filters:
    """Per-call filters and context; None / empty means "use the configuration"."""

    types: tuple[str, ...] = ()
    """Only these memory types."""
    scopes: tuple[str, ...] = ()
    """Only these scopes."""
    tags: tuple[str, ...] = ()
    """Only memories with one of these tags."""
    session_id: str | None = None
    """Only memories of this session."""
    source: str | None = None
    """Only memories written by this source."""
    include_superseded: bool | None = None
    """Keep superseded memories."""
    include_inbox: bool | None = None
    """Keep `_inbox/` memories."""
    include_expired: bool | None = None
    """Keep memories past `expires`."""
    include_turns: bool | None = None
    """Also search raw transcript turns."""
    min_score: float | None = None
    """Per-call score floor (bastra `min_score`), on the reported scale."""
    context_hour: int | None = None
    """Current hour 0-23 for the context boost (default: the recall time's hour)."""
    context_weekday: int | None = None
    """Current weekday 0=Monday for the context boost (default: the recall time's)."""
    context_topic: str | None = None
    """Current conversation topic for the context boost (a topic_key or topic_path prefix)."""
    exclude: tuple[str, ...] = ()
    """Never recall these ids (the caller has them already: a hook's always-load entries, or
    memories it injected a few prompts ago); the filter stage drops them with a reason."""
    exclude_why: tuple[str, ...] = ()
    """Why each id of `exclude` is excluded (same order; empty: "excluded by the caller")."""

    def key(self) -> tuple[Any, ...]:
        """A hashable form for the cache key."""
        return tuple(getattr(self, f) for f in self.__dataclass_fields__)


@dataclass(frozen=True)
class ParsedQuery:
    """The query after query.parse."""

    raw: str
    """The text as typed."""
    text: str
    """The text with inline filters removed."""
    terms: tuple[str, ...]
    """Analysed terms (folded, stop words out, stemmed), duplicates kept."""
    words: tuple[str, ...]
    """Distinct folded content words, unstemmed (for FTS5 and entity matching)."""
    term_words: dict[str, str] = field(default_factory=dict, hash=False)
    """stem -> the query word it came from (to show matched terms as typed)."""
    inline: tuple[tuple[str, str], ...] = ()
    """Inline filters read from the query, as (key, value)."""
    notes: tuple[str, ...] = ()
    """Parse remarks (e.g. an as_of that is not a date)."""

    @property
    def empty(self) -> bool:
        return not self.terms


@dataclass
class Out:
    """What a stage function hands back; the pipeline adds the timing."""

    candidates: list[Candidate] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    info: list[tuple[str, str]] = field(default_factory=list)
    skipped: bool = False
    reason: str = ""


@dataclass
class Fate:
    """How one memory went through the pipeline (for `why`)."""

    channels: dict[str, tuple[int, float]] = field(default_factory=dict)
    """channel -> (rank, raw score)."""
    stage: str | None = None
    """Stage that removed it, if any."""
    reason: str = ""
    details: list[str] = field(default_factory=list)


@dataclass
class RecallState:
    """Everything one recall knows, stage by stage."""

    query: ParsedQuery
    cfg: Config
    k: int
    now: datetime
    as_of: datetime | None
    filters: Filters
    topic_key: str | None
    entity_hints: tuple[str, ...]
    verbosity: str
    channels: dict[str, list[Candidate]] = field(default_factory=dict)
    """Ranked candidates of each channel that ran."""
    stage_reasons: dict[str, str] = field(default_factory=dict)
    """channel -> why it was skipped (for `why`)."""
    matched_terms: dict[str, tuple[MatchedTerms, ...]] = field(default_factory=dict)
    keyword_all: Mapping[str, float] = field(default_factory=dict)
    """Every memory matching a query term, with its keyword score (beyond the limit too);
    a view over the keyword index's score array (`KeywordScores`)."""
    eligible: Mapping[str, str | None] = field(default_factory=dict)
    """id -> the filter reason that drops it, or None (judged lazily: `filter.Eligibility`)."""
    skip_channels: dict[str, str] = field(default_factory=dict)
    """Channels the short-circuit decided to skip, with the reason."""
    short_circuit: tuple[bool, str, int] = (False, "", 0)
    """(skipped, explanation, source count)."""
    qvec: np.ndarray | None = None
    """The query's embedding (None: not embedded, see `qvec_reason`)."""
    qvec_reason: str | None = None
    """Why there is no query embedding ("" when there is one); None until
    `vector.query_vector` ran (it embeds once per recall)."""
    embed_ms: float = 0.0
    """Time spent embedding the query."""
    vector_ran: bool = False
    vector_sims: dict[str, float] = field(default_factory=dict)
    """id -> cosine similarity, for every neighbour the vector channel fetched."""
    signature_sims: dict[str, float] = field(default_factory=dict)
    """id -> Hamming similarity, for every memory the signature channel compared."""
    fused: dict[str, float] = field(default_factory=dict)
    channel_scores: dict[str, list[ChannelScore]] = field(default_factory=dict)
    fusion_max: float = 1.0
    """The best possible fused score (100 on the `fusion_max` scale)."""
    fusion_text: Callable[[str], str] | None = None
    """id -> fuse's formula for it, written for the hits only when the trace is built."""
    hops: dict[str, HopInfo] = field(default_factory=dict)
    hop_scores: dict[str, float] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """The current ranking."""
    score: dict[str, float] = field(default_factory=dict)
    """The current score of each id in `order`."""
    pre_boost_rank: dict[str, int] = field(default_factory=dict)
    boosts: Mapping[str, tuple[BoostFactor, ...]] = field(default_factory=dict)
    boosted: dict[str, float] = field(default_factory=dict)
    staleness: dict[str, str] = field(default_factory=dict)
    rerank: dict[str, float] = field(default_factory=dict)
    mmr: dict[str, MMRStep] = field(default_factory=dict)
    pre_mmr_rank: dict[str, int] = field(default_factory=dict)
    final: dict[str, float] = field(default_factory=dict)
    scaling_text: Callable[[str], str] | None = None
    """id -> floor's scaling of its score, written for the hits only (like `fusion_text`)."""
    turn_notes: dict[str, list[str]] = field(default_factory=dict)
    """id -> what the speaker, window and hop2 stages added to it, written out (why-not and the
    explanation list them)."""
    window_added: dict[str, tuple[float, str, int]] = field(default_factory=dict)
    """id -> (score added, the turn it came from, turns away): the window stage's spreads."""
    hop2_notes: dict[str, str] = field(default_factory=dict)
    """id -> how the second hop reached it."""
    evidence: dict[str, Evidence] = field(default_factory=dict)
    """id -> the calibrated floor's evidence for it (`recall_tui.engine.calibration`); empty
    when the floor is not calibrated."""
    hits: list[str] = field(default_factory=list)
    fates: dict[str, Fate] = field(default_factory=dict)
    consolidation: list[Candidate] = field(default_factory=list)
    turns: list[TurnHit] = field(default_factory=list)
    include_turns: bool = False
    warnings: dict[str, list[str]] = field(default_factory=dict)
    timeline: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def fate(self, memory_id: str) -> Fate:
        f = self.fates.get(memory_id)
        if f is None:
            f = self.fates[memory_id] = Fate()
        return f

    def drop(self, memory_id: str, stage: str, reason: str) -> Dropped:
        f = self.fate(memory_id)
        if f.stage is None:
            f.stage, f.reason = stage, reason
        return Dropped(memory_id, reason)
