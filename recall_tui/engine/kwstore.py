"""The keyword index's analysed postings kept beside the index file, so a re-open of an
unchanged vault does not analyse every memory again.

Building `bm25.KeywordIndex` analyses seven fields of every memory (folding, tokenising, stop
words, stemming) and sorts the postings: ~15 s of CPU at 100k memories, the larger part of a
re-open. What the analysis gives (`FieldBM25.parts()`: each field's vocabulary in first-met
order, document frequencies, document lengths and CSR postings) depends only on the memories'
texts, their order and the analysis settings, so it is written once after a build to
`<index file>.keywords-<settings>` and read back by the next process whose key matches.
The key is a SHA-256 over: the engine's fingerprint (every memory's id and content hash, in
order), every memory's path, the analysis settings (stem, stop words), and the source of the
code the postings come from (this module, `bm25.py`, `text.py` and the vault reader's
package): a change to any of them makes the file unusable and the index is built again.
k1, b and epsilon are not in the key: idf, norms and spans are computed from the parts by the
same code as after a build (`FieldBM25.from_parts`), so the scores are the very same doubles.

Best effort: no index file (":memory:"), a read-only index, an unwritable folder, a damaged or
foreign file all mean "build as before"; the file is written whole then renamed into place.
Headless.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from recall_tui.engine.bm25 import FIELDS, FieldParts
from recall_tui.index.sidefiles import side_path, write_side
from recall_tui.vault.model import Memory

#: Bump when the file layout below changes.
FORMAT = 1
MAGIC = b"recall-tui keywords\n"
_ALIGN = 8


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the source this module's postings depend on (read once per process)."""
    here = Path(__file__).resolve().parent
    files = [here / "kwstore.py", here / "bm25.py", here / "text.py"]
    files += sorted((here.parent / "vault").glob("*.py"))
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for f in files:
        with contextlib.suppress(OSError):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def store_key(fingerprint: str, memories: Sequence[Memory], stem: bool, stop_words: bool) -> bytes:
    """The 32-byte key a kept file must carry to be used for these memories and settings."""
    h = hashlib.sha256(f"{code_digest()}\0{fingerprint}\0{stem:d}{stop_words:d}\0".encode())
    h.update("\0".join([m.path for m in memories]).encode("utf-8", "surrogateescape"))
    return h.digest()


def store_path(index: Any, stem: bool, stop_words: bool) -> Path | None:
    """Where the kept postings of `index` live for these settings; None without a file."""
    return side_path(getattr(index, "path", None),
                     f".keywords-{'stem' if stem else 'nostem'}-{'stop' if stop_words else 'nostop'}")


def _padded(b: bytes, fill: bytes = b"\0") -> bytes:
    return b + fill * (-len(b) % _ALIGN)


def save(target: Path, key: bytes, parts: Mapping[str, FieldParts]) -> bool:
    """Write `parts` under `key` (atomically: a temporary file renamed into place). False
    when the folder cannot be written (nothing is left behind)."""
    head: dict[str, Any] = {"format": FORMAT, "fields": {}}
    blobs: list[bytes] = []
    for name in FIELDS:
        vocab, df, lens, post_docs, post_tf = parts[name]
        vocab_b = "\n".join(vocab).encode("utf-8", "surrogateescape")
        arrays: list[np.ndarray] = [np.asarray(df, dtype=np.int64), np.asarray(lens, dtype=np.int64),
                  np.ascontiguousarray(post_docs, dtype=np.int32), np.ascontiguousarray(post_tf)]
        head["fields"][name] = {"terms": len(vocab), "docs": len(lens),
                                "postings": len(post_docs), "tf": post_tf.dtype.str,
                                "vocab_bytes": len(vocab_b)}
        blobs.append(_padded(vocab_b))
        blobs += [_padded(a.tobytes()) for a in arrays]
    head_b = _padded(json.dumps(head).encode(), b" ")  # (JSON allows trailing spaces)

    def write(fh: BinaryIO) -> None:
        fh.write(MAGIC + key + len(head_b).to_bytes(8, "little") + head_b)
        for blob in blobs:
            fh.write(blob)

    return write_side(target, write)


def load(target: Path, key: bytes, n: int) -> dict[str, FieldParts] | None:
    """The parts kept in `target` when it carries `key` and holds `n` documents per field;
    None otherwise (missing, another key, damaged)."""
    try:
        with open(target, "rb") as fh:
            lead = fh.read(len(MAGIC) + len(key) + 8)
            if lead[:len(MAGIC)] != MAGIC or lead[len(MAGIC):-8] != key:
                return None
            size = os.fstat(fh.fileno()).st_size - len(lead)
            data = bytearray(size)  # writable: the arrays below are views of it
            if fh.readinto(data) != size:
                return None
        head_len = int.from_bytes(lead[-8:], "little")
        head = json.loads(bytes(data[:head_len]))
        if head.get("format") != FORMAT:
            return None
        at = head_len
        out: dict[str, FieldParts] = {}

        def take(count: int, dtype: Any) -> np.ndarray:
            nonlocal at
            dt = np.dtype(dtype)
            arr = np.frombuffer(data, dtype=dt, count=count, offset=at)
            at += count * dt.itemsize
            at += -at % _ALIGN
            return arr

        for name in FIELDS:
            f = head["fields"][name]
            if f["docs"] != n:
                return None
            vb = f["vocab_bytes"]
            text = bytes(data[at:at + vb]).decode("utf-8", "surrogateescape")
            at += vb + (-vb % _ALIGN)
            vocab = text.split("\n") if f["terms"] else []
            df = take(f["terms"], np.int64)
            lens = take(f["docs"], np.int64)
            post_docs = take(f["postings"], np.int32)
            post_tf = take(f["postings"], f["tf"])
            if len(vocab) != f["terms"] or int(df.sum()) != f["postings"] or at > size:
                return None
            out[name] = (vocab, df.tolist(), lens.tolist(), post_docs, post_tf)
        return out
    except (OSError, ValueError, KeyError, TypeError):
        return None


__all__ = ["code_digest", "load", "save", "store_key", "store_path"]
