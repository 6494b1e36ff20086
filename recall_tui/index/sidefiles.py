"""Files kept beside an index file: caches a re-open reads instead of computing them again.

Three parts keep one: the turn codes (`index/vectors.py`, `<index>-turncodes`), the keyword
index's analysed postings (`engine/kwstore.py`, `<index>.keywords-<settings>`) and the floor's
probe bests (`engine/calibration.py`, `<index>.probe-bests`). Each file carries a key of what
it was made from and is checked when read, so a stale or damaged one is simply not used.
This module is what they share: where such a file lives (`side_path`: none for an index in
memory), writing one (`write_side`: best effort, atomic) and removing them all with their
index (`remove_sides`). No fsync: a cache lost in a crash is made again by the next process,
which is cheaper than making every re-open wait on the disk. Headless.
"""

from __future__ import annotations

import contextlib
import glob
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

#: The name patterns of every side file, after the index file's own name.
SIDE_PATTERNS = ("-turncodes", ".keywords-*", ".probe-bests")


def side_path(index_path: str | os.PathLike[str] | None, suffix: str) -> Path | None:
    """`index_path` + `suffix`; None for an index with no file (in memory, a URI)."""
    path = os.fspath(index_path) if index_path else ""
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path + suffix)


def write_side(target: Path, write: Callable[[BinaryIO], object]) -> bool:
    """Write a side file with `write(fh)` into a temporary file of the same folder, renamed
    over `target` (a reader never sees half a file). False when it could not be written
    (a read-only folder, a full disk); no temporary file is left behind."""
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def remove_sides(index_path: str | os.PathLike[str]) -> None:
    """Delete every side file of the index file at `index_path` (its removal or rebuild)."""
    path = Path(index_path)
    for pattern in SIDE_PATTERNS:
        for side in path.parent.glob(glob.escape(path.name) + pattern):
            with contextlib.suppress(FileNotFoundError):
                side.unlink()
