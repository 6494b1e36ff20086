"""Opening a vault in stages, so a front end can show itself at once (issue 13).

`open_progressive(path, ...)` returns a `VaultOpening` at once and does the work on one
background thread:

1. `reading`: `read_vault(path, cache=True, sessions=False)` (only changed files are
   parsed), with progress: the memories, digests and problems, not the session logs;
2. `indexing`: `Index.open(vault, embedder, defer_vectors=True, defer_turns=True)`: the text
   tables (porter, trigram, words), signatures and edges; the turns table is left as it is.
   Then the `Engine` exists and is *usable*: keyword, fuzzy and topic channels answer; the
   vector stage is skipped with the reason `embedding N / M`, the turn stage with
   `turns still being indexed`;
3. `turns`: the vault read again with its session logs (the memories come from this
   process's memo of the first read: the same objects), swapped into the engine
   (`Engine.turns_read`), and its turns indexed (`Index.index_turns`). A million raw turns
   (parsed, hashed, inserted) no longer stand before the first keyword result;
4. `embedding`: `Index.fill_vectors()` makes the missing vectors (from the embedding cache
   or the embedder), with progress; then `Engine.vectors_changed()` drops cached recalls.
   Skipped when every vector already exists (an index opened before);
5. `ready` (or `failed`, with the error; an engine that was usable stays usable).

Every change of phase or progress is reported as an `OpenStatus` to `on_status` (called on
the background thread: a UI hops to its own thread, e.g. Textual's `call_from_thread`) and is
also readable at any time from `VaultOpening.status`. Headless.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall_tui.engine.config import Config
from recall_tui.engine.pipeline import Engine, _preload

PHASES: tuple[str, ...] = ("starting", "reading", "indexing", "turns", "embedding", "ready",
                           "failed")


@dataclass(frozen=True)
class OpenStatus:
    """Where a progressive open is."""

    phase: str
    """One of PHASES."""
    done: int = 0
    """Units of the phase done (files read, texts embedded)."""
    total: int = 0
    """Units of the phase in all (0 when not known yet)."""
    usable: bool = False
    """The engine answers recalls (keyword, fuzzy, topic; vectors once `ready`)."""
    error: str | None = None
    """Why the open failed (phase `failed`)."""
    elapsed_ms: float = 0.0
    """Since `open_progressive` was called."""

    @property
    def message(self) -> str:
        """One line for a status bar: `embedding 1,234 / 10,000`, `ready`, ..."""
        if self.phase == "failed":
            return f"failed: {self.error}"
        if self.phase in ("reading", "turns", "embedding") and self.total:
            return f"{self.phase} {self.done:,} / {self.total:,}"
        return self.phase


class VaultOpening:
    """A vault being opened in the background (see the module docstring)."""

    def __init__(self, vault_path: Any, *, preset: str, embedder: str | Any,
                 config: Config | None, on_status: Callable[[OpenStatus], None] | None,
                 engine_kw: dict[str, Any]):
        self.vault_path = vault_path
        self.preset = preset
        self._embedder = embedder
        self._config = config
        self._on_status = on_status
        self._engine_kw = engine_kw
        self._t0 = time.perf_counter()
        self._status = OpenStatus("starting")
        self._engine: Engine | None = None
        self._usable = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vault-open", daemon=True)
        self.first_usable_ms: float | None = None
        """Time from the call to the engine being usable."""
        self.ready_ms: float | None = None
        """Time from the call to every vector being there."""
        self.vectors_deferred = False
        """The engine was usable before its vectors existed (phase `embedding` ran)."""
        self.turns_ms: float | None = None
        """Time from the call to the turns being read and indexed (phase `turns` done)."""

    # ------------------------------------------------------------------ public

    @property
    def engine(self) -> Engine | None:
        """The engine once usable, else None."""
        return self._engine

    @property
    def status(self) -> OpenStatus:
        return self._status

    def wait_usable(self, timeout: float | None = None) -> Engine | None:
        """Block until the engine is usable (or the open failed); the engine or None."""
        self._usable.wait(timeout)
        return self._engine

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the open finished (ready or failed); True when it did in time."""
        return self._done.wait(timeout)

    # ------------------------------------------------------------------ the work

    def start(self) -> VaultOpening:
        self._thread.start()
        return self

    def _set(self, phase: str, done: int = 0, total: int = 0, error: str | None = None) -> None:
        self._status = OpenStatus(
            phase, done, total, usable=self._engine is not None, error=error,
            elapsed_ms=(time.perf_counter() - self._t0) * 1000,
        )
        if self._on_status is not None:
            try:
                self._on_status(self._status)
            except Exception:  # a front end's callback must not kill the open
                pass

    def _run(self) -> None:
        from recall_tui.engine.config import load_preset
        from recall_tui.index.embed import make_embedder
        from recall_tui.index.store import Index
        from recall_tui.vault.reader import read_vault

        try:
            self._set("reading")
            if isinstance(self._embedder, str):
                emb, _why = make_embedder(self._embedder)
            else:
                emb = self._embedder
            if _index_exists(self.vault_path):
                # A re-open: the vectors most likely exist, the first recall will embed its
                # query, so load the model while the vault is read. On a first open the
                # vectors are made after the engine is usable and `fill_vectors` loads the
                # model then: loading it now (a second of imports holding the GIL) would
                # only delay the first results.
                _preload(emb)
            vault = read_vault(self.vault_path, cache=True, sessions=False,
                               progress=lambda d, t, _p: self._set("reading", d, t))
            self._set("indexing", 0, len(vault.memories))
            index = Index.open(vault, emb, defer_vectors=True, defer_turns=True)
            cfg = self._config or load_preset(self.preset, vault.root)
            engine = self._engine = Engine(vault, index, cfg, preset=self.preset,
                                           **self._engine_kw)
            self.first_usable_ms = (time.perf_counter() - self._t0) * 1000
            self.vectors_deferred = index.embedding_progress() is not None
            self._set("turns")  # before `wait_usable` returns
            self._usable.set()
            # The session logs, read and indexed now that the engine answers. The first read
            # stays alive (the engine holds it) so this read takes its memories from the memo.
            full = read_vault(self.vault_path, cache=True,
                              progress=lambda d, t, _p: self._set("turns", d, t))
            engine.turns_read(full)
            if not index.read_only:
                index.index_turns(full)
            engine.clear_cache()
            self.turns_ms = (time.perf_counter() - self._t0) * 1000
            pending = index.embedding_progress()  # (the new turns' vectors too)
            self.vectors_deferred = self.vectors_deferred or pending is not None
            if pending is not None:  # else every vector exists already: straight to ready
                self._set("embedding", *pending)
                index.fill_vectors(progress=lambda d, t, _p: self._set("embedding", d, t))
                self._engine.vectors_changed()
            self.ready_ms = (time.perf_counter() - self._t0) * 1000
            self._set("ready")
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            index_now = self._engine.index if self._engine is not None else None
            if index_now is not None and index_now.turns_pending():
                index_now.turns_failed(error)  # the turn stage says why, not "still indexing"
            self._set("failed", error=error)
        finally:
            self._usable.set()
            self._done.set()


def _index_exists(vault_path: Any) -> bool:
    """Whether the vault has an index file already (in `.recall/` or the cache folder)."""
    from recall_tui.index.schema import _cache_index_path, default_index_path

    try:
        return any(p.is_file() for p in (default_index_path(vault_path),
                                          _cache_index_path(vault_path)))
    except OSError:
        return True


def open_progressive(vault_path: Any, *, preset: str = "default", embedder: str | Any = "auto",
                     config: Config | None = None,
                     on_status: Callable[[OpenStatus], None] | None = None,
                     **engine_kw: Any) -> VaultOpening:
    """Start opening the vault at `vault_path` in the background; returns at once.

    `embedder` is a kind for `make_embedder` ("auto", "local", "ollama", "none") or an
    embedder object. `engine_kw` goes to `Engine` (e.g. `reranker`).
    """
    return VaultOpening(vault_path, preset=preset, embedder=embedder, config=config,
                        on_status=on_status, engine_kw=engine_kw).start()
