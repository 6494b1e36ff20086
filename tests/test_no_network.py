"""No process of ours opens a network connection its user did not configure.

Two guards. Python-level attempts (a socket connect, a DNS lookup, a datagram to another
host) are refused and recorded in every process of the suite by tests/netguard (installed by
tests/conftest.py, which fails the test during which one happened); the first tests here prove
that guard works. Native code does not pass through Python's socket module: onnxruntime's
telemetry (1DS) writes a device id under the cache folder when the model loads and sends its
first events ~5-9 s later. The slow test runs the real MCP server with the local model in a
fresh HOME, every proxy variable pointing at a local recording socket (the telemetry client
honours them: it sends `CONNECT <events host>:443`) and, when strace is installed, under
`strace -f`, then watches for OBSERVE_SECONDS after the model has embedded a query.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from recall_tui import QUIET_ENV
from tests.netguard import sitecustomize as netguard

#: How long the server is watched after the model has run. onnxruntime's first upload came
#: 5.4 s after the model loaded here (under a load of ~11) and ~9 s in the issue's report; a
#: failure ends the wait as soon as the proxy hears from it.
OBSERVE_SECONDS = 15


def test_is_local():
    for host in ("127.0.0.1", "127.8.0.1", "::1", "localhost", "LOCALHOST.", "0.0.0.0", "",
                 None, b"localhost", "x.localhost"):
        assert netguard.is_local(host), host
    for host in ("192.0.2.1", "10.0.0.1", "example.com", "mobile.events.data.microsoft.com",
                 "2001:db8::1", b"example.com", 3):
        assert not netguard.is_local(host), host


def test_guard_refuses_and_records_what_a_process_tries(tmp_path):
    """A process of the suite (sitecustomize on PYTHONPATH) has its non-local connect and DNS
    lookup refused and recorded; loopback connects go through."""
    log = tmp_path / "guard.log"
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
        "print('local ok')\n"
        "for target in (('192.0.2.1', 443), ('example.com', 443)):\n"
        "    try:\n"
        "        socket.create_connection(target, timeout=2)\n"
        "    except ConnectionRefusedError as exc:\n"
        "        print('refused', exc)\n"
    )
    env = dict(os.environ, **{netguard.LOG_ENV: str(log)})
    try:
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=60)
    finally:
        listener.close()
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("refused") == 2 and "local ok" in r.stdout
    tried = log.read_text()
    assert "'192.0.2.1'" in tried and "'example.com'" in tried and "127.0.0.1" not in tried


class RecordingProxy:
    """A local socket every proxy variable points at: records the first line of each request
    (`CONNECT host:443 HTTP/1.1`, `GET http://host/...`), answers nothing."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.requests: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                self.requests.append(data.split(b"\r\n", 1)[0].decode("latin-1") or "(empty)")

    def close(self) -> None:
        self._sock.close()


_ADDR = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6,\s*"([^"]+)"\)')


def non_local_addresses(strace_log: Path) -> list[str]:
    """The strace lines that connect or send to an address outside this machine."""
    out = []
    for line in strace_log.read_text(errors="replace").splitlines():
        for m in _ADDR.finditer(line):
            if not netguard.is_local(m.group(1) or m.group(2)):
                out.append(line)
    return out


@pytest.mark.slow
async def test_mcp_server_with_the_local_model_reaches_no_host(vault_copy, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    proxy = RecordingProxy()
    env = dict(os.environ)
    for key in QUIET_ENV:  # the server must quiet its libraries itself, whatever it inherits
        env.pop(key, None)
    env["ORT_DISABLE_TELEMETRY"] = "0"  # ... even against a value that would re-enable it
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), RECALL_TUI_SERVE="off",
               NO_PROXY="", no_proxy="")
    for key in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env[key] = env[key.lower()] = proxy.url
    command = [sys.executable, "-m", "recall_tui", "mcp", "--vault", str(vault_copy),
               "--embedder", "local", "--no-watch"]
    strace_log = tmp_path / "strace.log"
    strace = shutil.which("strace")
    if strace:
        command = [strace, "-f", "-qq", "--seccomp-bpf", "-e", "trace=connect,sendto,sendmsg",
                   "-o", str(strace_log), *command]
    try:
        async with Client(StdioServerParameters(command=command[0], args=command[1:],
                                                env=env)) as client:
            res = await client.call_tool("recall", {"query": "postgres major upgrade", "k": 3})
            assert not res.is_error, res.content
            watched_until = time.monotonic() + OBSERVE_SECONDS
            while not proxy.requests and time.monotonic() < watched_until:
                await anyio.sleep(0.1)
    finally:
        proxy.close()
    assert proxy.requests == [], "the server tried to reach the network through the proxy"
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert not [p for p in written if "Microsoft" in p or "deviceid" in p], written
    if strace:
        assert non_local_addresses(strace_log) == []
    else:
        pytest.skip("strace is not installed: only the proxy and the cache folder were checked")
