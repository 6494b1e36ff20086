"""The reading cache (`read_vault(root, cache=True)`): an unchanged file is not parsed again,
a changed file is (even an edit that keeps the size), a deleted file vanishes, reading writes
nothing in the vault but `.recall/`, and a record is not trusted across reader versions.
Real files, the real reader; the parse counter is the reader's own function, wrapped."""

from __future__ import annotations

import datetime
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

import recall_tui.vault.reader as reader
from recall_tui.vault import readcache
from recall_tui.vault.reader import read_vault
from tests.conftest import SAMPLE_VAULT


@pytest.fixture(autouse=True)
def _cache_file_only(monkeypatch):
    """These tests are about the cache file: what a process keeps of its last read is off
    (it has its own tests at the end)."""
    monkeypatch.setattr(readcache, "REMEMBER_READS", False)


@pytest.fixture()
def vault_dir(tmp_path) -> Path:
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


@pytest.fixture()
def parses(monkeypatch) -> list[str]:
    """The relative paths the reader parsed (not taken from the cache)."""
    seen: list[str] = []
    real = reader._read_memory

    def counting(f, problems, *src):
        seen.append(f.rel)
        return real(f, problems, *src)

    monkeypatch.setattr(reader, "_read_memory", counting)
    return seen


def _snapshot(v):
    return (
        {mid: (m, m.frontmatter, m.key_lines, m.extra) for mid, m in v.memories.items()},
        v.problems,
        v.chains,
        v.digests,
        v.turns,
    )


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and ".recall" not in p.parts
    }


def _edit_keeping_size_and_mtime(root: Path, vault):
    """Change one letter of a memory file and restore its mtime: only the ctime (and the
    content) moved. Returns the memory as it was."""
    m = next(m for m in vault.memories.values() if "Postgres" in m.title or "postgres" in m.body)
    path = root / m.path
    data = path.read_bytes()
    st = path.stat()
    i = data.rindex(b"e")
    path.write_bytes(data[:i] + b"E" + data[i + 1:])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    return m


def _count_rows(monkeypatch) -> list[int]:
    rows: list[int] = []
    real_rows = readcache.ReadCache.rows

    def counting_rows(self):
        rows.append(1)
        return real_rows(self)

    monkeypatch.setattr(readcache.ReadCache, "rows", counting_rows)
    return rows


def test_cached_read_equals_a_fresh_read(vault_dir, parses):
    plain = read_vault(vault_dir)
    n = len(parses)
    assert n > 100
    before = _files(vault_dir)
    first = read_vault(vault_dir, cache=True)
    assert len(parses) == 2 * n  # nothing cached yet
    again = read_vault(vault_dir, cache=True)
    assert len(parses) == 2 * n  # nothing parsed again
    assert _snapshot(first) == _snapshot(plain) == _snapshot(again)
    # Only `.recall/` was written.
    assert _files(vault_dir) == before
    assert (vault_dir / ".recall" / readcache.CACHE_NAME).is_file()


def test_plain_read_writes_nothing(vault_dir):
    read_vault(vault_dir)
    assert not (vault_dir / ".recall").exists()


def test_changed_same_size_and_deleted_files(vault_dir, parses):
    read_vault(vault_dir, cache=True)
    v0 = read_vault(vault_dir, cache=True)
    parses.clear()
    m = _edit_keeping_size_and_mtime(vault_dir, v0)
    # A deleted file.
    gone = next(x for x in v0.memories.values() if x.id != m.id)
    (vault_dir / gone.path).unlink()
    v1 = read_vault(vault_dir, cache=True)
    assert parses == [m.path]
    assert v1.memories[m.id].body != m.body
    assert v1.memories[m.id].content_hash != m.content_hash
    assert gone.id not in v1.memories
    assert _snapshot(v1) == _snapshot(read_vault(vault_dir))
    # The deleted file's record is gone from the cache too.
    rc = readcache.ReadCache.open(str(vault_dir))
    assert gone.path not in rc.load() and m.path in rc.load()
    rc.close()


def test_problems_come_back_from_the_cache(vault_dir, parses):
    bad = vault_dir / "projects" / "broken.md"
    bad.write_text("---\nid: broken\ntitle: [unclosed\nconfidence: 7\n---\nbody\n", encoding="utf-8")
    first = read_vault(vault_dir, cache=True)
    parses.clear()
    again = read_vault(vault_dir, cache=True)
    assert parses == []
    mine = [p for p in first.problems if p.path == "projects/broken.md"]
    assert mine and mine == [p for p in again.problems if p.path == "projects/broken.md"]


def test_records_are_not_trusted_across_reader_versions(vault_dir, parses, monkeypatch):
    read_vault(vault_dir, cache=True)
    n = len(parses)
    monkeypatch.setattr(readcache, "READER_VERSION", readcache.READER_VERSION + 1)
    read_vault(vault_dir, cache=True)
    assert len(parses) == 2 * n
    read_vault(vault_dir, cache=True)
    assert len(parses) == 2 * n


def test_damaged_cache_file_is_replaced(vault_dir, parses):
    (vault_dir / ".recall").mkdir()
    (vault_dir / ".recall" / readcache.CACHE_NAME).write_bytes(b"not a database" * 100)
    v = read_vault(vault_dir, cache=True)
    assert v.memories
    n = len(parses)
    read_vault(vault_dir, cache=True)
    assert len(parses) == n


def test_records_written_in_batches(vault_dir, parses, monkeypatch):
    monkeypatch.setattr(reader, "CACHE_WRITE_EVERY", 7)
    first = read_vault(vault_dir, cache=True)
    n = len(parses)
    again = read_vault(vault_dir, cache=True)
    assert len(parses) == n  # every record reached the cache
    assert _snapshot(first) == _snapshot(again)


def test_dates_and_timestamps_come_back_as_they_were(vault_dir, parses):
    odd = vault_dir / "projects" / "dates.md"
    odd.write_text(
        "---\nid: dates\nvalid_from: 2024-01-02\nexpires: 0005-03-04\n"
        "created: 2024-01-02T03:04:05+02:00\nupdated: 2024-01-02 03:04:05\n"
        "nested: {when: 2023-05-06, at: [2023-05-06T07:08:09Z]}\n---\nbody\n",
        encoding="utf-8")
    first = read_vault(vault_dir, cache=True)
    parses.clear()
    again = read_vault(vault_dir, cache=True)
    assert parses == []
    a, b = first.memories["dates"], again.memories["dates"]
    assert dict(a.frontmatter) == dict(b.frontmatter)
    assert [type(v) for v in a.frontmatter.values()] == [type(v) for v in b.frontmatter.values()]
    assert _snapshot(again) == _snapshot(read_vault(vault_dir))


def test_frontmatter_values_equal_to_fields_come_back_as_written(vault_dir, parses):
    # The cache keeps the frontmatter as its YAML text (parsed again on first use; codec 7)
    # and, in records written without it, a value equal to its Memory field (a string, a
    # list of strings) as a reference to the field: either way it must come back equal, of
    # the type YAML gave, and in file order, whether or not the field was normalised from it.
    odd = vault_dir / "projects" / "refs.md"
    odd.write_text(
        "---\nid: refs\ntitle: The same title, longer than the forty characters interned\n"
        "tags: [alpha, Beta, alpha]\nkeywords: []\n"
        "summary: 12\nrecall_when: [when one, when two]\nscope: [not, a, string]\n"
        "topic_key: null\nsupersedes: one-id\nstatus: active\n---\nbody\n",
        encoding="utf-8")
    first = read_vault(vault_dir, cache=True)
    parses.clear()
    again = read_vault(vault_dir, cache=True)
    assert parses == []
    for mid, a in first.memories.items():
        b = again.memories[mid]
        assert list(a.frontmatter.items()) == list(b.frontmatter.items())
        assert [type(v) for v in a.frontmatter.values()] == [
            type(v) for v in b.frontmatter.values()]
    b = again.memories["refs"]
    assert b.frontmatter["title"] == b.title
    assert b.frontmatter["recall_when"] == ["when one", "when two"]
    assert type(b.frontmatter["recall_when"]) is list
    assert _snapshot(again) == _snapshot(read_vault(vault_dir))


def test_frontmatter_kept_as_its_source_comes_back_the_same(vault_dir, parses):
    # Codec 7: the record holds the frontmatter's YAML text, parsed again on first use; the
    # extra keys' values are packed apart (a Memory builds `extra` when loaded). A file with
    # extras (a nested date among them), one only PyYAML reads (a block scalar, an anchor)
    # and one with no frontmatter must come back equal to a parse, types and order included.
    folder = vault_dir / "projects"
    (folder / "extras.md").write_text(
        "---\nid: extras\ntitle: Extras\nowner: kim\nreview: {when: 2024-05-06, by: [a, b]}\n"
        "tag: typo\n---\nbody\n", encoding="utf-8")
    (folder / "yaml-only.md").write_text(
        "---\nid: yaml-only\nsummary: |\n  two\n  lines\nbase: &b {x: 1}\nmore: *b\n"
        "---\nbody\n", encoding="utf-8")
    (folder / "bare.md").write_text("# Bare\n\nno frontmatter\n", encoding="utf-8")
    plain = read_vault(vault_dir)
    first = read_vault(vault_dir, cache=True)
    parses.clear()
    again = read_vault(vault_dir, cache=True)
    assert parses == []
    for mid in ("extras", "yaml-only", "bare"):
        want = plain.memories[mid]
        for got in (first.memories[mid], again.memories[mid]):
            assert got == want
            assert list(got.frontmatter.items()) == list(want.frontmatter.items())
            assert [type(v) for v in got.frontmatter.values()] == [
                type(v) for v in want.frontmatter.values()]
            assert list(got.extra.items()) == list(want.extra.items())
    assert dict(again.memories["extras"].extra) == {
        "owner": "kim", "review": {"when": datetime.date(2024, 5, 6), "by": ["a", "b"]},
        "tag": "typo"}
    assert _snapshot(again) == _snapshot(plain)


def test_whole_vault_steps_are_kept_for_an_unchanged_vault(vault_dir, parses, monkeypatch):
    # Links the whole-vault steps must resolve: an unknown id, a cycle, a contested successor.
    (vault_dir / "projects" / "cyc-a.md").write_text(
        "---\nid: cyc-a\nsupersedes: [cyc-b]\nrelated_via: [nowhere]\n---\na\n", encoding="utf-8")
    (vault_dir / "projects" / "cyc-b.md").write_text(
        "---\nid: cyc-b\nsupersedes: [cyc-a]\nsuperseded_by: ghost\n---\nb\n", encoding="utf-8")
    steps: list[int] = []
    real = reader._drop_unknown_links

    def counting(memories, problems):
        steps.append(len(memories))
        return real(memories, problems)

    monkeypatch.setattr(reader, "_drop_unknown_links", counting)
    plain = read_vault(vault_dir)
    first = read_vault(vault_dir, cache=True)
    assert len(steps) == 2
    again = read_vault(vault_dir, cache=True)
    assert len(steps) == 2  # taken from the cache: every record and the signature held
    assert _snapshot(again) == _snapshot(first) == _snapshot(plain)
    assert again.graph == plain.graph and again.chains
    a = again.memories["cyc-a"]
    assert a.related_via == () and a == plain.memories["cyc-a"]
    assert any("cycle" in p.reason for p in again.problems)
    # One memory changes its links: the steps run again and see the change.
    (vault_dir / "projects" / "cyc-b.md").write_text(
        "---\nid: cyc-b\n---\nb\n", encoding="utf-8")
    changed = read_vault(vault_dir, cache=True)
    assert len(steps) == 3
    assert _snapshot(changed) == _snapshot(read_vault(vault_dir))  # (a 4th run of the steps)
    assert not any("cycle" in p.reason for p in changed.problems)
    # A deleted memory changes the signature too (the record cache alone still holds).
    (vault_dir / "projects" / "cyc-a.md").unlink()
    gone = read_vault(vault_dir, cache=True)
    assert len(steps) == 5 and "cyc-a" not in gone.memories
    assert _snapshot(gone) == _snapshot(read_vault(vault_dir))


def test_a_re_read_in_the_same_process_reuses_the_records(vault_dir, parses, monkeypatch):
    monkeypatch.setattr(readcache, "REMEMBER_READS", True)
    rows = _count_rows(monkeypatch)
    first = read_vault(vault_dir, cache=True)
    n = len(parses)
    again = read_vault(vault_dir, cache=True)
    assert len(parses) == n and len(rows) == 1  # neither parsed nor scanned from the file
    assert _snapshot(again) == _snapshot(first) == _snapshot(read_vault(vault_dir))
    m = next(iter(first.memories.values()))
    assert again.memories[m.id] is m  # the same object: an unchanged memory costs nothing
    assert again.graph is first.graph and again.chains is first.chains  # nothing changed
    # A changed, a new and a deleted file: only the first two are parsed; the cache file
    # follows (a new process reads the same vault from it).
    path = vault_dir / m.path
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    (vault_dir / "projects" / "new-one.md").write_text("---\nid: new-one\n---\nnew\n")
    gone = next(x for x in first.memories.values() if x.id != m.id)
    (vault_dir / gone.path).unlink()
    parses.clear()
    third = read_vault(vault_dir, cache=True)
    assert sorted(parses) == sorted([m.path, "projects/new-one.md"]) and len(rows) == 1
    assert third.memories[m.id].body.endswith("One more line.\n") and "new-one" in third.memories
    assert gone.id not in third.memories
    plain = read_vault(vault_dir)
    assert _snapshot(third) == _snapshot(plain) and third.graph == plain.graph
    assert third.graph is not first.graph
    readcache.forget_reads(str(vault_dir))
    parses.clear()
    fourth = read_vault(vault_dir, cache=True)  # from the cache file, as a new process would
    assert parses == [] and len(rows) == 2
    assert _snapshot(fourth) == _snapshot(third)
    rc = readcache.ReadCache.open(str(vault_dir))
    assert gone.path not in rc.load()
    rc.close()


def test_what_a_read_keeps_goes_with_its_vault(vault_dir, monkeypatch):
    monkeypatch.setattr(readcache, "REMEMBER_READS", True)
    v = read_vault(vault_dir, cache=True)
    root = v.root
    assert readcache.remembered(root) is not None
    del v  # (no cycles: the Vault goes at once, and what was kept of it with it)
    assert readcache.remembered(root) is None
    v = read_vault(vault_dir, cache=True)
    assert v.memories and readcache.remembered(root) is not None
    monkeypatch.setattr(readcache, "READER_VERSION", readcache.READER_VERSION + 1)
    assert readcache.remembered(root) is None  # never across reader versions


# --- the record encoding and the vault signature (branch read24) ---------------------------


def _strings(value, out):
    """Every str inside a packed record (tuples, lists, dict keys and values)."""
    if type(value) is str:
        out.append(value)
    elif type(value) in (tuple, list):
        for x in value:
            _strings(x, out)
    elif type(value) is dict:
        for k, x in value.items():
            _strings(k, out)
            _strings(x, out)
    return out


def test_a_record_interns_its_short_strings_and_decodes_equal():
    """The field-by-field packing gives what the generic walk gave: every string of at most
    _INTERN_MAX characters interned (so 100k decoded records share one object per tag, type
    or date), longer ones left as they are, and the record decodes to an equal Memory."""
    import marshal
    import sys

    vault = read_vault(SAMPLE_VAULT)
    short = long = 0
    for m in vault.memories.values():
        packed = readcache._pack_memory(m)
        assert packed == readcache._share(packed)  # (the generic walk changes no value)
        for s in _strings(packed, []):
            if len(s) <= readcache._INTERN_MAX:
                assert sys.intern(s) is s, (m.id, s)
                short += 1
            else:
                long += 1
        back, problems = readcache.loads(readcache.dumps((m, [])))
        assert back == m and problems == []
        assert dict(back.frontmatter) == dict(m.frontmatter)
        assert dict(back.key_lines) == dict(m.key_lines) and dict(back.extra) == dict(m.extra)
        assert marshal.loads(readcache.dumps((m, [])))[0] == packed
    assert short > 10 * len(vault.memories) and long > 0


def test_the_vault_signature_names_every_path_and_key():
    keys: dict[str, readcache.FileKey | None] = {
        f"t/{i}.md": (100 + i, 1_700_000_000_000_000_000 + i, 1_700_000_000_000_000_001, i)
        for i in range(50)
    }
    sig = readcache.vault_signature(keys)
    assert sig is not None and sig == readcache.vault_signature(dict(keys))
    seen = {sig}
    for n in range(4):  # each part of one file's key
        k = dict(keys)
        key = list(k["t/7.md"])
        key[n] += 1
        k["t/7.md"] = tuple(key)
        seen.add(readcache.vault_signature(k))
    renamed = {("t/7b.md" if r == "t/7.md" else r): v for r, v in keys.items()}
    seen.add(readcache.vault_signature(renamed))
    seen.add(readcache.vault_signature({**keys, "t/new.md": (1, 2, 3, 4)}))
    seen.add(readcache.vault_signature(dict(list(keys.items())[:-1])))
    # Path boundaries count: "a" + "b\0c" must not equal "a\0b" + "c" (paths hold no NUL,
    # so the join is unambiguous; moved key bytes are still caught).
    seen.add(readcache.vault_signature({"ab": (1, 2, 3, 4), "c": (5, 6, 7, 8)}))
    seen.add(readcache.vault_signature({"a": (1, 2, 3, 4), "bc": (5, 6, 7, 8)}))
    assert len(seen) == 10
    assert readcache.vault_signature({**keys, "t/x.md": None}) is None
    huge = {"a.md": (1, 2, 3, 1 << 64)}  # an inode past 64 bits: the exact fallback
    assert readcache.vault_signature(huge) != readcache.vault_signature({"a.md": (1, 2, 3, 5)})


@pytest.mark.parametrize(("rel", "memory"), [
    ("a.md", True), ("notes/a.md", True), ("consolidation.md", True), ("sessions.md", True),
    ("consolidation/daily/x.md", False), ("consolidation/x.md", False),
    ("sessions/s.md", False), ("sessions/s.jsonl", False), ("a.txt", False),
    ("x/consolidation/a.md", True), ("_archive/sessions/a.md", True),
])
def test_which_files_are_memories(rel, memory):
    assert reader._is_memory_file(rel) is memory


# --- the reading snapshot (branch read100k) ------------------------------------------------


def test_an_unchanged_vault_is_read_from_the_snapshot_as_lazy_memories(vault_dir, parses, monkeypatch):
    import copy
    import dataclasses

    rows = _count_rows(monkeypatch)
    plain = read_vault(vault_dir)
    first = read_vault(vault_dir, cache=True)
    snap = vault_dir / ".recall" / readcache.SNAPSHOT_NAME
    assert snap.is_file() and len(rows) == 1
    assert not [p for p in (vault_dir / ".recall").iterdir() if p.name.endswith(".tmp")]
    n = len(parses)
    again = read_vault(vault_dir, cache=True)
    assert len(parses) == n and len(rows) == 1  # neither parsed nor a row read: the snapshot
    lazy = [m for m in again.memories.values() if type(m) is not readcache.Memory]
    assert len(lazy) > 100  # (a few were replaced by the whole-vault steps: plain Memory)
    m = lazy[0]
    assert readcache._get_record(m) is not None  # nothing decoded yet
    assert m == plain.memories[m.id] and plain.memories[m.id] == m  # (either side first)
    assert readcache._get_record(m) is None  # one read filled every field
    assert m.__class__ is readcache.Memory and isinstance(m, readcache.Memory)
    assert hash(m) == hash(plain.memories[m.id]) and repr(m) == repr(plain.memories[m.id])
    other = lazy[1]
    for made in (copy.copy(other), dataclasses.replace(other, title="x")):
        assert type(made) is readcache.Memory
    assert copy.copy(other) == plain.memories[other.id]
    def fields(x):
        return [dict(v) if isinstance(v, Mapping) else v
                for v in (getattr(x, f.name) for f in dataclasses.fields(x))]

    assert fields(lazy[2]) == fields(plain.memories[lazy[2].id])
    assert _snapshot(again) == _snapshot(first) == _snapshot(plain)
    assert again.graph == plain.graph
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy[3].title = "x"
    with pytest.raises(AttributeError):
        lazy[3].no_such_field  # noqa: B018


def test_the_snapshot_is_not_used_when_any_file_changed(vault_dir, parses, monkeypatch):
    rows = _count_rows(monkeypatch)
    v0 = read_vault(vault_dir, cache=True)
    m = _edit_keeping_size_and_mtime(vault_dir, v0)
    parses.clear()
    v1 = read_vault(vault_dir, cache=True)
    assert parses == [m.path] and len(rows) == 2  # the per-file records, one parse
    assert v1.memories[m.id].body != m.body
    assert _snapshot(v1) == _snapshot(read_vault(vault_dir))
    # That read wrote a new snapshot: the next one is served from it, with the edit.
    parses.clear()
    v2 = read_vault(vault_dir, cache=True)
    assert parses == [] and len(rows) == 2
    assert v2.memories[m.id].body == v1.memories[m.id].body
    # A new file and a deleted one change the vault's signature too.
    (vault_dir / "projects" / "new-one.md").write_text("---\nid: new-one\n---\nnew\n")
    gone = next(x for x in v0.memories.values() if x.id != m.id)
    (vault_dir / gone.path).unlink()
    v3 = read_vault(vault_dir, cache=True)
    assert parses == ["projects/new-one.md"] and len(rows) == 3
    assert "new-one" in v3.memories and gone.id not in v3.memories
    assert _snapshot(v3) == _snapshot(read_vault(vault_dir))


def test_a_damaged_or_replaced_snapshot_is_safe(vault_dir, parses, monkeypatch):
    rows = _count_rows(monkeypatch)
    plain = read_vault(vault_dir)
    read_vault(vault_dir, cache=True)
    snap = vault_dir / ".recall" / readcache.SNAPSHOT_NAME
    # Another process's read maps the snapshot; the file is then replaced by a newer read
    # (an atomic rename): the memories read before still decode from what they mapped.
    held = read_vault(vault_dir, cache=True)
    untouched = [m for m in held.memories.values() if readcache._get_record(m) is not None]
    assert untouched
    (vault_dir / "projects" / "new-one.md").write_text("---\nid: new-one\n---\nnew\n")
    read_vault(vault_dir, cache=True)
    assert "new-one" in read_vault(vault_dir, cache=True).memories
    assert all(m == plain.memories[m.id] for m in untouched)
    (vault_dir / "projects" / "new-one.md").unlink()
    read_vault(vault_dir, cache=True)  # (a new snapshot, for the vault as it is now)
    # Damaged in each of its parts: the per-file records are read instead, never an error.
    good = snap.read_bytes()
    n_rows = len(rows)
    for bad in (b"", good[:-5], good[:-90] + b"x" * 90):
        snap.write_bytes(bad)
        v = read_vault(vault_dir, cache=True)
        assert _snapshot(v) == _snapshot(plain)
    assert len(rows) == n_rows + 3
    # A damaged record (the head and signature intact): that memory is parsed again when it
    # is first used, and the snapshot deleted (the next read writes a new one).
    snap.write_bytes(good[:40] + b"\0" * 50 + good[90:])
    n_rows = len(rows)
    v = read_vault(vault_dir, cache=True)
    assert len(rows) == n_rows  # (served from the snapshot)
    assert snap.exists()
    assert _snapshot(v) == _snapshot(plain)
    assert not snap.exists()
    assert parses.count("projects/new-one.md") == 1


def test_a_failed_read_leaves_no_temporary_snapshot(vault_dir, monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("stop")

    monkeypatch.setattr(reader, "_whole_vault", failing)
    with pytest.raises(RuntimeError):
        read_vault(vault_dir, cache=True)
    names = [p.name for p in (vault_dir / ".recall").iterdir()]
    assert readcache.CACHE_NAME in names
    assert not [n for n in names if "snapshot" in n]


def test_a_snapshot_read_with_problems_duplicates_and_dot_names_equals_a_parse(
        vault_dir, parses, monkeypatch):
    """The snapshot's bulk build (reread9): a file with no memory (a problem only), a
    duplicate id (the memory dropped, its edges out of the graph), a dot-name beside regular
    files (never read); the entity graph's adjacency (made per entity on first use) equals
    the one a parse builds."""
    rows = _count_rows(monkeypatch)
    (vault_dir / "homelab" / "broken.md").write_text(
        "---\nid: broken\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    with_edges = next(p for p in sorted((vault_dir / "homelab").glob("*.md"))
                      if "\nedges:" in p.read_text(encoding="utf-8"))
    shutil.copy(with_edges, vault_dir / "homelab" / "zz-same-id.md")
    (vault_dir / "homelab" / ".hidden.md").write_text("---\nid: hidden\n---\nx\n")
    plain = read_vault(vault_dir)
    first = read_vault(vault_dir, cache=True)
    parses.clear()
    again = read_vault(vault_dir, cache=True)
    assert parses == [] and len(rows) == 1  # served from the snapshot
    assert "hidden" not in again.memories and not any(".hidden" in p.path for p in again.problems)
    assert any(p.path == "homelab/broken.md" for p in again.problems)
    assert any("duplicate id" in p.reason for p in again.problems)
    assert _snapshot(again) == _snapshot(first) == _snapshot(plain)
    assert again.graph == plain.graph and len(again.graph.edges) > 0
    assert list(again.graph.adjacency) == list(plain.graph.adjacency)
    assert dict(again.graph.adjacency) == dict(plain.graph.adjacency)
    entity = next(iter(plain.graph.adjacency))
    assert again.graph.neighbours(entity) == plain.graph.neighbours(entity)
    assert again.graph.adjacency.get("no such entity") is None
    assert again.graph.entities == plain.graph.entities
