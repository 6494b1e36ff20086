"""The flight recorder (recall_tui/agent/log.py) and the active configuration
(recall_tui/agent/active.py): concurrent writers, size and age bounds, switching it off,
filters, newest first; atomic writes and safe defaults for active.json."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from datetime import datetime, timedelta, timezone

from recall_tui.agent.active import read_active, resolve, write_active
from recall_tui.agent.log import (
    AgentRecall,
    append_recall,
    log_dir,
    new_id,
    now_iso,
    prune,
    read_agent_log,
)


def _rec(i: int, session: str = "s", t: str | None = None) -> AgentRecall:
    return AgentRecall(id=new_id(), time=t or now_iso(), served_by="hook", event="UserPromptSubmit",
                       session_id=session, prompt=f"prompt {i} " + "x" * 50, injected_ids=[f"m{i}"],
                       injected_text="text", trace_dict=None)


def _writer(vault: str, n: int, tag: str) -> None:
    for i in range(n):
        append_recall(vault, _rec(i, session=tag))


def test_concurrent_writers_never_interleave(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), 150, f"w{k}")) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = (log_dir(tmp_path) / "recalls.jsonl").read_bytes().splitlines()
    assert len(lines) == 600
    for line in lines:
        json.loads(line)  # every line whole
    recs = read_agent_log(tmp_path)
    assert len(recs) == 600 and {r.session_id for r in recs} == {"w0", "w1", "w2", "w3"}
    assert [r.time for r in recs] == sorted((r.time for r in recs), reverse=True)
    assert oct(os.stat(log_dir(tmp_path) / "recalls.jsonl").st_mode & 0o777) == "0o600"


def test_size_bound_rolls_and_prunes_segments(tmp_path):
    write_active(tmp_path, log={"max_mb": 0.002, "max_segments": 3, "max_days": 30})
    for i in range(60):
        assert append_recall(tmp_path, _rec(i))
    segs = sorted(log_dir(tmp_path).glob("recalls-*.jsonl"))
    assert 1 <= len(segs) <= 3
    cur = log_dir(tmp_path) / "recalls.jsonl"
    assert not cur.exists() or cur.stat().st_size < 2000  # rolled as soon as it passed the bound
    recs = read_agent_log(tmp_path)
    assert recs and recs[0].prompt.startswith("prompt 59 ")  # the newest is kept
    assert len(recs) < 60  # the oldest segments were dropped


def test_age_bound_drops_old_segments(tmp_path):
    folder = log_dir(tmp_path)
    folder.mkdir(parents=True)
    old = folder / "recalls-20200101T000000000000.jsonl"
    old.write_text(json.dumps(_rec(1).to_dict()) + "\n")
    past = time.time() - 40 * 86400
    os.utime(old, (past, past))
    prune(tmp_path)
    assert not old.exists()


def test_recording_can_be_switched_off(tmp_path, monkeypatch):
    write_active(tmp_path, preset="default", log={"enabled": False})
    assert append_recall(tmp_path, _rec(1)) is False
    assert read_agent_log(tmp_path) == []
    write_active(tmp_path, log={"enabled": True})
    monkeypatch.setenv("RECALL_TUI_AGENT_LOG", "off")
    assert append_recall(tmp_path, _rec(1)) is False


def test_filters_and_broken_lines(tmp_path):
    now = datetime.now(timezone.utc)
    old = (now - timedelta(days=2)).isoformat().replace("+00:00", "Z")
    append_recall(tmp_path, _rec(1, session="alpha-123", t=old))
    append_recall(tmp_path, _rec(2, session="beta-456"))
    with open(log_dir(tmp_path) / "recalls.jsonl", "ab") as fh:
        fh.write(b'{"id": "half-writ')  # a disk that filled mid-line
    assert [r.session_id for r in read_agent_log(tmp_path)] == ["beta-456", "alpha-123"]
    assert [r.session_id for r in read_agent_log(tmp_path, session="alpha")] == ["alpha-123"]
    assert [r.session_id for r in read_agent_log(tmp_path, since=now - timedelta(hours=1))] == ["beta-456"]
    assert len(read_agent_log(tmp_path, limit=1)) == 1


def test_unwritable_log_does_not_raise(tmp_path):
    (tmp_path / ".recall").mkdir()
    (tmp_path / ".recall" / "agent").write_text("a file where the folder should be")
    assert append_recall(tmp_path, _rec(1)) is False


def test_active_configuration_defaults_and_atomic_writes(tmp_path):
    assert tuple(read_active(tmp_path)) == ("default", "auto", "default")
    write_active(tmp_path, preset="memoryvault", set_by="test")
    act = read_active(tmp_path)
    assert (act.preset, act.embedder) == ("memoryvault", "auto")
    assert act.source.endswith("active.json")
    write_active(tmp_path, embedder="none")
    assert tuple(read_active(tmp_path))[:2] == ("memoryvault", "none")
    assert resolve(tmp_path, preset="bastra") == ("bastra", "none", "flag")
    assert sorted(p.name for p in (tmp_path / ".recall").iterdir()) == [
        ".gitignore", "active.json"]  # no temp left
    (tmp_path / ".recall" / "active.json").write_text("{broken")
    assert tuple(read_active(tmp_path)) == ("default", "auto", "default")
    try:
        write_active(tmp_path, embedder="gpu")
    except ValueError as exc:
        assert "unknown embedder 'gpu'" in str(exc)
    else:
        raise AssertionError("an unknown embedder was accepted")


def test_log_tail_sees_new_records_across_a_roll_over(tmp_path):
    from recall_tui.agent.log import LogTail

    append_recall(tmp_path, _rec(0))
    tail = LogTail(tmp_path)
    assert tail.poll() == []  # starts at the end
    append_recall(tmp_path, _rec(1))
    append_recall(tmp_path, _rec(2))
    assert [r.prompt.split()[1] for r in tail.poll()] == ["1", "2"]
    assert tail.poll() == []
    write_active(tmp_path, log={"max_mb": 0.0005})  # the next append rolls the file over
    append_recall(tmp_path, _rec(3))
    append_recall(tmp_path, _rec(4))
    assert list(log_dir(tmp_path).glob("recalls-*.jsonl")), "the log did not roll over"
    assert [r.prompt.split()[1] for r in tail.poll()] == ["3", "4"]
