"""Talking to the warm recall service (`recall-tui serve`): where its socket is, one request,
starting it on demand. Standard library only: this is the hook's fast path, which must not
import numpy, apsw or onnxruntime (a warm `hook prompt-submit` is a Python start, this module,
one socket round trip). What the fast path calls (`request`, `recently_unresponsive`,
`hook_timeout`) works on strings: pathlib, socket (`_socket` is its C core) and typing are
imported by no call of theirs, each a millisecond or more of every prompt.

Protocol: one JSON object per line each way on a Unix stream socket. Requests:
`{"op": "ping"}`, `{"op": "hook", "options": {...}, "payload": {...}}`,
`{"op": "recall", "query": ..., ...}`, `{"op": "stop"}`. Answers carry `"ok": true` or
`"ok": false, "error": "..."`.

The socket lives in `VAULT/.recall/serve.sock`, created owner-only; when that path is too long
for a Unix socket (about 100 bytes) it lives in an owner-only folder under the system's temp
folder, named by a hash of the vault path. A client refuses a socket (or folder) that another
user owns.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from pathlib import Path
    from typing import Any

#: Idle minutes after which a service started on demand exits.
DEFAULT_IDLE_S = 30 * 60
#: How long a hook waits for the service's answer before it recalls in its own process:
#: well inside Claude Code's 30 s hook timeout, so a hung service (stopped, swapping,
#: deadlocked) costs a prompt this long plus an in-process recall, never the whole timeout.
#: `RECALL_TUI_SERVICE_TIMEOUT` (seconds) overrides it.
HOOK_SERVICE_TIMEOUT_S = 4.0
_MAX_SOCK = 100


def dumps(obj: Any) -> str:
    """`json.dumps(obj)` (ASCII, its separators) for what requests hold (dicts with string
    keys, lists, strings, numbers, booleans, None), without importing `json`: its decoder
    imports `re` (and `re` `enum`, `functools` ...), which a hook started without `site`
    (recall_tui/launcher.py) would pay on every prompt, about as much as the rest of its
    start. Anything else is `json.dumps`'s (tests/test_hook_fast.py compares the two)."""
    parts: list[str] = []
    try:
        from _json import encode_basestring_ascii as enc

        if _encode(obj, parts, enc):
            return "".join(parts)
    except ImportError:  # a Python without the C accelerator
        pass
    import json

    return json.dumps(obj)


def _encode(o: Any, out: list[str], enc: Any) -> bool:
    """Append `o`'s JSON text to `out` as `json.dumps` writes it; False for what it leaves
    to `json.dumps` (another type, a non-string key, a float that is not finite)."""
    t = type(o)
    if t is str:
        out.append(enc(o))
    elif o is None or o is True or o is False:
        out.append("null" if o is None else "true" if o else "false")
    elif t is int:
        out.append(int.__repr__(o))
    elif t is float:
        if o != o or o in (float("inf"), float("-inf")):
            return False
        out.append(float.__repr__(o))
    elif t is list or t is tuple:
        out.append("[")
        for i, v in enumerate(o):
            if i:
                out.append(", ")
            if not _encode(v, out, enc):
                return False
        out.append("]")
    elif t is dict:
        out.append("{")
        for i, (k, v) in enumerate(o.items()):
            if type(k) is not str:
                return False
            out.append(", " + enc(k) + ": " if i else enc(k) + ": ")
            if not _encode(v, out, enc):
                return False
        out.append("}")
    else:
        return False
    return True


class _Context:
    """What `_json.make_scanner` reads: `json.JSONDecoder()`'s settings."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def loads(text: str | bytes | bytearray) -> Any:
    """`json.loads(text)`, by the C scanner `json` itself uses, without importing `json`
    (see `dumps`); whatever it does not take plainly (bytes not UTF-8, a BOM, extra data,
    bad JSON) is `json.loads`'s, so the value and the error are json's own."""
    try:
        from _json import make_scanner

        s = text if isinstance(text, str) else bytes(text).decode("utf-8")
        start = len(s) - len(s.lstrip(" \t\n\r"))
        context: Any = _Context  # (typeshed types the argument as a scanner, not its settings)
        obj, end = make_scanner(context)(s, start)
        if not s[end:].strip(" \t\n\r"):
            return obj
    except Exception:  # json.loads below gives the value, or json's own error
        pass
    import json

    return json.loads(text)


class ServiceUnavailable(RuntimeError):
    """No service answered (not running, starting, refused, or it failed)."""


def recall_dir(root: Path) -> Path:
    return root / ".recall"


def _recall_file(root: str | os.PathLike, name: str) -> str:
    """`ROOT/.recall/NAME`, the root resolved (as `Path.resolve` does), as a string."""
    return os.path.join(os.path.realpath(root), ".recall", name)


def _socket_file(root: str | os.PathLike) -> str:
    p = _recall_file(root, "serve.sock")
    if len(os.fsencode(p)) <= _MAX_SOCK:
        return p
    import hashlib
    import tempfile

    name = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:24]
    return os.path.join(tempfile.gettempdir(), f"recall-tui-{os.getuid()}", f"{name}.sock")


def socket_path(root: str | os.PathLike) -> Path:
    from pathlib import Path

    return Path(_socket_file(root))


def lock_path(root: str | os.PathLike) -> Path:
    from pathlib import Path

    return Path(_recall_file(root, "serve.lock"))


def request(root: str | os.PathLike, req: dict[str, Any], *, timeout: float = 30.0) -> dict[str, Any]:
    """Send one request and return the answer; ServiceUnavailable when no service answers."""
    import _socket  # the C module behind `socket`, whose enums and selectors cost a prompt ~3 ms

    path = _socket_file(root)
    try:
        st = os.lstat(path)
    except OSError:
        raise ServiceUnavailable("not running") from None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        raise ServiceUnavailable(f"{path}: not a socket of this user; ignored")
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        for attempt in range(50):  # a full listen backlog answers EAGAIN: try again shortly
            try:
                s.connect(path)
                break
            except BlockingIOError:
                if attempt == 49:
                    raise
                time.sleep(0.02)
        s.sendall(dumps(req).encode() + b"\n")  # ASCII: a lone surrogate stays escaped
        buf = bytearray()
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
    except TimeoutError:
        raise ServiceUnavailable(f"{path}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise ServiceUnavailable(f"{path}: {exc.strerror or exc}") from None
    finally:
        s.close()
    try:
        ans = loads(buf)
    except ValueError:
        raise ServiceUnavailable("the service closed the connection without an answer") from None
    if not isinstance(ans, dict):
        raise ServiceUnavailable("the service's answer is not a JSON object")
    return ans


def hook_timeout() -> float:
    """The hook's wait for the service (`HOOK_SERVICE_TIMEOUT_S`, or the environment's)."""
    try:
        t = float(os.environ.get("RECALL_TUI_SERVICE_TIMEOUT") or HOOK_SERVICE_TIMEOUT_S)
    except ValueError:
        t = HOOK_SERVICE_TIMEOUT_S
    return t if t > 0 else HOOK_SERVICE_TIMEOUT_S


#: After the service failed to answer in time, hooks recall in their own process for this
#: long without asking it (a hung service costs one prompt the wait, not every prompt).
UNRESPONSIVE_SKIP_S = 60.0


def mark_unresponsive(root: str | os.PathLike) -> None:
    """Note that the service did not answer in time (best effort)."""
    try:
        with open(_recall_file(root, "serve.unresponsive"), "w", encoding="ascii") as fh:
            fh.write(f"{time.time():.0f}\n")
    except OSError:
        pass


def recently_unresponsive(root: str | os.PathLike) -> bool:
    """Whether the service failed to answer within the last `UNRESPONSIVE_SKIP_S`."""
    try:
        return time.time() - os.stat(_recall_file(root, "serve.unresponsive")).st_mtime < UNRESPONSIVE_SKIP_S
    except OSError:
        return False


def is_starting_or_running(root: str | os.PathLike) -> bool:
    """Whether a service holds the vault's serve lock (running, or still loading)."""
    import fcntl

    p = _recall_file(root, "serve.lock")
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def loading_pid(root: str | os.PathLike) -> int | None:
    """The pid of a service that holds the vault's serve lock but does not answer yet (still
    loading, or hung), from the lock file; None when no service holds the lock."""
    if not is_starting_or_running(root):
        return None
    try:
        return int(lock_path(root).read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def start_detached(root: str | os.PathLike, *, idle_s: float | None = None,
                   model_idle_s: float | None = None) -> bool:
    """Start `recall-tui serve` for the vault in its own session (it outlives this process and
    exits after `idle_s` without a request; drops its model after `model_idle_s`, default
    the service's). False when one is already up or starting, or it
    could not be started. Several callers at once are fine: the service takes the serve lock
    and a second one exits at once."""
    if os.environ.get("RECALL_TUI_SERVE", "").lower() in ("off", "0", "no", "false"):
        return False
    from pathlib import Path

    root = Path(root).resolve()
    if is_starting_or_running(root):
        return False
    import subprocess

    idle = idle_s if idle_s is not None else float(os.environ.get("RECALL_TUI_SERVE_IDLE") or DEFAULT_IDLE_S)
    try:
        recall_dir(root).mkdir(exist_ok=True)
        if not os.access(recall_dir(root), os.W_OK):
            return False  # a read-only vault: no service (it could not lock or bind), no retry storm
        more = ["--model-idle", str(model_idle_s)] if model_idle_s is not None else []
        subprocess.Popen(
            [sys.executable, "-m", "recall_tui", "serve", "--vault", str(root), "--idle", str(idle),
             *more],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
        return True
    except OSError:
        return False


def wait_ready(root: str | os.PathLike, timeout: float = 120.0) -> dict[str, Any] | None:
    """Wait until the service answers a ping (None at the timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            ans = request(root, {"op": "ping"}, timeout=5.0)
            if ans.get("ok"):
                return ans
        except ServiceUnavailable:
            pass
        time.sleep(0.05)
    return None
