"""Digests (`consolidation/<period>/*.md`, by paragraph) and turns (`sessions/*.jsonl`)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time

from recall_tui.vault.fields import _HEADING, _show, _to_datetime
from recall_tui.vault.frontmatter import _SkipFile, _split_frontmatter
from recall_tui.vault.model import DigestParagraph, Problem, Turn
from recall_tui.vault.walk import _UTF8_BOM, MAX_TRANSCRIPT_BYTES, _File, _read_text

TURN_ROLES: tuple[str, ...] = ("user", "assistant")

#: Session logs this process has parsed: the path opened -> (its rel, (mtime, ctime, size,
#: inode) when it was read, its turns, its problems). A re-read in the same process (the watcher's,
#: a reload, the service's) takes an unchanged log's turns from here instead of parsing every
#: line again: with a million turns that parse was most of every re-read. Only a log whose
#: modification and change times are at least `_RACY_NS` old (a change time no
#: `utime` can set back) is kept, so a write within the clock's
#: granularity of the stat cannot go unseen (the file is parsed again until it settles).
_SESSIONS: dict[str, tuple[str, tuple[int, ...], tuple[Turn, ...], tuple[Problem, ...]]] = {}
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


def _read_turns(f: _File, problems: list[Problem]) -> list[Turn]:
    """The turns of one session log (the same objects as the last read in this process when
    the file is unchanged since), and its problems added to `problems`."""
    try:
        st = os.stat(f.path)
    except OSError:
        return _parse_turns(f, problems)  # (which says why it cannot be read)
    key = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    with _SESSIONS_LOCK:
        hit = _SESSIONS.get(f.path)
    if hit is not None and hit[0] == f.rel and hit[1] == key:
        problems.extend(hit[3])
        return list(hit[2])
    mine: list[Problem] = []
    turns = _parse_turns(f, mine)
    problems.extend(mine)
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= _RACY_NS:
        with _SESSIONS_LOCK:
            _SESSIONS[f.path] = (f.rel, key, tuple(turns), tuple(mine))
    return turns


def _parse_turns(f: _File, problems: list[Problem]) -> list[Turn]:
    session_id = f.rel.rsplit("/", 1)[-1][: -len(".jsonl")]
    try:
        with open(f.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size  # (a read sized by the limit: see _read_text)
            data = fh.read(min(size, MAX_TRANSCRIPT_BYTES) + 1)
            if len(data) > size:  # it grew since the stat: read on, up to the limit
                data += fh.read(max(0, MAX_TRANSCRIPT_BYTES + 1 - len(data)))
    except OSError as exc:
        problems.append(Problem(f.rel, None, f"cannot read the file ({exc.strerror}); skipped"))
        return []
    if len(data) > MAX_TRANSCRIPT_BYTES:
        problems.append(Problem(f.rel, None, f"file is over the {MAX_TRANSCRIPT_BYTES >> 20} MiB "
                                "limit for a transcript; skipped"))
        return []
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    turns: list[Turn] = []
    seen: dict[int, int] = {}
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue

        def bad(why: str, lineno: int = lineno) -> None:
            problems.append(Problem(f.rel, lineno, f"{why}; line skipped"))

        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad(f"not valid UTF-8 (byte {exc.start} of the line)")
            continue
        except ValueError as exc:
            bad(f"not valid JSON ({exc.args[0].split(':')[0]})")
            continue
        except RecursionError:
            bad("not valid JSON (nested too deep)")
            continue
        if not isinstance(obj, dict):
            bad(f"expected a JSON object, got {_show(obj)}")
            continue
        seq, role, text, at_raw = obj.get("seq"), obj.get("role"), obj.get("text"), obj.get("at")
        if isinstance(seq, bool) or not isinstance(seq, int):
            bad(f"seq: expected an integer, got {_show(seq)}")
            continue
        if role not in TURN_ROLES:
            bad(f"role: expected user or assistant, got {_show(role)}")
            continue
        if not isinstance(text, str):
            bad(f"text: expected a string, got {_show(text)}")
            continue
        at = None
        if at_raw is not None:
            at = _to_datetime(at_raw) if isinstance(at_raw, str) else None
            if at is None:
                bad(f"at: expected an ISO-8601 datetime, got {_show(at_raw)}")
                continue
        if seq in seen:
            bad(f"seq {seq} already used on line {seen[seq]}")
            continue
        seen[seq] = lineno
        turns.append(Turn(session_id, seq, role, text, at, f.rel, lineno))
    return turns
