"""Rewrite a memory's `recall_when` list and nothing else: byte-preserving, atomic, conflict-checked.

`recall_when` is the field a person tunes most while debugging recall ("this memory should
come back when…"), and memory files are hand-written: comments, key order, quoting and line
endings are the author's. So the edit works on the text of the frontmatter, not on a parsed
and re-dumped mapping: it replaces exactly the lines of the top-level `recall_when:` key (or
inserts them) and leaves every other byte alone. Before writing, both frontmatters are parsed
and compared; any difference outside `recall_when` refuses the edit. The write is atomic (temp
file in the same folder, fsync, rename, fsync of the folder) and is refused when the file
changed since the caller read it. Headless: no textual, no rich. See docs/editing.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

BOM = "\ufeff"
KEY = "recall_when"

#: A frontmatter delimiter line, as python-frontmatter recognises it.
_DELIM = re.compile(r"^-{3,}[ \t]*$")
#: A top-level mapping key at column 0: plain, double- or single-quoted, then a colon.
_TOP_KEY = re.compile(r"""^(?P<key>[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?|"[^"]*"|'[^']*')[ \t]*:(?:[ \t]|$)""")
#: A block sequence item, any indentation.
_ITEM = re.compile(r"^(?P<indent>[ \t]*)-(?:[ \t]|$)")
#: Where to insert `recall_when` when absent: after the first of these keys found, else at the end.
INSERT_AFTER: tuple[str, ...] = ("summary", "scope", "type", "title", "id")


class EditError(ValueError):
    """The edit was refused and nothing was written (bad frontmatter, bad phrase, failed check)."""


class EditConflict(Exception):
    """The file changed on disk since the caller read it; nothing was written.

    Carries both versions so a UI can show them side by side and let the person choose.
    """

    def __init__(self, path: str, expected_hash: str, disk_hash: str, disk_text: str,
                 intended_text: str | None) -> None:
        super().__init__(
            f"{path}: changed on disk since it was read (expected sha256 {expected_hash[:12]}…, "
            f"found {disk_hash[:12]}…); nothing was written"
        )
        self.path = path
        self.expected_hash = expected_hash
        self.disk_hash = disk_hash
        self.disk_text = disk_text
        """The file as it is on disk now."""
        self.intended_text = intended_text
        """The edit applied to the disk version (None when the disk version cannot be edited)."""


@dataclass(frozen=True)
class EditResult:
    """What an edit did."""

    path: str
    """The file written (symlinks resolved)."""
    old_hash: str
    """sha256 of the bytes before the edit."""
    new_hash: str
    """sha256 of the bytes after the edit (equal to old_hash when nothing changed)."""
    old_phrases: tuple[str, ...]
    """recall_when before."""
    new_phrases: tuple[str, ...]
    """recall_when after."""
    changed: bool
    """False when the file already held exactly these phrases in this form (nothing written)."""


def content_hash(data: bytes) -> str:
    """sha256 hex digest of a file's bytes: the version stamp the conflict check compares."""
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# text level


def _split_lines(text: str) -> list[str]:
    """Split on '\\n' only, keeping the ends (str.splitlines would also split on \\f, \\u2028…)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _content(line: str) -> str:
    """A line without its line ending."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith("\n"):
        return line[:-1]
    return line


@dataclass(frozen=True)
class _Doc:
    """A memory file's text cut into BOM, frontmatter lines and the rest."""

    bom: str
    lines: list[str]
    """Every line of the text after the BOM, ends kept."""
    fm_start: int | None
    """Index of the first frontmatter line (after the opening `---`); None without frontmatter."""
    fm_end: int | None
    """Index of the closing `---` line."""
    newline: str
    """The file's line ending: '\\r\\n' or '\\n'."""


def _parse_doc(text: str) -> _Doc:
    bom = BOM if text.startswith(BOM) else ""
    lines = _split_lines(text[len(bom):])
    first_end = next((ln for ln in lines if ln.endswith("\n")), "\n")
    newline = "\r\n" if first_end.endswith("\r\n") else "\n"
    if not lines or not _DELIM.match(_content(lines[0])):
        return _Doc(bom, lines, None, None, newline)
    for i in range(1, len(lines)):
        if _DELIM.match(_content(lines[i])):
            return _Doc(bom, lines, 1, i, newline)
    raise EditError("the frontmatter opens with --- but never closes; fix the file by hand")


def _key_name(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def _top_keys(lines: list[str], start: int, end: int) -> list[tuple[str, int, int]]:
    """(key, first line, last line) of each top-level key in lines[start:end].

    A key's value runs over the following lines that are indented or are column-0 sequence
    items (`key:\\n- a`); blank and comment lines between them belong to the value, but those
    after its last content line are left to the surroundings.
    """
    out: list[tuple[str, int, int]] = []
    i = start
    while i < end:
        c = _content(lines[i])
        m = _TOP_KEY.match(c)
        if not m:
            i += 1
            continue
        last = i
        j = i + 1
        while j < end:
            cj = _content(lines[j])
            if not cj.strip() or cj.lstrip().startswith("#"):
                j += 1
                continue
            if cj[0] in " \t" or _ITEM.match(cj):
                last = j
                j += 1
                continue
            break
        out.append((_key_name(m.group("key")), i, last))
        i = last + 1
    return out


def _load_yaml(lines: list[str]) -> dict[str, Any]:
    text = "".join(lines)
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise EditError(f"the frontmatter is not valid YAML ({exc.__class__.__name__}: "
                        f"{getattr(exc, 'problem', None) or exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EditError("the frontmatter is not a mapping of keys to values")
    return data


def _detect_item_indent(lines: list[str], keys: list[tuple[str, int, int]]) -> str:
    """The indentation of block-list items in this file (recall_when's own first, then any key's)."""
    ordered = sorted(keys, key=lambda k: k[0] != KEY)
    for _name, first, last in ordered:
        if _content(lines[first]).split(":", 1)[1].split("#", 1)[0].strip():
            continue  # the value is on the key line: not a block list
        for j in range(first + 1, last + 1):
            m = _ITEM.match(_content(lines[j]))
            if m:
                return m.group("indent")
    return "  "


def _detect_quote_style(lines: list[str], first: int, last: int) -> str:
    """'"' or "'" when every existing block item is quoted that way, else '' (plain when safe)."""
    styles = set()
    for j in range(first + 1, last + 1):
        c = _content(lines[j])
        m = _ITEM.match(c)
        if m:
            rest = c[m.end():].strip()
            styles.add(rest[0] if rest[:1] in ("'", '"') else "")
    return styles.pop() if len(styles) == 1 else ""


def _scalar(phrase: str, style: str) -> str:
    """One phrase as a YAML flow scalar: in the file's quote style, else plain when safe."""
    if style == '"':
        return json.dumps(phrase, ensure_ascii=False)
    if style == "'":
        return "'" + phrase.replace("'", "''") + "'"
    dumped = yaml.safe_dump([phrase], default_flow_style=False, allow_unicode=True, width=10**9)
    return dumped[2:].rstrip("\n")


def _check_phrases(phrases: Sequence[str]) -> tuple[str, ...]:
    out = []
    for p in phrases:
        if not isinstance(p, str):
            raise EditError(f"a recall_when phrase must be text, got {p!r}")
        if not p.strip():
            raise EditError("a recall_when phrase cannot be empty")
        if any(ch in p for ch in "\r\n\x85\u2028\u2029") or any(
                (ord(ch) < 32 and ch != "\t") or 0x7F <= ord(ch) <= 0x9F for ch in p):
            raise EditError(f"a recall_when phrase must be one line without control characters: {p!r}")
        out.append(p)
    return tuple(out)


def read_phrases(text: str) -> tuple[str, ...]:
    """The recall_when phrases a file's text holds now (a scalar counts as one phrase)."""
    doc = _parse_doc(text)
    if doc.fm_start is None:
        return ()
    value = _load_yaml(doc.lines[doc.fm_start:doc.fm_end]).get(KEY)
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return (str(value),)


def rewrite_recall_when(text: str, phrases: Sequence[str]) -> str:
    """Return `text` with its top-level recall_when set to `phrases`, every other byte kept.

    The value is written as a block list in the file's indentation and quoting style (an
    empty list as `[]`). A trailing comment on the key line is kept. Raises EditError when
    the frontmatter cannot be parsed, the key appears twice, or the re-parse check fails.
    """
    new = _check_phrases(phrases)
    doc = _parse_doc(text)
    nl = doc.newline
    if doc.fm_start is None:
        block = [f"---{nl}", *_render(None, new, "  ", "", nl), f"---{nl}"]
        result = doc.bom + "".join(block) + "".join(doc.lines)
        _verify({}, result, new)
        return result
    start, end = doc.fm_start, doc.fm_end
    assert end is not None
    lines = doc.lines
    before = _load_yaml(lines[start:end])
    keys = _top_keys(lines, start, end)
    found = [k for k in keys if k[0] == KEY]
    if len(found) > 1:
        raise EditError(f"recall_when appears {len(found)} times in the frontmatter; fix it by hand")
    indent = _detect_item_indent(lines, keys)
    if found:
        _, first, last = found[0]
        key_line = _content(lines[first])
        after_colon = key_line.split(":", 1)[1]
        keep_key_line = key_line if after_colon.strip().startswith("#") else None
        style = _detect_quote_style(lines, first, last)
        replacement = _render(keep_key_line, new, indent, style, nl)
        out_lines = lines[:first] + replacement + lines[last + 1:]
    else:
        pos = end
        for name in INSERT_AFTER:
            hit = [k for k in keys if k[0] == name]
            if hit:
                pos = hit[0][2] + 1
                break
        replacement = _render(None, new, indent, "", nl)
        out_lines = lines[:pos] + replacement + lines[pos:]
    result = doc.bom + "".join(out_lines)
    _verify(before, result, new)
    return result


def _render(key_line: str | None, phrases: tuple[str, ...], indent: str, style: str, nl: str) -> list[str]:
    if not phrases:
        head = key_line.split(":", 1)[0] if key_line is not None else KEY
        comment = key_line.split(":", 1)[1].strip() if key_line is not None else ""
        return [f"{head}: []" + (f"  {comment}" if comment else "") + nl]
    head = (key_line if key_line is not None else f"{KEY}:") + nl
    return [head] + [f"{indent}- {_scalar(p, style)}{nl}" for p in phrases]


def _verify(before: dict[str, Any], result: str, phrases: tuple[str, ...]) -> None:
    """Re-parse the new frontmatter: recall_when must be exactly `phrases` and every other key
    must parse to the same value, in the same order, as before."""
    doc = _parse_doc(result)
    if doc.fm_start is None:
        raise EditError("internal check failed: the new file has no frontmatter; nothing was written")
    try:
        after = _load_yaml(doc.lines[doc.fm_start:doc.fm_end])
    except EditError as exc:
        raise EditError(f"internal check failed: the new frontmatter would not parse ({exc}); "
                        "nothing was written") from None
    if after.get(KEY) != list(phrases):
        raise EditError(f"internal check failed: recall_when would read back as {after.get(KEY)!r}; "
                        "nothing was written")
    others_before = [(k, v) for k, v in before.items() if k != KEY]
    others_after = [(k, v) for k, v in after.items() if k != KEY]
    if others_before != others_after:
        raise EditError("internal check failed: another frontmatter key would change; nothing was written")


# --------------------------------------------------------------------------------------------
# the file


def atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to `path` through a temp file in the same folder, fsynced, then renamed."""
    folder = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some platforms cannot open a folder; the rename itself is still atomic
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def set_recall_when(path: str | os.PathLike[str], phrases: Sequence[str], *,
                    expected_hash: str | None = None) -> EditResult:
    """Set a memory file's recall_when to `phrases`.

    `expected_hash` is the sha256 of the bytes the caller read (e.g. `Memory.content_hash`);
    when the file on disk differs, nothing is written and EditConflict is raised. The file's
    permission bits are kept. Returns what changed; writes nothing when nothing would change.
    """
    target = Path(os.path.realpath(path))
    raw = target.read_bytes()
    disk_hash = content_hash(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EditError(f"{path}: not UTF-8 text (byte {exc.start}); nothing was written") from None
    try:
        new_text = rewrite_recall_when(text, phrases)
    except EditError as exc:
        if expected_hash is not None and expected_hash != disk_hash:
            raise EditConflict(str(path), expected_hash, disk_hash, text, None) from None
        raise EditError(f"{path}: {exc}") from None
    if expected_hash is not None and expected_hash != disk_hash:
        raise EditConflict(str(path), expected_hash, disk_hash, text, new_text)
    old_phrases = read_phrases(text)
    data = new_text.encode("utf-8")
    if data == raw:
        return EditResult(str(target), disk_hash, disk_hash, old_phrases, tuple(phrases), False)
    # the last look before the rename: a writer that slipped in meanwhile wins, we refuse
    now = target.read_bytes()
    if now != raw:
        raise EditConflict(str(path), disk_hash, content_hash(now), now.decode("utf-8", "replace"), new_text)
    atomic_write(target, data, stat.S_IMODE(os.stat(target).st_mode))
    return EditResult(str(target), disk_hash, content_hash(data), old_phrases, tuple(phrases), True)


def apply_changes(current: Sequence[str], *, set_to: Sequence[str] | None = None,
                  add: Sequence[str] = (), remove: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The new phrase list from the current one: replace it, then add (if absent), then remove.

    Returns (new list, phrases asked to be removed that were not there).
    """
    out = list(set_to) if set_to is not None else list(current)
    for p in add:
        if p not in out:
            out.append(p)
    missing = [p for p in remove if p not in out]
    out = [p for p in out if p not in set(remove)]
    return out, missing
