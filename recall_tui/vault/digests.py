"""Digests (`consolidation/<period>/*.md`, by paragraph) and turns (`sessions/*.jsonl`)."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from itertools import repeat
from typing import TYPE_CHECKING, Any

from recall_tui.vault.fields import _HEADING, _show, _to_datetime
from recall_tui.vault.frontmatter import _SkipFile, _split_frontmatter
from recall_tui.vault.model import DigestParagraph, Problem, Turn
from recall_tui.vault.readcache import FileKey, file_key
from recall_tui.vault.walk import _UTF8_BOM, MAX_TRANSCRIPT_BYTES, _File, _read_text

if TYPE_CHECKING:
    from recall_tui.vault.readcache import ReadCache

TURN_ROLES: tuple[str, ...] = ("user", "assistant")
#: Bump when `_parse_log` gives other turns or problems for the same bytes: every cached
#: session log record is then parsed again, and every log's signature changes (so the index
#: compares its turns row by row once more).
TURN_READER_VERSION = 1

#: Session logs this process has parsed: the path opened -> (its rel, its key (size, mtime,
#: ctime, inode) when it was read, its turns, its problems, its signature). A re-read in the
#: same process (the watcher's, a reload, the service's) takes an unchanged log's turns from
#: here instead of parsing every line again: with a million turns that parse was most of every
#: re-read. Only a log whose modification and change times are at least `_RACY_NS` old (a
#: change time no `utime` can set back) is kept, here and in the reading cache, so a write
#: within the clock's granularity of the stat cannot go unseen (the file is parsed again until
#: it settles).
_SESSIONS: dict[
    str, tuple[str, FileKey, tuple[Turn, ...], tuple[Problem, ...], str | None]
] = {}
_SESSIONS_LOCK = threading.Lock()
_RACY_NS = 2_000_000_000


# --------------------------------------------------------------------------------------------
# Digests and turns
# --------------------------------------------------------------------------------------------


def _read_digest(f: _File, period: str, problems: list[Problem]) -> list[DigestParagraph]:
    got = _read_text(f, problems)
    if got is None:
        return []
    text = got[0]
    try:
        _, _, body, first_line = _split_frontmatter(text)
    except _SkipFile as skip:
        problems.append(Problem(f.rel, skip.line, skip.reason))
        return []
    label = f.rel.rsplit("/", 1)[-1][: -len(".md")]
    out: list[DigestParagraph] = []
    block: list[str] = []
    block_line = 0

    def flush() -> None:
        if block:
            para = "\n".join(block).strip()
            if para:
                out.append(
                    DigestParagraph(
                        path=f.rel,
                        period=period,
                        label=label,
                        index=len(out),
                        line=block_line,
                        text=para,
                        content_hash=hashlib.sha256(para.encode("utf-8")).hexdigest(),
                    )
                )
            block.clear()

    for offset, line in enumerate(body.splitlines()):
        stripped = line.strip()
        if not stripped or _HEADING.match(stripped):
            flush()
            continue
        if not block:
            block_line = first_line + offset
        block.append(line.rstrip())
    flush()
    return out


def _read_turns(
    f: _File,
    problems: list[Problem],
    rcache: ReadCache | None = None,
    logs: dict[str, str] | None = None,
) -> list[Turn]:
    """The turns of one session log, and its problems added to `problems`: the same objects
    as the last read in this process when the file is unchanged since, else its record in the
    reading cache `rcache` when the file's key is the one it was made under (no line parsed),
    else a parse (whose record `rcache` then keeps). The log's signature goes to `logs`."""
    try:
        st = os.stat(f.path)
    except OSError:
        return _parse_turns(f, problems)  # (which says why it cannot be read)
    key = file_key(st)
    with _SESSIONS_LOCK:
        hit = _SESSIONS.get(f.path)
    if hit is not None and hit[0] == f.rel and hit[1] == key:
        if rcache is not None:
            rcache.keep_turn_log(f.rel)  # (its row, if any, stays)
        problems.extend(hit[3])
        if logs is not None and hit[4] is not None:
            logs[f.rel] = hit[4]
        return list(hit[2])
    settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= _RACY_NS
    got = None
    if rcache is not None:
        blob = rcache.turn_log(f.rel, key)  # (only a settled log's record is ever stored)
        if blob is not None:
            got = _unpack_log(f.rel, blob)
    if got is None:
        mine: list[Problem] = []
        whens: list[str | None] = []
        turns, sig = _parse_log(f, mine, whens)
        if rcache is not None and settled and sig is not None:
            rcache.put_turn_log(f.rel, key, _pack_log(turns, mine, sig, whens))
    else:
        turns, mine, sig = got
    problems.extend(mine)
    if logs is not None and sig is not None:
        logs[f.rel] = sig
    if settled:
        with _SESSIONS_LOCK:
            _SESSIONS[f.path] = (f.rel, key, tuple(turns), tuple(mine), sig)
    return turns


def _parse_turns(f: _File, problems: list[Problem]) -> list[Turn]:
    """The turns of one session log, parsed (its problems added to `problems`)."""
    return _parse_log(f, problems)[0]


#: json.loads' own scanner, without its wrappers (the stubs do not declare the attribute
#: `JSONDecoder.__init__` sets).
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_fromiso = datetime.fromisoformat
_new = object.__new__


def _compile_make_turn() -> Callable[..., Turn]:
    """`_make_turn(session_id, seq, role, text, at, path, line) -> Turn`, one slot write per
    field: a Turn built as unpickling would (no frozen `__init__`'s `object.__setattr__` per
    field), from values already checked."""
    names = Turn.__dataclass_fields__  # (field order: the constructor's)
    env: dict[str, Any] = {"_new": _new, "Turn": Turn}
    lines = [f"def _make_turn({', '.join(names)}):", "    t = _new(Turn)"]
    for i, name in enumerate(names):
        env[f"_s{i}"] = getattr(Turn, name).__set__
        lines.append(f"    _s{i}(t, {name})")
    lines.append("    return t")
    exec("\n".join(lines), env)  # code generated from the dataclass fields
    make: Callable[..., Turn] = env["_make_turn"]
    return make


_make_turn = _compile_make_turn()
#: Each Turn slot's own setter, in the order of its fields (see `_unpack_log`).
_TURN_SETTERS = tuple(getattr(Turn, name).__set__ for name in Turn.__dataclass_fields__)


def _bad(problems: list[Problem], rel: str, lineno: int, why: str) -> None:
    problems.append(Problem(rel, lineno, f"{why}; line skipped"))


def _parse_log(
    f: _File, problems: list[Problem], whens: list[str | None] | None = None
) -> tuple[list[Turn], str | None]:
    """The turns of one session log and its signature (None when the file could not be
    read): its size, modification time and a digest of the bytes parsed (with the parser's
    version and the path: the turns depend on nothing else). `whens` gets each turn's time
    as an ISO string `datetime.fromisoformat` gives back exactly (the file's own text when
    that is one: `isoformat()` per turn was a tenth of a first read), or None."""
    rel = f.rel
    session_id = rel.rsplit("/", 1)[-1][: -len(".jsonl")]
    try:
        with open(f.path, "rb") as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size  # (a read sized by the limit: see _read_text)
            data = fh.read(min(size, MAX_TRANSCRIPT_BYTES) + 1)
            if len(data) > size:  # it grew since the stat: read on, up to the limit
                data += fh.read(max(0, MAX_TRANSCRIPT_BYTES + 1 - len(data)))
    except OSError as exc:
        problems.append(Problem(rel, None, f"cannot read the file ({exc.strerror}); skipped"))
        return [], None
    if len(data) > MAX_TRANSCRIPT_BYTES:
        problems.append(Problem(rel, None, f"file is over the {MAX_TRANSCRIPT_BYTES >> 20} MiB "
                                "limit for a transcript; skipped"))
        return [], None
    digest = hashlib.sha256(f"{TURN_READER_VERSION}\0{rel}\0".encode("utf-8", "surrogateescape"))
    digest.update(data)
    sig = f"{len(data)}:{st.st_mtime_ns}:{digest.hexdigest()[:32]}"
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    turns: list[Turn] = []
    append, make, scan, fromiso = turns.append, _make_turn, _SCAN, _fromiso
    user, assistant = TURN_ROLES
    seen: dict[int, int] = {}
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            _bad(problems, rel, lineno, f"not valid UTF-8 (byte {exc.start} of the line)")
            continue
        # The scanner alone when the line is one JSON value and nothing else (what
        # json.loads gives then); json.loads itself for anything else, for its message.
        try:
            obj, end = scan(line, 0)
            whole = end == len(line)
        except (StopIteration, ValueError, RecursionError):
            whole = False
        if not whole:
            try:
                obj = json.loads(line)
            except ValueError as exc:
                _bad(problems, rel, lineno, f"not valid JSON ({exc.args[0].split(':')[0]})")
                continue
            except RecursionError:
                _bad(problems, rel, lineno, "not valid JSON (nested too deep)")
                continue
        if type(obj) is not dict:
            _bad(problems, rel, lineno, f"expected a JSON object, got {_show(obj)}")
            continue
        seq, role, text, at_raw = obj.get("seq"), obj.get("role"), obj.get("text"), obj.get("at")
        if type(seq) is not int:  # (JSON gives int, bool, float, str, ...: never a subclass)
            _bad(problems, rel, lineno, f"seq: expected an integer, got {_show(seq)}")
            continue
        if role == "user" and type(role) is str:
            role = user  # (one shared object per role, not one string per turn)
        elif role == "assistant" and type(role) is str:
            role = assistant
        else:
            _bad(problems, rel, lineno, f"role: expected user or assistant, got {_show(role)}")
            continue
        if type(text) is not str:
            _bad(problems, rel, lineno, f"text: expected a string, got {_show(text)}")
            continue
        at = when = None
        if at_raw is not None:
            if type(at_raw) is str:
                try:  # the common case in one call (Python 3.11 reads a final `Z`)
                    at = fromiso(at_raw)
                    when = at_raw
                except ValueError:
                    at = None
                if at is None or at.tzinfo is None:
                    at = _to_datetime(at_raw)
                    when = None if at is None else at.isoformat()
            if at is None:
                _bad(problems, rel, lineno, f"at: expected an ISO-8601 datetime, got {_show(at_raw)}")
                continue
        if seq in seen:
            _bad(problems, rel, lineno, f"seq {seq} already used on line {seen[seq]}")
            continue
        seen[seq] = lineno
        append(make(session_id, seq, role, text, at, rel, lineno))
        if whens is not None:
            whens.append(when)
    return turns, sig


_ROLE_CODE = {TURN_ROLES[0]: "u", TURN_ROLES[1]: "a"}
_CODE_ROLE = {"u": TURN_ROLES[0], "a": TURN_ROLES[1]}


def _pack_log(
    turns: list[Turn], problems: list[Problem], sig: str, whens: list[str | None]
) -> bytes:
    """One session log's record for the reading cache: its turns as columns (seqs, roles as
    one string of `u`/`a`, texts, times as ISO strings (`whens`, see `_parse_log`), lines),
    its problems and signature, marshalled (plain values: loading it builds no per-line JSON
    object)."""
    return marshal.dumps((
        TURN_READER_VERSION,
        sig,
        [t.seq for t in turns],
        "".join([_ROLE_CODE[t.role] for t in turns]),
        [t.text for t in turns],
        whens,
        [t.line for t in turns],
        [(p.line, p.reason, p.severity) for p in problems],
    ))


def _unpack_log(rel: str, blob: bytes) -> tuple[list[Turn], list[Problem], str] | None:
    """The turns, problems and signature of a `_pack_log` record of the log `rel`; None when
    the record is not one this reader made (the log is then parsed)."""
    try:
        version, sig, seqs, roles, texts, ats, lines, probs = marshal.loads(blob)
        if version != TURN_READER_VERSION or not (
            len(seqs) == len(roles) == len(texts) == len(ats) == len(lines)
        ):
            return None
        session_id = rel.rsplit("/", 1)[-1][: -len(".jsonl")]
        n, fromiso = len(seqs), _fromiso
        whens = map(fromiso, ats) if None not in ats else [
            None if a is None else fromiso(a) for a in ats]
        # Every Turn made, then each slot of all of them set by its own setter in one C loop
        # (map over the columns), not a Python call per turn: a million turns' fresh re-read
        # spent ~a third of its turn part in `_make_turn` (first10).
        turns = list(map(_new, repeat(Turn, n)))
        for set_slot, values in zip(_TURN_SETTERS, (
            repeat(session_id, n), seqs, map(_CODE_ROLE.__getitem__, roles), texts, whens,
            repeat(rel, n), lines,
        ), strict=True):
            deque(map(set_slot, turns, values), 0)
        return turns, [Problem(rel, line, why, sev) for line, why, sev in probs], sig
    except Exception:  # a damaged or foreign record: parse the log instead
        return None
