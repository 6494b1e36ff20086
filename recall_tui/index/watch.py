"""Pick up changes made to a vault outside the tool: an editor, `git pull`, an agent writing.

Two pieces, neither of which knows the engine (the engine layer's `EngineSet` drives them:
`recall_tui.engine.engines`):

- `reread(vault, index, files=...)` re-reads a vault, brings its index up to date (only what
  changed is re-indexed and re-embedded) and says what changed (`ChangeSummary`), returning
  the new vault for the caller to swap in. Given the watcher's few changed files it patches
  the vault with them (`vault.patch.patch_vault`) and updates only their rows in the index
  (`Index.update_changed`); it reads the whole folder when the patch cannot be made.
- `VaultWatcher(root, on_files)` watches the folder in a thread and calls `on_files(paths)`
  whenever watchfiles reports a batch of changes to files the reader reads (`*.md`,
  `sessions/*.jsonl`), ignoring `.recall/` and every other dot-folder, so the index the
  engine writes never wakes the watcher.

Headless: no textual, no rich.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import apsw
import watchfiles

from recall_tui.index.schema import IndexFileError
from recall_tui.index.store import Index
from recall_tui.index.sync import IndexReport
from recall_tui.vault.model import Vault, same_memories
from recall_tui.vault.patch import PATCH_MAX_FILES, patch_vault
from recall_tui.vault.reader import read_vault

#: How long watchfiles waits for an event before handing control back (ms); bounds how long
#: `stop()` takes and how soon `start()` knows the watch is in place.
_RUST_TIMEOUT_MS = 200


@dataclass(frozen=True)
class ChangeSummary:
    """What one refresh found and did."""

    added: tuple[str, ...]
    """Ids of memories that are new."""
    changed: tuple[str, ...]
    """Ids of memories whose file changed."""
    removed: tuple[str, ...]
    """Ids of memories that are gone."""
    problems: int
    """Problems the re-read vault reports (all of them, not only new ones)."""
    ms: float
    """Wall time of the re-read, re-index and swap."""
    index: IndexReport | None = None
    """What the index update did; None without an index (or a read-only one)."""
    files: tuple[str, ...] = ()
    """The changed paths (relative to the vault) the watcher saw; empty for a direct refresh."""
    error: str | None = None
    """Why the refresh could not complete (the engines keep the vault they had), else None."""
    patched: bool = False
    """True when the vault was patched with `files` alone; False when it was read again."""
    read_ms: float = 0.0
    """Part of `ms` spent making the new vault (the patch, or the re-read)."""
    swap_ms: float = 0.0
    """Part of `ms` spent swapping the new vault into the engines (`EngineSet.refresh`)."""

    @property
    def empty(self) -> bool:
        """True when no memory was added, changed or removed."""
        return not (self.added or self.changed or self.removed)

    def describe(self) -> str:
        """A one-line notice, e.g. `vault changed: 1 added (x), 1 changed (y) · 0 problems`."""
        if self.error:
            return f"vault not reloaded: {self.error}"
        parts = []
        for word, ids in (("added", self.added), ("changed", self.changed), ("removed", self.removed)):
            if ids:
                shown = ", ".join(ids[:3]) + (f" +{len(ids) - 3}" if len(ids) > 3 else "")
                parts.append(f"{len(ids)} {word} ({shown})")
        body = ", ".join(parts) if parts else "no memory changed"
        return f"vault changed: {body} · {self.problems} problems · {self.ms:.0f} ms"


def diff_vaults(old: Vault, new: Vault) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(added, changed, removed) memory ids between two reads; a memory counts as changed
    when its file's bytes did (content hash)."""
    added = tuple(mid for mid in new.memories if mid not in old.memories)
    removed = tuple(mid for mid in old.memories if mid not in new.memories)
    changed = tuple(
        mid for mid, m in new.memories.items()
        if mid in old.memories and old.memories[mid].content_hash != m.content_hash
    )
    return added, changed, removed


def reread(old: Vault, index: Index | None, *, files: tuple[str, ...] = (),
           patch: bool = True) -> tuple[Vault | None, ChangeSummary]:
    """Re-read `old`'s folder and update `index` (when there is one and it is writable):
    the new vault (None when it could not be read or indexed) and what changed. The caller
    swaps the new vault in, and serialises calls (`recall_tui.engine.engines` does both).

    `files` (what changed, relative to the vault) patch the vault when `patch` allows and
    `vault.patch.patch_vault` can; else the folder is read again.

    Never raises for a vault that went missing or an index that cannot be written: the summary
    carries the error, and the caller keeps what it had.
    """
    t0 = time.perf_counter()
    patched = patch_vault(old, files, max_files=PATCH_MAX_FILES) if files and patch else None
    if patched is not None:
        new = patched.vault
    else:
        try:
            new = read_vault(old.root, cache=True)
        except OSError as exc:
            return None, ChangeSummary((), (), (), len(old.problems),
                                       (time.perf_counter() - t0) * 1000, None, files,
                                       f"{old.root}: {exc.strerror or exc}")
    read_ms = (time.perf_counter() - t0) * 1000
    report = None
    if index is not None and not getattr(index, "read_only", False):
        try:
            if patched is not None:
                report = index.update_changed(new, patched.memory_ids, patched.sessions)
            else:
                report = index.update_files(new)
        except (IndexFileError, apsw.Error, OSError) as exc:
            # An edit already written must not fail here: the summary carries the index
            # problem, and the next update (or open) re-indexes what changed.
            return None, ChangeSummary((), (), (), len(new.problems),
                                       (time.perf_counter() - t0) * 1000, None, files,
                                       f"index not updated: {type(exc).__name__}: {exc}"
                                       if not isinstance(exc, IndexFileError) else str(exc))
    if patched is not None:
        added, changed, removed = _diff_ids(old, new, patched.memory_ids)
    else:
        added, changed, removed = diff_vaults(old, new)
    return new, ChangeSummary(added, changed, removed, len(new.problems),
                              (time.perf_counter() - t0) * 1000, report, files,
                              patched=patched is not None, read_ms=read_ms)


def same_vault(old: Vault, new: Vault) -> bool:
    """Whether a re-read found the vault as it was: the same memories (ids in order, each from
    the same path with the same bytes and modification time), problems, digests and session
    logs (their signatures). A catch-up re-read that finds this swaps nothing in."""
    if old is new:
        return True
    if not same_memories(new.memories, old.memories):
        return False
    return (old.problems == new.problems and old.digests == new.digests
            and dict(old.turn_logs) == dict(new.turn_logs) and len(old.turns) == len(new.turns))


def _diff_ids(old: Vault, new: Vault, ids: frozenset[str]
              ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """`diff_vaults` when only the memories `ids` can differ (a patch), in the same order."""
    if not ids:
        return (), (), ()
    before, after = old.memories, new.memories
    return (
        tuple(mid for mid in after if mid in ids and mid not in before),
        tuple(mid for mid in after if mid in ids and mid in before
              and before[mid].content_hash != after[mid].content_hash),
        tuple(mid for mid in before if mid in ids and mid not in after),
    )


def _relevant(root: Path) -> Callable[[watchfiles.Change, str], bool]:
    """watchfiles filter: the files read_vault reads, outside dot-folders (`.recall/`, `.git/`)
    and not dot-files (an atomic write's temp file is one); and names without a dot, which
    are most likely folders: a folder moved or removed is reported as the folder alone, and
    its files must not go unseen (the patch reads the whole vault for a folder)."""

    def keep(_change: watchfiles.Change, path: str) -> bool:
        try:
            rel = Path(path).relative_to(root)
        except ValueError:
            return False
        parts = rel.parts
        if not parts or any(p.startswith(".") for p in parts):
            return False
        if parts[-1].endswith(".md") or "." not in parts[-1]:
            return True
        return len(parts) == 2 and parts[0] == "sessions" and parts[1].endswith(".jsonl")

    return keep


class VaultWatcher:
    """Watches a vault folder in a thread and reports each batch of changed files.

    `on_files(paths)` (relative to the vault, sorted) runs in the watcher thread; the engine
    layer's `EngineSet.watch` refreshes its engines there. Changes within `debounce_ms` of each
    other arrive as one batch.
    """

    def __init__(self, root: str | Path, on_files: Callable[[tuple[str, ...]], None], *,
                 debounce_ms: int = 200, on_ready: Callable[[], None] | None = None) -> None:
        self.root = Path(root).resolve()
        self.on_files = on_files
        self.on_ready = on_ready
        """Run once in the watcher thread as soon as the watch is in place, before any batch
        is handled: where a caller catches up with what changed before the watch began
        (`EngineSet.watch` re-reads the folder there)."""
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        """What ended the watch thread early, if anything did."""

    def start(self, timeout: float = 5.0) -> VaultWatcher:
        """Start watching; returns once the file-system watch is in place (or `timeout`)."""
        if self._thread is not None:
            raise RuntimeError("this watcher is already started")
        self._thread = threading.Thread(target=self._run, name="recall-tui-watch", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """True while the watch thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> VaultWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            # yield_on_timeout: the first (empty) batch arrives once the watch is installed,
            # which is when start() may return.
            ready = self.on_ready
            for batch in watchfiles.watch(
                self.root, watch_filter=_relevant(self.root), debounce=self.debounce_ms,
                stop_event=self._stop, rust_timeout=_RUST_TIMEOUT_MS, yield_on_timeout=True,
                raise_interrupt=False,
            ):
                self._ready.set()
                if ready is not None and not self._stop.is_set():
                    call: Callable[[], None] = ready
                    ready = None
                    call()  # (a batch that arrived meanwhile is handled next, after it)
                if not batch or self._stop.is_set():
                    continue
                files = tuple(sorted({Path(p).relative_to(self.root).as_posix() for _, p in batch}))
                self.on_files(files)
        except BaseException as exc:  # kept for the UI to show; the thread ends
            self.error = exc
        finally:
            self._ready.set()
