"""The warm recall service (`recall-tui serve`): owner-only socket under `.recall/`, several
clients at once, hooks served by it with a client path that imports no numpy/apsw/onnxruntime,
the active configuration and changes on disk followed, one service per vault, idle exit."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recall_tui.agent import client
from recall_tui.agent.active import write_active
from recall_tui.agent.log import read_agent_log
from tests.waiting import wait_until_sync

pytestmark = pytest.mark.slow  # each test starts a real service process


def wait_for(cond, timeout: float, what: str):
    return wait_until_sync(cond, what, timeout, interval=0.1)


def logged(vault, session: str):
    """The newest record of `session`: the service writes it once the answer is sent, so it
    may land just after the hook's process exits."""
    wait_for(lambda: read_agent_log(vault, session=session), 30, f"the record of {session}")
    return read_agent_log(vault, session=session)[0]


@pytest.fixture()
def service(vault_copy):
    write_active(vault_copy, embedder="none")  # keep the test's CPU low; the path is the same
    p = subprocess.Popen([sys.executable, "-m", "recall_tui", "serve", "--vault", str(vault_copy),
                          "--idle", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert client.wait_ready(vault_copy, timeout=120), p.stderr.read() if p.poll() is not None else "no answer"
        yield vault_copy, p
    finally:
        p.terminate()
        p.wait(30)


def test_socket_is_owner_only_under_recall(service):
    vault, _ = service
    sock = client.socket_path(vault)
    assert sock == (vault / ".recall" / "serve.sock").resolve()
    st = os.stat(sock)
    assert stat.S_ISSOCK(st.st_mode) and st.st_mode & 0o077 == 0 and st.st_uid == os.getuid()


def test_several_clients_at_once(service):
    vault, _ = service
    results: list[dict] = []
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            results.append(client.request(vault, {"op": "recall", "query": f"postgres upgrade {i}", "k": 3}))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 16
    assert all(r["ok"] and len(r["trace"]["hits"]) == 3 for r in results)


def test_hook_goes_through_the_service_with_a_light_client(service):
    vault, _ = service
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from recall_tui.cli import main\n"
        "rc = main(['hook', 'prompt-submit', '--vault', sys.argv[1]])\n"
        "new = set(sys.modules) - before\n"
        "heavy = sorted(m for m in ('numpy', 'apsw', 'onnxruntime', 'textual', 'rich', 'yaml', 'recall_tui.engine',\n"
        "                          'recall_tui.agent.active', 'recall_tui.cli.hook', 'argparse', 'socket',\n"
        "                          'typing', 'pathlib') if m in new)\n"
        "print('HEAVY=' + repr(heavy), file=sys.stderr)\n"
        "sys.exit(rc)\n")
    payload = {"session_id": "warm-1", "hook_event_name": "UserPromptSubmit",
               "prompt": "postgres major upgrade analyze", "cwd": "/tmp", "transcript_path": "/tmp/t.jsonl"}
    r = subprocess.run([sys.executable, "-c", code, str(vault)], input=json.dumps(payload),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "HEAVY=[]" in r.stderr, r.stderr
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(lesson-pg-upgrade-analyze)" in ctx
    rec = logged(vault, "warm-1")
    assert rec.path == "service" and "lesson-pg-upgrade-analyze" in rec.injected_ids
    # the command `hook install` writes (no `site`, the launcher): the same answer, and the
    # process imports neither `site` nor `json` (whose `re` costs a -S start as much again),
    # nor `os` or the package's `__init__` modules
    from recall_tui.agent.install import hook_argv

    cmd = hook_argv(vault, "prompt-submit", ["--budget-ms", "1e9"])  # (over it, a warning
    assert cmd[1] == "-S"  # imports what it prints with)
    r = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]],
                       input=json.dumps({**payload, "session_id": "warm-2"}), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] == ctx
    loaded = {line.split("|")[-1].strip() for line in r.stderr.splitlines()
              if line.startswith("import time:")}
    assert "_socket" in loaded  # (the launcher loads recall_tui.agent.hook_wire itself)
    heavy = sorted(loaded & {"site", "json", "re", "enum", "numpy", "apsw", "argparse", "socket",
                             "typing", "pathlib", "recall_tui.cli.hook", "os", "recall_tui"})
    assert heavy == [], heavy
    assert logged(vault, "warm-2").path == "service"


def test_follows_active_config_and_vault_changes(service):
    vault, _ = service
    write_active(vault, preset="memoryvault")
    ans = client.request(vault, {"op": "recall", "query": "postgres"})
    assert ans["ok"] and ans["trace"]["preset"] == "memoryvault"
    note = vault / "work" / "zz-fresh-note.md"
    note.write_text("---\nid: zz-fresh-note\ntitle: Quokka migration plan\ntype: fact\nscope: global\n"
                    "summary: The quokka service moves to the new cluster in December.\n"
                    "created: 2026-11-01\nupdated: 2026-11-01\n---\n\nQuokka moves in December.\n",
                    encoding="utf-8")

    def found():
        a = client.request(vault, {"op": "recall", "query": "quokka migration"})
        return "zz-fresh-note" in [h["id"] for h in a["trace"]["hits"]]

    wait_for(found, 60, "the watcher to pick up a new memory")


def test_one_service_per_vault_and_stop(service):
    vault, proc = service
    r = subprocess.run([sys.executable, "-m", "recall_tui", "serve", "--vault", str(vault)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "already runs" in r.stderr
    r = subprocess.run([sys.executable, "-m", "recall_tui", "serve", "--stop", "--vault", str(vault)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    proc.wait(30)
    assert not Path(client.socket_path(vault)).exists()


def test_idle_exit(tmp_path):
    vault = tmp_path / "v"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "a.md").write_text("---\nid: a\ntitle: A\ntype: fact\nscope: global\nsummary: a\n"
                                          "created: 2026-01-01\nupdated: 2026-01-01\n---\n\nA.\n")
    write_active(vault, embedder="none")
    p = subprocess.Popen([sys.executable, "-m", "recall_tui", "serve", "--vault", str(vault), "--idle", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "idle for 1 s; exiting" in err
    assert not client.socket_path(vault).exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_client_refuses_a_socket_another_user_owns(tmp_path):
    import socket as socketlib

    vault = tmp_path / "v"
    (vault / ".recall").mkdir(parents=True)
    path = client.socket_path(vault)
    s = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    s.bind(str(path))
    s.listen(1)
    try:
        os.chown(path, 54321, -1)
        with pytest.raises(client.ServiceUnavailable, match="not a socket of this user"):
            client.request(vault, {"op": "ping"}, timeout=2)
    finally:
        s.close()


def test_bench_hook_mode(tmp_path, sample_vault_path):
    import shutil

    vault = tmp_path / "v"
    shutil.copytree(sample_vault_path, vault, ignore=shutil.ignore_patterns(".recall"))
    write_active(vault, embedder="none")
    out = tmp_path / "hook.json"
    env = dict(os.environ, RECALL_TUI_SERVICE_TIMEOUT="0.5")  # the hung runs wait this long
    r = subprocess.run([sys.executable, "-m", "recall_tui", "bench", "--hook", "--vault", str(vault),
                        "--runs", "4", "--out", str(out)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    assert "warm service" in r.stdout and "hung, waits 0.5 s" in r.stdout
    assert "load average before" in r.stdout and "service RSS" in r.stdout
    data = json.loads(out.read_text())
    assert data["kind"] == "recall-tui-bench-hook" and data["exit_codes"] == [0]
    assert data["warm_ms"]["n"] == 4 and data["in_process_ms"]["n"] == 3
    # every prompt got its memories: served, in-process, and past a hung (SIGSTOPped) service,
    # which the hook gave up on after its wait and then skipped
    assert data["warm_ms"]["injected"] == 4 and data["in_process_ms"]["injected"] == 3
    assert data["hung_first_ms"]["injected"] == 3 and data["hung_next_ms"]["injected"] == 3
    assert "no answer within 0.5 s" in " ".join(data["hung_stderr"])
    assert data["service_timeout_s"] == 0.5 and data["service_rss_mb_after"] > 0
    assert not (vault / ".recall" / "agent").exists()  # the benchmark ran on a copy


def test_follows_a_preset_resaved_under_the_same_name(service):
    """`tune --save mine --overwrite` keeps the name and changes the content: the next recall
    runs with the new knobs (config hash changes); a deleted active preset falls back to
    `default` with a warning in the answer and the log."""
    vault, _ = service
    presets = vault / ".recall" / "presets"
    presets.mkdir(parents=True, exist_ok=True)

    def save(body: str) -> None:
        tmp = presets / ".mine.tmp"
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, presets / "mine.toml")

    save('extends = "default"\nk = 3\n')
    write_active(vault, preset="mine")
    a = client.request(vault, {"op": "recall", "query": "postgres upgrade"})
    assert a["ok"] and a["trace"]["preset"] == "mine" and len(a["trace"]["hits"]) == 3
    save('extends = "default"\nk = 4\n[keyword]\ntitle = 9.0\n')
    b = client.request(vault, {"op": "recall", "query": "postgres upgrade"})
    assert len(b["trace"]["hits"]) == 4 and b["trace"]["config_hash"] != a["trace"]["config_hash"]
    assert not b["warning"]

    (presets / "mine.toml").unlink()
    c = client.request(vault, {"op": "recall", "query": "postgres upgrade"})
    assert c["ok"] and c["trace"]["preset"] == "default"
    assert "active preset 'mine'" in c["warning"] and "not found" in c["warning"]
    payload = {"session_id": "gone-1", "hook_event_name": "UserPromptSubmit", "prompt": "postgres upgrade"}
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "prompt-submit", "--vault", str(vault)],
                       input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "relevant entries" in r.stdout
    assert "active preset 'mine'" in r.stderr and "recalling with 'default'" in r.stderr
    rec = logged(vault, "gone-1")
    assert rec.path == "service" and rec.preset == "default" and "active preset 'mine'" in rec.warning


def test_a_lone_surrogate_in_the_prompt_is_recalled_and_logged(service):
    """`"\\ud800"` is valid JSON but not UTF-8: the warm path used to inject nothing and log
    nothing. Now the surrogate becomes U+FFFD and the recall runs."""
    vault, _ = service
    raw = '{"session_id": "sur-1", "hook_event_name": "UserPromptSubmit", ' \
          '"prompt": "postgres major upgrade \\ud800 analyze"}'
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "prompt-submit", "--vault", str(vault)],
                       input=raw, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "(lesson-pg-upgrade-analyze)" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    rec = logged(vault, "sur-1")
    assert rec.path == "service" and rec.prompt == "postgres major upgrade \ufffd analyze"
    assert "lesson-pg-upgrade-analyze" in rec.injected_ids


def test_fresh_vault_answers_before_its_vectors_exist(bare_vault_copy):
    """No index yet: the service binds its socket once the text is indexed and makes the
    vectors behind it; a recall meanwhile runs without the vector channel and its trace says
    why (`embedding N / M`); once the vectors exist they take part."""
    vault = bare_vault_copy
    p = subprocess.Popen([sys.executable, "-m", "recall_tui", "serve", "--vault", str(vault), "--idle", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert client.wait_ready(vault, timeout=300), p.stderr.read() if p.poll() is not None else "no answer"

        def vector_stage() -> dict:
            ans = client.request(vault, {"op": "recall", "query": "postgres major upgrade analyze", "k": 3})
            assert ans["ok"] and ans["trace"]["hits"], ans
            return next(s for s in ans["trace"]["stages"] if s["name"] == "vector")

        first = vector_stage()
        assert not first["skipped"] or first["reason"].startswith("embedding ")
        wait_for(lambda: not vector_stage()["skipped"], 600, "the vectors to be made")
    finally:
        p.terminate()
        p.wait(120)
    assert p.returncode == 0, p.stderr.read()
