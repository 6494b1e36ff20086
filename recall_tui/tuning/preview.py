"""Preview a `recall_when` change before saving it, then save it.

A person tuning recall wants to know what a new phrase does before it touches the file: does
the memory now come back for the query in front of them, at which rank, and what happens to
the golden-set figures. `preview_recall_when` answers on a scratch copy: the index file is
copied (SQLite's online backup) into a temp folder, the memory is replaced in memory by a
copy with the new phrases, and `Index.open` on that copy re-indexes and re-embeds that one
memory only. The real vault and index are never written. `apply_recall_when` then saves
through `recall_tui.vault.edit` (byte-preserving, atomic, conflict-checked) and refreshes the
engine. Headless: no textual, no rich.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import apsw

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.engines import refresh
from recall_tui.engine.trace import Trace, WhyNot
from recall_tui.index.store import Index
from recall_tui.index.watch import ChangeSummary
from recall_tui.tuning.golden import GoldenRun, RunComparison, compare_runs, run_golden
from recall_tui.tuning.metrics import GoldenQuery
from recall_tui.vault.edit import (
    EditResult,
    content_hash,
    read_phrases,
    rewrite_recall_when,
    set_recall_when,
)
from recall_tui.vault.model import Vault


@dataclass(frozen=True)
class RankView:
    """Where the memory stood for the query under one version of its phrases."""

    rank: int | None
    """1-based rank among the hits, None when it did not come back."""
    score: float | None
    """Its reported score, None when it did not come back."""
    why: WhyNot | None
    """The engine's answer to "why (not) here?" for the memory."""
    hits: tuple[str, ...]
    """The ids returned, best first."""


@dataclass(frozen=True)
class Preview:
    """A `recall_when` change measured before it is saved."""

    memory_id: str
    """The memory being edited."""
    query: str
    """The query the rank is shown for."""
    k: int
    """Hits asked for (and the golden cut-off)."""
    old_phrases: tuple[str, ...]
    """recall_when as the vault holds it."""
    new_phrases: tuple[str, ...]
    """recall_when as proposed."""
    new_text: str
    """The file's text with the proposed phrases: exactly what saving would write."""
    expected_hash: str
    """sha256 of the file the preview was made from; pass it to `apply_recall_when`."""
    before: RankView
    """The memory for the query with its current phrases."""
    after: RankView
    """The memory for the query with the proposed phrases."""
    golden_before: GoldenRun | None
    """The golden set with the current phrases (None without a golden set)."""
    golden_after: GoldenRun | None
    """The golden set with the proposed phrases."""
    golden_change: RunComparison | None
    """golden_after against golden_before: per-query badges and mean deltas."""
    ms: float
    """Wall time of the preview, scratch index included."""


def _rank_view(trace: Trace, memory_id: str) -> RankView:
    hit = trace.hit(memory_id)
    return RankView(
        rank=hit.rank if hit else None,
        score=hit.score if hit else None,
        why=trace.why_of(memory_id),
        hits=tuple(h.id for h in trace.hits),
    )


def _scratch_index(index: Any, vault: Vault, folder: Path) -> Index:
    """A private copy of `index` brought up to date with `vault` (the edited memory only).

    The copy is taken with SQLite's online backup through a read-only connection, so it is a
    consistent snapshot even while the real index has uncommitted WAL pages, and the real file
    is not touched. An in-memory index (read-only vault) has no file to copy: the scratch one
    is built from the vault instead.
    """
    target = folder / "index.sqlite"
    src_path = getattr(index, "path", ":memory:")
    if src_path != ":memory:" and Path(src_path).is_file():
        src = apsw.Connection(src_path, flags=apsw.SQLITE_OPEN_READONLY)
        dst = apsw.Connection(str(target))
        try:
            with dst.backup("main", src, "main") as b:
                b.step(-1)
        finally:
            dst.close()
            src.close()
    return Index.open(vault, index.embedder, path=target)


def _edited_vault(vault: Vault, memory_id: str, phrases: tuple[str, ...], new_hash: str) -> Vault:
    m = vault.memories[memory_id]
    front = dict(m.frontmatter)
    front["recall_when"] = list(phrases)
    edited = dataclasses.replace(m, recall_when=phrases, content_hash=new_hash,
                                 frontmatter=MappingProxyType(front))
    memories = dict(vault.memories)
    memories[memory_id] = edited
    return dataclasses.replace(vault, memories=MappingProxyType(memories))


def preview_recall_when(engine: Engine, memory_id: str, phrases: Sequence[str], query: str, *,
                        golden: Sequence[GoldenQuery] | None = None, config: Config | None = None,
                        now: datetime | None = None, k: int | None = None,
                        golden_baseline: GoldenRun | None = None) -> Preview:
    """Measure `phrases` as the memory's recall_when for `query` (and the golden set) without
    writing anything. Raises KeyError for an unknown id and `recall_tui.vault.edit.EditError` when
    the phrases cannot be written into the file (the same check saving does).

    `golden_baseline`, a run of the same `golden` on the current vault under the same
    configuration and k (the UI's golden pane has one), is reused instead of re-run.
    """
    t0 = time.perf_counter()
    memory = engine.vault.get(memory_id)
    if memory is None:
        raise KeyError(f"no memory {memory_id!r} in {engine.vault.root}")
    new_phrases = tuple(phrases)
    path = Path(engine.vault.root) / memory.path
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    new_text = rewrite_recall_when(text, new_phrases)
    # A preview is not a recall the user made: never count it in the recall statistics.
    cfg = (config or engine.config).with_value("tracking.enabled", False)
    k_ = cfg.k if k is None else k
    before_trace = engine.recall(query, k=k_, now=now, why=[memory_id], config=cfg)
    golden_before = None
    if golden:
        reusable = (golden_baseline is not None and golden_baseline.k == k_
                    and golden_baseline.config_hash == cfg.hash()
                    and golden_baseline.vault_fingerprint == engine.fingerprint
                    and [q.query for q in golden_baseline.queries] == [q.query for q in golden])
        golden_before = golden_baseline if reusable else run_golden(
            engine, golden, cfg, k=k_, now=now, label="saved")
    scratch_vault = _edited_vault(engine.vault, memory_id, new_phrases,
                                  content_hash(new_text.encode("utf-8")))
    with tempfile.TemporaryDirectory(prefix="recall-tui-preview-") as tmp:
        index = _scratch_index(engine.index, scratch_vault, Path(tmp)) if engine.index else None
        try:
            scratch = Engine(scratch_vault, index, cfg, preset=engine.preset, reranker=engine.reranker)
            after_trace = scratch.recall(query, k=k_, now=now, why=[memory_id], config=cfg)
            golden_after = (run_golden(scratch, golden, cfg, k=k_, now=now, label="proposed")
                            if golden else None)
        finally:
            if index is not None:
                index.close()
    return Preview(
        memory_id=memory_id,
        query=query,
        k=k_,
        old_phrases=tuple(read_phrases(text)),
        new_phrases=new_phrases,
        new_text=new_text,
        expected_hash=content_hash(raw),
        before=_rank_view(before_trace, memory_id),
        after=_rank_view(after_trace, memory_id),
        golden_before=golden_before,
        golden_after=golden_after,
        golden_change=(compare_runs(golden_after, golden_before)
                       if golden_after is not None and golden_before is not None else None),
        ms=(time.perf_counter() - t0) * 1000,
    )


@dataclass(frozen=True)
class AppliedEdit:
    """A saved `recall_when` change and the refresh that followed."""

    edit: EditResult
    """What the file write did (old and new hash and phrases)."""
    refresh: ChangeSummary
    """The re-read and re-index that followed (the index report counts re-embedded memories)."""


def apply_recall_when(engine: Engine, memory_id: str, phrases: Sequence[str], *,
                      expected_hash: str) -> AppliedEdit:
    """Save `phrases` as the memory's recall_when and refresh the engine.

    Writes only the `recall_when` lines, atomically; raises `recall_tui.vault.edit.EditConflict`
    (both versions attached, nothing written) when the file's sha256 is no longer
    `expected_hash`. Then the vault is re-read and the index updated: only the edited file
    differs, so only that memory is re-indexed and re-embedded.
    """
    memory = engine.vault.get(memory_id)
    if memory is None:
        raise KeyError(f"no memory {memory_id!r} in {engine.vault.root}")
    result = set_recall_when(Path(engine.vault.root) / memory.path, phrases,
                             expected_hash=expected_hash)
    return AppliedEdit(result, refresh(engine))
