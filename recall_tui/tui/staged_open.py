"""Progressive first open for the UI: text channels answer while the vectors are still made.

`Index.open` commits the text part of a sync (memories, FTS5, trigrams, signatures, edges)
before it embeds what has no vector yet, and reports the embedding through its `progress`
callback (`what == "embed"`, called with 0 before the first chunk). `open_staged` uses exactly
that seam: an `Index` subclass whose `_sync_vectors` marks the index `vectors_pending` (the
reason `embedding 1,234 / 10,000` the vector stage skips with) and, on the first embedding
progress, hands the index to `text_ready` so the UI can build its engine and answer keyword,
fuzzy and topic queries at once. When the index has nothing to embed, `text_ready` is never
called and the open simply returns.

Interim: this overrides a protected method of the index because the engine has no public
staged-open API yet (issue 13; the `scale` branch is building one). When it lands, this module
should become a thin adapter over it. Headless (no textual): the app calls it from a worker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from recall_tui.index.store import Index
from recall_tui.vault.model import Vault

Progress = Callable[[int, int, str], None]


class StagedIndex(Index):
    """An `Index` that says while its vectors are being made, and calls back once its text is
    searchable. `vectors_pending` is read by the vector stage (`engine/stages/vector.py`)."""

    vectors_pending: str | None = None
    _text_ready: Callable[[Index], None] | None = None

    def _sync_vectors(self, vault: Vault, progress: Progress | None):  # type: ignore[override]
        def staged(done: int, total: int, what: str) -> None:
            if what == "embed":
                self.vectors_pending = f"embedding {done:,} / {total:,}"
            if progress is not None:
                progress(done, total, what)
            if what == "embed" and self._text_ready is not None:
                ready, self._text_ready = self._text_ready, None
                ready(self)  # the text was committed before the embedding began

        try:
            return super()._sync_vectors(vault, staged)
        finally:
            self.vectors_pending = None


def open_staged(vault: Vault, embedder: Any, *, progress: Progress | None = None,
                text_ready: Callable[[Index], None] | None = None) -> Index:
    """`Index.open(vault, embedder)`, calling `text_ready(index)` from this thread as soon as
    the text is indexed when vectors remain to be made (never when none do)."""

    class _Open(StagedIndex):
        pass

    _Open._text_ready = staticmethod(text_ready) if text_ready else None  # type: ignore[assignment]
    _preload(embedder)
    return _Open.open(vault, embedder, progress=progress)


def _preload(embedder: Any) -> None:
    """Load a lazily loaded model on a side thread while the vault is indexed (as
    `open_engine` does), so the first query does not pay for it."""
    if getattr(embedder, "loaded", True):
        return

    def warm() -> None:
        with contextlib.suppress(Exception):
            embedder.embed(["warm-up"])

    threading.Thread(target=warm, name="embedder-preload", daemon=True).start()
