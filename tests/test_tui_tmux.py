"""The installed `recall-tui` command in a real terminal (tmux): it starts on a vault, a typed
query brings up the engine's top hit, and `q` quits with status 0."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.engine import open_engine
from tests.conftest import PINNED_NOW
from tests.waiting import TIMEOUT, wait_until_sync

pytestmark = pytest.mark.slow

TMUX = shutil.which("tmux")
QUERY = "postgres upgrade"


def _tmux(socket: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TMUX, "-L", socket, "-f", os.devnull, *args],
                          capture_output=True, text=True, timeout=20)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal test needs it")
def test_recall_tui_in_tmux(session_vault_copy, tmp_path):
    # The engine opened headless once: builds the index the command will reuse, and tells us
    # what the top hit must be.
    engine = open_engine(session_vault_copy, preset="default", embedder="local")
    expected = engine.recall(QUERY, now=PINNED_NOW, k=10).hits[0].title
    vault = tmp_path / "vault"
    shutil.copytree(session_vault_copy, vault)  # with its .recall/ index

    command = Path(sys.executable).parent / "recall-tui"
    assert command.exists(), f"console script missing: {command}"
    rc_file = tmp_path / "rc"
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in
                   ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "OLLAMA_HOST")
                   if k in os.environ)
    inner = (f"env {env} TERM=xterm-256color {shlex.quote(str(command))} "
             f"{shlex.quote(str(vault))} --now {PINNED_NOW.isoformat()}; "
             f"echo $? > {shlex.quote(str(rc_file))}")
    socket = f"recall-tui-test-{os.getpid()}"
    started = _tmux(socket, "new-session", "-d", "-s", "t", "-x", "120", "-y", "36",
                    "sh", "-c", inner)
    assert started.returncode == 0, started.stderr
    try:
        def screen() -> str:
            return _tmux(socket, "capture-pane", "-p", "-t", "t").stdout

        wait_until_sync(lambda: "vault opened" in screen(), "the UI to open the vault",
                        timeout=TIMEOUT * 2)
        # While the query bar has focus it takes printable keys, so the footer offers no `q`.
        assert "Quit" not in screen()
        _tmux(socket, "send-keys", "-t", "t", "-l", QUERY)
        wait_until_sync(lambda: expected[:20] in screen(), f"the top hit {expected!r} on screen")
        text = screen()
        assert "keyword" in text and "hits" in text
        _tmux(socket, "send-keys", "-t", "t", "Escape")
        # The focus left the query bar once the footer offers `q` (a key sent before that
        # could be read together with the escape as alt+q).
        wait_until_sync(lambda: "Quit" in screen(), "the footer to offer q Quit after escape")
        _tmux(socket, "send-keys", "-t", "t", "q")
        wait_until_sync(rc_file.exists, "`q` to quit the UI")
        assert rc_file.read_text().strip() == "0"
    finally:
        _tmux(socket, "kill-server")
