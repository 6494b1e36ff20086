"""The hook's fast path (`recall_tui.cli.hook_fast`): what a prompt's process imports before it
talks to the warm service, which options it reads itself and which it leaves to argparse.
Also the JSON codec of that path (`client.dumps`/`loads`, json's C scanner without `json`) and
the launcher a hook command runs (`python -S recall_tui/launcher.py`). Cheap: three
subprocesses, no service, no model (tests/test_serve.py runs the path against a real service
and checks the same import set there, the launcher's too)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_tui.agent.client import dumps, loads
from recall_tui.cli.hook_fast import _options, payload

#: Never imported on the way to the service: the engine's libraries, the front ends', and the
#: standard modules the fast path avoids (each costs every prompt a millisecond or more).
HEAVY = ("numpy", "apsw", "onnxruntime", "tokenizers", "yaml", "textual", "rich",
         "recall_tui.engine", "recall_tui.index", "recall_tui.agent.core", "recall_tui.agent.active",
         "recall_tui.cli.hook", "argparse", "socket", "selectors", "typing", "pathlib",
         "subprocess", "datetime", "json")


def test_the_client_path_imports_nothing_heavy(tmp_path):
    """Everything up to the socket request, with no service there: the path reads the options
    and stdin, finds no socket, and hands over to the full command (None)."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import recall_tui.cli\n"
        "from recall_tui.cli import hook_fast\n"
        "assert hook_fast.try_service(['prompt-submit', '--vault', sys.argv[1], '--k', '3',\n"
        "                              '--repeat-window=0', '--transparency']) is None\n"
        "assert hook_fast.take_stdin() == '{\"prompt\": \"postgres\"}'\n"
        "try:\n"
        "    hook_fast.ask_service(sys.argv[1], {})\n"
        "except hook_fast.client.ServiceUnavailable as exc:\n"
        "    assert str(exc) == 'not running', exc\n"
        "new = sorted(set(sys.modules) - before)\n"
        "import json\n"
        "print(json.dumps(new))\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], input='{"prompt": "postgres"}',
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(json.loads(r.stdout))
    assert "recall_tui.agent.client" in loaded  # the path did run (the suite's network guard
    # imports socket at every start, so socket is only checked outside the suite)
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == [], heavy


@pytest.mark.parametrize("words, expected", [
    (["prompt-submit"], {}),
    (["prompt-submit", "--vault", "/v", "--k", "3", "--transparency"],
     {"--vault": "/v", "--k": 3, "--transparency": True}),
    (["session-start", "--sources=startup,resume", "--budget-ms", "1e9", "--repeat-window", "0",
      "--embedder", "local", "--preset", "mine"],
     {"--sources": "startup,resume", "--budget-ms": 1e9, "--repeat-window": 0,
      "--embedder": "local", "--preset": "mine"}),
])
def test_the_options_it_reads_itself(words, expected):
    assert _options(words) == {"event": words[0], **expected}


@pytest.mark.parametrize("extra", [
    ["--no-serve"], ["--warm"], ["--vau", "/v"], ["--frobnicate"], ["--k", "0"], ["--k", "x"],
    ["--embedder", "bogus"], ["--budget-ms"], ["--vault", "--k", "3"], ["--transparency=yes"],
    ["-h"], ["stray"],
])
def test_anything_else_goes_to_argparse(extra):
    """None: the full command parses it, with its warnings (a hook never exits 2)."""
    assert _options(["prompt-submit", *extra]) is None


def test_the_payload_keeps_text_and_replaces_lone_surrogates():
    text = json.dumps({"prompt": "caf\u00e9 \ud83d\ude00 \ud800 end", "session_id": 7, "extra": 1})
    got = payload(text)
    assert got["prompt"] == "caf\u00e9 \U0001f600 \ufffd end"  # a pair is one emoji; a lone one U+FFFD
    assert got["session_id"] == "7" and got["cwd"] == "" and "extra" not in got
    assert payload("not json")["prompt"] == "" and payload("[1, 2]")["prompt"] == ""


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=100, deadline=None)
@given(_JSON)
def test_the_codec_is_jsons_own(obj):
    """`client.dumps` writes what `json.dumps` writes (NaN and infinities included, through
    json itself), and `client.loads` reads it back as `json.loads` does, from str and bytes."""
    text = json.dumps(obj)
    assert dumps(obj) == text
    assert repr(loads(text)) == repr(json.loads(text))
    assert repr(loads(bytearray(text.encode()))) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["", " ", "{", "[1,]", "1 2", "\ufeff{}", '{"a": 1} x', "nul",
                                  '"\\ud800"', ' {"a": [1.5e3, -0, true]}\n'])
def test_the_codec_fails_and_succeeds_as_json_does(text):
    def outcome(f):
        try:
            return "ok", repr(f(text))
        except ValueError as exc:
            return type(exc).__name__, str(exc)

    assert outcome(loads) == outcome(json.loads)


def test_the_launcher_then_site_resolves_as_a_normal_start():
    """Started without `site` on the launcher, after the fast path and `enable_site`: the
    same `sys.path` and the same files for the package and its libraries as a normal start."""
    from recall_tui.agent import hook_wire

    probe = (
        "import json, sys\n"
        "import numpy, apsw, yaml, recall_tui.cli\n"
        "print(json.dumps([[p for p in sys.path if p], numpy.__file__, apsw.__file__,\n"
        "                  yaml.__file__, recall_tui.cli.__file__]))\n")
    fast = ("import sys\n"
            f"sys.path[0] = {hook_wire.package_home()!r}\n"  # as the launcher does, handing over
            "from recall_tui.agent import hook_wire\n"
            "import recall_tui.cli\n"
            "assert 'site' not in sys.modules and 'numpy' not in sys.modules\n"
            "hook_wire.enable_site()\n" + probe)
    normal = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    started = subprocess.run([sys.executable, "-S", "-c", fast], capture_output=True, text=True,
                             timeout=120)
    assert normal.returncode == 0 and started.returncode == 0, normal.stderr + started.stderr
    assert json.loads(started.stdout) == json.loads(normal.stdout)


def test_the_wire_finds_the_socket_as_given_through_a_link_and_relative(tmp_path, monkeypatch):
    """`hook_wire.request` tries `ROOT/.recall/serve.sock` as given (no `os`, no resolving)
    and else the resolved path `client.socket_path` binds: a linked and a relative vault path
    reach the same socket (a listener in this process answering each request's op)."""
    import socket
    import threading

    from recall_tui.agent import client, hook_wire

    vault = tmp_path / "v"
    (vault / ".recall").mkdir(parents=True)
    path = client.socket_path(vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen()

    def serve(n: int) -> None:
        for _ in range(n):
            conn, _ = srv.accept()
            with conn, conn.makefile("rwb") as f:
                req = json.loads(f.readline())
                f.write(json.dumps({"ok": True, "op": req["op"]}).encode() + b"\n")

    t = threading.Thread(target=serve, args=(3,), daemon=True)
    t.start()
    (tmp_path / "link").symlink_to(vault)
    try:
        assert hook_wire.request(str(vault), {"op": "a"}, timeout=30) == {"ok": True, "op": "a"}
        assert hook_wire.request(str(tmp_path / "link"), {"op": "b"}, timeout=30)["op"] == "b"
        monkeypatch.chdir(tmp_path)
        assert hook_wire.request("link", {"op": "c"}, timeout=30)["op"] == "c"
        t.join(30)
        with pytest.raises(hook_wire.ServiceUnavailable, match="not running"):
            hook_wire.request(str(tmp_path), {"op": "d"}, timeout=30)
    finally:
        srv.close()
