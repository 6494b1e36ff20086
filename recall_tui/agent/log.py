"""The flight recorder: every recall served to an agent (a hook or the MCP server), kept as
JSON lines under `VAULT/.recall/agent/`.

One line per recall (`AgentRecall.to_dict()`): the time, who served it (`hook`/`mcp`), the
event, the payload (session id, prompt, source, cwd, transcript path), the preset, embedder
and configuration hash, the ids and the exact text injected, and the full trace
(`Trace.to_dict()`, None for a SessionStart, which lists `_always-load/` and runs no recall).

Writers append with one `os.write` on a file opened `O_APPEND`, so lines from concurrent
writers (several hooks, the service, the MCP server) never interleave. The log is bounded:
when `recalls.jsonl` passes `max_mb` it is renamed to `recalls-<time>.jsonl` (under a lock)
and segments older than `max_days`, or beyond `max_segments`, are deleted. Settings come from
the `log` key of `.recall/active.json` (`{"enabled": false}` switches recording off) or
`RECALL_TUI_AGENT_LOG=off`.

Reader for front ends: `read_agent_log(vault, session=..., since=..., limit=...)` returns
`AgentRecall` records, newest first; `record.trace` rebuilds the `Trace`. It reads the files
backwards (newest segment first, in 64 KiB blocks from the end) and stops as soon as it has
`limit` records (or reaches records older than `since`), so `recall-tui log --limit 20` costs
the same on a log of 20 records and on one of 200,000. `find_recall(vault, id)` matches the id
on the raw line before parsing it.

Text from an agent may hold lone surrogates (`"\ud800"` is valid JSON, not valid UTF-8):
`clean_text` replaces them with U+FFFD so the record can be written; the recall still runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recall_tui.agent.active import read_active_data
from recall_tui.vault.recalldir import keep_out_of_git

LOG_DIR = Path(".recall") / "agent"
CURRENT = "recalls.jsonl"
RECORD_VERSION = 1
DEFAULTS = {"enabled": True, "max_mb": 20.0, "max_days": 30.0, "max_segments": 20}


def log_dir(vault: str | os.PathLike) -> Path:
    return Path(vault) / LOG_DIR


def log_settings(vault: str | os.PathLike) -> dict[str, Any]:
    """The recorder's settings: defaults, then `.recall/active.json`'s `log`, then the env."""
    out = dict(DEFAULTS)
    extra = read_active_data(vault).get("log")
    if isinstance(extra, dict):
        for k in DEFAULTS:
            if k in extra and isinstance(extra[k], (bool, int, float)):
                out[k] = extra[k]
    if os.environ.get("RECALL_TUI_AGENT_LOG", "").lower() in ("off", "0", "false", "no"):
        out["enabled"] = False
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else text


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class AgentRecall:
    """One recall an agent got."""

    id: str
    time: str
    served_by: str
    """"hook" or "mcp"."""
    event: str
    """"UserPromptSubmit", "SessionStart", or the MCP tool ("recall", "why_not", "load_memory")."""
    session_id: str = ""
    prompt: str = ""
    source: str = ""
    """SessionStart's source (startup, resume, clear, compact); "" otherwise."""
    cwd: str = ""
    transcript_path: str = ""
    preset: str = ""
    embedder: str = ""
    config_hash: str = ""
    injected_ids: list[str] = field(default_factory=list)
    """The memories put before the agent as recalled (a hook's injection, an MCP `recall`'s
    hits). Empty for `why_not` and `load_memory`, which answer about `about_ids`."""
    left_out_ids: list[str] = field(default_factory=list)
    injected_text: str = ""
    """Exactly what the agent got: the hook's additionalContext, or for MCP the serialized
    tool result (the compact JSON of `structuredContent`, which is also the text content)."""
    about_ids: list[str] = field(default_factory=list)
    """The memory a `why_not` or `load_memory` call asked about."""
    warning: str = ""
    """What was not as configured (e.g. the active preset is missing: `default` was used)."""
    note: str = ""
    """What the agent was told about the recall itself (e.g. the vector channel still building)."""
    skipped: str = ""
    """Why nothing was recalled (e.g. "resume not injected"), else ""."""
    path: str = ""
    """"service" or "in-process": where the recall ran."""
    ms: float = 0.0
    trace_dict: dict[str, Any] | None = None
    v: int = RECORD_VERSION

    @property
    def trace(self):
        """The recall's `Trace` (None for a SessionStart)."""
        if self.trace_dict is None:
            return None
        from recall_tui.engine.trace import Trace

        return Trace.from_dict(self.trace_dict)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values. Shallow: the lists are copied, the trace dict (plain
        JSON values already) is shared, not copied. `dataclasses.asdict` deep-copied it, which
        was most of a served hook's time (2/3 of 130 ms a prompt under load in a profile)."""
        d = {f.name: (list(v) if isinstance(v := getattr(self, f.name), list) else v)
             for f in fields(self)}
        d["trace"] = d.pop("trace_dict")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AgentRecall:
        known = {f for f in cls.__dataclass_fields__ if f != "trace_dict"}
        kw = {k: v for k, v in d.items() if k in known}
        return cls(trace_dict=d.get("trace"), **kw)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def _lock(folder: Path):
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _rotate(folder: Path, settings: dict[str, Any]) -> None:
    """Under the lock: roll the current file when it is too big; prune old segments."""
    fd = _lock(folder)
    try:
        cur = folder / CURRENT
        try:
            if cur.stat().st_size >= float(settings["max_mb"]) * 1_000_000:
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
                os.replace(cur, folder / f"recalls-{stamp}.jsonl")
        except FileNotFoundError:
            pass
        segs = sorted(folder.glob("recalls-*.jsonl"))
        cutoff = time.time() - float(settings["max_days"]) * 86400
        keep = int(settings["max_segments"])
        for i, p in enumerate(segs):
            try:
                if p.stat().st_mtime < cutoff or i < len(segs) - keep:
                    p.unlink()
            except OSError:
                pass
    finally:
        os.close(fd)


def append_recall(vault: str | os.PathLike, rec: AgentRecall) -> bool:
    """Append one record; False when recording is off or `.recall/agent/` is not writable
    (never raises: an agent's recall must not fail because its log could not be written)."""
    settings = log_settings(vault)
    if not settings["enabled"]:
        return False
    folder = log_dir(vault)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        keep_out_of_git(folder.parent)  # .recall/: the log never goes into the vault's git
        text = json.dumps(rec.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
        line = clean_text(text).encode()
        fd = os.open(folder / CURRENT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one write on O_APPEND: lines never interleave
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size >= float(settings["max_mb"]) * 1_000_000:
            _rotate(folder, settings)
        return True
    except (OSError, TypeError, ValueError):
        return False


def prune(vault: str | os.PathLike) -> None:
    """Apply the size and age bounds now (`recall-tui log` does on every run)."""
    folder = log_dir(vault)
    if folder.is_dir():
        try:
            _rotate(folder, log_settings(vault))
        except OSError:
            pass


def _parse_time(text: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _segments_newest_first(vault: str | os.PathLike) -> list[Path]:
    folder = log_dir(vault)
    return [folder / CURRENT] + sorted(folder.glob("recalls-*.jsonl"), reverse=True)


def _lines_backwards(path: Path, block: int = 65536) -> Iterator[bytes]:
    """The file's non-empty lines, last first, read in blocks from the end."""
    try:
        fh = open(path, "rb")
    except OSError:
        return
    with fh:
        pos = fh.seek(0, os.SEEK_END)
        rest = b""
        while pos > 0:
            n = min(block, pos)
            pos -= n
            fh.seek(pos)
            parts = (fh.read(n) + rest).split(b"\n")
            rest = parts[0]
            for line in reversed(parts[1:]):
                if line.strip():
                    yield line
        if rest.strip():
            yield rest


def _raw_newest_first(vault: str | os.PathLike) -> Iterator[bytes]:
    for p in _segments_newest_first(vault):
        yield from _lines_backwards(p)


def _parse(raw: bytes) -> AgentRecall | None:
    try:
        return AgentRecall.from_dict(json.loads(raw))
    except (ValueError, TypeError):
        return None


#: Writers stamp a record when its recall starts and append it when it ends, so write order
#: and time order may differ by the length of a recall: reading stops this far past the cut.
_SLACK_S = 60.0


def read_agent_log(vault: str | os.PathLike, *, session: str | None = None,
                   since: datetime | None = None, limit: int | None = None,
                   served_by: str | None = None) -> list[AgentRecall]:
    """The recorded recalls, newest first. `session` keeps one session id (a prefix is
    enough), `since` drops older ones, `served_by` keeps "hook" or "mcp". Broken lines (a
    disk filled mid-write) are skipped. Never raises for a missing log: returns [].
    Reads from the end and stops once `limit` records (or `since`) are passed."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=timezone.utc)
    out: list[AgentRecall] = []
    stop_before: datetime | None = None  # once enough are found: read on only this far back
    for raw in _raw_newest_first(vault):
        rec = _parse(raw)
        if rec is None:
            continue
        t = _parse_time(rec.time)
        if stop_before is not None and (t is None or t < stop_before):
            break
        if since is not None and t is not None and t < since - timedelta(seconds=_SLACK_S):
            break
        if session and not rec.session_id.startswith(session):
            continue
        if served_by and rec.served_by != served_by:
            continue
        if since is not None and (t is None or t < since):
            continue
        out.append(rec)
        if limit and len(out) == limit and stop_before is None:
            oldest = min((_parse_time(r.time) for r in out), key=_key)
            stop_before = (oldest - timedelta(seconds=_SLACK_S)) if oldest else datetime.max.replace(
                tzinfo=timezone.utc)
    out.sort(key=lambda r: r.time, reverse=True)  # stable: ties keep the newest-written first
    return out[:limit] if limit else out


def _key(t: datetime | None) -> datetime:
    return t if t is not None else datetime.max.replace(tzinfo=timezone.utc)


class LogTail:
    """New records as they are appended, for a live view (the TUI's Agent pane, `log
    --follow`): `poll()` returns the records written since the last call, oldest first.
    Starts at the end of the log (`from_start=True` replays it all first). Follows a roll-over
    (the current file renamed and a new one begun) without losing or repeating a record.
    Never raises for a missing or unreadable log."""

    def __init__(self, vault: str | os.PathLike, *, from_start: bool = False):
        self.path = log_dir(vault) / CURRENT
        self._ino: int | None = None
        self._pos = 0
        self._buf = b""
        if not from_start:
            try:
                st = self.path.stat()
                self._ino, self._pos = st.st_ino, st.st_size
            except OSError:
                pass

    def _read_from(self, path: Path, pos: int) -> tuple[bytes, int]:
        try:
            with open(path, "rb") as fh:
                fh.seek(pos)
                data = fh.read()
        except OSError:
            return b"", pos
        return data, pos + len(data)

    def poll(self) -> list[AgentRecall]:
        data = b""
        try:
            st = self.path.stat()
        except OSError:
            st = None
        if self._ino is not None and (st is None or st.st_ino != self._ino):
            # rolled over: finish the old file (now a segment), then start the new one
            for seg in sorted(self.path.parent.glob("recalls-*.jsonl"), reverse=True):
                try:
                    if seg.stat().st_ino == self._ino:
                        more, _ = self._read_from(seg, self._pos)
                        data += more
                        break
                except OSError:
                    continue
            self._ino, self._pos = None, 0
        if st is not None:
            if self._ino is None:
                self._ino = st.st_ino
            more, self._pos = self._read_from(self.path, self._pos)
            data += more
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        out = []
        for raw in lines:
            try:
                out.append(AgentRecall.from_dict(json.loads(raw)))
            except (ValueError, TypeError):
                continue
        return out


def find_recall(vault: str | os.PathLike, recall_id: str) -> AgentRecall | None:
    """One record by its id (or a unique prefix of it); None when none or several match.
    Compares the id on the raw line (records start with it) and parses only a match."""
    if not recall_id:
        return None
    head = b'{"id":"' + recall_id.encode("utf-8", "replace")
    found: AgentRecall | None = None
    for raw in _raw_newest_first(vault):
        if not raw.startswith(head):
            continue
        rec = _parse(raw)
        if rec is None or not rec.id.startswith(recall_id):
            continue
        if rec.id == recall_id:
            return rec
        if found is not None and found.id != rec.id:
            return None  # ambiguous prefix
        found = rec
    return found


__all__ = ["AgentRecall", "LogTail", "append_recall", "clean_text", "find_recall", "log_dir", "log_settings", "new_id",
           "now_iso", "prune", "read_agent_log"]
