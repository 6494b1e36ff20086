"""Parsing in worker processes (`vault/parallel.py`): the Vault is exactly the serial one,
problems included and in the same order, with and without the reading cache; the records the
workers made are kept in the cache; a pool that fails leaves the files to the serial parse.
Real worker processes, real files (the sample vault plus files each broken in its own way)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import recall_tui.vault.parallel as parallel
import recall_tui.vault.reader as reader
from recall_tui.vault import readcache
from recall_tui.vault.reader import read_vault
from tests.conftest import SAMPLE_VAULT


@pytest.fixture()
def vault_dir(tmp_path) -> Path:
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    odd = dst / "projects" / "odd"
    odd.mkdir()
    (odd / "bad-yaml.md").write_text("---\nid: bad\ntitle: [unclosed\n---\nbody\n")
    (odd / "bad-values.md").write_text(
        "---\nid: vals\nconfidence: 7\ntrust: nine\ntpye: fact\nrecall-when: x\n---\nbody\n")
    (odd / "binary.md").write_bytes(b"---\nid: bin\n---\n\x00\x01")
    (odd / "latin1.md").write_bytes("---\nid: lat\n---\ncaf\xe9\n".encode("latin-1"))
    (odd / "dup.md").write_text("---\nid: vals\ntitle: the same id again\n---\nbody\n")
    (odd / "no-front.md").write_text("# Just a heading\n\nA first paragraph.\n")
    (odd / "dangling.md").write_text(
        "---\nid: dangling\nsupersedes: [nowhere]\nrelated_via: [{id: ghost, score: 0.5}]\n"
        "---\nbody\n")
    return dst


def _snapshot(v):
    return (
        {mid: (m, m.frontmatter, m.key_lines, m.extra) for mid, m in v.memories.items()},
        list(v.memories),
        v.problems,
        v.chains,
        v.digests,
        v.turns,
        v.graph.edges,
    )


@pytest.fixture(autouse=True)
def _cache_file_only(monkeypatch):
    """The pool's records must reach the cache file: what a process keeps of its last read
    is off here (tests/test_read_cache.py tests it)."""
    monkeypatch.setattr(readcache, "REMEMBER_READS", False)


def test_parallel_parse_equals_the_serial_parse(vault_dir):
    serial = read_vault(vault_dir, workers=0)
    assert any(p.path.startswith("projects/odd/") for p in serial.problems)
    assert "vals" in serial.memories and "dangling" in serial.memories
    par = read_vault(vault_dir, workers=2)
    assert _snapshot(par) == _snapshot(serial)
    assert not (vault_dir / ".recall").exists()  # a plain read writes nothing, pool or not


def test_parallel_first_cached_read_fills_the_cache(vault_dir, monkeypatch):
    serial = read_vault(vault_dir, workers=0)
    first = read_vault(vault_dir, cache=True, workers=3)
    assert _snapshot(first) == _snapshot(serial)
    # The workers' records are in the cache: the next read parses nothing.
    parsed: list[str] = []
    real = reader._read_memory

    def counting(f, problems, *src):
        parsed.append(f.rel)
        return real(f, problems, *src)

    monkeypatch.setattr(reader, "_read_memory", counting)
    again = read_vault(vault_dir, cache=True, workers=0)
    assert parsed == []
    assert _snapshot(again) == _snapshot(serial)


def test_records_reach_the_cache_in_batches(vault_dir, monkeypatch):
    monkeypatch.setattr(reader, "CACHE_WRITE_EVERY", 5)
    serial = read_vault(vault_dir, workers=0)
    assert _snapshot(read_vault(vault_dir, cache=True, workers=2)) == _snapshot(serial)
    assert _snapshot(read_vault(vault_dir, cache=True, workers=0)) == _snapshot(serial)


def test_a_failing_pool_leaves_the_files_to_the_serial_parse(vault_dir, monkeypatch):
    serial = read_vault(vault_dir, workers=0)
    monkeypatch.setattr(parallel, "_WORKER", "raise SystemExit(3)")
    assert _snapshot(read_vault(vault_dir, workers=2)) == _snapshot(serial)
    assert _snapshot(read_vault(vault_dir, cache=True, workers=2)) == _snapshot(serial)


def test_progress_never_goes_back(vault_dir):
    seen: list[tuple[int, int]] = []
    read_vault(vault_dir, cache=True, workers=2, progress=lambda d, t, _p: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1][0] == seen[-1][1] > 0


def test_small_reads_stay_in_this_process(vault_dir, monkeypatch):
    def no_pool(*a, **k):
        raise AssertionError("a pool for a few hundred files")

    monkeypatch.setattr(reader, "parse_in_pool", no_pool)
    assert read_vault(vault_dir, cache=True).memories  # workers=None: below the threshold
