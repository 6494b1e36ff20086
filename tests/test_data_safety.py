"""Data safety of the index and of edits, with real processes on real files (issue 10 item 3,
issue 11 bug 2): a kill during indexing, `index --rebuild`, a `.recall/` that cannot be written,
and many processes on one vault at once. What each test proves is listed in
docs/data-safety.md."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import apsw

from recall_tui.cli import main
from recall_tui.index.embed import make_embedder
from recall_tui.index.store import Index
from recall_tui.index.vector_sync import EMBED_CHUNK
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT
from tests.waiting import wait_until as wait_until_async
from tests.waiting import wait_until_sync

BIN = Path(sys.executable).with_name("recall-tui")
#: Generous: two cores shared by many processes.
TIMEOUT = 600


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                          input=stdin, timeout=TIMEOUT)


def popen(*args: str, stdin: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([str(BIN), *map(str, args)], text=True,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def small_vault(dst: Path) -> Path:
    """Two folders of the sample vault: cheap to embed from nothing."""
    for folder in ("people", "homelab"):
        shutil.copytree(SAMPLE_VAULT / folder, dst / folder)
    return dst


def count_rows(db: Path, table: str, where: str = "1") -> int:
    """Rows in `table` of the index at `db` (matching `where`), read through a read-only
    connection (0 while the file or table does not exist yet)."""
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return 0
    try:
        conn.set_busy_timeout(10_000)
        return conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]
    except apsw.Error:
        return 0
    finally:
        conn.close()


def stored_vectors(db: Path) -> int:
    """Vectors the index at `db` holds: on memories (the vec0 table's rowid shadow table, read
    without the extension), on turns, and parked in the embedding cache (each stored once)."""
    return (count_rows(db, "memory_vectors_rowids") + count_rows(db, "embed_cache")
            + count_rows(db, "turns", "vector IS NOT NULL"))


def wait_until(pred, what: str, timeout: float = TIMEOUT, every: float = 0.01) -> None:
    wait_until_sync(pred, what, timeout, interval=every)


# ------------------------------------------------------------------ kill -9 while indexing


def test_kill_during_index_loses_at_most_the_batch_in_flight(bare_vault_copy: Path):
    db = bare_vault_copy / ".recall" / "index.sqlite"
    proc = popen("index", bare_vault_copy, "--embedder", "local", "--json")
    try:
        wait_until(
            lambda: proc.poll() is not None or stored_vectors(db) >= EMBED_CHUNK,
            "the first batch of embeddings to be committed",
        )
        assert proc.poll() is None, (
            "`recall-tui index` finished before it could be killed mid-way:\n"
            f"{proc.stderr.read() if proc.stderr else ''}"
        )
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    committed = stored_vectors(db)
    assert committed >= EMBED_CHUNK

    again = cli("index", bare_vault_copy, "--embedder", "local", "--json")
    assert again.returncode == 0, again.stderr
    rep = json.loads(again.stdout)["report"]
    assert rep["rebuilt"] is None, "the killed run's file was thrown away, not recovered"
    total = stored_vectors(db)
    assert committed < total, "the kill came after the last batch: nothing left to prove"
    # Only what the killed run had not committed is embedded again; every committed batch
    # is reused (before batching, a kill threw all of them away).
    assert rep["embedded"] == total - committed
    assert rep["reused"] >= committed
    assert rep["vectors"] == rep["added"] + rep["updated"] + rep["unchanged"]


# ------------------------------------------------------------------ --rebuild


def test_rebuild_keeps_the_embedding_cache_and_recall_stats_unless_asked(tmp_path, capsys):
    root = small_vault(tmp_path / "vault")
    vault = read_vault(root)
    emb, _ = make_embedder("local")
    some = sorted(vault.memories)[:2]
    with Index.open(vault, emb) as idx:
        idx.record_recalls(some, PINNED_NOW)
        idx.record_recalls(some[:1], PINNED_NOW)
        first = idx.report
    assert first.embedded > 0
    db = root / ".recall" / "index.sqlite"
    cached = stored_vectors(db)
    assert count_rows(db, "embed_cache") == 0, "a vector stored twice (cache and row)"

    assert main(["index", str(root), "--embedder", "local", "--rebuild", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)["report"]
    assert rep["rebuilt"] == "asked for (--rebuild)"
    assert rep["added"] == len(vault.memories) and rep["unchanged"] == 0
    assert rep["embedded"] == 0, "a rebuild re-embedded texts the cache held"
    assert rep["reused"] == first.vectors + first.turns
    assert stored_vectors(db) == cached
    # Parked in the cache for the rebuild, taken back out onto the new rows: stored once.
    assert count_rows(db, "embed_cache") == 0
    with Index.open(read_vault(root), emb, read_only=True) as idx:
        assert idx.recall_stats(some[0]).count == 2
        assert idx.recall_stats(some[1]).count == 1
        assert idx.report.stale == 0

    assert main(["index", str(root), "--embedder", "local", "--rebuild", "--drop-cache",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)["report"]
    assert rep["rebuilt"] == "asked for (--rebuild, --drop-cache)"
    assert rep["embedded"] == cached
    with Index.open(read_vault(root), emb, read_only=True) as idx:
        assert idx.recall_stats(some[0]).count == 0

    assert main(["index", str(root), "--drop-cache"]) == 2
    assert "--drop-cache goes with --rebuild" in capsys.readouterr().err


# ------------------------------------------------------------------ .recall cannot be written


def _no_writable_place(tmp_path: Path, monkeypatch) -> tuple[Path, bytes]:
    """A vault whose `.recall` is a regular file (mkdir fails even for root) and a cache
    folder that is a regular file too: there is nowhere to keep an index file."""
    root = small_vault(tmp_path / "vault")
    blocker = b"not a folder\n"
    (root / ".recall").write_bytes(blocker)
    cache = tmp_path / "cache-is-a-file"
    cache.write_bytes(b"")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return root, blocker


def test_unwritable_recall_dir_query_index_edit_and_hook_work_from_memory(tmp_path, monkeypatch):
    root, blocker = _no_writable_place(tmp_path, monkeypatch)
    q = cli("query", "who reviews pull requests", "--vault", root, "--embedder", "local",
            "--json")
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout)["hits"], "no hits from the in-memory index"
    assert q.stderr.count("kept in memory") == 1, q.stderr
    assert "Traceback" not in q.stderr
    plain = cli("query", "homelab backups", "--vault", root, "--embedder", "none")
    assert plain.returncode == 0 and plain.stderr.count("kept in memory") == 1, plain.stderr

    ix = cli("index", root, "--embedder", "local", "--json")
    assert ix.returncode == 0, ix.stderr
    out = json.loads(ix.stdout)
    assert out["index"] == ":memory:" and "kept in memory" in out["report"]["location_note"]
    assert out["report"]["vectors"] > 0

    target = sorted(read_vault(root).memories)[0]
    ed = cli("edit", target, "--vault", root, "--add", "a phrase saved without an index")
    assert ed.returncode == 0, ed.stderr
    assert "a phrase saved without an index" in read_vault(root).memories[target].recall_when
    assert "Traceback" not in ed.stderr

    payload = json.dumps({"session_id": "s", "prompt": "homelab backups", "cwd": str(root),
                          "hook_event_name": "UserPromptSubmit"})
    for extra in ((), ("--embedder", "local")):
        hook = cli("hook", "prompt-submit", "--vault", root, *extra, stdin=payload)
        assert hook.returncode == 0, hook.stderr
        assert "Traceback" not in hook.stderr, hook.stderr
    assert (root / ".recall").read_bytes() == blocker


async def test_unwritable_recall_dir_the_tui_says_so_once_and_recalls(tmp_path, monkeypatch):
    from recall_tui.tui.app import make_app

    root, _ = _no_writable_place(tmp_path, monkeypatch)
    app = make_app(root, now=PINNED_NOW, embedder="local")
    said: list[str] = []  # every notice, kept: on a loaded machine one may expire before a look
    notify = app.notify
    app.notify = lambda message, *a, **kw: (said.append(str(message)),  # type: ignore[method-assign]
                                            notify(message, *a, **kw))[1]
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_async(pilot, lambda: app.engine is not None and not app.recall_pending,
                               "the TUI to open the vault", TIMEOUT)
        # a staged open says so only once the index is open (its vectors ready): wait for it
        await wait_until_async(pilot, lambda: any("kept in memory" in m for m in said),
                               "the in-memory notice", TIMEOUT)
        app.launch_recall()  # another recall must not say it again
        await wait_until_async(pilot, lambda: not app.recall_pending, "the second recall", TIMEOUT)
        await pilot.pause()
        notes = [m for m in said if "kept in memory" in m]
        assert len(notes) == 1, said
        assert app.engine.index.report.in_memory
        trace = app.engine.recall("homelab backups", now=PINNED_NOW)
        assert trace.hits


# ------------------------------------------------------------------ many processes at once


def test_tui_service_queries_rebuild_edits_and_hook_on_one_vault_at_once(vault_copy: Path):
    from recall_tui.engine import open_engine
    from recall_tui.engine.engines import EngineSet

    vault = read_vault(vault_copy)
    a, b = "ingrid-sorensen", "jonas-becker"
    assert a in vault.memories and b in vault.memories
    phrase_a, phrase_b = "quokka census rehearsal", "zeppelin hangar inventory"
    from recall_tui.agent import client

    # The recall service (what the hooks talk to), warm before the mix starts.
    service = popen("serve", "--vault", vault_copy, "--idle", "300")
    assert client.wait_ready(vault_copy, timeout=TIMEOUT), "the recall service never answered"
    # The TUI's side, in this process: its engine and the watcher/refresh path it uses.
    engine = open_engine(vault_copy, embedder="local")
    summaries = []
    watcher = EngineSet.of(engine).watch(summaries.append)
    payload = json.dumps({"session_id": "s", "prompt": "what did Ingrid say about reviews",
                          "cwd": str(vault_copy), "hook_event_name": "UserPromptSubmit"})
    try:
        procs = {
            "query 1": popen("query", "postgres upgrade", "--vault", vault_copy,
                             "--embedder", "local", "--json"),
            "rebuild": popen("index", vault_copy, "--embedder", "local", "--rebuild"),
            "edit a": popen("edit", a, "--vault", vault_copy, "--add", phrase_a),
            "query 2": popen("query", "homelab backups", "--vault", vault_copy,
                             "--embedder", "local"),
            "edit b": popen("edit", b, "--vault", vault_copy, "--add", phrase_b),
            "hook": popen("hook", "prompt-submit", "--vault", vault_copy, "--embedder", "local",
                          stdin=payload),
            "query 3": popen("query", "why did the deploy fail", "--vault", vault_copy,
                             "--embedder", "local", "--json"),
        }
        served = [client.request(vault_copy, {"op": "recall", "query": q, "k": 3},
                                 timeout=TIMEOUT) for q in ("postgres upgrade", "homelab backups")]
        assert all(r["ok"] and r["trace"]["hits"] for r in served), served
        results = {}
        for name, p in procs.items():
            out, err = p.communicate(payload if name == "hook" else None, timeout=TIMEOUT)
            results[name] = (p.returncode, out, err)
        for name, (rc, _out, err) in results.items():
            assert rc == 0, f"{name} exited {rc}:\n{err}"
            assert "locked" not in err.lower(), f"{name}:\n{err}"
            assert "Traceback" not in err, f"{name}:\n{err}"
            assert "warning: the edit is saved but" not in err, f"{name}:\n{err}"
        # No lost write, no half-written file.
        after = read_vault(vault_copy)
        assert phrase_a in after.memories[a].recall_when
        assert phrase_b in after.memories[b].recall_when
        assert not after.problems or {p.path for p in after.problems} == {
            p.path for p in vault.problems}
        assert not list(vault_copy.rglob("*.tmp")), "a temporary file of an edit was left"
        # The TUI side picks both edits up through its watcher and recalls the new phrases.
        wait_until(lambda: phrase_a in engine.vault.memories[a].recall_when
                   and phrase_b in engine.vault.memories[b].recall_when,
                   "the watcher to pick up both edits", every=0.05)
        assert not [s.error for s in summaries if s.error]
        for mid, phrase in ((a, phrase_a), (b, phrase_b)):
            hits = [h.id for h in engine.recall(phrase, k=10, now=PINNED_NOW).hits]
            assert mid in hits, f"the TUI's engine does not recall {mid} by {phrase!r}: {hits}"

            def served_hits(phrase=phrase) -> list[str]:
                ans = client.request(vault_copy, {"op": "recall", "query": phrase, "k": 10},
                                     timeout=TIMEOUT)
                assert ans["ok"], ans
                return [h["id"] for h in ans["trace"]["hits"]]

            wait_until(lambda mid=mid, f=served_hits: mid in f(),
                       f"the recall service to recall {mid} by {phrase!r}", every=0.2)
    finally:
        watcher.stop()
        engine.index.close()
        stop = cli("serve", "--vault", vault_copy, "--stop")
        _out, service_err = service.communicate(timeout=TIMEOUT)
        if service.poll() is None:
            service.kill()
    assert stop.returncode == 0, stop.stderr
    assert "locked" not in service_err.lower() and "Traceback" not in service_err, service_err
    # The index is consistent: opening it again finds nothing to do.
    emb, _ = make_embedder("local")
    with Index.open(read_vault(vault_copy), emb) as idx:
        rep = idx.report
        assert (rep.added, rep.updated, rep.removed, rep.embedded) == (0, 0, 0, 0), rep
        assert rep.vectors == len(after.memories)
        assert idx.embedder_info["usable"]


def test_two_edits_of_one_memory_at_once_never_lose_one(vault_copy: Path):
    """Both edits report success (each applied to the version it saw) or one is refused as a
    conflict; never do both succeed with one phrase missing from the file."""
    mid = "ingrid-sorensen"
    phrases = [f"concurrent phrase {i}" for i in range(4)]
    procs = [popen("edit", mid, "--vault", vault_copy, "--add", p, "--no-index") for p in phrases]
    outcomes = []
    for p in procs:
        _out, err = p.communicate(timeout=TIMEOUT)
        outcomes.append((p.returncode, err))
    have = read_vault(vault_copy).memories[mid].recall_when
    for phrase, (rc, err) in zip(phrases, outcomes, strict=True):
        assert rc in (0, 1), err
        if rc == 0:
            assert phrase in have, f"{phrase!r} was reported written but is not in the file"
        else:
            assert "changed" in err.lower() or "conflict" in err.lower(), err
    assert any(rc == 0 for rc, _ in outcomes)


def test_an_open_index_sees_what_another_process_wrote(tmp_path):
    """A long-lived index (the TUI's) keeps in-memory caches (bm25 replicas keyed by rowid, the
    vector matrix); when another connection re-indexes, they are dropped, not trusted."""
    from recall_tui.vault.edit import set_recall_when

    root = small_vault(tmp_path / "vault")
    emb, _ = make_embedder("local")
    mid = "ingrid-sorensen"
    phrase = "zeppelin hangar inventory"
    with Index.open(read_vault(root), emb) as tui:
        assert tui.fts_any(["zeppelin"], 5) == []
        before_ids, _ = tui.vectors()
        memory = read_vault(root).memories[mid]
        set_recall_when(root / memory.path, [*memory.recall_when, phrase],
                        expected_hash=memory.content_hash)
        # Another connection (an `edit` or `index` process) re-indexes; then rebuilds, which
        # gives every memory a new rowid.
        with Index.open(read_vault(root), emb) as other:
            assert other.report.updated == 1
        with Index.open(read_vault(root), emb, rebuild=True) as other:
            assert other.report.embedded == 0
        assert [i for i, _ in tui.fts_any(["zeppelin"], 5)] == [mid]
        ids, mat = tui.vectors()
        assert sorted(ids) == sorted(before_ids)
        q = tui.embed_query(phrase)
        assert tui.vector_search(q, 1)[0][0] == mid
        assert tui.report.in_memory is False


def test_a_write_after_another_process_wrote_drops_this_process_caches(tmp_path):
    """`bump_generation` writes a new generation for the others to see; when the stored one
    is not the one this process last saw, another process wrote meanwhile, and this process
    drops its caches first (its new value would otherwise hide that write from it)."""
    import apsw

    from recall_tui.index.sharing import SharedFile

    path = str(tmp_path / "shared.sqlite")
    conns = [apsw.Connection(path) for _ in range(2)]
    conns[0].execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    dropped = [0, 0]
    files = [SharedFile(c, lambda i=i: dropped.__setitem__(i, dropped[i] + 1))
             for i, c in enumerate(conns)]
    for f in files:
        f.check_external()
    with conns[0]:
        files[0].bump_generation()  # the first write: nobody else wrote, nothing dropped
    assert dropped == [0, 0]
    with conns[1]:
        files[1].bump_generation()  # another process saw the first write only now
    assert dropped == [0, 1]
    with conns[0]:
        files[0].bump_generation()  # before any read: the other's write is noticed here
    assert dropped == [1, 1]
    files[0].check_external()  # and its own value is what it saw last
    assert dropped == [1, 1]
    for c in conns:
        c.close()
