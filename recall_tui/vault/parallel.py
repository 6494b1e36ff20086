"""Parsing many memory files at once in worker processes (a vault's first read).

Parsing is pure Python and holds the GIL, so threads do not help; `parse_in_pool` starts a few
fresh interpreters running the reader's `_worker_main` (`python -c ...`, started by
`subprocess`, which is safe from a threaded program such as the UI opening a vault on a
background thread, where `fork` is not; and unlike `multiprocessing`'s `spawn`, it never
re-runs the caller's `__main__` script). Each worker gets its share of the files on stdin,
parses them exactly as the serial reader does (`_read_memory`) and writes each file's record
in the reading cache's encoding (`readcache.dumps`) to stdout, one marshalled chunk at a time
(its length first, into a pipe a chunk fits in: see `_widen`).
The caller loads the records into the same `Memory` objects and problems the serial parse
gives, and keeps the bytes in the reading cache as they are. Chunks are handed back in the
files' order; when anything goes wrong (a worker cannot start, dies, or says nothing), the
files not handed back are the caller's to parse itself. Headless.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # (not on Windows: the pipes keep their size)
    fcntl = None  # type: ignore[assignment]  # (checked before use)

#: A read parses in a pool only when at least this many memory files need parsing: below it,
#: starting the workers (a fresh interpreter each, ~0.1-0.2 s) costs more than it saves.
PARALLEL_MIN_FILES = 3000
#: Files per chunk (the unit of progress and of hand-back).
CHUNK_FILES = 250
#: Workers at most (a parse is CPU bound: more than the cores only adds start-up).
MAX_WORKERS = 8

#: What a worker runs (the reader's `_worker_main`: parse the files given on stdin).
_WORKER = "from recall_tui.vault.reader import _worker_main; _worker_main()"


def pool_size() -> int:
    """The cores this process may run on (1 means: parse here)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_WORKERS))


def _worker_env() -> dict[str, str]:
    """The environment, with this package's folder first on the import path (a source
    checkout run without installing works too)."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def parse_in_pool(
    files: list[tuple[str, str]],
    workers: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """(rel, record bytes) for the (rel, path) files, in their order, parsed by `workers`
    processes. Stops early (without raising) when a worker fails: the files not yielded are
    the caller's to parse. `progress(n)` gets the number of files handed back so far."""
    size = max(1, min(CHUNK_FILES, -(-len(files) // (workers * 4))))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    workers = max(1, min(workers, len(chunks)))
    results: list[list[bytes] | None] = [None] * len(chunks)
    arrived = [threading.Event() for _ in chunks]
    procs: list[subprocess.Popen[bytes]] = []

    def collect(proc: subprocess.Popen[bytes], mine: list[int]) -> None:
        # Chunk k goes to worker k % workers; a failed worker leaves its chunks empty.
        out = proc.stdout
        assert out is not None  # opened with stdout=PIPE
        try:
            for k in mine:
                head = out.read(_LENGTH.size)
                if len(head) != _LENGTH.size:
                    break
                (size,) = _LENGTH.unpack(head)
                data = out.read(size)  # (one read: the GIL is not taken back per 8 KB)
                if len(data) != size:
                    break
                blobs = marshal.loads(data)
                if type(blobs) is not list or len(blobs) != len(chunks[k]):
                    break
                results[k] = blobs
                arrived[k].set()
        except Exception:  # EOF or garbage: the caller parses the rest
            pass
        finally:
            for k in mine:
                arrived[k].set()

    readers: list[threading.Thread] = []
    try:
        for w in range(workers):
            mine = list(range(w, len(chunks), workers))
            proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=_worker_env(), close_fds=True,
            )
            procs.append(proc)
            _widen(proc)
            payload = marshal.dumps([chunks[k] for k in mine])
            feeder = threading.Thread(target=_feed, args=(proc, payload), daemon=True)
            feeder.start()
            reader = threading.Thread(target=collect, args=(proc, mine), daemon=True)
            reader.start()
            readers.append(reader)
        done = 0
        for k, chunk in enumerate(chunks):
            arrived[k].wait()
            blobs = results[k]
            if blobs is None:
                return
            results[k] = None
            for (rel, _path), blob in zip(chunk, blobs, strict=True):
                yield rel, blob
            done += len(chunk)
            if progress is not None:
                progress(done)
    except OSError:  # a worker could not be started
        return
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


#: A chunk on a worker's stdout: its length (8 bytes, little-endian), then the marshalled list.
_LENGTH = struct.Struct("<Q")
#: The pipe from a worker holds this many bytes (Linux; the default is 64 KB): a whole chunk
#: (250 records of ~2.7 KB) fits, so a worker does not wait for the reading process to drain it.
PIPE_BYTES = 1 << 20


def _widen(proc: subprocess.Popen[bytes]) -> None:
    """Give the worker's stdout pipe PIPE_BYTES (best effort: elsewhere, or over the system's
    limit, it keeps its size). Why: the reading process collects chunks on threads while its
    main thread decodes in Python; a thread that drains a 64 KB pipe must take the GIL back
    after every read, waiting up to the switch interval each time, and meanwhile the worker
    is blocked writing. A 1 MB pipe and one read per chunk took a test worker's time blocked
    from ~19 of 29 s to ~2 s (first10)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setsize is None or proc.stdout is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(proc.stdout.fileno(), setsize, PIPE_BYTES)


def write_chunk(out: BinaryIO, blobs: list[bytes]) -> None:
    """A worker's side of the protocol: one chunk's records, length first (see `_LENGTH`)."""
    data = marshal.dumps(blobs)
    out.write(_LENGTH.pack(len(data)))
    out.write(data)
    out.flush()


def _feed(proc: subprocess.Popen[bytes], payload: bytes) -> None:
    """Write a worker's files to its stdin (on its own thread: a full pipe blocks only it)."""
    try:
        stdin = proc.stdin
        assert stdin is not None  # opened with stdin=PIPE
        stdin.write(payload)
        stdin.close()
    except OSError:
        pass
