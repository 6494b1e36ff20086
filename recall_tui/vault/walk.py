"""Walking the vault folder: which files are read, symlinks, and reading one file's text."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from itertools import compress, repeat
from operator import attrgetter, concat, itemgetter, methodcaller, not_
from typing import NamedTuple, cast

from recall_tui.vault.model import Problem

#: Files larger than this are not memories (or digests); they are skipped and reported.
MAX_FILE_BYTES = 1 << 20
#: Transcripts (`sessions/*.jsonl`) larger than this are skipped and reported.
MAX_TRANSCRIPT_BYTES = 64 << 20
#: A NUL byte within this many leading bytes marks a file as binary.
BINARY_SNIFF_BYTES = 8192

_UTF8_BOM = b"\xef\xbb\xbf"


# --------------------------------------------------------------------------------------------
# Walking the folder
# --------------------------------------------------------------------------------------------


class _File(NamedTuple):
    """One file to read (a named tuple: a frozen dataclass's `__init__` was ~8 % of walking
    100k files)."""

    rel: str
    """Path relative to the vault root, posix separators (the link's path for symlinks)."""
    path: str
    """Path to open."""


_NAME = attrgetter("name")
_PATH = attrgetter("path")
_concat = cast("Callable[[str, str], str]", concat)  # (prefix + name, a C function)
_IS_REGULAR = methodcaller("is_file", follow_symlinks=False)
_REL = itemgetter(0)  # (a `_File`'s rel)
_new_file = tuple.__new__  # (what a named tuple's own `__new__` calls, as a C function)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _walk(root: str, problems: list[Problem]) -> list[_File]:
    """Every regular file below root, skipping dot-names; symlinks are followed only when
    they stay inside the vault. Symlinks are resolved after the real tree is walked, so a
    file or folder is always read under its own path and a link to it is not read twice."""
    root_real = os.path.realpath(root)
    files: list[_File] = []
    real_files: dict[str, str] = {}  # real path -> rel, for links to files read directly
    plain: list[tuple[str, list[str], list[str]]] = []  # real folder, names, rels: real_files

    visited: dict[str, str] = {root_real: ""}
    linked_dirs: list[tuple[str, str, str, str]] = []  # rel, path, target, real parent
    linked_files: list[tuple[str, str, str]] = []  # rel, path, target
    stack: list[tuple[str, str, str]] = [("", root, root_real)]

    def scan(rel_dir: str, abs_dir: str, real_dir: str) -> None:
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=_NAME)
        except OSError as exc:
            problems.append(
                Problem(rel_dir or ".", None, f"cannot list this folder ({exc.strerror})")
            )
            return
        prefix = f"{rel_dir}/" if rel_dir else ""
        try:
            # The common case in C loops (map): a folder's regular files become `_File`s
            # without a Python operation per file; only the rest (folders, symlinks,
            # dot-names, anything odd) goes through the loop below, one entry at a time.
            regular_flags = list(map(_IS_REGULAR, entries))
        except OSError:  # (a type the listing did not give, and its lstat failed)
            regular_flags = [False] * len(entries)
        if all(regular_flags):
            regular, entries = entries, []
        else:
            regular = list(compress(entries, regular_flags))
            entries = list(compress(entries, map(not_, regular_flags)))
        if regular:
            names: list[str] = list(map(_NAME, regular))
            if "\0." in "\0" + "\0".join(names):  # (a dot-name: one C search, not a call each)
                entries.extend(regular)  # (the loop skips a dot-name)
                entries.sort(key=_NAME)
                regular, names = [], []
            rels: list[str] = list(map(_concat, repeat(prefix), names)) if prefix else names
            files.extend(map(_new_file, repeat(_File), zip(rels, map(_PATH, regular), strict=True)))
            plain.append((real_dir, names, rels))
        for entry in reversed(entries):  # the stack pops in sorted order
            name = entry.name
            if name.startswith("."):
                continue
            rel = prefix + name
            try:
                if entry.is_file(follow_symlinks=False):
                    files.append(_File(rel, entry.path))
                    plain.append((real_dir, [name], [rel]))
                    continue
                is_link = entry.is_symlink()
                if not is_link and entry.is_dir(follow_symlinks=False):
                    stack.append((rel, entry.path, os.path.join(real_dir, name)))
                    continue
            except OSError:
                continue
            if is_link:
                link_text = os.readlink(entry.path)
                try:
                    st = os.stat(entry.path)
                except OSError as exc:
                    why = "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
                    problems.append(Problem(rel, None, f"{why} (-> {link_text}); skipped"))
                    continue
                target = os.path.realpath(entry.path)
                if not _inside(target, root_real):
                    problems.append(
                        Problem(
                            rel, None, f"symlink to {link_text} leads outside the vault; skipped"
                        )
                    )
                    continue
                if stat.S_ISDIR(st.st_mode):
                    linked_dirs.append((rel, entry.path, target, real_dir))
                    continue
                if not stat.S_ISREG(st.st_mode):
                    if name.endswith(".md"):
                        problems.append(Problem(rel, None, "not a regular file; skipped"))
                    continue
                linked_files.append((rel, entry.path, target))
            elif entry.is_file(follow_symlinks=False):
                files.append(_File(rel, entry.path))
                plain.append((real_dir, [name], [rel]))
            elif name.endswith(".md"):
                problems.append(Problem(rel, None, "not a regular file; skipped"))

    while True:
        while stack:
            rel_dir, abs_dir, real_dir = stack.pop()
            visited.setdefault(real_dir, rel_dir)
            scan(rel_dir, abs_dir, real_dir)
        if not linked_dirs:
            break
        linked_dirs.sort()
        rel, path, target, real_parent = linked_dirs.pop(0)
        link_text = os.readlink(path)
        if _inside(real_parent, target):
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink loop: folder link to {link_text} leads back to its own parent; skipped",
                )
            )
        elif target in visited:
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink to folder {link_text} is already read as '{visited[target] or '.'}'; skipped",
                    "warning",
                )
            )
        else:
            visited[target] = rel
            stack.append((rel, path, target))
    if linked_files:  # (joining every path up front cost ~1.5 us a file)
        for real_dir, names, rels in plain:
            for name, rel in zip(names, rels, strict=True):
                real_files[os.path.join(real_dir, name)] = rel
    for rel, path, target in sorted(linked_files):
        if target in real_files:
            problems.append(
                Problem(
                    rel,
                    None,
                    f"symlink to {os.readlink(path)} is already read as "
                    f"'{real_files[target]}'; skipped",
                    "warning",
                )
            )
        else:
            real_files[target] = rel
            files.append(_File(rel, path))
    files.sort(key=_REL)
    return files


def _memory_file_keys(
    files: list[_File], not_memory: tuple[str, ...]
) -> dict[str, tuple[int, int, int, int] | None]:
    """Every memory file's key now, `readcache.file_key` (None when it cannot be stat'ed):
    the `.md` files not below the `not_memory` folders (`reader._is_memory_file`)."""
    # (which files, their `stat`s and keys in C loops: ~0.3 s of Python less at 100k files)
    mine = list(compress(files, map(_ENDS_MD, map(_REL, files))))
    mine = list(compress(mine, map(not_, map(methodcaller("startswith", not_memory),
                                              map(_REL, mine)))))
    try:
        return dict(zip(map(_REL, mine), map(_KEY, map(os.stat, map(_FILE_PATH, mine))),
                        strict=True))
    except OSError:  # (a file gone since the walk: each one on its own)
        pass
    keys: dict[str, tuple[int, int, int, int] | None] = {}
    for f in mine:
        try:
            keys[f.rel] = _KEY(os.stat(f.path))
        except OSError:
            keys[f.rel] = None
    return keys


def _numbered_others(
    files: list[_File], rels: Mapping[str, object]
) -> list[tuple[int, _File]]:
    """The files (with their place in `files`) whose path is not in `rels` (in C loops)."""
    return list(compress(enumerate(files), map(not_, map(rels.__contains__, map(_REL, files)))))


_FILE_PATH = itemgetter(1)  # (a `_File`'s path)
_ENDS_MD = methodcaller("endswith", ".md")
_KEY = attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")  # (`readcache.file_key`)


def _read_text(f: _File, problems: list[Problem]) -> tuple[str, bytes, os.stat_result] | None:
    """The file's text (BOM removed), bytes and stat, or None after reporting why not."""
    try:
        with open(f.path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > MAX_FILE_BYTES:
                problems.append(Problem(f.rel, None, _too_big(st.st_size)))
                return None
            # Sized by the stat: read(MAX_FILE_BYTES + 1) allocated (and faulted in) 1 MiB
            # for every file, most of a first read's time. A file that grew since the stat
            # is read on, still up to the limit.
            data = fh.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += fh.read(MAX_FILE_BYTES + 1 - len(data))
    except OSError as exc:
        problems.append(Problem(f.rel, None, f"cannot read the file ({exc.strerror}); skipped"))
        return None
    if len(data) > MAX_FILE_BYTES:
        problems.append(Problem(f.rel, None, _too_big(len(data))))
        return None
    nul = data.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        problems.append(Problem(f.rel, None, f"binary file (NUL byte at offset {nul}); skipped"))
        return None
    start = 3 if data.startswith(_UTF8_BOM) else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        line = data.count(b"\n", 0, offset) + 1
        problems.append(Problem(f.rel, line, f"not valid UTF-8 (byte offset {offset}); skipped"))
        return None
    return text, data, st


def _too_big(size: int) -> str:
    return f"file is {size / (1 << 20):.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit; skipped"
