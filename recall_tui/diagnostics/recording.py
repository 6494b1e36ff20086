"""Recording recalls to a file, one trace per line, so a session can be replayed elsewhere.

A recording is `VAULT/.recall/recordings/<UTC timestamp>.jsonl`: each line is one
`Trace.to_json()`. Lines are flushed as they are written, so a crash loses at most the
recall in flight. `read_recording` reads one back and names the file and line of anything
it cannot use. Headless: no textual, no rich.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from recall_tui.engine.trace import Trace

#: Identifies a report's JSON twin (replay checks it) and its layout version.
REPORT_KIND = "recall-tui-report"
REPORT_VERSION = 1

#: Where recordings go, relative to the vault root (inside `.recall/`, the one place we write).
RECORDINGS_DIR = Path(".recall") / "recordings"


class RecordingError(ValueError):
    """A recording or report file cannot be replayed; the message names the file and why."""


def file_stamp(when: datetime) -> str:
    """A UTC timestamp safe in file names on every platform, e.g. `20261121T090000Z`."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def unique_path(folder: Path, stem: str, suffix: str) -> Path:
    """`folder/stem+suffix`, or `stem-2`, `stem-3`... when that name is taken (two recordings
    started in the same second must not overwrite each other)."""
    candidate = folder / f"{stem}{suffix}"
    n = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{n}{suffix}"
        n += 1
    return candidate


class Recorder:
    """Appends traces to a new recording file under the vault's `.recall/recordings/`.

    The UI toggles it: `start()` opens a new file, `append(trace)` writes one line per recall,
    `stop()` closes it. `path` and `count` stay readable after `stop()` so the UI can say
    where the recording went.
    """

    def __init__(self, vault_root: str | os.PathLike[str], *,
                 clock: Callable[[], datetime] | None = None):
        self.vault_root = Path(vault_root)
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._fh: IO[str] | None = None
        self.path: Path | None = None
        """The current (or last) recording file; None before the first `start()`."""
        self.count = 0
        """Traces written to `path`."""

    @property
    def active(self) -> bool:
        """Whether a recording is open."""
        return self._fh is not None

    def start(self) -> Path:
        """Open a new recording file and return its path (an open recording is stopped first)."""
        self.stop()
        folder = self.vault_root / RECORDINGS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        path = unique_path(folder, file_stamp(self._clock()), ".jsonl")
        # "x": never truncate a file another recorder created in the meantime.
        self._fh = open(path, "x", encoding="utf-8", newline="\n")
        self.path = path
        self.count = 0
        return path

    def append(self, trace: Trace) -> None:
        """Write one trace as one line, flushed to the OS at once."""
        if self._fh is None:
            raise RuntimeError("the recorder is not started; call start() first")
        self._fh.write(trace.to_json() + "\n")
        self._fh.flush()
        self.count += 1

    def stop(self) -> Path | None:
        """Close the recording (a no-op when none is open); returns its path."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        return self.path

    def __enter__(self) -> Recorder:
        if not self.active:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _read_text(p: Path, what: str) -> str:
    """The file's UTF-8 text; RecordingError naming it and the reason (`what` it should be
    when it is a folder)."""
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordingError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise RecordingError(f"{p}: is a folder, not a {what}") from None
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise RecordingError(f"{p}: cannot be read: {exc.strerror or exc}") from None


def read_recording(path: str | os.PathLike[str]) -> list[Trace]:
    """Every trace of a recording, in order. Blank lines are skipped; anything else that is not
    a trace raises RecordingError naming `file:line` and the reason."""
    p = Path(path)
    text = _read_text(p, "recording")
    traces: list[Trace] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        traces.append(trace_from_text(line, f"{p}:{lineno}"))
    if not traces:
        raise RecordingError(f"{p}: holds no traces (empty recording)")
    return traces


def trace_from_text(text: str, where: str) -> Trace:
    """One trace from its JSON text; RecordingError naming `where` when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{where}: not JSON: {exc.msg} (column {exc.colno})") from None
    return trace_from_dict(data, where)


def trace_from_dict(data: object, where: str) -> Trace:
    """One trace from its parsed JSON; RecordingError naming `where` when it is not one."""
    if not isinstance(data, dict):
        raise RecordingError(f"{where}: expected a trace object, got {type(data).__name__}")
    if "trace_version" not in data:
        raise RecordingError(f"{where}: not a recall trace (no trace_version)")
    try:
        return Trace.from_dict(data)
    except ValueError as exc:  # unsupported trace_version
        raise RecordingError(f"{where}: {exc}") from None
    except (TypeError, KeyError, AttributeError) as exc:
        raise RecordingError(f"{where}: malformed trace: {exc}") from None


def load_traces(path: str | os.PathLike[str]) -> list[Trace]:
    """The traces of any replayable file: a recording (.jsonl, one trace per line), a report's
    JSON twin, or a single trace JSON (`recall-tui query --json`). RecordingError names the
    file and the reason for anything else."""
    p = Path(path)
    if p.is_dir():
        raise RecordingError(f"{p}: is a folder, not a recording or report")
    text = _read_text(p, "recording or report")
    if not text.strip():
        raise RecordingError(f"{p}: is empty (no traces)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None  # not one JSON document: read it as a recording, line by line
    if isinstance(data, dict):
        if "kind" in data:
            return report_traces_from_data(data, str(p))
        return [trace_from_dict(data, str(p))]
    if data is not None:
        raise RecordingError(f"{p}: expected a recording, a report or a trace, "
                             f"got a JSON {type(data).__name__}")
    return read_recording(p)


def load_report_traces(path: str | os.PathLike[str]) -> list[Trace]:
    """The traces of a report's JSON twin; RecordingError naming the file and the reason."""
    p = Path(path)
    text = _read_text(p, "report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{p}: not JSON: {exc.msg} (line {exc.lineno})") from None
    return report_traces_from_data(data, str(p))


def report_traces_from_data(data: Any, where: str) -> list[Trace]:
    """The traces of an already parsed report JSON (see `load_report_traces`)."""
    if not isinstance(data, dict) or data.get("kind") != REPORT_KIND:
        raise RecordingError(f"{where}: not a recall-tui report (no \"kind\": \"{REPORT_KIND}\")")
    version = data.get("report_version")
    if version != REPORT_VERSION:
        raise RecordingError(f"{where}: report_version {version!r} is not supported "
                             f"(this build reads {REPORT_VERSION})")
    traces = data.get("traces")
    if not isinstance(traces, list) or not traces:
        raise RecordingError(f"{where}: the report holds no traces")
    return [trace_from_dict(d, f"{where}: traces[{i}]") for i, d in enumerate(traces)]
