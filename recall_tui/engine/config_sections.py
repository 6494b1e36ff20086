"""The knob sections of `Config`: one frozen dataclass per stage of pipeline.md.

Every field carries its documentation as the string literal right after it; `config.knobs`
reads those, so a tuning pane needs no second list. `recall_tui.engine.config` assembles them
into `Config`. Headless.

Long module: one small dataclass per stage, in pipeline order, each field with its
documentation; split, the sections would no longer read as the one list of knobs they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ParseConfig:
    """query.parse: how the query is analysed."""

    stem: bool = True
    """Porter-stem query and field terms (off: exact word forms only)."""
    stop_words: bool = True
    """Drop English stop words from the query and the fields."""
    inline_filters: bool = True
    """Read `type:`, `scope:`, `tag:`, `source:`, `session:`, `as_of:`, `topic:` in the query."""


@dataclass(frozen=True)
class CacheConfig:
    """cache: the LRU of recent recalls (bastra)."""

    enabled: bool = True
    """Serve a repeated query from the cache."""
    ttl_s: float = 30.0
    """Seconds an entry stays valid."""
    max_entries: int = 100
    """Entries kept; the least recently used goes first."""


@dataclass(frozen=True)
class KeywordConfig:
    """keyword: BM25 (rank_bm25's BM25Okapi) per field, combined as sum(weight * score)."""

    enabled: bool = True
    """Run the keyword channel."""
    recall_when: float = 5.0
    """Weight of the `recall_when` phrases (bastra: x5, the highest)."""
    title: float = 4.0
    """Weight of the title (bastra: x4)."""
    tags: float = 3.0
    """Weight of the tags (bastra: x3)."""
    summary: float = 1.0
    """Weight of the summary."""
    topic_path: float = 1.0
    """Weight of the topic path (its segments are words)."""
    body: float = 1.0
    """Weight of the Markdown body (without the generated Related section)."""
    keywords: float = 1.0
    """Weight of the `keywords` field (memoturn indexes summary + keywords)."""
    k1: float = 1.5
    """BM25 term-frequency saturation (rank_bm25 default)."""
    b: float = 0.75
    """BM25 length normalisation (rank_bm25 default)."""
    epsilon: float = 0.25
    """rank_bm25's floor for negative idf: such terms get epsilon x the mean idf."""
    limit: int = 50
    """Candidates the channel passes on to fusion."""


@dataclass(frozen=True)
class FuzzyConfig:
    """fuzzy: abmind's three FTS5 sub-queries (porter, trigram, trigram on `original`)."""

    enabled: bool = True
    """Run the fuzzy channel (needs the index)."""
    limit: int = 0
    """Results per sub-query; 0 means the configuration's k (abmind's `limit`), never the
    k a recall asks for."""
    porter: bool = True
    """Sub-query 1: stemmed FTS5 match, any query word."""
    trigram: bool = True
    """Sub-query 2: trigram (substring, typo tolerant) match with diacritics stripped."""
    original_fallback: bool = True
    """Sub-query 3: trigram on the `original` text, only while results < limit."""
    trigram_mode: str = "correct"
    """How sub-query 2 tolerates typos and fragments. `correct`: each query word missing from
    the index's vocabulary is corrected (edit distance) or completed (substring) against the
    indexed words, and the replacements are searched with the porter bm25; its cost follows
    the vocabulary, not the vault. `scan` (abmind, seed-faithful): every trigram of the query
    OR'd on the trigram table, scoring every memory that shares any of them (224 ms at 100k)."""
    max_edits: int = 0
    """`correct` mode: most edits a correction may be away; 0 = 1 for words of up to five
    characters, 2 for longer ones."""
    completions: int = 3
    """`correct` mode: most vocabulary words a fragment is completed to (0: none)."""


@dataclass(frozen=True)
class VectorConfig:
    """vector: kNN over memory embeddings (best effort)."""

    enabled: bool = True
    """Run the vector channel when an embedder and vectors exist."""
    threshold: float = 0.5
    """Minimum cosine similarity (abmind EMBEDDING_SIMILARITY_THRESHOLD)."""
    overfetch: int = 3
    """Fetch `fuse.depth` x this many neighbours (for MMR diversity)."""
    skip_types: tuple[str, ...] = ()
    """Memory types the vector channel never returns (memoturn: task)."""


@dataclass(frozen=True)
class SignatureConfig:
    """signature: 256-bit LSH signatures compared by Hamming similarity, no model needed."""

    enabled: bool = True
    """Run the signature channel."""
    min_similarity: float = 0.65
    """Minimum 1 - hamming/bits."""
    cap: int = 5
    """Results kept at most."""


@dataclass(frozen=True)
class TopicConfig:
    """topic: exact topic_key lookup (memoturn)."""

    enabled: bool = True
    """Run the topic channel when a topic key is given or detected."""
    detect_in_query: bool = True
    """Treat a query that is exactly a known topic key as that key."""


@dataclass(frozen=True)
class GraphConfig:
    """graph: entities in the query seed the entity graph."""

    enabled: bool = True
    """Run the graph channel."""
    mode: str = "ppr"
    """`ppr` (Memoria: Personalized PageRank) or `direct` (abmind: edges of the matched entity)."""
    alpha: float = 0.85
    """PPR damping: probability of following an edge (restart is 1 - alpha)."""
    tol: float = 1e-6
    """PPR stops when the L1 change of the scores falls below this."""
    max_iter: int = 50
    """PPR iteration cap."""
    first_match_only: bool = False
    """Seed from the first matched entity only (abmind: one entity's edges)."""
    direct_score: float = 0.6
    """Score of a memory found in `direct` mode."""
    limit: int = 20
    """Candidates passed on to fusion."""


@dataclass(frozen=True)
class ConsolidationConfig:
    """consolidation: keyword match over digest paragraphs (abmind S6); never fused."""

    enabled: bool = True
    """Run the consolidation stage."""
    score: float = 0.5
    """The fixed score of a matching paragraph."""
    min_terms: int = 1
    """Query terms a paragraph must contain."""
    limit: int = 10
    """Paragraphs kept."""


@dataclass(frozen=True)
class TurnsConfig:
    """turns: cosine over raw transcript turns (memoturn include_turns), exact or by a
    shortlist re-scored exactly; never fused."""

    enabled: bool = False
    """Search the turns on every recall (a call can also ask with include_turns)."""
    limit: int = 5
    """Turns reported."""
    threshold: float = 0.3
    """Minimum cosine similarity."""
    exact_below: int = 20000
    """Below this many turn vectors, every turn's cosine is computed (exact); at or above, a
    shortlist by sign-bit codes is re-scored with the exact vectors (0: always)."""
    shortlist: int = 0
    """Turns the codes shortlist and the exact vectors re-score; 0: max(200, 20 x limit)."""


@dataclass(frozen=True)
class ChannelWeights:
    """Per-channel fusion weights."""

    keyword: float = 1.0
    """Weight of the keyword channel."""
    fuzzy: float = 1.0
    """Weight of the fuzzy channel."""
    vector: float = 1.0
    """Weight of the vector channel."""
    signature: float = 1.0
    """Weight of the signature channel."""
    topic: float = 2.0
    """Weight of the topic channel (memoturn: 2.0)."""
    graph: float = 1.0
    """Weight of the graph channel."""


@dataclass(frozen=True)
class FuseConfig:
    """fuse: reciprocal rank fusion, or MemoryVault's linear merge."""

    method: str = "rrf"
    """`rrf`: sum(w / (rrf_k + rank)); `linear`: similarity x a + keyword-match share x b;
    `convex`: sum(w x each channel's score min-max normalised over its candidates)."""
    rrf_k: int = 60
    """The RRF constant."""
    weights: ChannelWeights = field(default_factory=ChannelWeights)
    """Channel weights (RRF numerators; convex: each channel's share; in linear mode the
    weight of the other channels)."""
    linear_similarity: float = 0.7
    """Linear merge: weight of the vector cosine."""
    linear_keyword: float = 0.3
    """Linear merge: weight of the keyword match share (matched / query terms)."""
    depth: int = 10
    """Candidate depth: the hits every pool is sized for, whatever k a recall asks (vector
    fetches depth x overfetch; hops.from_top 0 means depth), so the top n at k = n are the
    first n at any k up to depth. A recall asking more sizes the pools for its k (its ranks
    may then differ); 0 sizes them for every recall's k."""


@dataclass(frozen=True)
class ShortCircuitConfig:
    """short-circuit: skip the costly channels when a cheap one already fills k (abmind)."""

    enabled: bool = False
    """Decide before the vector and signature channels run."""
    source: str = "fuzzy"
    """The channel whose eligible results are counted: `fuzzy` or `keyword`."""
    skip: tuple[str, ...] = ("vector", "signature")
    """Channels skipped when the source filled the configuration's k (never the recall's)."""


@dataclass(frozen=True)
class HopsConfig:
    """hops: 1-hop `related_via` neighbours of the direct hits (bastra)."""

    enabled: bool = True
    """Expand the top hits by one hop."""
    factor: float = 0.5
    """Neighbour score = parent score x link score x factor."""
    from_top: int = 0
    """Expand the top N fused hits; 0 means the candidate depth `fuse.depth`."""
    beyond_k: bool = False
    """Hop neighbours are added after truncation to k (bastra: k hits plus their hops)."""


@dataclass(frozen=True)
class SpeakerConfig:
    """speaker: the turn's speaker and date as evidence (raw-turn vaults)."""

    enabled: bool = False
    """Weigh candidates by the speaker and the month or year the query names."""
    weight: float = 0.25
    """Score x (1 + weight) when the query names the turn's speaker."""
    date_weight: float = 0.25
    """Score x (1 + date_weight) when the query names the month or year it was created in."""
    when_weight: float = 0.25
    """Score x (1 + when_weight) when the query asks when and the memory's text states a time."""


@dataclass(frozen=True)
class WindowConfig:
    """window: context from the neighbouring turns of the same session."""

    enabled: bool = False
    """Spread each candidate's score to the turns around it (memories with session_id)."""
    size: int = 1
    """Turns on each side that receive a share."""
    weight: float = 0.5
    """Share of the neighbour's score a turn next to it receives."""
    decay: float = 0.5
    """The share is multiplied by this for every turn of distance beyond the first."""


@dataclass(frozen=True)
class Hop2Config:
    """hop2: a second hop seeded by the first hits' rarest terms (multi-hop questions)."""

    enabled: bool = False
    """Add the memories that share the top candidates' rarest terms."""
    from_top: int = 3
    """Candidates whose bodies seed the hop."""
    terms: int = 6
    """Seed terms used (the rarest; query terms and speaker names left out)."""
    factor: float = 0.3
    """Added score = factor x the best seed's score x the BM25 share of the hop's best."""
    limit: int = 20
    """Memories the hop adds to or raises."""
    below_seeds: bool = True
    """A memory the hop raises stays under the weakest seed (a second hop is weaker evidence
    than the first): its score is capped just below that seed's."""


@dataclass(frozen=True)
class FilterConfig:
    """filter: what is never recalled, and the per-call filters."""

    include_superseded: bool = False
    """Keep superseded memories (status superseded, or not the head of their chain)."""
    include_inbox: bool = False
    """Keep memories under `_inbox/`."""
    include_expired: bool = False
    """Keep memories whose `expires` is past."""
    include_archived: bool = False
    """Keep memories with status `archived` (files in `_archive/` are always dropped)."""
    types: tuple[str, ...] = ()
    """Only these memory types (empty: all)."""
    scopes: tuple[str, ...] = ()
    """Only these scopes (empty: all)."""
    tags: tuple[str, ...] = ()
    """Only memories carrying one of these tags (empty: all)."""
    session_id: str = ""
    """Only memories of this session (empty: all)."""
    source: str = ""
    """Only memories written by this source (empty: all)."""
    bitemporal: bool = False
    """Apply the validity window at `now` even without as_of (Memoria); as_of always applies it."""


@dataclass(frozen=True)
class StalenessBoost:
    """Lifecycle factor by age since `updated`, with windows per memory type (bastra)."""

    enabled: bool = False
    """Apply the staleness factor."""
    fresh: float = 1.0
    """Factor while younger than the type's aging window."""
    aging: float = 0.85
    """Factor between the aging and the stale window."""
    stale: float = 0.5
    """Factor between the stale and the expired window."""
    expired: float = 0.2
    """Factor past the expired window or past `expires`."""
    windows: dict[str, list[int]] = field(
        default_factory=lambda: {
            "task": [7, 30, 90],
            "event": [30, 120, 365],
            "project-fact": [30, 90, 270],
            "fact": [90, 365, 1095],
            "decision": [90, 365, 1095],
            "instruction": [180, 730, 1825],
            "preference": [180, 730, 1825],
            "lesson": [365, 1095, 3650],
        }
    )
    """Days [aging, stale, expired] per type; a type not listed uses `fact`."""


@dataclass(frozen=True)
class RecencyBoost:
    """abmind recency: max(floor, 1 - age/decay_days) x (1 + |emotion| x emotion)."""

    enabled: bool = False
    """Apply the recency factor."""
    decay_days: float = 365.0
    """Days until the factor reaches the floor (RECALL_DECAY_DAYS)."""
    floor: float = 0.3
    """Minimum factor (RECALL_DECAY_FLOOR)."""
    emotion: float = 0.1
    """Emotion amplification (RECALL_EMOTION_BOOST)."""


@dataclass(frozen=True)
class TrustBoost:
    """abmind trust: 0.5 + 0.5 x trust / 3."""

    enabled: bool = False
    """Apply the trust factor."""


@dataclass(frozen=True)
class CredibilityBoost:
    """abmind credibility: factor when credibility <= threshold (as the seed states it)."""

    enabled: bool = False
    """Apply the credibility factor."""
    factor: float = 1.25
    """The multiplier."""
    threshold: float = 2.0
    """Credibility at or under which the multiplier applies."""


@dataclass(frozen=True)
class TierBoost:
    """abmind tier: core memories weigh more."""

    enabled: bool = False
    """Apply the tier factor."""
    core: float = 1.3
    """Factor for tier `core`."""


@dataclass(frozen=True)
class EmotionBoost:
    """abmind emotion tie-breaker: 1 + |emotion| x per_unit (at most +0.10 at |e| = 5)."""

    enabled: bool = False
    """Apply the emotion factor."""
    per_unit: float = 0.02
    """Boost per unit of |emotion|."""


@dataclass(frozen=True)
class RecallCountBoost:
    """abmind recall boost: 1 + per_recall x recall count (from the tool's own store)."""

    enabled: bool = False
    """Apply the recall-count factor."""
    per_recall: float = 0.1
    """Boost per past recall."""


@dataclass(frozen=True)
class RelevanceBoost:
    """abmind relevance boost: 1 + amount when the memory's relevance score (its
    `relevance_score` key, else `confidence`) is > 0."""

    enabled: bool = False
    """Apply the relevance factor."""
    amount: float = 0.2
    """The boost."""


@dataclass(frozen=True)
class SpacingBoost:
    """abmind spacing boost: average interval between the last recalls."""

    enabled: bool = False
    """Apply the spacing factor."""
    week: float = 1.3
    """Factor when the average interval is >= 7 days."""
    day: float = 1.15
    """Factor when it is >= 1 day."""


@dataclass(frozen=True)
class ContextBoost:
    """abmind context boost against the current hour, weekday and topic, as a (1 + sum)
    factor so it means the same at any score scale."""

    enabled: bool = False
    """Apply the context factor (needs a context: filters or the recall time)."""
    hour: float = 0.02
    """Same time-of-day bucket (night, morning, afternoon, evening) as the memory's creation."""
    weekday: float = 0.015
    """Same weekday; half of it for the same weekday/weekend category."""
    topic: float = 0.03
    """The memory's topic matches the current topic."""


@dataclass(frozen=True)
class CrossChannelBoost:
    """abmind #505: lexical-only hits not confirmed by the vector channel are penalised."""

    enabled: bool = False
    """Apply the penalty when the vector channel ran."""
    penalty: float = 0.5
    """The factor for keyword/fuzzy-only hits."""


@dataclass(frozen=True)
class BoostsConfig:
    """boosts: every multiplicative factor, each switchable."""

    staleness: StalenessBoost = field(default_factory=StalenessBoost)
    """Lifecycle staleness (bastra)."""
    recency: RecencyBoost = field(default_factory=RecencyBoost)
    """Recency decay (abmind)."""
    trust: TrustBoost = field(default_factory=TrustBoost)
    """Trust (abmind)."""
    credibility: CredibilityBoost = field(default_factory=CredibilityBoost)
    """Credibility (abmind)."""
    tier: TierBoost = field(default_factory=TierBoost)
    """Tier (abmind)."""
    emotion: EmotionBoost = field(default_factory=EmotionBoost)
    """Emotion tie-breaker (abmind)."""
    recall: RecallCountBoost = field(default_factory=RecallCountBoost)
    """Recall count (abmind)."""
    relevance: RelevanceBoost = field(default_factory=RelevanceBoost)
    """Relevance (abmind)."""
    spacing: SpacingBoost = field(default_factory=SpacingBoost)
    """Spaced-recall (abmind)."""
    context: ContextBoost = field(default_factory=ContextBoost)
    """Current context (abmind)."""
    cross_channel: CrossChannelBoost = field(default_factory=CrossChannelBoost)
    """Cross-channel penalty (abmind)."""


@dataclass(frozen=True)
class RerankConfig:
    """rerank: cross-encoder re-rank of the fused top N (Memoria)."""

    enabled: bool = False
    """Run the re-rank stage (without a model: truncation to `keep` only)."""
    top_n: int = 30
    """Candidates sent to the cross-encoder."""
    keep: int = 10
    """Candidates kept after it."""
    model: str = ""
    """Name of the cross-encoder scorer; empty: none configured."""


@dataclass(frozen=True)
class MMRConfig:
    """mmr: maximal marginal relevance (abmind)."""

    enabled: bool = False
    """Re-order for diversity."""
    lam: float = 0.7
    """Relevance share: MMR = lam x relevance - (1 - lam) x max similarity."""
    similarity: str = "jaccard"
    """`jaccard` on lower-cased words, or `cosine` on embeddings (falls back to jaccard)."""
    pool: int = 50
    """Candidates re-ordered (the rest keep their order behind them)."""


@dataclass(frozen=True)
class FloorConfig:
    """floor: the score floor and the cut at k (bastra)."""

    enabled: bool = False
    """Drop hits scoring under `min_score`."""
    min_score: float = 30.0
    """The floor, on the reported 0-100 scale."""
    scale: str = "fusion_max"
    """Reported score: `fusion_max` (100 = rank 1 in every channel that ran), `top` (100 = the
    best hit), `raw` (the boosted score), or `evidence` (with `calibrated`: 50 x the hit's
    evidence E, one meaning in every recall)."""
    calibrated: bool = False
    """Abstain (return nothing) when the best hit's evidence, measured against the vault's
    own calibration (IDF-weighted matched terms + cosine against the vault's background,
    `engine/calibration.py`), is under `evidence_floor`; and drop hits shown as 0.0."""
    evidence_floor: float = 0.4
    """The lowest calibrated floor, on the evidence scale E = lexical + vector (0..2)."""
    lexical_floor: float = 0.1
    """The calibrated floor when the recall has no vector evidence (no embedder, no vectors):
    lexical coverage alone cannot tell a paraphrase from an off-topic question, so only a
    best evidence under this (almost nothing of the query matched) abstains."""
    probe_margin: float = 1.4
    """The calibrated floor is this many times the median best evidence that typical
    off-topic probe queries find in the vault (`calibration.PROBES`), never under
    `evidence_floor`."""


@dataclass(frozen=True)
class EnrichConfig:
    """enrich: timeline, conflict warnings, payload size."""

    enabled: bool = True
    """Add timelines and warnings."""
    lean_chars: int = 160
    """Lean summary length (cut at a word boundary)."""
    full_chars: int = 400
    """Full summary length."""


@dataclass(frozen=True)
class TrackingConfig:
    """Recall tracking: write recall counts and times to `.recall/` (off while debugging)."""

    enabled: bool = False
    """Record every returned hit as recalled."""
