"""The test suite's network guard: an audit hook that refuses and records any connection, DNS
lookup or datagram to a host that is not this machine.

tests/conftest.py installs it in the pytest process and puts this folder first on PYTHONPATH
with RECALL_TUI_NETGUARD_LOG set, so every Python process the suite starts (the commands,
hooks, the service, MCP servers) imports it at startup as `sitecustomize` and installs it too.
An attempt raises ConnectionRefusedError where it is made and appends one line to the log;
conftest fails the test during which a line appeared. Loopback addresses, `localhost` and Unix
sockets are allowed (the local Ollama probe, the warm service's socket). Native code that does
not go through Python's socket module (onnxruntime's telemetry) is caught by
tests/test_no_network.py instead.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from typing import Any

LOG_ENV = "RECALL_TUI_NETGUARD_LOG"
_LOCAL_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost",
                          "ip6-loopback"})
_installed = False


def is_local(host: Any) -> bool:
    """Whether `host` (a name, an address, bytes or None) stays on this machine."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not event.startswith("socket."):  # the hook sees every audited event: leave fast
        return
    host: Any = None
    if event in ("socket.connect", "socket.sendto"):
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) == getattr(socket, "AF_UNIX", None) or address is None:
            return
        host = address[0] if isinstance(address, tuple) else address
    elif event == "socket.getaddrinfo":
        host = args[0]
    elif event in ("socket.gethostbyname", "socket.gethostbyname_ex"):
        host = args[0]
    else:
        return
    if is_local(host):
        return
    what = f"{event} {host!r} by pid {os.getpid()} ({' '.join(sys.argv)[:200]})"
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(what + "\n")
    raise ConnectionRefusedError(f"network guard of the test suite: {what}")


def install() -> None:
    """Add the audit hook to this process (once: audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        _installed = True
        sys.addaudithook(_hook)


if os.environ.get(LOG_ENV):
    install()
