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


# --- never block, never stall ------------------------------------------------------------


def test_an_argument_error_warns_and_exits_zero(vault_copy):
    """Exit 2 from a hook means "block and erase the prompt" to Claude Code: an unknown flag,
    a bad --embedder, a flag without its value are warnings; the recall still runs."""
    for i, extra in enumerate((("--frobnicate", "3"), ("--embedder", "bogus"),
                               ("--embedder=bogus", "--k", "x"), ("--budget-ms",))):
        r = run_hook("prompt-submit", vault_copy, prompt_payload("postgres major upgrade analyze", f"s{i}"),
                     "--no-serve", *extra)
        assert r.returncode == 0, (extra, r.stderr)
        assert "a hook never blocks the prompt" in r.stderr or "using the preset's k" in r.stderr, extra
        assert "(lesson-pg-upgrade-analyze)" in context_of(r), extra
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "install", "--vault",
                        str(vault_copy), "--embedder", "bogus"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "invalid choice" in r.stderr  # a person typed it: a usage error


def test_a_hung_service_costs_a_prompt_the_client_timeout_then_recalls_here(vault_copy):
    """A real `recall-tui serve`, stopped with SIGSTOP: the hook gives up on it (well within
    Claude Code's 30 s), recalls in its own process, and says so; `serve --status` and
    `serve --stop` see the stopped service."""
    import signal

    from recall_tui.agent import client
    from recall_tui.agent.log import read_agent_log

    env = {k: v for k, v in os.environ.items() if k != "RECALL_TUI_SERVE"}
    serve = subprocess.Popen([sys.executable, "-m", "recall_tui", "serve", "--vault", str(vault_copy),
                              "--idle", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=env, start_new_session=True)
    try:
        assert client.wait_ready(vault_copy, timeout=240) is not None, "the service never answered"
        os.kill(serve.pid, signal.SIGSTOP)
        r = run_hook("prompt-submit", vault_copy, prompt_payload("postgres major upgrade analyze"), env=env)
        assert "(lesson-pg-upgrade-analyze)" in context_of(r)
        assert f"no answer within {client.HOOK_SERVICE_TIMEOUT_S:g} s" in r.stderr, r.stderr
        assert "recalling in this process" in r.stderr
        rec = read_agent_log(vault_copy)[0]
        assert rec.path == "in-process" and "lesson-pg-upgrade-analyze" in rec.injected_ids
        # the next prompt does not wait for it again
        r = run_hook("prompt-submit", vault_copy, prompt_payload("proxmox 8 upgrade on atlas"), env=env)
        assert "(homelab-proxmox-8-upgrade)" in context_of(r)
        assert "did not answer in the last" in r.stderr and "no answer within" not in r.stderr
        status = subprocess.run([sys.executable, "-m", "recall_tui", "serve", "--status", "--vault",
                                 str(vault_copy)], capture_output=True, text=True, timeout=60)
        assert status.returncode == 0 and f"pid {serve.pid}" in status.stdout, status.stdout
        stop = subprocess.run([sys.executable, "-m", "recall_tui", "serve", "--stop", "--vault",
                               str(vault_copy)], capture_output=True, text=True, timeout=60)
        assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stdout + stop.stderr
        serve.wait(timeout=60)
    finally:
        if serve.poll() is None:
            os.kill(serve.pid, signal.SIGKILL)
            serve.wait(timeout=30)


# --- what is injected --------------------------------------------------------------------


def test_the_cap_counts_utf16_units_as_claude_code_does():
    from recall_tui.agent.hooks import Block, fit, prompt_head, utf16_len

    emoji = "\U0001F680" * 900  # 900 characters, 1,800 UTF-16 units
    blocks = [Block(f"m{i}", f"### note {i} (m{i})\n{emoji}\n") for i in range(8)]
    text, ids, left = fit(prompt_head, blocks, MAX_CONTEXT)
    assert utf16_len(text) <= MAX_CONTEXT < 10_000
    assert len(ids) == 5 and len(left) == 3  # counted in characters, 8 would have "fit"
    assert len(text) < 5_000 and utf16_len("\ud800") == 1  # a lone surrogate is one unit


def test_emoji_heavy_always_load_stays_under_10000_utf16_units(tmp_path):
    from recall_tui.agent.hooks import utf16_len

    vault = tmp_path / "vault"
    for i in range(12):
        _write_memory(vault / "_always-load", i, "\U0001F389 party " * 150)
    ctx = context_of(run_hook("session-start", vault, start_payload("startup"), env=NO_SERVE))
    assert utf16_len(ctx) <= MAX_CONTEXT and "left out" in ctx.splitlines()[-1]


def test_the_hook_asks_for_exactly_k_and_records_the_exclusions(vault_copy):
    """The always-load entries are excluded by the filter (with a reason the trace keeps), not
    fetched and cut: the engine is asked for the k the hook injects."""
    from recall_tui.agent.log import read_agent_log

    r = run_hook("prompt-submit", vault_copy, prompt_payload("production kubectl safety rules"),
                 "--no-serve", "--k", "3")
    ids = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"].splitlines()[0]
    rec = read_agent_log(vault_copy)[0]
    trace = rec.trace
    assert trace.k == 3 and [h.id for h in trace.hits] == rec.injected_ids and len(rec.injected_ids) == 3
    assert ids == "Loaded 3 relevant entries: " + ", ".join(rec.injected_ids)
    drops = {d.id: d.reason for d in trace.stage("filter").dropped}
    always = {p.stem for p in (vault_copy / "_always-load").glob("*.md")}
    assert "prod-safety-rules" in drops, drops
    assert drops["prod-safety-rules"] == "excluded by the caller: always-load (injected at session start)"
    assert not always & set(rec.injected_ids)
    parse = dict(trace.stage("query.parse").info)
    assert set(parse["filter exclude"].split(",")) == always  # in the log entry, to reproduce
    q = subprocess.run([sys.executable, "-m", "recall_tui", "query", trace.query, "--vault", str(vault_copy),
                        "--k", str(trace.k), "--now", trace.now, "--preset", trace.preset,
                        "--embedder", rec.embedder, "--exclude", parse["filter exclude"], "--json"],
                       capture_output=True, text=True, timeout=180)
    assert q.returncode == 0, q.stderr
    assert [h["id"] for h in json.loads(q.stdout)["hits"]] == rec.injected_ids  # `query` reproduces it


def test_a_session_does_not_get_the_same_memory_twice_within_the_window(vault_copy):
    from recall_tui.agent.log import read_agent_log

    prompt = "postgres major upgrade analyze"
    want = "lesson-pg-upgrade-analyze"

    def ask(session: str = "w1", *extra: str) -> list[str]:
        r = run_hook("prompt-submit", vault_copy, prompt_payload(prompt, session), "--no-serve", *extra)
        assert r.returncode == 0, r.stderr
        return read_agent_log(vault_copy)[0].injected_ids

    assert want in ask()  # prompt 1
    second = ask()  # prompt 2: not again, and still k entries
    assert want not in second and len(second) == 5
    rec = read_agent_log(vault_copy)[0]
    reason = {d.id: d.reason for d in rec.trace.stage("filter").dropped}[want]
    assert reason.startswith("excluded by the caller: injected at prompt 1 of this session")
    assert want not in ask()  # prompt 3
    assert want in ask()  # prompt 4 = 1 + the window of 3
    assert want in ask("other-session")  # another session has its own window
    assert want not in ask()  # prompt 5
    r = run_hook("session-start", vault_copy, start_payload("compact", "w1"), "--no-serve")
    assert r.returncode == 0
    assert want in ask()  # compaction re-armed it
    assert want in ask("w1", "--repeat-window", "0")  # 0: off


def test_a_lone_surrogate_in_the_prompt_is_recalled_and_logged(vault_copy):
    from recall_tui.agent.log import read_agent_log

    payload = json.dumps(prompt_payload("postgres major upgrade analyze")).replace(
        "analyze", "analyze \\ud800")
    assert "\\ud800" in payload
    r = run_hook("prompt-submit", vault_copy, payload, "--no-serve")
    assert "(lesson-pg-upgrade-analyze)" in context_of(r)
    rec = read_agent_log(vault_copy)[0]
    assert rec.prompt == "postgres major upgrade analyze \ufffd"
