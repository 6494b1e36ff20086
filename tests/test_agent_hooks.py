"""The Claude Code hooks as Claude Code runs them: payloads shaped as its hooks reference shows
(SessionStart startup/resume, UserPromptSubmit), four prompts at once on a fresh vault, the
local embedder's clean exit, the 10,000-character cap, the flight recorder, `hook install`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.agent.hooks import MAX_CONTEXT


def run_hook(event: str, vault: Path, payload: dict | str, *extra: str, env: dict | None = None,
             timeout: float = 180) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "recall_tui", "hook", event, "--vault", str(vault), *extra],
                          input=stdin, capture_output=True, text=True, timeout=timeout, env=e)


def start_payload(source: str, session: str = "sess-1") -> dict:
    return {"session_id": session, "transcript_path": f"/home/u/.claude/projects/x/{session}.jsonl",
            "cwd": "/home/u/code/billing", "hook_event_name": "SessionStart", "source": source}


def prompt_payload(prompt: str, session: str = "sess-1") -> dict:
    return {"session_id": session, "transcript_path": f"/home/u/.claude/projects/x/{session}.jsonl",
            "cwd": "/home/u/code/billing", "hook_event_name": "UserPromptSubmit", "prompt": prompt}


def context_of(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    return out["hookSpecificOutput"]["additionalContext"]


NO_SERVE = {"RECALL_TUI_SERVE": "off"}


def test_session_start_on_startup_not_on_resume(session_vault_copy):
    ctx = context_of(run_hook("session-start", session_vault_copy, start_payload("startup"), env=NO_SERVE))
    assert ctx.startswith("Loaded 5 MemoryVault always-load entries")
    assert "(prod-safety-rules)" in ctx
    # two of the five are type instruction: framed as the user's standing instructions
    assert "not instructions" not in ctx
    assert "Entries of type instruction are the user's standing instructions" in ctx.splitlines()[1]
    r = run_hook("session-start", session_vault_copy, start_payload("resume"), env=NO_SERVE)
    assert context_of(r) == ""
    assert "systemMessage" not in json.loads(r.stdout)
    r = run_hook("session-start", session_vault_copy, start_payload("resume"), "--sources",
                 "startup,resume", "--transparency", env=NO_SERVE)
    assert context_of(r).startswith("Loaded 5 ")
    assert json.loads(r.stdout)["systemMessage"] == "Loaded 5 MemoryVault always-load entries"


def test_prompt_submit_reads_the_prompt_and_records_it(vault_copy):
    r = run_hook("prompt-submit", vault_copy, prompt_payload("postgres major upgrade analyze"),
                 env=NO_SERVE)
    ctx = context_of(r)
    assert "(lesson-pg-upgrade-analyze)" in ctx and len(ctx) < 10_000
    assert "systemMessage" not in json.loads(r.stdout)
    log = subprocess.run([sys.executable, "-m", "recall_tui", "log", "--vault", str(vault_copy), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert log.returncode == 0, log.stderr
    recs = [json.loads(line) for line in log.stdout.splitlines()]
    assert len(recs) == 1
    rec = recs[0]
    assert rec["prompt"] == "postgres major upgrade analyze" and rec["session_id"] == "sess-1"
    assert rec["served_by"] == "hook" and rec["event"] == "UserPromptSubmit"
    assert "lesson-pg-upgrade-analyze" in rec["injected_ids"] and rec["injected_text"] == ctx
    assert rec["trace"]["query"] == "postgres major upgrade analyze" and len(rec["config_hash"]) == 64
    assert rec["cwd"] == "/home/u/code/billing"
    human = subprocess.run([sys.executable, "-m", "recall_tui", "log", "--vault", str(vault_copy),
                            "--session", "sess"], capture_output=True, text=True, timeout=60)
    assert "lesson-pg-upgrade-analyze" in human.stdout and "postgres major upgrade analyze" in human.stdout


def test_hook_follows_the_active_preset(vault_copy):
    r = subprocess.run([sys.executable, "-m", "recall_tui", "preset", "use", "memoryvault",
                        "--embedder", "none", "--vault", str(vault_copy)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    context_of(run_hook("prompt-submit", vault_copy, prompt_payload("kubectl production"), env=NO_SERVE))
    from recall_tui.agent.log import read_agent_log

    rec = read_agent_log(vault_copy)[0]
    assert (rec.preset, rec.embedder) == ("memoryvault", "none")
    assert rec.trace.preset == "memoryvault"


def test_local_embedder_exits_zero(vault_copy):
    for _ in range(2):  # it aborted with 134 in 2 of 2 runs before
        r = run_hook("prompt-submit", vault_copy, prompt_payload("postgres upgrade"),
                     "--embedder", "local", "--no-serve")
        assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
        assert "terminate called" not in r.stderr
        assert "relevant entries" in context_of(r)
    from recall_tui.agent.log import read_agent_log

    assert read_agent_log(vault_copy)[0].embedder == "local"


PROMPTS = {"postgres major upgrade analyze": "lesson-pg-upgrade-analyze",
           "proxmox 8 upgrade on atlas": "homelab-proxmox-8-upgrade",
           "Ingrid the freelance DBA": "ingrid-sorensen",
           "RDS blue green switchover for PG16": "billing-pg16-upgrade"}


def test_four_prompts_at_once_on_a_fresh_vault(bare_vault_copy):
    """Four prompt hooks at the same moment on a fresh vault (no index, no service): one
    service starts for the next prompts, and each of the four injects its memory now."""
    env = dict(os.environ)
    env["RECALL_TUI_SERVE_IDLE"] = "5"
    procs = [subprocess.Popen([sys.executable, "-m", "recall_tui", "hook", "prompt-submit",
                               "--vault", str(bare_vault_copy)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in PROMPTS]
    for i, (p, prompt) in enumerate(zip(procs, PROMPTS, strict=True)):
        p.stdin.write(json.dumps(prompt_payload(prompt, session=f"s{i}")))
        p.stdin.close()
        p.stdin = None  # written: communicate() only reads
    try:
        for p, (prompt, want) in zip(procs, PROMPTS.items(), strict=True):
            out, err = p.communicate(timeout=240)
            assert p.returncode == 0, err
            ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            assert f"({want})" in ctx, f"{prompt!r}: {want} not injected:\n{ctx}\n{err}"
    finally:
        _stop_service(bare_vault_copy)
    from recall_tui.agent.log import read_agent_log

    assert sorted(r.session_id for r in read_agent_log(bare_vault_copy)) == ["s0", "s1", "s2", "s3"]


def _stop_service(vault: Path) -> None:
    """End a service a hook started (by the pid in its lock file), so no test leaves one."""
    import signal

    from tests.waiting import wait_until_sync

    lock = vault / ".recall" / "serve.lock"
    from recall_tui.agent.client import is_starting_or_running

    def stopped() -> bool:
        if not is_starting_or_running(vault):
            return True
        try:
            pid = int(lock.read_text().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        return False

    try:
        wait_until_sync(stopped, "the hook's service to stop", timeout=30, interval=0.2)
    except AssertionError:
        pass  # best effort: the service also exits by itself when idle


def _write_memory(folder: Path, i: int, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"big-{i:02d}.md").write_text(
        f"---\nid: big-{i:02d}\ntitle: Big note {i}\ntype: fact\nscope: global\n"
        f"summary: Big note number {i}.\ncreated: 2026-01-01\nupdated: 2026-01-02\n---\n\n{body}\n",
        encoding="utf-8")


def test_context_is_cut_at_memory_boundaries_under_10000(tmp_path):
    vault = tmp_path / "vault"
    for i in range(20):
        _write_memory(vault / "_always-load", i, f"Paragraph {i}. " + "word " * 160)
    r = run_hook("session-start", vault, start_payload("startup"), env=NO_SERVE)
    ctx = context_of(r)
    assert len(ctx) < 10_000 and len(ctx) <= MAX_CONTEXT
    blocks = [b for b in ctx.split("### ")[1:]]
    shown = len(blocks)
    assert 5 < shown < 20
    assert ctx.startswith(f"Loaded {shown} MemoryVault always-load entries")
    assert f"({20 - shown} more relevant memories were left out" in ctx.splitlines()[-1]
    for b in blocks[:-1]:  # every shown memory is whole
        assert b.rstrip().endswith("word")
    from recall_tui.agent.log import read_agent_log

    rec = read_agent_log(vault)[0]
    assert len(rec.injected_ids) == shown and len(rec.left_out_ids) == 20 - shown


def test_bad_payload_and_missing_vault_still_exit_zero(tmp_path):
    r = run_hook("prompt-submit", tmp_path / "missing", "not json", env=NO_SERVE)
    assert r.returncode == 0 and "no such vault folder" in r.stderr
    assert context_of(r) == ""
    r = run_hook("session-start", tmp_path, "[1, 2]", env=NO_SERVE)  # an empty vault
    assert context_of(r).startswith("Loaded 0 ")


@pytest.mark.parametrize("event", ["session-start", "prompt-submit"])
def test_no_pickle_cache_is_written(vault_copy, event, tmp_path):
    run_hook(event, vault_copy, prompt_payload("postgres"), env=NO_SERVE)
    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert not list(cache.rglob("*.pickle")) and not list(vault_copy.rglob("*.pickle"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders anyway")
def test_read_only_vault_still_injects(tmp_path, sample_vault_path):
    import shutil
    import stat as st

    vault = tmp_path / "ro"
    shutil.copytree(sample_vault_path, vault, ignore=shutil.ignore_patterns(".recall"))
    (vault / ".recall").mkdir()
    for p in [vault, *vault.rglob("*")]:
        if p.is_dir():
            p.chmod(st.S_IRUSR | st.S_IXUSR)
    try:
        r = run_hook("prompt-submit", vault, prompt_payload("postgres major upgrade analyze"))
        assert "(lesson-pg-upgrade-analyze)" in context_of(r)
    finally:
        for p in [vault, *vault.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
