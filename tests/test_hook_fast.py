"""The hook's fast path (`recall_tui.cli.hook_fast`): what a prompt's process imports before it
talks to the warm service, which options it reads itself and which it leaves to argparse.
Cheap: one subprocess, no service, no model (tests/test_serve.py runs the path against a real
service and checks the same import set there)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recall_tui.cli.hook_fast import _options, payload

#: Never imported on the way to the service: the engine's libraries, the front ends', and the
#: standard modules the fast path avoids (each costs every prompt a millisecond or more).
HEAVY = ("numpy", "apsw", "onnxruntime", "tokenizers", "yaml", "textual", "rich",
         "recall_tui.engine", "recall_tui.index", "recall_tui.agent.core", "recall_tui.agent.active",
         "recall_tui.cli.hook", "argparse", "socket", "selectors", "typing", "pathlib",
         "subprocess", "datetime")


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
