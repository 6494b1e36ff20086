"""One module per pipeline stage (pipeline.md). Each exposes pure functions that the tests
drive with hand-built inputs, and a `run(engine: StageContext, st: RecallState) -> Out` that
the pipeline times.

`StageContext` is the stage contract: everything a stage may use of the engine (the vault,
the index, the reranker and the vault-derived memos the stages share). `Engine` satisfies it
structurally; a stage never sees the rest of the engine (its cache, its presets, its trace
assembly). What a stage hands to a later stage (or to the trace) goes through the typed
fields of `RecallState`, never through the engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:  # types only: the stage modules import this package at run time
    import numpy as np

    from recall_tui.engine.bm25 import KeywordIndex
    from recall_tui.engine.config import Config
    from recall_tui.engine.stages.graph import PPRGraph
    from recall_tui.engine.stages.rerank import Reranker
    from recall_tui.index.store import Index
    from recall_tui.vault.model import Chain, Turn, Vault


_T = TypeVar("_T")


class StageContext(Protocol):
    """What a stage may use of the engine (`Engine` implements it)."""

    @property
    def vault(self) -> Vault:
        """The vault being recalled from."""
        ...

    @property
    def index(self) -> Index | None:
        """Its index (FTS5, vectors, signatures, recall stats), or None without one."""
        ...

    @property
    def reranker(self) -> Reranker | None:
        """The user's cross-encoder, if one was plugged in."""
        ...

    def keyword_index(self, cfg: Config) -> KeywordIndex:
        """The BM25 field index for the configuration's analysis settings."""
        ...

    def chains(self) -> dict[str, Chain]:
        """id -> its supersession chain."""
        ...

    def topic_keys(self) -> set[str]:
        """Every topic_key in the vault."""
        ...

    def ppr_graph(self) -> PPRGraph:
        """The entity graph as arrays for personalised PageRank."""
        ...

    def memory_entities(self) -> dict[str, tuple[str, ...]]:
        """memory id -> the distinct graph entities its edges mention, sorted (a sum over
        them must not follow a set's hash order)."""
        ...

    def digest_tokens(self) -> list[frozenset[str]]:
        """The analysed terms of each digest paragraph (in `vault.digests` order)."""
        ...

    def turns_by_id(self) -> Mapping[str, Turn]:
        """turn id -> raw transcript turn."""
        ...

    def word_sets(self) -> dict[str, frozenset[str]]:
        """memory id -> the word set of its title and summary (MMR's Jaccard)."""
        ...

    def memory_vectors(self) -> dict[str, np.ndarray]:
        """memory id -> its embedding (empty without an index or vectors)."""
        ...

    def signature_matrix(self) -> tuple[list[str], np.ndarray]:
        """(ids, bits): every memory's 256-bit signature unpacked to a (n, 256) matrix."""
        ...

    def memo(self, name: str, build: Callable[[], _T]) -> _T:
        """A value derived from the vault, built once per vault."""
        ...
