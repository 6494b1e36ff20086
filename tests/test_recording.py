"""Recording recalls to JSONL and reading them back; `recall-tui replay` on a recording."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from recall_tui.cli import main
from recall_tui.diagnostics.recording import (
    RECORDINGS_DIR,
    Recorder,
    RecordingError,
    load_traces,
    read_recording,
)
from tests.conftest import PINNED_NOW, SAMPLE_VAULT

QUERIES = ("postgres upgrade", "E_BILLING_4012", "who prefers diffs in code review")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """A real engine (keyword-only embedder, to stay fast) on a private copy of the sample vault."""
    from recall_tui.engine import open_engine

    root = tmp_path_factory.mktemp("rec") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".recall"))
    eng = open_engine(root, embedder="none")
    yield eng
    eng.index.close()


@pytest.fixture(scope="module")
def traces(engine):
    return [engine.recall(q, now=PINNED_NOW, why=["billing-db-postgres16"]) for q in QUERIES]


def test_recording_round_trip(engine, traces):
    rec = Recorder(engine.vault.root)
    path = rec.start()
    assert path.parent == Path(engine.vault.root) / RECORDINGS_DIR
    assert re.fullmatch(r"\d{8}T\d{6}Z(-\d+)?\.jsonl", path.name), path.name
    for t in traces:
        rec.append(t)
        # flushed per line: what is on disk already reads back while recording goes on
        assert len(read_recording(path)) == rec.count
    assert rec.stop() == path and not rec.active
    back = read_recording(path)
    assert [t.to_dict() for t in back] == [t.to_dict() for t in traces]
    assert [t.query for t in back] == list(QUERIES)
    assert back[0].hits and back[0].hits[0].id == traces[0].hits[0].id
    assert back[0].why_of("billing-db-postgres16") is not None


def test_recordings_started_in_the_same_second_do_not_collide(tmp_path, traces):
    clock = lambda: datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)  # noqa: E731
    a, b = Recorder(tmp_path, clock=clock), Recorder(tmp_path, clock=clock)
    pa, pb = a.start(), b.start()
    a.append(traces[0])
    b.append(traces[1])
    a.stop()
    b.stop()
    assert pa.name == "20261121T090000Z.jsonl" and pb.name == "20261121T090000Z-2.jsonl"
    assert read_recording(pa)[0].query == QUERIES[0]
    assert read_recording(pb)[0].query == QUERIES[1]


def test_append_needs_start(tmp_path, traces):
    with pytest.raises(RuntimeError, match="not started"):
        Recorder(tmp_path).append(traces[0])


def test_bad_line_names_file_line_and_reason(tmp_path, traces):
    path = tmp_path / "broken.jsonl"
    path.write_text(traces[0].to_json() + "\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordingError) as err:
        read_recording(path)
    assert f"{path}:2" in str(err.value) and "not JSON" in str(err.value)


def test_unsupported_trace_version_is_named(tmp_path, traces):
    data = traces[0].to_dict()
    data["trace_version"] = 99
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"future\.jsonl:1: trace_version 99 is not supported"):
        read_recording(path)


def test_line_that_is_not_a_trace(tmp_path, traces):
    path = tmp_path / "other.jsonl"
    path.write_text(traces[0].to_json() + "\n" + json.dumps({"query": "x"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(RecordingError, match=r"other\.jsonl:2: not a recall trace"):
        read_recording(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(RecordingError, match="no such file"):
        load_traces(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(RecordingError, match="empty"):
        load_traces(empty)


def test_replay_print_on_a_recording(tmp_path, traces, capsys):
    rec = Recorder(tmp_path)
    path = rec.start()
    for t in traces:
        rec.append(t)
    rec.stop()
    assert main(["replay", "--print", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: {len(traces)} traces" in out
    for t in traces:
        assert repr(t.query) in out
        for h in t.hits:
            assert h.id in out
    assert "stages ms: query.parse" in out
    assert "why billing-db-postgres16" in out


def test_replay_of_a_bad_file_fails_with_path_and_reason(tmp_path, capsys):
    path = tmp_path / "junk.jsonl"
    path.write_text("hello\n", encoding="utf-8")
    assert main(["replay", "--print", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1: not JSON" in err
