"""Every knob of the recall pipeline, as a tree of frozen dataclasses, and the presets.

A `Config` has one section per stage (pipeline.md). Presets are TOML files that override the
defaults below; `load_preset` looks in the package's `presets/`, then `<vault>/.recall/presets/`,
then `$XDG_CONFIG_HOME/recall-tui/presets/`. `knobs(config)` lists every leaf with its type,
value and documentation (the field's docstring), so a tuning pane needs no second list.
Headless.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import tomllib

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"


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
    """Results per sub-query; 0 means k (abmind's `limit`)."""
    porter: bool = True
    """Sub-query 1: stemmed FTS5 match, any query word."""
    trigram: bool = True
    """Sub-query 2: trigram (substring, typo tolerant) match with diacritics stripped."""
    original_fallback: bool = True
    """Sub-query 3: trigram on the `original` text, only while results < limit."""


@dataclass(frozen=True)
class VectorConfig:
    """vector: kNN over memory embeddings (best effort)."""

    enabled: bool = True
    """Run the vector channel when an embedder and vectors exist."""
    threshold: float = 0.5
    """Minimum cosine similarity (abmind EMBEDDING_SIMILARITY_THRESHOLD)."""
    overfetch: int = 3
    """Fetch k x this many neighbours (for MMR diversity)."""
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
    """turns: brute-force cosine over raw transcript turns (memoturn include_turns); never fused."""

    enabled: bool = False
    """Search the turns on every recall (a call can also ask with include_turns)."""
    limit: int = 5
    """Turns reported."""
    threshold: float = 0.3
    """Minimum cosine similarity."""


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
    """`rrf`: sum(w / (rrf_k + rank)); `linear`: similarity x a + keyword-match share x b."""
    rrf_k: int = 60
    """The RRF constant."""
    weights: ChannelWeights = field(default_factory=ChannelWeights)
    """Channel weights (RRF numerators; in linear mode the weight of the other channels)."""
    linear_similarity: float = 0.7
    """Linear merge: weight of the vector cosine."""
    linear_keyword: float = 0.3
    """Linear merge: weight of the keyword match share (matched / query terms)."""


@dataclass(frozen=True)
class ShortCircuitConfig:
    """short-circuit: skip the costly channels when a cheap one already fills k (abmind)."""

    enabled: bool = False
    """Decide before the vector and signature channels run."""
    source: str = "fuzzy"
    """The channel whose eligible results are counted: `fuzzy` or `keyword`."""
    skip: tuple[str, ...] = ("vector", "signature")
    """Channels skipped when the source filled k."""


@dataclass(frozen=True)
class HopsConfig:
    """hops: 1-hop `related_via` neighbours of the direct hits (bastra)."""

    enabled: bool = True
    """Expand the top hits by one hop."""
    factor: float = 0.5
    """Neighbour score = parent score x link score x factor."""
    from_top: int = 0
    """Expand the top N fused hits; 0 means k."""
    beyond_k: bool = False
    """Hop neighbours are added after truncation to k (bastra: k hits plus their hops)."""


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
    best hit), or `raw` (the boosted score)."""


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


@dataclass(frozen=True)
class Config:
    """One complete pipeline configuration."""

    description: str = ""
    """What this configuration is (shown in preset lists)."""
    k: int = 5
    """Hits returned at most; recall never pads to k."""
    verbosity: str = "lean"
    """`lean` or `full` payloads."""
    parse: ParseConfig = field(default_factory=ParseConfig)
    """query.parse."""
    cache: CacheConfig = field(default_factory=CacheConfig)
    """cache."""
    keyword: KeywordConfig = field(default_factory=KeywordConfig)
    """keyword."""
    fuzzy: FuzzyConfig = field(default_factory=FuzzyConfig)
    """fuzzy."""
    vector: VectorConfig = field(default_factory=VectorConfig)
    """vector."""
    signature: SignatureConfig = field(default_factory=SignatureConfig)
    """signature."""
    topic: TopicConfig = field(default_factory=TopicConfig)
    """topic."""
    graph: GraphConfig = field(default_factory=GraphConfig)
    """graph."""
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    """consolidation."""
    turns: TurnsConfig = field(default_factory=TurnsConfig)
    """turns."""
    fuse: FuseConfig = field(default_factory=FuseConfig)
    """fuse."""
    short_circuit: ShortCircuitConfig = field(default_factory=ShortCircuitConfig)
    """short-circuit."""
    hops: HopsConfig = field(default_factory=HopsConfig)
    """hops."""
    filter: FilterConfig = field(default_factory=FilterConfig)
    """filter."""
    boosts: BoostsConfig = field(default_factory=BoostsConfig)
    """boosts."""
    rerank: RerankConfig = field(default_factory=RerankConfig)
    """rerank."""
    mmr: MMRConfig = field(default_factory=MMRConfig)
    """mmr."""
    floor: FloorConfig = field(default_factory=FloorConfig)
    """floor."""
    enrich: EnrichConfig = field(default_factory=EnrichConfig)
    """enrich."""
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    """recall tracking."""

    # --- (de)serialisation -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (tuples as lists), the shape of a preset TOML."""
        return _plain(self)

    @staticmethod
    def from_dict(data: dict[str, Any], *, base: Config | None = None, source: str = "config") -> Config:
        """Overlay `data` on `base` (the built-in defaults when None). Unknown keys and wrong
        types raise ValueError naming `source` and the key."""
        return _overlay(base or Config(), data, source, "")

    @staticmethod
    def from_toml(text: str, *, base: Config | None = None, source: str = "config") -> Config:
        """Parse a preset TOML (keys as in `to_toml`) over `base`."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{source}: not valid TOML: {exc}") from exc
        data.pop("extends", None)
        return Config.from_dict(data, base=base, source=source)

    def to_toml(self) -> str:
        """The full configuration as TOML; `from_toml(to_toml())` gives back an equal Config."""
        return _to_toml(self.to_dict())

    def hash(self) -> str:
        """sha256 of the canonical JSON of `to_dict()` (key-sorted, compact)."""
        canon = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()

    def with_value(self, path: str, value: Any) -> Config:
        """A copy with one knob changed, e.g. `with_value("mmr.lam", 0.5)`."""
        parts = path.split(".")
        data: dict[str, Any] = {}
        cur = data
        for p in parts[:-1]:
            cur[p] = {}
            cur = cur[p]
        cur[parts[-1]] = value
        return _overlay(self, data, f"with_value({path!r})", "")

    def get(self, path: str) -> Any:
        """The value at a dotted path."""
        obj: Any = self
        for p in path.split("."):
            obj = obj[p] if isinstance(obj, dict) else getattr(obj, p)
        return obj


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    return obj


def _coerce(tp: Any, value: Any, where: str) -> Any:
    """Check and convert one TOML value to the field's declared type."""
    t = str(tp)
    if t == "bool":
        if isinstance(value, bool):
            return value
    elif t == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif t == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif t == "str":
        if isinstance(value, str):
            return value
    elif t.startswith("tuple[str"):
        if isinstance(value, str):
            return (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
    elif t.startswith("dict[str, list[int]]"):
        if isinstance(value, dict) and all(
            isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, int) for x in v)
            for v in value.values()
        ):
            return {str(k): list(v) for k, v in value.items()}
        raise ValueError(f"{where}: expected a table of [aging, stale, expired] day counts")
    raise ValueError(f"{where}: expected {t}, got {type(value).__name__} {value!r}")


def _overlay(obj: Any, data: dict[str, Any], source: str, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{source}: {prefix or 'top level'} must be a table")
    fields = {f.name: f for f in dataclasses.fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{source}: {prefix}{key}"
        if key not in fields:
            raise ValueError(f"{where}: unknown setting (known: {', '.join(fields)})")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            changes[key] = _overlay(current, value, source, f"{prefix}{key}.")
        elif isinstance(current, dict):
            merged = dict(current)
            merged.update(_coerce(fields[key].type, value, where))
            changes[key] = merged
        else:
            changes[key] = _coerce(fields[key].type, value, where)
    return dataclasses.replace(obj, **changes) if changes else obj


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def _to_toml(data: dict[str, Any], prefix: str = "") -> str:
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    out = "\n".join(lines)
    for key, value in tables:
        name = f"{prefix}{key}"
        body = _to_toml(value, name + ".")
        out += ("\n\n" if out else "") + f"[{name}]\n" + body
    return out.strip("\n") + "\n" if not prefix else out


# --- docs for knobs -----------------------------------------------------------------------


@cache
def _field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings of a dataclass (the string literal right after each field)."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for a, b in zip(body, body[1:], strict=False):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def knobs(config: Config) -> Iterator[tuple[str, str, Any, str]]:
    """Every leaf setting as (dotted path, type name, value, documentation)."""

    def walk(obj: Any, prefix: str) -> Iterator[tuple[str, str, Any, str]]:
        docs = _field_docs(type(obj))
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            path = prefix + f.name
            if dataclasses.is_dataclass(value):
                yield from walk(value, path + ".")
            else:
                yield path, str(f.type), value, docs.get(f.name, "")

    yield from walk(config, "")


# --- presets ------------------------------------------------------------------------------


def preset_dirs(vault_root: str | os.PathLike | None = None) -> list[Path]:
    """Where presets are searched, in order: package, vault, user config."""
    dirs = [PRESET_DIR]
    if vault_root is not None:
        dirs.append(Path(vault_root) / ".recall" / "presets")
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs.append(Path(xdg) / "recall-tui" / "presets")
    return dirs


def list_presets(vault_root: str | os.PathLike | None = None) -> list[str]:
    """Names of every preset found (first occurrence wins), package presets first."""
    names: list[str] = []
    for d in preset_dirs(vault_root):
        if d.is_dir():
            for p in sorted(d.glob("*.toml")):
                if p.stem not in names:
                    names.append(p.stem)
    return names


def find_preset(name_or_path: str, vault_root: str | os.PathLike | None = None) -> Path:
    """The TOML file of a preset name, or the path itself when it is a file."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.is_file():
        return p
    for d in preset_dirs(vault_root):
        cand = d / f"{name_or_path}.toml"
        if cand.is_file():
            return cand
    known = ", ".join(list_presets(vault_root))
    raise ValueError(f"unknown preset {name_or_path!r} (known: {known})")


def load_preset(name_or_path: str, vault_root: str | os.PathLike | None = None) -> Config:
    """Load a preset over the built-in defaults. A preset may say `extends = "name"` to start
    from another preset instead."""
    path = find_preset(name_or_path, vault_root)
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: not valid TOML: {exc}") from exc
    base = None
    parent = data.pop("extends", None)
    if parent:
        if parent == path.stem:
            raise ValueError(f"{path.name}: a preset cannot extend itself")
        base = load_preset(parent, vault_root)
    return Config.from_dict(data, base=base, source=path.name)
