"""`EngineSet`: the engines of one vault, one per preset, sharing the vault and its index, kept
up to date with the files on disk. The agent's `RecallCore` and the TUI's recall controller
both recall through one.

An engine holds per-vault structures (the keyword index, graph, calibration) and a cache of
recalls, so each preset asked for gets its own engine, made once (`for_preset`). They all read
one `Vault` object and one `Index`: a change on disk is read and indexed once (`refresh`) and
swapped into every engine (`set_vault`), each of which forgets its cached recalls.

Watching: `watch(on_change)` starts the index layer's `VaultWatcher` (which only reports which
files changed) and refreshes this set on every batch, in the watcher's thread, then calls
`on_change(summary)`; as soon as the watch is in place the folder is read once more (a
catch-up: what changed between the vault's read and the watch is in no batch), after which a
batch's files patch the vault (`index.watch.reread`; `watch_settled`). The index layer never
sees an engine.

Thread safety: one lock (the caller's, e.g. `RecallCore.lock`, else the set's own) guards the
engine table and every swap, so a recall thread asking for a new preset's engine never races
the watcher's swap. Refreshes are serialised process-wide (`_REFRESH_LOCK`): the watcher thread
and the UI (after `$EDITOR`) may both ask. Headless: no textual, no rich.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from recall_tui.engine.config import Config, load_preset
from recall_tui.engine.pipeline import Engine
from recall_tui.vault.model import Vault

if TYPE_CHECKING:  # imported when used: a hook's process never loads watchfiles
    from recall_tui.index.store import Index
    from recall_tui.index.watch import ChangeSummary, VaultWatcher

#: One refresh at a time (read the old vault, re-read, re-index, swap in), in this process.
_REFRESH_LOCK = threading.Lock()


def refresh(engine: Engine, *, files: tuple[str, ...] = ()) -> ChangeSummary:
    """Re-read one engine's vault, update its index and swap both in (its cache is cleared).

    Never raises for a vault that went missing or an index that cannot be written: the summary
    carries the error and the engine keeps what it had. An `EngineSet` refreshes all its
    engines at once with `EngineSet.refresh`.
    """
    return EngineSet.of(engine).refresh(files=files)


class EngineSet:
    """The engines of one vault, one per preset, sharing its `vault` and `index`."""

    def __init__(self, vault: Vault, index: Index | None, *, root: str | Path | None = None,
                 lock: threading.RLock | None = None) -> None:
        self.vault = vault
        """The vault every engine reads (swapped by `set_vault` / `refresh`)."""
        self.index = index
        """The index every engine reads (None: recalls without one)."""
        self.root = Path(root) if root is not None else Path(vault.root)
        """Where presets are looked up (the vault's `.recall/presets/` and the built-ins)."""
        self.lock: threading.RLock = lock if lock is not None else threading.RLock()
        self._engines: dict[str, Engine] = {}
        self.watcher: VaultWatcher | None = None
        """The running watcher (`watch`), else None."""
        self.watch_settled = threading.Event()
        """Set once a refresh of the whole folder ran while watching (the first batch's, or a
        `refresh()`): from then on every change on disk is in the vault or in a batch the
        watcher reports, so a batch's files patch the vault."""

    @classmethod
    def of(cls, engine: Engine, *, root: str | Path | None = None,
           lock: threading.RLock | None = None) -> EngineSet:
        """A set around an engine already open (its preset's entry; it lends the vault and
        index to the others)."""
        engines = cls(engine.vault, engine.index, root=root, lock=lock)
        engines._engines[engine.preset] = engine
        return engines

    # --- the engines ------------------------------------------------------------------------

    def for_preset(self, name: str, config: Config | None = None) -> Engine:
        """The engine running preset `name`, made on first use. `config` is the preset's
        configuration when the caller has loaded it already (used only when the engine is
        made); else it is loaded from `root`. Raises ValueError for an unknown or broken
        preset."""
        with self.lock:
            engine = self._engines.get(name)
            if engine is None:
                cfg = config if config is not None else load_preset(name, self.root)
                engine = Engine(self.vault, self.index, cfg, preset=name)
                self._engines[name] = engine
            return engine

    def get(self, name: str) -> Engine | None:
        """The engine of preset `name` when one was made, else None (makes none)."""
        with self.lock:
            return self._engines.get(name)

    def presets(self) -> list[str]:
        """The presets with an engine, in the order they were made."""
        with self.lock:
            return list(self._engines)

    def engines(self) -> list[Engine]:
        """Every engine made so far."""
        with self.lock:
            return list(self._engines.values())

    def forget(self, names: Iterable[str]) -> None:
        """Drop the engines of these presets (a preset saved again, or deleted): the next
        `for_preset` loads the file again."""
        with self.lock:
            for name in names:
                self._engines.pop(name, None)

    def reload_configs(self, known: Mapping[str, Config] | None = None) -> None:
        """Load every engine's preset again (its file changed) and forget its cached recalls.
        `known` gives configurations the caller loaded already; an engine whose preset cannot
        be loaded any more is dropped."""
        known = known or {}
        with self.lock:
            for name, engine in list(self._engines.items()):
                try:
                    engine.config = known[name] if name in known else load_preset(name, self.root)
                except ValueError:  # a preset asked for by name once, gone since
                    del self._engines[name]
                    continue
                engine.clear_cache()

    def clear_caches(self) -> None:
        """Every engine forgets its cached recalls (a re-run asked for)."""
        for engine in self.engines():
            engine.clear_cache()

    def vectors_changed(self) -> None:
        """The index's vectors arrived (a progressive open finished): every engine forgets the
        recalls and the structures it made without them."""
        with self.lock:
            for engine in self._engines.values():
                engine.vectors_changed()

    # --- the vault ----------------------------------------------------------------------------

    def set_vault(self, vault: Vault) -> None:
        """Swap a re-read `vault` into every engine that does not read it yet (each forgets
        its cached recalls and vault-derived structures). An engine refreshed by itself
        (`refresh(engine)`) hands its vault to the others this way."""
        with self.lock:
            self.vault = vault
            for engine in self._engines.values():
                if engine.vault is not vault:
                    engine.set_vault(vault, self.index)

    def refresh(self, *, files: tuple[str, ...] = (), patch: bool = True,
                keep_same: bool = False) -> ChangeSummary:
        """Re-read the vault, update the index (only what changed) and swap the new vault into
        every engine. `files` (the watcher's changed paths, relative to the vault) let the
        vault be patched with those files instead of read again (`index.watch.reread`;
        `patch=False` reads the folder all the same). `keep_same`: when the re-read finds the
        vault as it was (`index.watch.same_vault`), the engines keep the vault they read, and
        their cached recalls. Never raises for a vault gone missing or an index that cannot be
        written: the summary carries the error and the engines keep what they had."""
        from recall_tui.index.watch import reread, same_vault
        from recall_tui.vault.patchbasis import carry_over

        t0 = time.perf_counter()
        with _REFRESH_LOCK:
            watching = self.watcher is not None  # (the watch began before this read)
            new, summary = reread(self.vault, self.index, files=files, patch=patch)
            t1 = time.perf_counter()
            if new is not None:
                if keep_same and same_vault(self.vault, new):
                    carry_over(new, self.vault)  # (the next batch patches the vault kept)
                else:
                    self.set_vault(new)
                if watching and not summary.patched:
                    self.watch_settled.set()
        now = time.perf_counter()
        return replace(summary, ms=(now - t0) * 1000, swap_ms=(now - t1) * 1000)

    # --- watching -----------------------------------------------------------------------------

    def watch(self, on_change: Callable[[ChangeSummary], None], *,
              debounce_ms: int = 200) -> VaultWatcher:
        """Follow changes on disk: on every batch of changed files, `refresh` and then call
        `on_change(summary)`, both in the watcher's thread. Returns once the watch is in place.
        Raises RuntimeError when this set watches already.

        Nothing made on disk after the vault was read is missed: once the watch is in place,
        the watcher's thread reads the whole folder again before any batch (a catch-up; an
        edit made between the read and the watch is in no batch, and without it stayed unseen
        until some other file changed). It swaps in and reports (`on_change`) only what
        differs; it also settles the watch (`watch_settled`)."""
        from recall_tui.index.watch import VaultWatcher

        if self.watcher is not None:
            raise RuntimeError("this engine set is watching its vault already")

        def changed(files: tuple[str, ...]) -> None:
            # Until a refresh of the whole folder has run since the watch began (the catch-up,
            # or the caller's `refresh()`), a batch's files cannot patch the vault.
            on_change(self.refresh(files=files, patch=self.watch_settled.is_set()))

        def catch_up() -> None:
            before = self.vault
            summary = self.refresh(patch=False, keep_same=True)
            if summary.error or self.vault is not before:
                on_change(summary)

        self.watch_settled.clear()
        # (set before it starts: the catch-up's refresh asks whether this set is watching)
        self.watcher = watcher = VaultWatcher(self.vault.root, changed, debounce_ms=debounce_ms,
                                              on_ready=catch_up)
        watcher.start()
        return watcher

    def stop_watching(self) -> None:
        """Stop the watcher (joins its thread); nothing when none runs."""
        watcher, self.watcher = self.watcher, None
        self.watch_settled.clear()
        if watcher is not None:
            watcher.stop()

    def close(self) -> None:
        """Stop watching and drop the engines. The index stays open: its owner closes it."""
        self.stop_watching()
        with self.lock:
            self._engines.clear()

    def __enter__(self) -> EngineSet:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
