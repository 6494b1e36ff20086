"""`Engine.recall`: run every stage of pipeline.md in order, time each one, and return a
Trace that explains every hit and every asked-about miss.

Execution order follows `trace.STAGE_ORDER` except that the short-circuit decision is taken
right after the keyword and fuzzy channels, before the vector and signature channels it may
skip; its record keeps its informational place after `fuse`. A `cancel` callable is checked
before every stage: when it returns True, `recall` raises `Cancelled` (the UI's worker drops
the result). Headless.

Long module: `Engine` is one class (the stage order in `recall`, the vault-derived memos the
stages share, trace assembly); split, the run order would no longer read top to bottom.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from recall_tui.engine import kwstore
from recall_tui.engine import why as why_mod
from recall_tui.engine.bm25 import KeywordIndex
from recall_tui.engine.cache import RecallCache
from recall_tui.engine.config import Config
from recall_tui.engine.stages import (
    StageContext,
    boosts,
    consolidation,
    enrich,
    floor,
    fuse,
    fuzzy,
    graph,
    hop2,
    hops,
    keyword,
    mmr,
    parse,
    rerank,
    short_circuit,
    signature,
    speaker,
    topic,
    turns,
    vector,
    window,
)
from recall_tui.engine.stages import (
    filter as filter_stage,
)
from recall_tui.engine.state import Cancelled, Filters, Out, ParsedQuery, RecallState
from recall_tui.engine.text import analyze, word_set
from recall_tui.engine.trace import (
    CHANNELS,
    STAGE_ORDER,
    TRACE_VERSION,
    Explanation,
    Hit,
    StageRecord,
    TimelineEntry,
    Trace,
)
from recall_tui.engine.turn_lookup import TurnLookup
from recall_tui.vault.model import Chain, Memory, Turn, Vault, lean_summary, same_memories

if TYPE_CHECKING:  # the index layer is below the engine; imported lazily at run time
    from recall_tui.index.core import Progress
    from recall_tui.index.store import Index

_T = TypeVar("_T")

#: `_derived` entries built from the memories alone (`Engine.set_vault` keeps them while every
#: memory is as it was): what a stage keeps per memory, or builds from the memories' fields,
#: chains and entity graph. Every other entry (turns, digests, the vault's facts, what is read
#: from the index) is built again, or kept only once found to be the same (`_KEPT_BY_INDEX`).
_MEMORY_ONLY = frozenset({"chains", "topic_keys", "adj", "ppr", "ments", "words", "topk.newer",
                          "turn_layout", "speaker.states_time"})
_MEMORY_ONLY_PREFIXES = ("hop2.body_terms.", "hop2.speaker_terms.")

_CHANNEL_STAGES: dict[str, Callable[[StageContext, RecallState], Out]] = {
    "keyword": keyword.run,
    "fuzzy": fuzzy.run,
    "vector": vector.run,
    "signature": signature.run,
    "topic": topic.run,
    "graph": graph.run,
}


def _aware(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.isoformat().replace("+00:00", "Z")


class Engine:
    """The recall engine over one vault (and its index, when there is one)."""

    def __init__(self, vault: Vault, index: Index | None, config: Config, *,
                 preset: str = "default", reranker: rerank.Reranker | None = None):
        self.vault = vault
        self.index = index
        self.config = config
        self.preset = preset
        self.reranker = reranker
        self._cache = RecallCache()
        self._cfg_meta: dict[int, tuple[Config, dict[str, Any], str]] = {}
        self._reset_derived()
        if config.keyword.enabled:
            self.keyword_index(config)  # build now, so the first recall is not the slow one

    # --- derived structures, rebuilt on a vault change --------------------------------

    def _reset_derived(self, fingerprint: str | None = None) -> None:
        self._kw: dict[tuple[Any, ...], KeywordIndex] = {}
        self._derived: dict[str, Any] = {}
        if fingerprint is None:
            h = hashlib.sha256()
            for mid, m in self.vault.memories.items():
                h.update(f"{mid}\0{m.content_hash}\n".encode())
            fingerprint = h.hexdigest()
        self.fingerprint = fingerprint

    def set_vault(self, vault: Vault, index: Index | None = None) -> None:
        """Swap in a re-read vault (and optionally its updated index); clears the cache."""
        fingerprint, old_index, old_kw, old = self.fingerprint, self.index, self._kw, self._derived
        old_vault = self.vault
        self.vault = vault
        if index is not None:
            self.index = index
        self._cache.clear()
        same = same_memories(vault.memories, old_vault.memories)
        # (The fingerprint hashes every memory: 100k of them took tens of ms per swap.)
        self._reset_derived(fingerprint if same else None)
        if same and self.index is old_index:
            self._keep_memory_derived(old, old_vault, vault)
        if self.fingerprint == fingerprint and self.index is old_index:
            # Every memory is as it was (the same ids, each file's bytes the same: only turns,
            # digests or files that are not memories changed). What is built from the memories
            # alone stays: the keyword indexes, and the floor's calibration, which
            # `calibration.for_engine` takes back once the memories' vectors are found to be
            # the same too. Rebuilding them cost seconds at 100k memories on every refresh.
            self._kw = old_kw
            if "calibration" in old and "vector_matrix" in old:
                self._derived["calibration_kept"] = (old["vector_matrix"], old["calibration"][1],
                                                     old.get("probe_bests"))
            elif "calibration_kept" in old:  # two refreshes with no recall between: still kept
                self._derived["calibration_kept"] = old["calibration_kept"]
        if self.config.keyword.enabled:
            self.keyword_index(self.config)

    def _keep_memory_derived(self, old: dict[str, Any], old_vault: Vault, vault: Vault) -> None:
        """After a swap that left every memory as it was, over the same index: take back what
        was built from the memories alone, the digests' tokens when the digests are the same
        object, and, for the index's memory vectors and signatures, what `memory_vectors` and
        `signatures` take back once the index hands them the very objects they were built
        from (an index whose memories did not change keeps them: only turns were written)."""
        for name, value in old.items():
            if name in _MEMORY_ONLY or name.startswith(_MEMORY_ONLY_PREFIXES):
                self._derived[name] = value
        if "digests" in old and vault.digests is old_vault.digests:
            self._derived["digests"] = old["digests"]
        if "vectors" in old and "vector_matrix" in old:
            self._derived["vectors_kept"] = (old["vector_matrix"], old["vectors"])
        elif "vectors_kept" in old:  # two swaps with no recall between: still kept
            self._derived["vectors_kept"] = old["vectors_kept"]
        if "sigs_of" in old and "sigs" in old:
            self._derived["sigs_kept"] = (old["sigs_of"], old["sigs"], old.get("sigbits"))
        elif "sigs_kept" in old:
            self._derived["sigs_kept"] = old["sigs_kept"]

    def turns_read(self, vault: Vault) -> None:
        """`vault` is this engine's vault read again with its session logs (the progressive
        open read the memories first): when it holds the very same memory objects, only what
        is built from the turns is dropped (nothing a running recall uses is reset); else
        `set_vault`."""
        old, new = self.vault.memories, vault.memories
        if len(old) != len(new) or not all(
                k == j and a is b for (k, a), (j, b) in zip(old.items(), new.items(),
                                                             strict=True)):
            self.set_vault(vault)
            return
        self.vault = vault
        for name in ("turns", "facts"):  # the facts count the turns
            self._derived.pop(name, None)
        self._cache.clear()

    def clear_cache(self) -> None:
        """Forget every cached recall."""
        self._cache.clear()

    def vectors_changed(self) -> None:
        """The index's vectors changed (a progressive open finished embedding): forget the
        cached recalls and the vector-derived structures, so the next recall uses them."""
        self._cache.clear()
        self._derived.pop("vectors", None)
        self._derived.pop("vectors_kept", None)

    def keyword_index(self, cfg: Config) -> KeywordIndex:
        """The BM25 field index for the configuration's analysis settings (built once)."""
        key = (cfg.keyword.k1, cfg.keyword.b, cfg.keyword.epsilon, cfg.parse.stem,
               cfg.parse.stop_words)
        idx = self._kw.get(key)
        if idx is None:
            idx = self._kw[key] = self._build_keyword_index(key)
        return idx

    def _build_keyword_index(self, key: tuple[Any, ...]) -> KeywordIndex:
        """Build the keyword index, or read its analysed postings kept beside the index file
        by an earlier build over the same memories (`kwstore`: a re-open of an unchanged
        vault analysed every memory again, ~15 s of CPU at 100k memories)."""
        k1, b, eps, stem, stop = key
        memories = list(self.vault.memories.values())
        target = kwstore.store_path(self.index, stem, stop)
        if target is None:
            return KeywordIndex(memories, k1=k1, b=b, epsilon=eps, stem=stem, stop_words=stop)
        skey = kwstore.store_key(self.fingerprint, memories, stem, stop)
        parts = kwstore.load(target, skey, len(memories))
        idx = KeywordIndex(memories, k1=k1, b=b, epsilon=eps, stem=stem, stop_words=stop,
                           parts=parts)
        if parts is None and not getattr(self.index, "read_only", False):
            kwstore.save(target, skey, {name: f.parts() for name, f in idx.fields.items()})
        return idx

    def _memo(self, name: str, build: Callable[[], _T]) -> _T:
        if name not in self._derived:
            self._derived[name] = build()
        value: _T = self._derived[name]
        return value

    def memo(self, name: str, build: Callable[[], _T]) -> _T:
        """A value derived from the vault (built once, dropped when the vault changes): how a
        stage of its own keeps what it computes per vault."""
        return self._memo(name, build)

    def chains(self) -> dict[str, Chain]:
        """id -> its supersession Chain."""
        return self._memo("chains", lambda: filter_stage.chain_map(self.vault))

    def topic_keys(self) -> set[str]:
        return self._memo("topic_keys", lambda: {m.topic_key for m in self.vault.memories.values()
                                                 if m.topic_key})

    def entity_adjacency(self) -> dict[str, dict[str, float]]:
        return self._memo("adj", lambda: graph.weighted_adjacency(self.vault.graph))

    def ppr_graph(self) -> graph.PPRGraph:
        return self._memo("ppr", lambda: graph.PPRGraph(self.entity_adjacency()))

    def memory_entities(self) -> dict[str, tuple[str, ...]]:
        """memory id -> the distinct graph entities its edges mention, sorted: the graph
        stage sums their PPR mass in this order, so a score never depends on the order a set
        happens to iterate in (string hashes change with PYTHONHASHSEED)."""
        def build() -> dict[str, tuple[str, ...]]:
            out: dict[str, set[str]] = {}
            for e in self.vault.graph.edges:
                if e.memory_id:
                    out.setdefault(e.memory_id, set()).update((e.subject, e.object))
            return {mid: tuple(sorted(ents)) for mid, ents in out.items()}
        return self._memo("ments", build)

    def digest_tokens(self) -> list[frozenset[str]]:
        return self._memo("digests", lambda: [frozenset(analyze(p.text)) for p in self.vault.digests])

    def turns_by_id(self) -> Mapping[str, Turn]:
        """turn id -> Turn, without a dict of every turn (`TurnLookup`)."""
        return self._memo("turns", lambda: TurnLookup(self.vault.turns))

    def word_sets(self) -> dict[str, frozenset[str]]:
        """Word sets for MMR's Jaccard similarity: title and summary."""
        return self._memo("words", lambda: {mid: word_set(f"{m.title} {m.summary}")
                                            for mid, m in self.vault.memories.items()})

    def memory_vectors(self) -> dict[str, np.ndarray]:
        """id -> embedding, from the index (empty without one)."""
        def build() -> dict[str, np.ndarray]:
            if self.index is None:
                return {}
            try:
                ids, mat = self.index.vectors()
            except Exception:  # no vectors stored: MMR falls back to Jaccard
                return {}
            kept = self._derived.pop("vectors_kept", None)
            if kept is not None and kept[0][0] is ids and kept[0][1] is mat:
                # The index's very matrix the kept dict was made from (`set_vault`).
                self._derived["vector_matrix"] = kept[0]
                kept_vecs: dict[str, np.ndarray] = kept[1]
                return kept_vecs
            self._derived["vector_matrix"] = (ids, mat)
            return {mid: mat[i] for i, mid in enumerate(ids)}
        return self._memo("vectors", build)

    def signatures(self) -> dict[str, int]:
        """id -> 256-bit signature: the index's, else computed from the memories."""
        def build() -> dict[str, int]:
            kept = self._derived.pop("sigs_kept", None)
            if self.index is not None:
                try:
                    held = self.index.signatures()
                except Exception:  # fall through to computing them
                    pass
                else:
                    self._derived["sigs_of"] = held
                    if kept is not None and kept[0] is held:
                        # The index's very dict the kept copy was made from (`set_vault`),
                        # and the same memories: the bit matrix stays too.
                        if kept[2] is not None:
                            self._derived["sigbits"] = kept[2]
                        kept_sigs: dict[str, int] = kept[1]
                        return kept_sigs
                    return dict(held)
            from recall_tui.index import signature as lsh
            return {mid: lsh.signature(signature_text(m)) for mid, m in self.vault.memories.items()}
        return self._memo("sigs", build)

    def signature_matrix(self) -> tuple[list[str], np.ndarray]:
        """(ids, bits): every memory's signature unpacked to a (n, 256) bit matrix, so a
        query compares against all of them in one vectorised step."""
        def build() -> tuple[list[str], np.ndarray]:
            from recall_tui.index import signature as lsh
            every = self.signatures()
            kept: tuple[list[str], np.ndarray] | None = self._derived.get("sigbits")
            if kept is not None:  # taken back with the signatures (`signatures`)
                return kept
            sigs = {mid: s for mid, s in every.items() if mid in self.vault.memories}
            ids = list(sigs)
            raw = b"".join(lsh.to_bytes(sigs[mid]) for mid in ids)
            bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
            return ids, bits.reshape(len(ids), lsh.BITS) if ids else bits.reshape(0, lsh.BITS)
        return self._memo("sigbits", build)

    # --- recall -------------------------------------------------------------------------

    def recall(self, query: str, *, k: int | None = None, now: datetime | None = None,
               as_of: datetime | None = None, why: Sequence[str] = (), verbosity: str | None = None,
               config: Config | None = None, topic_key: str | None = None,
               entity_hints: Sequence[str] = (), filters: Filters | None = None,
               cancel: Callable[[], bool] | None = None) -> Trace:
        """Run one recall. Never raises for any query text; raises `Cancelled` when
        `cancel()` turns True between stages."""
        t0 = time.perf_counter()
        cfg = config or self.config
        pinned_now = _aware(now)
        now_ = pinned_now or datetime.now(timezone.utc)
        k_ = cfg.k if k is None else max(0, int(k))
        verb = verbosity or cfg.verbosity
        filters = filters or Filters()
        records: dict[str, StageRecord] = {}
        query = query if isinstance(query, str) else ("" if query is None else str(query))

        def check() -> None:
            if cancel is not None and cancel():
                raise Cancelled()

        def timed(name: str, fn: Callable[[], Out]) -> Out:
            check()
            start = time.perf_counter()
            out = fn()
            end = time.perf_counter()
            records[name] = StageRecord(
                name, (start - t0) * 1000, 0.0 if out.skipped else (end - start) * 1000,
                out.skipped, out.reason, tuple(out.candidates), tuple(out.dropped),
                tuple((str(a), str(b)) for a, b in out.info))
            return out

        # query.parse (+ eligibility of every memory under the effective filters): the
        # state starts with the raw query and the call's filters, the stage parses them
        st = RecallState(ParsedQuery(query, query, (), ()), cfg, k_, now_, _aware(as_of), filters,
                         topic_key, tuple(entity_hints), verb)
        timed("query.parse", lambda: parse.run(self, st))
        cache_key = (query, self._config_meta(cfg)[1], k_, _iso(pinned_now), _iso(st.as_of), filters.key(),
                     topic_key, tuple(entity_hints), verb, self.fingerprint)

        cached = self._cache.get(cache_key, cfg.cache.ttl_s) if cfg.cache.enabled else None
        if cached is not None:
            timed("cache", lambda: Out(reason="cache hit", info=[("entries", str(len(self._cache)))]))
            cst, hits, timeline, stored = cached
            for name in STAGE_ORDER:
                if name in records:
                    continue
                old = stored.get(name)
                if old is None:  # cannot happen for entries this engine wrote; be safe
                    records[name] = StageRecord(name, (time.perf_counter() - t0) * 1000, 0.0,
                                                True, "cache hit", cached=True)
                else:  # the cached run's record, marked: a cache hit never shows blank stages
                    records[name] = dataclasses.replace(old, cached=True)
            return self._trace(cst, records, hits, timeline, why, t0, cache_hit=True)
        timed("cache", lambda: Out(skipped=not cfg.cache.enabled,
                                   reason="miss" if cfg.cache.enabled else "disabled by the configuration",
                                   info=[("entries", str(len(self._cache)))]))

        def channel(name: str) -> None:
            out = timed(name, lambda: _CHANNEL_STAGES[name](self, st))
            if not out.skipped:
                st.channels[name] = list(out.candidates)
                for c in out.candidates:
                    st.fate(c.id).channels[name] = (c.rank, c.score)
            else:
                st.stage_reasons[name] = out.reason

        channel("keyword")
        channel("fuzzy")
        sc_start = time.perf_counter()
        check()
        short_circuit.decide(self, st)
        sc_ms = (time.perf_counter() - sc_start) * 1000
        for name in ("vector", "signature", "topic", "graph"):
            channel(name)
        timed("consolidation", lambda: consolidation.run(self, st))
        timed("turns", lambda: turns.run(self, st))
        timed("fuse", lambda: fuse.run(self, st))
        sc_out = short_circuit.run(self, st)
        records["short-circuit"] = StageRecord(
            "short-circuit", (sc_start - t0) * 1000, 0.0 if sc_out.skipped else sc_ms,
            sc_out.skipped, sc_out.reason, (), (), tuple(sc_out.info))
        timed("speaker", lambda: speaker.run(self, st))
        timed("window", lambda: window.run(self, st))
        timed("hop2", lambda: hop2.run(self, st))
        timed("hops", lambda: hops.run(self, st))
        timed("filter", lambda: filter_stage.run(self, st))
        timed("boosts", lambda: boosts.run(self, st))
        timed("rerank", lambda: rerank.run(self, st))
        timed("mmr", lambda: mmr.run(self, st))
        timed("floor", lambda: floor.run(self, st))
        timed("enrich", lambda: enrich.run(self, st))
        hits = self._hits(st)
        timeline = tuple(TimelineEntry(t, ids) for t, ids in st.timeline)
        if cfg.cache.enabled:
            stored = {n: r for n, r in records.items() if n not in ("query.parse", "cache")}
            self._cache.put(cache_key, (st, hits, timeline, stored), cfg.cache.max_entries)
        if cfg.tracking.enabled and self.index is not None and hits:
            self.index.record_recalls([h.id for h in hits], now_)
        return self._trace(st, records, hits, timeline, why, t0, cache_hit=False)

    def _hits(self, st: RecallState) -> tuple[Hit, ...]:
        out = []
        ecfg = st.cfg.enrich
        for rank, mid in enumerate(st.hits, 1):
            m = self.vault.memories[mid]
            chans = tuple(c.channel for c in st.channel_scores.get(mid, ()))
            hop = st.hops.get(mid)
            summary = (lean_summary(m.summary, ecfg.lean_chars) if st.verbosity == "lean"
                       else lean_summary(m.summary, ecfg.full_chars))
            notes = []
            if hop is not None:
                notes.append(f"1-hop from {hop.from_id}: {st.fused.get(hop.from_id, 0.0):.4g} x "
                             f"{hop.link_score:g} x {hop.factor:g}")
            notes += st.turn_notes.get(mid, [])
            explain = Explanation(
                channels=tuple(st.channel_scores.get(mid, ())),
                fused=st.fused.get(mid, st.hop_scores.get(mid, 0.0)),
                hop=hop,
                boosts=st.boosts.get(mid, ()),
                boosted=st.boosted.get(mid, st.score.get(mid, 0.0)),
                rerank=st.rerank.get(mid),
                mmr=st.mmr.get(mid),
                matched_terms=st.matched_terms.get(mid, ()),
                final=st.final.get(mid, 0.0),
                notes=tuple(notes),
                fusion=st.fusion_text(mid) if st.fusion_text is not None else "",
                scaling=st.scaling_text(mid) if st.scaling_text is not None else "",
            )
            out.append(Hit(mid, rank, st.final.get(mid, 0.0), m.title, m.type, m.scope, summary,
                           m.topic_path, chans, "1-hop" if hop else None,
                           st.staleness.get(mid, "fresh"), m.path, explain,
                           tuple(st.warnings.get(mid, ()))))
        return tuple(out)

    def _trace(self, st: RecallState, records: dict[str, StageRecord], hits: tuple[Hit, ...],
               timeline: tuple[TimelineEntry, ...], why: Sequence[str], t0: float,
               *, cache_hit: bool) -> Trace:
        stages = tuple(records[name] for name in STAGE_ORDER)
        answers = why_mod.answer(self, st, list(dict.fromkeys(why)))
        return Trace(
            trace_version=TRACE_VERSION,
            query=st.query.raw,
            preset=self.preset,
            k=st.k,
            now=_iso(st.now) or "",
            as_of=_iso(st.as_of),
            verbosity=st.verbosity,
            hits=hits,
            stages=stages,
            why=answers,
            turns=tuple(st.turns),
            timeline=timeline,
            total_ms=(time.perf_counter() - t0) * 1000,
            cache_hit=cache_hit,
            config=self._config_meta(st.cfg)[0],
            config_hash=self._config_meta(st.cfg)[1],
            vault=self.vault_facts(),
        )

    def _config_meta(self, cfg: Config) -> tuple[dict[str, Any], str]:
        """(to_dict, hash) of a configuration, computed once per Config object (a live
        tuning pane passes a new object on every change, so identity is the right key)."""
        meta = self._cfg_meta.get(id(cfg))
        if meta is None or meta[0] is not cfg:
            if len(self._cfg_meta) > 64:
                self._cfg_meta.clear()
            meta = self._cfg_meta[id(cfg)] = (cfg, cfg.to_dict(), cfg.hash())
        return meta[1], meta[2]

    def vault_facts(self) -> dict[str, Any]:
        """Root, counts, index schema and embedder: what a recall ran against."""
        return dict(self._memo("facts", self._vault_facts))

    def _vault_facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "root": str(self.vault.root),
            "memories": len(self.vault.memories),
            "problems": len(self.vault.problems),
            "digests": len(self.vault.digests),
            "turns": len(self.vault.turns),
            "fingerprint": self.fingerprint[:16],
        }
        if self.index is not None:
            try:
                from recall_tui.index.schema import SCHEMA_VERSION
                facts["index_schema"] = SCHEMA_VERSION
            except ImportError:
                facts["index_schema"] = None
            info = dict(getattr(self.index, "embedder_info", None) or {})
            facts["embedder"] = info.get("name", "none")
            facts["model"] = info.get("model", "")
            facts["dim"] = info.get("dim", 0)
        else:
            facts.update(index_schema=None, embedder="none", model="", dim=0)
        return facts

    # --- load_memory --------------------------------------------------------------------

    def load_memory(self, memory_id: str, verbosity: str = "lean") -> dict[str, Any]:
        """bastra's load_memory: lean = essential frontmatter + body without the generated
        `## Related` section; full = the complete frontmatter as written + the raw body.
        Raises KeyError for an unknown id."""
        m = self.vault.get(memory_id)
        if m is None:
            raise KeyError(f"no memory with id {memory_id!r} in {self.vault.root}")
        if verbosity == "full":
            fm = {k: _plain(v) for k, v in m.frontmatter.items()}
            fm.setdefault("id", m.id)
            return {"id": m.id, "path": m.path, "verbosity": "full", "frontmatter": fm,
                    "body": m.body}
        fm = {
            "id": m.id, "title": m.title, "type": m.type, "scope": m.scope,
            "summary": m.summary, "tags": list(m.tags), "topic_path": m.topic_path,
            "status": m.status, "created": _iso(m.created), "updated": _iso(m.updated),
        }
        if m.topic_key:
            fm["topic_key"] = m.topic_key
        if m.recall_when:
            fm["recall_when"] = list(m.recall_when)
        if m.superseded_by:
            fm["superseded_by"] = m.superseded_by
        if m.expires:
            fm["expires"] = _iso(m.expires)
        return {"id": m.id, "path": m.path, "verbosity": "lean", "frontmatter": fm,
                "body": m.body_without_related}


def signature_text(m: Memory) -> str:
    """The text a memory's signature is computed from when there is no index: the same
    text the index signs (`index.embed_text`)."""
    from recall_tui.index.rows import embed_text
    return embed_text(m)


def _plain(v: Any) -> Any:
    if isinstance(v, datetime):
        return _iso(_aware(v))
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, dict):
        return {str(a): _plain(b) for a, b in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def open_engine(vault_path: str | os.PathLike[str], *, preset: str = "default",
                embedder: str = "auto", config: Config | None = None,
                progress: Progress | None = None, **kw: Any) -> Engine:
    """Read the vault, open (build or update) its index with the chosen embedder, load the
    preset: the one call a front end needs."""
    from recall_tui.engine.config import load_preset
    from recall_tui.index.embed import make_embedder
    from recall_tui.index.store import Index
    from recall_tui.vault.reader import read_vault

    emb, _why = make_embedder(embedder)
    _preload(emb)
    vault = read_vault(vault_path, cache=True)
    cfg = config or load_preset(preset, vault.root)
    index = Index.open(vault, emb, progress=progress)
    return Engine(vault, index, cfg, preset=preset, **kw)


#: From this many memories on, `settle_heap` freezes the heap (the TUI's warm-up uses the same
#: threshold): under it a full collection is too short to matter.
FREEZE_MIN_MEMORIES = 2000


def settle_heap(vault: Vault) -> bool:
    """Move every object made so far (the vault, the index's and the engines' structures:
    150-300k tracked objects at 10k memories) out of the cyclic garbage collector's reach
    (`gc.freeze`), when the vault holds FREEZE_MIN_MEMORIES memories or more; returns
    whether it froze. A process-wide policy, for a long-lived process once its engines are
    open (the bench after its warm-up, the service after opening; the TUI's warm-up does the
    same): the collector's full passes walked all of them at a random recall, and its
    young passes cost less too. Frozen objects are still freed by reference counting (a
    re-read vault lets the old one go: the vault's objects hold no cycles); calling it again
    after a refresh freezes the new ones."""
    if len(vault.memories) < FREEZE_MIN_MEMORIES:
        return False
    gc.freeze()
    return True


def _preload(emb: Any) -> None:
    """Load a lazily loaded embedder (the local ONNX model, ~0.6 s) on a background thread,
    so it overlaps reading the vault and opening the index instead of delaying the first
    recall. The embedder's own lock makes a recall that arrives earlier wait for the load
    rather than load it twice; a failure here is left for that recall to report."""
    if getattr(emb, "loaded", True):
        return

    def warm() -> None:
        with contextlib.suppress(Exception):
            emb.embed(["warm-up"])

    threading.Thread(target=warm, name="embedder-preload", daemon=True).start()


__all__ = ["CHANNELS", "Engine", "open_engine", "settle_heap", "signature_text"]
