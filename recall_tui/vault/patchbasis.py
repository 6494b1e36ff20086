"""What a cached read of a vault folder keeps, beyond its `Vault`, for `patch.py` to patch it.

`read_vault(root, cache=True)` calls `note_read` when every memory file got a record; the
watcher's refresh (`patch.patch_vault`) builds the next vault from the last one and this
basis instead of reading the whole folder again. It is kept while its `Vault` lives and holds
only what that read made (the records are the reading cache memo's, `readcache.remember`).
A module of its own because the reader calls it and the patch imports the reader.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from recall_tui.vault.model import Problem, Vault
from recall_tui.vault.readcache import FileKey, Record

#: A file's slice of the vault's turns (or digest paragraphs): file -> (start, end).
Spans = dict[str, tuple[int, int]]


@dataclass
class Basis:
    """What a cached read (or a patch) of one folder gave, beyond its `Vault`, to patch it."""

    vault: weakref.ref[Vault]
    walk_problems: tuple[Problem, ...]
    other_problems: tuple[Problem, ...]
    """The digests', session logs' and misplaced files' problems, in file order."""
    memory_problems: tuple[Problem, ...]
    """The memory files' problems, then the duplicate ids' and the whole-vault steps'."""
    records: dict[str, tuple[FileKey, Record]]
    """Every memory file's parsed record with its file's key, in path order."""
    spans: dict[str, Spans] = field(default_factory=dict)
    """"turns"/"digests" -> each file's slice of the vault's tuple (made on first need)."""


_BASES: dict[str, Basis] = {}
_LOCK = threading.Lock()


def note_read(vault: Vault, walk_problems: Sequence[Problem], other_problems: Sequence[Problem],
              memory_problems: Sequence[Problem], records: dict[str, tuple[FileKey, Record]],
              spans: dict[str, Spans] | None = None) -> None:
    """Keep what `patch_vault` needs to patch `vault`, while `vault` lives. `read_vault`
    calls this after a cached read whose every memory file has a record (see `Basis`)."""
    basis = Basis(weakref.ref(vault), tuple(walk_problems), tuple(other_problems),
                  tuple(memory_problems), records, spans or {})
    with _LOCK:
        _BASES[vault.root] = basis
    weakref.finalize(vault, _let_go, vault.root, basis)


def forget_read(root: str) -> None:
    """Drop the basis kept for the folder at `root` (a read without a complete one)."""
    with _LOCK:
        _BASES.pop(root, None)


def _let_go(root: str, basis: Basis) -> None:
    with _LOCK:
        if _BASES.get(root) is basis:
            del _BASES[root]


def carry_over(new: Vault, old: Vault) -> None:
    """`new`, a cached read of the folder, found it as `old` holds it (`index.watch.same_vault`)
    and the caller keeps `old`: the basis noted for `new` serves `old` from now on, so the next
    batch patches `old` (else it would read the folder again: `old` is not the last read)."""
    with _LOCK:
        basis = _BASES.get(new.root)
        if basis is None or basis.vault() is not new:
            return
        kept = replace(basis, vault=weakref.ref(old))
        _BASES[new.root] = kept
    weakref.finalize(old, _let_go, old.root, kept)


def basis_of(vault: Vault) -> Basis | None:
    """The basis noted for `vault` (the last cached read or patch of its folder in this
    process), else None."""
    with _LOCK:
        basis = _BASES.get(vault.root)
    return basis if basis is not None and basis.vault() is vault else None
