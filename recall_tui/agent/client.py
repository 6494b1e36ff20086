"""Talking to the warm recall service (`recall-tui serve`): where its socket is, one request,
starting it on demand. The wire itself (the JSON codec, finding the socket, `request`,
`hook_timeout`, `recently_unresponsive`) lives in `recall_tui.agent.hook_wire`, which imports
nothing (the hook's launcher loads it on its own, on every prompt); this module re-exports it.

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
import sys
import time

from recall_tui.agent.hook_wire import (  # noqa: F401  (re-exported: the client's API)
    HOOK_SERVICE_TIMEOUT_S,
    UNRESPONSIVE_SKIP_S,
    ServiceUnavailable,
    dumps,
    hook_timeout,
    loads,
    recently_unresponsive,
    request,
)
from recall_tui.agent.hook_wire import _resolved_recall_file as _recall_file
from recall_tui.agent.hook_wire import socket_file as _socket_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from pathlib import Path
    from typing import Any

#: Idle minutes after which a service started on demand exits.
DEFAULT_IDLE_S = 30 * 60


def recall_dir(root: Path) -> Path:
    return root / ".recall"


def socket_path(root: str | os.PathLike) -> Path:
    from pathlib import Path

    return Path(_socket_file(root))


def lock_path(root: str | os.PathLike) -> Path:
    from pathlib import Path

    return Path(_recall_file(root, "serve.lock"))


def mark_unresponsive(root: str | os.PathLike) -> None:
    """Note that the service did not answer in time (best effort)."""
    try:
        with open(_recall_file(root, "serve.unresponsive"), "w", encoding="ascii") as fh:
            fh.write(f"{time.time():.0f}\n")
    except OSError:
        pass


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
