"""Editing a user's JSON settings file (Claude Code's `settings.json`, `.mcp.json`) without
harming it. Standard library only.

What `SettingsFile` promises, whatever the file holds:

- a file that is not a JSON object is refused with the reason (file, line, column) and left
  as it was;
- keys keep their order, and the text keeps its indentation style (tabs, 2 or 4 spaces, or
  one line), its line endings and its final newline; non-ASCII text stays as written
  (the layout inside a value is JSON's: a hand-aligned line is laid out again);
- a symlinked file is followed: the link stays, its target is written;
- the file keeps its mode (a 0600 file stays 0600);
- before a change, the old file is copied to the next free numbered backup
  (`settings.json.bak.1`, `.bak.2`, ...), never overwriting an earlier one;
- the write is atomic (a temporary file in the same folder, then a rename).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """The file cannot be edited safely; the message names the file and the reason."""


@dataclass
class SettingsFile:
    """A JSON settings file as read: its data, and how it was written (to write it back alike)."""

    path: Path
    """The path as given (may be a symlink)."""
    target: Path
    """The file actually read and written (the symlink's target)."""
    data: dict[str, Any]
    indent: str | int | None = 2
    newline_at_end: bool = True
    existed: bool = False
    original: str = ""

    @classmethod
    def read(cls, path: Path) -> SettingsFile:
        """Read `path` (a missing file reads as `{}`). Raises SettingsError when it is not a
        JSON object."""
        path = Path(path).expanduser()
        target = Path(os.path.realpath(path))
        if not target.exists():
            return cls(path, target, {})
        try:
            raw = target.read_bytes().decode("utf-8")  # no newline translation: CRLF stays
        except UnicodeDecodeError as exc:
            raise SettingsError(f"{path}: not UTF-8 text (byte {exc.start}); not changed") from None
        if not raw.strip():
            return cls(path, target, {}, existed=True, original=raw)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
                                "not changed") from None
        if not isinstance(data, dict):
            raise SettingsError(f"{path}: the file holds a JSON {json_kind(data)}, not an object; "
                                "not changed")
        return cls(path, target, data, indent=_indent_of(raw), newline_at_end=raw.endswith("\n"),
                   existed=True, original=raw)

    def text(self) -> str:
        """The data as the file's text, in the file's style."""
        if self.indent is None:
            out = json.dumps(self.data, ensure_ascii=False, separators=_separators(self.original))
        else:
            out = json.dumps(self.data, ensure_ascii=False, indent=self.indent)
        out += "\n" if self.newline_at_end or not self.existed else ""
        return out.replace("\n", "\r\n") if "\r\n" in self.original else out

    def changed(self) -> bool:
        if not self.existed:
            return bool(self.data)
        return _same(self.original) != self.data

    def write(self) -> Path | None:
        """Write the data back (atomically, same mode, symlink kept) after a numbered backup
        of the old file. Returns the backup's path (None for a new file)."""
        backup = None
        mode = None
        if self.existed:
            mode = os.stat(self.target).st_mode & 0o7777
            backup = next_backup(self.target)
            shutil.copy2(self.target, backup)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if mode is None else mode)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(self.text())
                f.flush()
                os.fsync(f.fileno())
            if mode is not None:
                os.chmod(tmp, mode)  # the umask may have narrowed the create mode
            else:
                os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, self.target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return backup


def json_kind(v: Any) -> str:
    """The JSON name of a parsed value's type (for messages)."""
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number",
            float: "number"}.get(type(v), "null")


def _same(raw: str) -> Any:
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return None


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def next_backup(target: Path) -> Path:
    """The next free `<name>.bak.N` beside `target` (1 + the highest one there)."""
    pat = re.compile(re.escape(target.name) + r"\.bak\.(\d+)$")
    nums = [int(m.group(1)) for p in target.parent.iterdir() if (m := pat.match(p.name))]
    return target.with_name(f"{target.name}.bak.{max(nums, default=0) + 1}")


def _indent_of(raw: str) -> str | int | None:
    """The indentation unit of a JSON text: None for one line, a tab, or N spaces."""
    if "\n" not in raw.strip():
        return None
    widths = []
    for line in raw.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if not stripped or len(stripped) == len(line):
            continue
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        widths.append(len(lead))
    return min(widths) if widths else 2


def _separators(raw: str) -> tuple[str, str]:
    """A one-line file's separators: compact when it has no space after `:`/`,`."""
    compact = re.search(r'"\s*:\s', raw) is None and re.search(r",\s", raw) is None
    return (",", ":") if compact and len(raw) > 2 else (", ", ": ")
