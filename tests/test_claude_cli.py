"""The hooks under the real Claude Code CLI (npm `@anthropic-ai/claude-code`; `make test`
installs it into .venv/claude). No model is reachable: HOME is a temp folder, the API key is a
dummy and the API base URL a closed local port, so `claude -p` runs the SessionStart and
UserPromptSubmit hooks, writes in its debug log whether it parsed and validated their JSON,
then retries the API. Each test waits for those debug lines (reading the log as it grows) and
then stops the process."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until_sync

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = ROOT / ".venv" / "claude" / "node_modules" / ".bin" / "claude"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed "
                       "(`make test` installs it with npm into .venv/claude when npm is there)"),
]


def claude_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
               ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # closed: no model, no request leaves
               DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", RECALL_TUI_SERVE="off")
    return env


def install(vault: Path, settings: Path, *extra: str) -> None:
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "install", "--vault", str(vault),
                        "--write", str(settings), *extra], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def run_claude(tmp_path: Path, settings: Path | None, prompt: str, done: re.Pattern[str],
               timeout: float = 240, args: tuple[str, ...] = ()) -> str:
    """Run `claude -p PROMPT --settings FILE` until its debug log matches `done`; its log."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    log = tmp_path / "claude-debug.txt"
    proc = subprocess.Popen([str(CLAUDE), "-p", prompt, *(["--settings", str(settings)] if settings else []),
                             *args, "--debug-file", str(log)], cwd=project, env=claude_env(home),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)

    def seen() -> str | None:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if done.search(text):
            return text
        if proc.poll() is not None:
            raise AssertionError(f"claude exited {proc.returncode} before the hooks ran:\n{text[-3000:]}")
        return None

    try:
        return wait_until_sync(seen, f"claude's debug log to match {done.pattern!r}",
                               timeout=timeout, interval=0.2)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


PROMPT_DONE = re.compile(r"Hook UserPromptSubmit \(.*recall-tui-hook:[0-9a-f]+\) "
                         r"provided additionalContext|UserPromptSubmit.*(blocked|error|failed)", re.I)


@pytest.fixture
def vault(tmp_path, sample_vault_path) -> Path:
    v = tmp_path / "my vault"  # a space in the path: the command quotes it
    shutil.copytree(sample_vault_path, v, ignore=shutil.ignore_patterns(".recall"))
    return v


def test_claude_runs_the_installed_hooks_and_accepts_their_json(tmp_path, vault):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "true"}]}]}}, indent=2))
    install(vault, settings, "--no-serve", "--embedder", "none")
    log = run_claude(tmp_path, settings, "postgres major upgrade analyze", PROMPT_DONE)
    assert re.search(r"Hook SessionStart \(.*recall-tui-hook:.*\) provided additionalContext", log), log[-4000:]
    assert re.search(r"Hook UserPromptSubmit \(.*recall-tui-hook:.*\) provided additionalContext", log), log[-4000:]
    assert log.count("Successfully parsed and validated hook JSON output") >= 2
    assert "lesson-pg-upgrade-analyze" in log  # what we injected is what claude received
    from recall_tui.agent.log import read_agent_log

    events = sorted(r.event for r in read_agent_log(vault))
    assert events == ["SessionStart", "UserPromptSubmit"]


def test_an_argument_error_does_not_block_the_prompt(tmp_path, vault):
    """A hook command with an unknown flag and a bad --embedder (a user's hand edit, or an
    older recall-tui) still answers: exit 0, the prompt is not blocked or erased."""
    settings = tmp_path / "settings.json"
    install(vault, settings, "--no-serve", "--embedder", "none")
    data = json.loads(settings.read_text())
    h = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    h["command"] = h["command"].replace(" --no-serve", " --no-serve --frobnicate 3 --embedder bogus")
    settings.write_text(json.dumps(data, indent=2))
    log = run_claude(tmp_path, settings, "postgres major upgrade analyze", PROMPT_DONE)
    assert re.search(r"Hook UserPromptSubmit \(.*--frobnicate.*\) provided additionalContext", log), log[-4000:]
    assert not re.search(r"UserPromptSubmit.*block", log, re.I), log[-4000:]
    assert "lesson-pg-upgrade-analyze" in log


def test_the_plugin_folder_runs_its_hooks_and_mcp_server(tmp_path, vault):
    """`hook install --plugin-dir DIR` writes a Claude Code plugin; `claude --plugin-dir DIR`
    loads it, runs both hooks (their JSON accepted) and connects to its MCP server."""
    plugin = tmp_path / "plugin"
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "install", "--vault", str(vault),
                        "--no-serve", "--embedder", "none", "--plugin-dir", str(plugin)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    connected = re.compile(r'MCP server "plugin:recall-tui:recall-tui": Successfully connected')
    both = re.compile(r"(?s)(?=.*" + connected.pattern + r")(?=.*" + PROMPT_DONE.pattern + r")")
    log = run_claude(tmp_path, None, "postgres major upgrade analyze", both, timeout=400,
                     args=("--plugin-dir", str(plugin)))
    assert "Registered 3 hooks from 1 plugins" in log  # SessionStart, UserPromptSubmit, Stop
    assert re.search(r"Hook SessionStart \(.*recall-tui-hook:.*\) provided additionalContext", log)
    assert log.count("Successfully parsed and validated hook JSON output") >= 2
