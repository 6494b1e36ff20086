"""The synthetic vault: deterministic, realistic shapes, reads back with zero problems."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from recall_tui.diagnostics import synth as synth_mod
from recall_tui.diagnostics.synth import plan_vault, write_synth_vault
from recall_tui.diagnostics.synth_words import FOLDER_CAP
from recall_tui.tuning.metrics import read_golden
from recall_tui.vault.model import MEMORY_TYPES, Role
from recall_tui.vault.reader import read_vault

N = 500
BIN = Path(sys.executable).with_name("recall-tui")


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth") / "vault"
    report = write_synth_vault(root, N, seed=3)
    return root, report, read_vault(root)


def test_reads_back_with_zero_problems(synth):
    root, report, vault = synth
    assert vault.problems == ()
    assert len(vault.memories) == report.memories == N


def test_same_seed_is_byte_identical_other_seed_is_not(tmp_path, monkeypatch):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    monkeypatch.setattr(synth_mod, "CHUNK", 50)  # 4 render jobs
    write_synth_vault(a, 200, seed=3, workers=1)
    write_synth_vault(b, 200, seed=3, workers=2)  # forked workers write the same bytes
    write_synth_vault(c, 200, seed=4)
    assert _digest(a) == _digest(b)
    assert len(_digest(a)) > 200  # memories, digests, sessions, queries.jsonl
    assert _digest(c) != _digest(a)


def test_field_shapes_are_realistic(synth):
    _, _, vault = synth
    mems = list(vault.memories.values())
    assert {m.type for m in mems} == set(MEMORY_TYPES)
    for m in mems:
        assert 4 <= len(m.title.split()) <= 10, m.title
        sentences = m.summary.count(". ") + 1
        assert 1 <= sentences <= 2 and m.summary.endswith("."), m.summary
        assert 3 <= len(m.body.splitlines()) <= 40, m.id
        assert 1 <= len(m.recall_when) <= 3 and m.tags and m.edges
    linked = [len(m.related_via) for m in mems]
    assert sum(linked) / len(linked) >= 1.0 and max(linked) <= 3
    assert sum(1 for m in mems if m.topic_key) > N * 0.2


def test_roles_dates_chains_and_entities(synth):
    _, report, vault = synth
    mems = list(vault.memories.values())
    roles = Counter(m.role for m in mems)
    assert roles[Role.ALWAYS_LOAD] >= 1 and roles[Role.INBOX] >= 1 and roles[Role.ARCHIVE] >= 1
    created = sorted(m.created for m in mems)
    assert (created[-1] - created[0]).days > 700  # spread over two years
    superseded = [m for m in mems if m.status == "superseded"]
    assert 0.02 * N <= len(superseded) <= 0.09 * N
    assert len(vault.chains) >= 1
    for chain in vault.chains:
        head = vault.memories[chain.head]
        assert head.status == "active"
    assert N // 20 <= len(vault.graph.entities) <= N // 20 + 40
    assert report.digests >= 2 and len(vault.digests) >= report.digests
    assert report.sessions >= 1 and len(vault.turns) >= 2
    # topic folders are bounded
    per_folder = Counter(str(Path(m.path).parent) for m in mems)
    assert max(per_folder.values()) <= FOLDER_CAP


def test_entity_pool_grows_with_n_and_folders_are_bounded(monkeypatch):
    _, pool_small = plan_vault(200, seed=1)
    _, pool_big = plan_vault(1200, seed=1)
    assert len(pool_small) < len(pool_big) and len(pool_big) >= 1200 // 20
    monkeypatch.setattr(synth_mod, "FOLDER_CAP", 10)
    plans, _ = plan_vault(600, seed=1)
    per_folder = Counter(m.folder for m in plans)
    assert max(per_folder.values()) <= 10
    assert any("/part-" in f for f in per_folder)  # full folders spill, they do not grow


def test_queries_are_judged_from_the_generator(synth):
    root, report, vault = synth
    golden = read_golden(root / "queries.jsonl")
    assert len(golden) == report.queries == 50
    for g in golden:
        targets = [i for i, grade in g.relevant.items() if grade == 3]
        assert len(targets) == 1
        m = vault.memories[targets[0]]
        assert m.status == "active" and m.role in (Role.NORMAL, Role.ALWAYS_LOAD)
        # every kept query word comes from the memory's recall_when phrases or title
        source = " ".join((*m.recall_when, m.title)).lower().split()
        assert all(w.lower() in source for w in g.query.split()), (g.query, m.recall_when)
        for rid in g.relevant:
            assert rid in vault.memories  # no judged id is unknown to the vault
    assert any(0 in g.relevant.values() for g in golden)  # superseded memories judged 0


def test_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x.md").write_text("hi")
    with pytest.raises(FileExistsError, match="not empty"):
        write_synth_vault(tmp_path, 10)


def test_cli(tmp_path):
    out = tmp_path / "v"
    r = subprocess.run([str(BIN), "synth", "--n", "40", str(out), "--seed", "9"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "40 memories" in r.stdout
    assert len(list(out.rglob("*.md"))) >= 40
    json.loads((out / "queries.jsonl").read_text().splitlines()[0])
    r = subprocess.run([str(BIN), "synth", "--n", "40", str(out)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2 and "not empty" in r.stderr


def _tree_digest(root: Path) -> str:
    d = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            d.update(str(p.relative_to(root)).encode())
            d.update(p.read_bytes())
    return d.hexdigest()


def test_turns_are_written_as_session_logs_the_reader_reads(tmp_path):
    one = write_synth_vault(tmp_path / "one", 120, seed=3, workers=1, turns=450)
    two = write_synth_vault(tmp_path / "two", 120, seed=3, workers=2, turns=450)
    assert one.turns == two.turns == 450
    # the same files whatever the worker count
    assert _tree_digest(tmp_path / "one") == _tree_digest(tmp_path / "two")
    logs = sorted((tmp_path / "one" / "sessions").glob("turns-*.jsonl"))
    sizes = [len(p.read_text(encoding="utf-8").splitlines()) for p in logs]
    assert sizes == [200, 200, 50]
    first = [json.loads(line) for line in logs[0].read_text(encoding="utf-8").splitlines()]
    assert [t["seq"] for t in first] == list(range(200))
    assert {t["role"] for t in first} == {"user", "assistant"}
    assert all(t["at"].endswith("Z") and t["text"] for t in first)
    v = read_vault(tmp_path / "one")
    synth_turns = [t for t in v.turns if t.session_id.startswith("turns-")]
    assert len(synth_turns) == 450
    assert not [p for p in v.problems if "sessions" in str(getattr(p, "path", ""))]


def test_synth_cli_turns_flag(tmp_path):
    out = tmp_path / "v"
    r = subprocess.run([sys.executable, "-m", "recall_tui", "synth", "--n", "60", "--turns", "201",
                        str(out)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "(201 raw turns)" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "recall_tui", "synth", "--n", "60", "--turns", "-1",
                          str(tmp_path / "w")], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--turns must be 0 or more" in bad.stderr
