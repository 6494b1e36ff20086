"""The flight recorder (recall_tui/agent/log.py) and the active configuration
(recall_tui/agent/active.py): concurrent writers, size and age bounds, switching it off,
filters, newest first; atomic writes and safe defaults for active.json."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from datetime import datetime, timedelta, timezone

import pytest

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


def test_reading_the_last_n_costs_n_not_the_whole_log(tmp_path, monkeypatch):
    """`--limit N` reads from the end: on a log of 3,000 records (two segments) the newest 5
    are found after parsing a handful of lines, and `find_recall` parses only its match."""
    from recall_tui.agent import log as L

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    folder = log_dir(tmp_path)
    folder.mkdir(parents=True)
    recs = [_rec(i, t=(start + timedelta(minutes=2 * i)).isoformat().replace("+00:00", "Z"))
            for i in range(3000)]
    lines = [json.dumps(r.to_dict(), separators=(",", ":")) + "\n" for r in recs]
    (folder / "recalls-20260101T000000000000.jsonl").write_text("".join(lines[:2000]))
    (folder / "recalls.jsonl").write_text("".join(lines[2000:]))
    parsed = []
    real = L._parse
    monkeypatch.setattr(L, "_parse", lambda raw: parsed.append(raw) or real(raw))
    got = read_agent_log(tmp_path, limit=5)
    assert [r.prompt.split()[1] for r in got] == ["2999", "2998", "2997", "2996", "2995"]
    assert len(parsed) <= 10, len(parsed)
    parsed.clear()
    assert L.find_recall(tmp_path, recs[10].id).id == recs[10].id  # in the old segment
    assert len(parsed) == 1
    assert L.find_recall(tmp_path, "") is None and L.find_recall(tmp_path, "zz") is None
    parsed.clear()
    every = read_agent_log(tmp_path)
    assert len(every) == 3000 and every[0].id == recs[-1].id and every[-1].id == recs[0].id


def test_lone_surrogates_are_recorded_as_replacement_characters(tmp_path):
    rec = _rec(1)
    rec.prompt = "postgres \ud800 upgrade"
    rec.injected_text = "text \udfff"
    assert append_recall(tmp_path, rec)
    got = read_agent_log(tmp_path)[0]
    assert got.prompt == "postgres \ufffd upgrade" and got.injected_text == "text \ufffd"


def test_preset_dirs_mirror_the_engine(tmp_path):
    from recall_tui.agent.active import preset_dirs
    from recall_tui.engine.config import preset_dirs as engine_dirs

    assert preset_dirs(tmp_path) == engine_dirs(tmp_path)
    assert preset_dirs(None) == engine_dirs(None)


def test_config_watch_follows_content_not_name(tmp_path):
    from recall_tui.agent.active import ConfigWatch, resolve_active

    presets = tmp_path / ".recall" / "presets"
    presets.mkdir(parents=True)
    (presets / "base.toml").write_text('extends = "default"\nk = 3\n')
    (presets / "mine.toml").write_text('extends = "base"\nk = 4\n')
    write_active(tmp_path, preset="mine")
    w = ConfigWatch(tmp_path)
    assert not w.changed()
    (presets / "base.toml").write_text('extends = "default"\nk = 3\n[keyword]\ntitle = 2.0\n')
    assert w.changed() and not w.changed()  # a change in the preset it extends counts
    (presets / "mine.toml").write_text('extends = "base"\nk = 5\n')
    assert w.changed()
    os.utime(presets / "mine.toml")  # touched, same content: no reload
    assert not w.changed()
    assert resolve_active(tmp_path) == (("mine", "auto", str(tmp_path / ".recall" / "active.json")), "")
    (presets / "mine.toml").unlink()
    assert w.changed()
    act, warning = resolve_active(tmp_path)
    assert act.preset == "default" and "active preset 'mine'" in warning and "not found" in warning
    assert resolve_active(tmp_path, preset="bastra")[1] == ""  # a flag is the caller's to check


@pytest.fixture()
def logged_vault(bare_vault_copy):
    """A vault with two recorded recalls made in-process (no index, no embedder)."""
    from recall_tui.agent.core import RecallCore

    write_active(bare_vault_copy, preset="default", embedder="none")
    core = RecallCore(bare_vault_copy, index="none")
    try:
        trace, rec = core.recall_for_agent("postgres major upgrade analyze", k=5,
                                           types=("lesson", "event", "project-fact"))
        rec.injected_ids = [h.id for h in trace.hits]
        rec.injected_text = "exact text \x1b[31mred\x1b[0m\n### second line"
        core.record(rec)
        _, why = core.recall_for_agent("postgres upgrade", event="why_not", why=("billing-db-postgres14",))
        why.about_ids = ["billing-db-postgres14"]
        core.record(why)
    finally:
        core.close()
    return bare_vault_copy, rec, why


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    from recall_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_log_show_opens_one_entry_literally(logged_vault, capsys):
    vault, rec, why = logged_vault
    code, out, _ = _cli(capsys, "log", "show", rec.id[:8], "--vault", str(vault))
    assert code == 0
    assert f"{rec.id}  mcp/recall" in out and "prompt:   postgres major upgrade analyze" in out
    assert "preset default  embedder none" in out and "k 5  now " in out
    assert "filters types=('lesson', 'event', 'project-fact')" in out
    assert "injected: " + ", ".join(rec.injected_ids) in out
    assert "\x1b" not in out and "exact text ␛[31mred␛[0m\n### second line" in out
    code, out, _ = _cli(capsys, "log", "--vault", str(vault), "show", why.id)
    assert code == 0 and "about:    billing-db-postgres14 (why_not: nothing injected)" in out
    code, out, _ = _cli(capsys, "log", "--vault", str(vault))
    assert "about billing-db-postgres14" in out and "-> " + ", ".join(rec.injected_ids) in out
    code, _, err = _cli(capsys, "log", "show", "nosuchid", "--vault", str(vault))
    assert code == 1 and "no single entry with id 'nosuchid'" in err


def test_log_show_rerun_prints_the_difference(logged_vault, capsys):
    vault, rec, _ = logged_vault
    code, out, _ = _cli(capsys, "log", "show", rec.id, "--vault", str(vault), "--rerun")
    assert code == 0 and "re-run under preset default" in out and "same ids in the same order" in out
    code, out, _ = _cli(capsys, "log", "show", rec.id, "--vault", str(vault), "--rerun", "memoryvault", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == rec.id and data["injected_text"] == rec.injected_text
    rr = data["rerun"]
    assert rr["preset"] == "memoryvault" and rr["diff"]["before"] == [h.id for h in rec.trace.hits]
    from recall_tui.agent.rerun import filters_of
    from recall_tui.engine import Engine, Filters
    from recall_tui.engine.config import load_preset
    from recall_tui.engine.trace import trace_time
    from recall_tui.vault.reader import read_vault

    assert filters_of(rec.trace) == Filters(types=("lesson", "event", "project-fact"))
    eng = Engine(read_vault(vault, cache=False), None, load_preset("memoryvault", vault), preset="memoryvault")
    expect = [h.id for h in eng.recall(rec.trace.query, k=5, now=trace_time(rec.trace.now),
                                       filters=filters_of(rec.trace)).hits]
    d = rr["diff"]
    assert d["after"] == expect
    assert d["gained"] == [i for i in expect if i not in d["before"]]
    assert d["lost"] == [i for i in d["before"] if i not in expect]
    moved = {m["id"]: (m["from"], m["to"]) for m in d["moved"]}
    for i in set(expect) & set(d["before"]):
        a, b = d["before"].index(i) + 1, expect.index(i) + 1
        assert (a != b) == (i in moved) and (i not in moved or moved[i] == (a, b))
    if d["gained"] or d["lost"] or d["moved"]:
        code, out, _ = _cli(capsys, "log", "show", rec.id, "--vault", str(vault), "--rerun", "memoryvault")
        assert all(f"  + {i} " in out for i in d["gained"]) and all(f"  - {i} " in out for i in d["lost"])
    code, _, err = _cli(capsys, "log", "show", rec.id, "--vault", str(vault), "--rerun", "nope")
    assert code == 2 and "unknown preset 'nope'" in err


def test_core_keeps_recalling_through_a_broken_or_missing_preset(bare_vault_copy):
    from recall_tui.agent.core import RecallCore

    vault = bare_vault_copy
    presets = vault / ".recall" / "presets"
    presets.mkdir(parents=True)
    mine = presets / "mine.toml"
    mine.write_text('extends = "default"\nk = 3\n')
    write_active(vault, preset="mine", embedder="none")
    core = RecallCore(vault, index="none")
    try:
        assert (core.preset, core.warning) == ("mine", "")
        assert len(core.recall("postgres upgrade").hits) == 3
        mine.write_text('extends = "default"\nk = [broken\n')  # half-saved
        assert core.refresh_config() is False
        assert "preset 'mine' cannot be loaded" in core.warning and "still recalling with 'mine'" in core.warning
        assert len(core.recall("postgres upgrade").hits) == 3
        mine.write_text('extends = "default"\nk = 4\n')
        assert core.refresh_config() is True and core.warning == ""
        assert len(core.recall("postgres upgrade").hits) == 4
        mine.unlink()
        assert core.refresh_config() is True and core.preset == "default"
        assert "active preset 'mine'" in core.warning
    finally:
        core.close()
    mine.write_text("k = [broken\n")
    core = RecallCore(vault, index="none")
    try:
        assert core.preset == "default" and "cannot be loaded" in core.warning
    finally:
        core.close()
