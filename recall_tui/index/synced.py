"""What the memories table was last synced from: meta `memories_source`.

A fresh process opening the index of an unchanged vault had to compute every memory's row
hash (which decodes every memory the reading cache's snapshot left undecoded, then a JSON
dump and a sha256 each: ~5 s of CPU at 100k memories) only to find that nothing changed. So
the sync stores, in the transaction that leaves the memories table equal to a vault's
memories, the **vault signature** of the cached read that made them (the reader's digest of
every memory file's path, size, mtime, ctime and inode, with the reader's stamp:
`readcache.vault_signature`) together with the meta `generation` after that write, as
`"<signature hex> <generation>"`. The next sync whose vault comes from a cached read with
the same signature, while the generation is still the recorded one, knows the table holds
exactly that vault's memories and compares none of them.

Trusted only when both hold:
- the signature is the one of the very read that made the vault's `Memory` objects (the
  reading cache's in-process record of that read, `readcache.remembered`, holds the same
  objects; a vault read without the cache, or patched with a changed memory, has none and is
  compared as before), and any change to a memory file changes it (a file's key moves with
  every write: the reading cache relies on the same);
- the generation is unchanged: every write that changes memory rows, by any version of this
  code, gives the generation a new value (a rebuild empties meta). Writes that change only
  vectors carry the record to their new generation (`carry_source`, called by
  `IndexCore.bump_generation(memories=False)`), as do syncs that change only turns (a
  session appended), so filling the vectors after a sync or a watcher's refresh of a log does
  not void it. Headless.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import is_

import apsw

from recall_tui.vault.model import Memory, Vault
from recall_tui.vault.readcache import remembered

META_KEY = "memories_source"


def vault_source(vault: Vault) -> str | None:
    """The vault signature (hex) of the cached read that made `vault`'s memories, or None when
    it is not known (no cached read, a newer read or a patch since, a file without a key)."""
    memo = remembered(vault.root)
    whole = memo.whole if memo is not None else None
    # (the reader's whole-vault result: its signature and memories first)
    if not isinstance(whole, tuple) or len(whole) < 2:
        return None
    sig, made = whole[0], whole[1]
    if not isinstance(sig, bytes) or not isinstance(made, Mapping):
        return None
    mine: Mapping[str, Memory] = vault.memories
    if len(made) != len(mine) or not all(map(is_, mine.values(), made.values())):
        return None
    return sig.hex()


def _meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def source_matches(conn: apsw.Connection, source: str) -> bool:
    """Inside a transaction: whether the memories table holds exactly the memories of the
    read whose signature is `source` (the record names it and the generation is its own)."""
    gen = _meta(conn, "generation")
    return gen is not None and _meta(conn, META_KEY) == f"{source} {gen}"


def record_source(conn: apsw.Connection, source: str) -> bool:
    """Inside the write that left the memories table equal to the memories read with
    signature `source`: record it with the generation as it is now. True if meta was
    written (it is not when the record is already that)."""
    gen = _meta(conn, "generation")
    if gen is None:
        return False
    value = f"{source} {gen}"
    if _meta(conn, META_KEY) == value:
        return False
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, value))
    return True


def carried_source(conn: apsw.Connection) -> str | None:
    """Inside a write that changes no memory row, before it gives the generation a new
    value: the recorded signature when the record is the current generation's (to carry to
    the new one, `carry_source`), else None."""
    gen = _meta(conn, "generation")
    rec = _meta(conn, META_KEY)
    if gen is None or rec is None:
        return None
    source, _, at = rec.partition(" ")
    return source if at == gen else None


def carry_source(conn: apsw.Connection, source: str | None) -> None:
    """After the generation moved in a write that changed no memory row: the record of
    `carried_source` now names the new generation."""
    if source is not None:
        record_source(conn, source)
