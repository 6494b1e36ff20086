"""A re-read in the same process takes an unchanged session log's turns from what the last read
parsed; any write to the log (even one that keeps its size and sets its modification time
back) makes it parse the log again, and a log's problems are reported on every read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recall_tui.vault import digests
from recall_tui.vault.reader import read_vault

MEMORY = """---
id: the-capacity-plan
title: The capacity plan
type: decision
created: 2026-01-05
---
We plan capacity every quarter.
"""


def _log(texts: list[str]) -> str:
    lines = [json.dumps({"seq": i, "role": "user" if i % 2 == 0 else "assistant", "text": t})
             for i, t in enumerate(texts)]
    return "\n".join(lines) + "\nnot json\n"


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(digests, "_RACY_NS", 0)  # keep logs written a moment ago
    (tmp_path / "decisions").mkdir()
    (tmp_path / "decisions" / "the-capacity-plan.md").write_text(MEMORY, encoding="utf-8")
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s1.jsonl").write_text(_log(["alpha one", "beta two"]),
                                                    encoding="utf-8")
    (tmp_path / "sessions" / "s2.jsonl").write_text(_log(["gamma"]), encoding="utf-8")
    return tmp_path


def _by_session(v) -> dict[str, list]:
    out: dict[str, list] = {}
    for t in v.turns:
        out.setdefault(t.session_id, []).append(t)
    return out


def test_an_unchanged_log_gives_the_same_turns_and_problems(vault: Path):
    first = read_vault(vault)
    again = read_vault(vault)
    a, b = _by_session(first), _by_session(again)
    assert [t.text for t in a["s1"]] == ["alpha one", "beta two"]
    assert all(x is y for x, y in zip(a["s1"], b["s1"], strict=True))
    bad = [p for p in again.problems if p.path.startswith("sessions/")]
    assert [(p.path, p.line) for p in bad] == [("sessions/s1.jsonl", 3), ("sessions/s2.jsonl", 2)]
    assert len(bad) == len([p for p in first.problems if p.path.startswith("sessions/")])


def test_a_rewrite_that_keeps_size_and_mtime_is_parsed_again(vault: Path):
    log = vault / "sessions" / "s1.jsonl"
    before = read_vault(vault)
    st = log.stat()
    log.write_text(_log(["alpha ONE", "beta two"]), encoding="utf-8")  # same size
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same modification time
    assert log.stat().st_size == st.st_size and log.stat().st_mtime_ns == st.st_mtime_ns
    after = read_vault(vault)
    assert [t.text for t in _by_session(after)["s1"]] == ["alpha ONE", "beta two"]
    # the other log was not touched: its turns are the ones read before
    assert _by_session(after)["s2"][0] is _by_session(before)["s2"][0]


def test_a_log_written_within_the_racy_window_is_not_kept(vault: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(digests, "_RACY_NS", 10**15)  # every log counts as just written
    first, again = read_vault(vault), read_vault(vault)
    assert _by_session(first)["s1"][0] is not _by_session(again)["s1"][0]
    assert _by_session(first)["s1"][0] == _by_session(again)["s1"][0]
