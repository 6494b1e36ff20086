"""Session logs in the reading cache: a fresh process's re-read parses no unchanged log (its
turns come from the log's record, equal to a parse), and any change to a log (lines appended,
the same size and mtime with other content, a truncation) makes it parse the log again. The
fast line parser reports the same problems, with the same file and line, as json.loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.vault import digests, readcache
from recall_tui.vault.model import Problem, Turn, Vault
from recall_tui.vault.readcache import ReadCache, file_key
from recall_tui.vault.reader import read_vault
from recall_tui.vault.walk import _File

MEMORY = """---
id: the-capacity-plan
title: The capacity plan
type: decision
created: 2026-01-05
---
We plan capacity every quarter.
"""


def _line(seq: int, text: str, at: str | None = "2026-03-01T10:00:00Z") -> str:
    obj: dict[str, object] = {"seq": seq, "role": "user" if seq % 2 == 0 else "assistant",
                              "text": text}
    if at is not None:
        obj["at"] = at
    return json.dumps(obj)


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(digests, "_RACY_NS", 0)  # keep logs written a moment ago
    monkeypatch.setattr(readcache, "REMEMBER_READS", False)
    (tmp_path / "decisions").mkdir()
    (tmp_path / "decisions" / "the-capacity-plan.md").write_text(MEMORY, encoding="utf-8")
    (tmp_path / "sessions").mkdir()
    s1 = [_line(0, "alpha one"), _line(1, "beta two", "2026-03-01T10:01:00+02:00"),
          "not json", _line(2, "gamma", None)]
    (tmp_path / "sessions" / "s1.jsonl").write_text("\n".join(s1) + "\n", encoding="utf-8")
    (tmp_path / "sessions" / "s2.jsonl").write_text(_line(0, "delta") + "\n", encoding="utf-8")
    return tmp_path


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session logs parsed (the real parser runs), after forgetting what this process
    parsed before: each read then starts like a fresh process's."""
    digests._SESSIONS.clear()
    seen: list[str] = []
    real = digests._parse_log

    def counting(f: _File, problems: list[Problem],
                 whens: list[str | None] | None = None) -> tuple[list[Turn], str | None]:
        seen.append(f.rel)
        return real(f, problems, whens)

    monkeypatch.setattr(digests, "_parse_log", counting)
    return seen


def _fresh_read(root: Path) -> Vault:
    digests._SESSIONS.clear()  # what a new process starts with
    return read_vault(root, cache=True)


def _turns(v: Vault) -> list[tuple[object, ...]]:
    return [(t.session_id, t.seq, t.role, t.text, t.at, t.path, t.line) for t in v.turns]


def _log_problems(v: Vault) -> list[tuple[object, ...]]:
    return [(p.path, p.line, p.reason) for p in v.problems if p.path.startswith("sessions/")]


def test_a_fresh_re_read_parses_no_unchanged_log(vault: Path, parses: list[str]):
    plain = read_vault(vault)
    parses.clear()
    first = _fresh_read(vault)
    assert sorted(parses) == ["sessions/s1.jsonl", "sessions/s2.jsonl"]
    parses.clear()
    again = _fresh_read(vault)
    assert parses == []
    assert _turns(again) == _turns(first) == _turns(plain)
    assert again.turns == plain.turns
    assert [t.at.utcoffset() if t.at else None for t in again.turns] == \
        [t.at.utcoffset() if t.at else None for t in plain.turns]
    assert _log_problems(again) == _log_problems(plain) == [
        ("sessions/s1.jsonl", 3, "not valid JSON (Expecting value); line skipped")]
    assert dict(again.turn_logs) == dict(plain.turn_logs)
    assert set(again.turn_logs) == {"sessions/s1.jsonl", "sessions/s2.jsonl"}
    # a role is one of two shared objects, not a string per turn
    assert {id(t.role) for t in again.turns} <= {id(r) for r in digests.TURN_ROLES}


def test_a_re_read_in_the_same_process_keeps_the_records(vault: Path, parses: list[str]):
    _fresh_read(vault)
    read_vault(vault, cache=True)  # every log from this process's memo
    parses.clear()
    _fresh_read(vault)
    assert parses == []


def test_appended_lines_are_parsed(vault: Path, parses: list[str]):
    before = _fresh_read(vault)
    log = vault / "sessions" / "s2.jsonl"
    with log.open("a", encoding="utf-8") as fh:
        fh.write(_line(1, "epsilon") + "\n")
    parses.clear()
    after = _fresh_read(vault)
    assert parses == ["sessions/s2.jsonl"]
    assert [t.text for t in after.turns if t.session_id == "s2"] == ["delta", "epsilon"]
    assert after.turn_logs["sessions/s2.jsonl"] != before.turn_logs["sessions/s2.jsonl"]
    assert after.turn_logs["sessions/s1.jsonl"] == before.turn_logs["sessions/s1.jsonl"]


def test_same_size_and_mtime_with_other_content_is_parsed(vault: Path, parses: list[str]):
    _fresh_read(vault)
    log = vault / "sessions" / "s2.jsonl"
    st = log.stat()
    log.write_text(_line(0, "DELTA") + "\n", encoding="utf-8")
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert log.stat().st_size == st.st_size and log.stat().st_mtime_ns == st.st_mtime_ns
    parses.clear()
    after = _fresh_read(vault)
    assert parses == ["sessions/s2.jsonl"]
    assert [t.text for t in after.turns if t.session_id == "s2"] == ["DELTA"]


def test_a_truncated_log_is_parsed(vault: Path, parses: list[str]):
    _fresh_read(vault)
    log = vault / "sessions" / "s1.jsonl"
    with log.open("r+b") as fh:
        fh.truncate(len(_line(0, "alpha one")) + 1)
    parses.clear()
    after = _fresh_read(vault)
    assert parses == ["sessions/s1.jsonl"]
    assert [t.text for t in after.turns if t.session_id == "s1"] == ["alpha one"]
    assert _log_problems(after) == []


def test_a_log_written_just_now_is_not_kept(vault: Path, parses: list[str],
                                            monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(digests, "_RACY_NS", 10**15)  # every log counts as just written
    _fresh_read(vault)
    rc = ReadCache.open(str(vault))
    assert rc is not None
    try:
        log = vault / "sessions" / "s1.jsonl"
        assert rc.turn_log("sessions/s1.jsonl", file_key(log.stat())) is None
    finally:
        rc.close()
    parses.clear()
    _fresh_read(vault)
    assert sorted(parses) == ["sessions/s1.jsonl", "sessions/s2.jsonl"]


def test_a_vanished_log_is_dropped_and_a_damaged_record_parsed_again(vault: Path,
                                                                     parses: list[str]):
    _fresh_read(vault)
    (vault / "sessions" / "s2.jsonl").unlink()
    rc = ReadCache.open(str(vault))
    assert rc is not None
    with rc._conn:  # a record this reader cannot load
        rc._conn.execute("UPDATE turn_logs SET record=x'00ff' WHERE rel='sessions/s1.jsonl'")
    rc.close()
    parses.clear()
    after = _fresh_read(vault)
    assert parses == ["sessions/s1.jsonl"]
    assert [t.text for t in after.turns] == ["alpha one", "beta two", "gamma"]
    rc = ReadCache.open(str(vault))
    assert rc is not None
    try:
        assert [r for (r,) in rc._conn.execute("SELECT rel FROM turn_logs")] == [
            "sessions/s1.jsonl"]
    finally:
        rc.close()
    parses.clear()
    _fresh_read(vault)
    assert parses == []


def test_another_process_uses_the_records_this_one_wrote(vault: Path, parses: list[str]):
    """Two processes share the cache file: a record written here is what a new process
    reads (it parses nothing), and its turns are the ones parsed here."""
    here = _fresh_read(vault)
    code = (
        "import sys\n"
        "from recall_tui.vault import digests\n"
        "from recall_tui.vault.reader import read_vault\n"
        "calls = []\n"
        "real = digests._parse_log\n"
        "digests._parse_log = lambda f, p, w=None: (calls.append(f.rel), real(f, p, w))[1]\n"
        "v = read_vault(sys.argv[1], cache=True)\n"
        "print(len(calls), len(v.turns), repr([(t.text, t.at, t.line) for t in v.turns]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(vault)], capture_output=True,
                         text=True, check=True).stdout.split(" ", 2)
    assert out[0] == "0" and int(out[1]) == len(here.turns) == 4
    assert out[2].strip() == repr([(t.text, t.at, t.line) for t in here.turns])


BAD_LINES = [
    ("  " + _line(0, "leading blanks"), None),
    (_line(1, "trailing blanks") + "  \t", None),
    (_line(2, "extra") + " {}", "not valid JSON (Extra data)"),
    ('{"seq": 3, "role": "user", "text": "cut', "not valid JSON (Unterminated string starting at)"),
    ("\ufeff" + _line(4, "a BOM inside"), "not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig))"),
    ("[1, 2]", "expected a JSON object, got [1, 2]"),
    ('{"seq": true, "role": "user", "text": "x"}', "seq: expected an integer, got true"),
    ('{"seq": 5, "role": "User", "text": "x"}', "role: expected user or assistant, got 'User'"),
    ('{"seq": 6, "role": "user", "text": 7}', "text: expected a string, got 7"),
    ('{"seq": 7, "role": "user", "text": "x", "at": "soon"}',
     "at: expected an ISO-8601 datetime, got 'soon'"),
    ('{"seq": 8, "role": "user", "text": "x", "at": " 2026-03-01T10:00:00z "}', None),
    ('{"seq": 9, "role": "user", "text": "x", "at": "2026-03-01T10:00:00"}', None),
    (_line(0, "again"), "seq 0 already used on line 1"),
    ("[" * 100_000 + "]" * 100_000, "not valid JSON (nested too deep)"),
]


def test_the_line_parser_reports_each_bad_line_as_before(tmp_path: Path):
    (tmp_path / "sessions").mkdir()
    raw = "\n".join(line for line, _ in BAD_LINES).encode("utf-8") + b"\n\xff\xfe oops\n"
    (tmp_path / "sessions" / "odd.jsonl").write_bytes(raw)
    digests._SESSIONS.clear()
    v = read_vault(tmp_path)
    want = [("sessions/odd.jsonl", n, f"{why}; line skipped")
            for n, (_, why) in enumerate(BAD_LINES, start=1) if why is not None]
    want.append(("sessions/odd.jsonl", len(BAD_LINES) + 1,
                 "not valid UTF-8 (byte 0 of the line); line skipped"))
    assert _log_problems(v) == want
    assert [(t.seq, t.line) for t in v.turns] == [(0, 1), (1, 2), (8, 11), (9, 12)]
    utc = [t.at.utcoffset() for t in v.turns if t.seq in (8, 9)]
    assert [u.total_seconds() for u in utc if u is not None] == [0.0, 0.0]


# --------------------------------------------------------------------------------------------
# The index sync of unchanged session logs
# --------------------------------------------------------------------------------------------


@pytest.fixture()
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the turns whose row the index sync hashed (the real sha256 runs)."""
    from recall_tui.index import sync

    seen: list[str] = []
    real = sync.sha

    def counting(text: str) -> str:
        if text.startswith("["):  # a turn's row: [role, text, at, path, line]
            seen.append(json.loads(text)[1])
        return real(text)

    monkeypatch.setattr(sync, "sha", counting)
    return seen


def _rows(path: Path) -> list[tuple[object, ...]]:
    import apsw

    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(conn.execute(
            "SELECT id, session_id, seq, role, text, at, path, row_hash FROM turns ORDER BY id"))
    finally:
        conn.close()


def _sync(root: Path, index: Path) -> None:
    """A fresh process's open of the index (a new Index, nothing remembered) and its sync."""
    from recall_tui.index.embed import NoEmbedder
    from recall_tui.index.store import Index

    Index.open(_fresh_read(root), NoEmbedder(), path=index).close()


def test_a_fresh_sync_skips_unchanged_logs_and_compares_changed_ones(
        vault: Path, hashed: list[str], tmp_path_factory: pytest.TempPathFactory):
    index = tmp_path_factory.mktemp("idx") / "index.sqlite"
    _sync(vault, index)
    built = _rows(index)
    assert len(built) == 4
    hashed.clear()
    _sync(vault, index)
    assert hashed == []  # no turn's row hashed: every log's signature is the stored one
    assert _rows(index) == built
    # one log changes (a line appended), another vanishes, a new one comes
    with (vault / "sessions" / "s1.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(_line(3, "zeta") + "\n")
    (vault / "sessions" / "s2.jsonl").unlink()
    (vault / "sessions" / "s3.jsonl").write_text(_line(0, "eta") + "\n", encoding="utf-8")
    hashed.clear()
    _sync(vault, index)
    assert sorted(hashed) == ["alpha one", "beta two", "eta", "gamma", "zeta"]
    fresh = tmp_path_factory.mktemp("idx") / "index.sqlite"
    _sync(vault, fresh)  # the same rows as an index built from nothing
    assert _rows(index) == _rows(fresh)
    assert {r[1] for r in _rows(index)} == {"s1", "s3"}


def test_rows_the_record_does_not_list_make_every_turn_compared(
        vault: Path, hashed: list[str], tmp_path_factory: pytest.TempPathFactory):
    """A row deleted behind the sync's back (an older version's write) changes the count: the
    record is not trusted, every turn is compared and the row comes back."""
    import apsw

    index = tmp_path_factory.mktemp("idx") / "index.sqlite"
    _sync(vault, index)
    built = _rows(index)
    conn = apsw.Connection(str(index))
    with conn:
        conn.execute("DELETE FROM turns WHERE id='turn:s1#1'")
    conn.close()
    hashed.clear()
    _sync(vault, index)
    assert sorted(hashed) == ["alpha one", "beta two", "delta", "gamma"]
    assert _rows(index) == built
