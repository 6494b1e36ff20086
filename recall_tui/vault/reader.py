"""Read a vault folder into a `Vault`: memories, problems, chains, entity graph, digests, turns.

A vault is written by agents and people, so any file may be wrong in its own way. The reader
never raises for content: each defect becomes a `Problem` naming the file, the line and what
was done about it, and the rest of the vault loads. A bad key falls back to its default; a
file that cannot be parsed at all is skipped. Reading never writes anything, not even
`.recall/` (the index creates that).

The reader is split by concern: `frontmatter.py` (the split and the YAML, fast path first),
`fields.py` (keys to typed fields, defaults), `walk.py` (the folder walk and file reading),
`chains.py` (unknown links, supersession, chains) and `digests.py` (digests and turns). This
module builds memories and holds `read_vault`; names imported here as `x as x` are re-exports,
so callers and tests keep importing them from `recall_tui.vault.reader`.

The rules this module implements are written down for users in docs/vault-format.md.
"""

from __future__ import annotations

import difflib
import errno
import functools
import gc
import hashlib
import marshal
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType

from recall_tui.vault import readcache
from recall_tui.vault.chains import (
    _build_chains,
    _drop_unknown_links,
    _status_warnings,
    _supersession_links,
)
from recall_tui.vault.digests import TURN_ROLES as TURN_ROLES
from recall_tui.vault.digests import _read_digest, _read_turns
from recall_tui.vault.fields import _UTC, _first_paragraph, _Keys, _title_from_body
from recall_tui.vault.frontmatter import _fast_front as _fast_front
from recall_tui.vault.frontmatter import _Front, _load_frontmatter, _SkipFile, _split_frontmatter
from recall_tui.vault.frontmatter import _yaml_front as _yaml_front
from recall_tui.vault.model import (
    KNOWN_KEYS,
    MEMORY_TYPES,
    STATUSES,
    TIERS,
    DigestParagraph,
    EntityGraph,
    Memory,
    Problem,
    Role,
    Turn,
    Vault,
)
from recall_tui.vault.model import Chain as Chain
from recall_tui.vault.model import Edge as Edge
from recall_tui.vault.model import RelatedLink as RelatedLink
from recall_tui.vault.parallel import PARALLEL_MIN_FILES, parse_in_pool, pool_size, write_chunk
from recall_tui.vault.patchbasis import forget_read, note_read
from recall_tui.vault.readcache import (
    FileKey,
    ReadCache,
    Record,
    remember,
    remembered,
    snapshot_path,
    vault_signature,
)
from recall_tui.vault.readcache import dumps as cache_dumps
from recall_tui.vault.readcache import loads as cache_loads
from recall_tui.vault.snapshot import SnapshotWriter, load_snapshot
from recall_tui.vault.walk import BINARY_SNIFF_BYTES as BINARY_SNIFF_BYTES
from recall_tui.vault.walk import MAX_FILE_BYTES as MAX_FILE_BYTES
from recall_tui.vault.walk import _File, _memory_file_keys, _numbered_others, _read_text, _walk
from recall_tui.vault.yamlbounds import MAX_VALUE_CHARS

#: Top-level folders that give a memory its role (vault-format.md, Layout).
ROLE_FOLDERS: dict[str, Role] = {
    "_always-load": Role.ALWAYS_LOAD,
    "_inbox": Role.INBOX,
    "_archive": Role.ARCHIVE,
}
DIGESTS_DIR = "consolidation"
DIGEST_PERIODS: tuple[str, ...] = ("daily", "weekly", "quarterly")
SESSIONS_DIR = "sessions"
#: Files read between two calls of `read_vault`'s progress callback.
READ_PROGRESS_EVERY = 500
#: Parsed records written to the reading cache per transaction during a read.
CACHE_WRITE_EVERY = 2000


# --------------------------------------------------------------------------------------------
# Memories
# --------------------------------------------------------------------------------------------


def _role_and_topic(rel: str) -> tuple[Role, str]:
    parts = rel.split("/")
    folders = parts[:-1]
    role = Role.NORMAL
    if folders and folders[0] in ROLE_FOLDERS:
        role = ROLE_FOLDERS[folders[0]]
        folders = folders[1:]
    return role, "/".join(folders)


def _read_memory(
    f: _File, problems: list[Problem], src: list[tuple[str | None, int]] | None = None
) -> Memory | None:
    """One memory file parsed (None when it cannot be); `src` gets the (YAML text, first
    line) its frontmatter was parsed from, for the reading cache's record."""
    got = _read_text(f, problems)
    if got is None:
        return None
    text, data, st = got
    file_problems: list[Problem] = []
    try:
        fm, fm_line, body, _ = _split_frontmatter(text)
        if src is not None:
            src.append((fm, fm_line))
        front = _load_frontmatter(f.rel, fm, fm_line, file_problems) if fm is not None else _Front()
    except _SkipFile as skip:
        problems.extend(file_problems)
        problems.append(Problem(f.rel, skip.line, skip.reason))
        return None
    memory = _build_memory(f.rel, front, body, data, st.st_mtime, file_problems)
    problems.extend(file_problems)
    return memory


def _read_memory_cached(
    f: _File,
    problems: list[Problem],
    decoded: dict[str, tuple[Memory | None, list[Problem]]],
    keys: dict[str, FileKey | None],
    fresh: list[tuple[str, FileKey, bytes]],
    rcache: ReadCache | None = None,
    records: dict[str, tuple[FileKey, Record]] | None = None,
    snap: SnapshotWriter | None = None,
) -> Memory | None:
    """`_read_memory` through the reading cache: the decoded record when the file's key was
    unchanged, else a fresh parse, queued in `fresh` for the cache. Every record with a key
    is also put in `records` (what this process remembers of the read)."""
    key = keys.get(f.rel)
    hit = decoded.pop(f.rel, None)
    if hit is not None:
        memory, cached_problems = hit
        problems.extend(cached_problems)
        if records is not None and key is not None:
            records[f.rel] = (key, hit)
        return memory
    file_problems: list[Problem] = []
    src: list[tuple[str | None, int]] = []
    memory = _read_memory(f, file_problems, src)
    problems.extend(file_problems)
    if key is not None:
        if records is not None:
            records[f.rel] = (key, (memory, file_problems))
        blob = cache_dumps((memory, file_problems), src[0] if memory is not None else None)
        fresh.append((f.rel, key, blob))
        if snap is not None:
            snap.add(f.rel, blob)
        if len(fresh) >= CACHE_WRITE_EVERY and rcache is not None:
            rcache.store(fresh, [])  # in batches: a first read does not hold every record
            fresh.clear()
    return memory


def _memory_keys(files: list[_File]) -> dict[str, FileKey | None]:
    """Every memory file's key now (None when it cannot be stat'ed)."""
    return _memory_file_keys(files, _NOT_MEMORY_DIRS)  # (`_is_memory_file`, `file_key`)


def _cached_records(
    rcache: ReadCache,
    keys: dict[str, FileKey | None],
    memo: dict[str, tuple[FileKey, Record]] | None = None,
    snap: SnapshotWriter | None = None,
) -> tuple[dict[str, tuple[Memory | None, list[Problem]]], list[str], bool]:
    """The decoded records of the memory files whose key (`keys`) is unchanged (from
    `memo`, what this process kept of its last read of the vault, else streamed from the
    cache: one record's bytes at a time are held; each also given to `snap`), the cached
    paths that are gone, and whether the records came from the memo.
    With a memo the cache file is not scanned unless many files are new to it (they would
    be parsed in a pool anyway): a changed file is parsed, a vanished one is dropped."""
    decoded: dict[str, tuple[Memory | None, list[Problem]]] = {}
    gone: list[str] = []
    if memo is not None:
        for rel, key in keys.items():
            got = memo.get(rel)
            if got is not None and got[0] == key:
                decoded[rel] = got[1]
        if len(keys) - len(decoded) < PARALLEL_MIN_FILES:
            return decoded, [rel for rel in memo if rel not in keys], True
        decoded.clear()  # (many files new to the memo: the cache file's records, as usual)
    # One scan of the table: each row's key compared with the file's, the record decoded
    # when they agree (one record's bytes at a time are held).
    for rel, key, blob in rcache.rows():
        now = keys.get(rel, _GONE)
        if now is _GONE:
            gone.append(rel)
        elif now == key and rel not in decoded:
            try:
                decoded[rel] = cache_loads(blob)
            except Exception:  # a record this reader cannot load: parse again
                continue
            if snap is not None:
                snap.add(rel, blob)
    return decoded, gone, False


_GONE = object()
_NO_SPLIT = ["", ""]  # a path's parts that match no digest or transcript folder


def _is_memory_file(rel: str) -> bool:
    """Whether `read_vault` routes the file at `rel` to the memory reader."""
    return rel.endswith(".md") and not rel.startswith(_NOT_MEMORY_DIRS)


#: Files below these folders are digests and transcripts, never memories (no split per file).
_NOT_MEMORY_DIRS = (DIGESTS_DIR + "/", SESSIONS_DIR + "/")


def _build_memory(
    rel: str, front: _Front, body: str, data: bytes, mtime: float, problems: list[Problem]
) -> Memory:
    keys = _Keys(rel, front, problems)
    stem = rel.rsplit("/", 1)[-1][: -len(".md")]
    role, folder_topic = _role_and_topic(rel)
    memory_id = keys.text("id", stem, f"the file name {stem!r}") or stem
    created = keys.when("created", None, "the file's modification time") or datetime.fromtimestamp(
        mtime, _UTC
    )
    superseded_by = keys.texts("superseded_by")
    if len(superseded_by) > 1:
        keys.bad("superseded_by", front.raw["superseded_by"], "one id", "none")
        superseded_by = ()
    topic_path = keys.text("topic_path", None, "the folder path")
    extra = {k: v for k, v in front.raw.items() if k not in KNOWN_KEYS}
    for key in extra:
        guess = _did_you_mean(key)
        if guess:
            problems.append(
                Problem(
                    rel,
                    front.lines.get(key),
                    f"unknown key '{key}' kept as an extra; did you mean '{guess}'?",
                    "warning",
                )
            )
    return Memory(
        id=memory_id,
        path=rel,
        role=role,
        title=keys.text("title", None, "the first heading or the file name")
        or (_title_from_body(body) or "")[:MAX_VALUE_CHARS]
        or stem,
        type=keys.choice("type", MEMORY_TYPES, "fact"),
        scope=keys.text("scope", "global") or "global",
        summary=keys.text("summary", None, "the first paragraph") or _first_paragraph(body)[:MAX_VALUE_CHARS],
        recall_when=keys.texts("recall_when"),
        tags=keys.texts("tags"),
        keywords=keys.keywords(),
        topic_path=topic_path.strip("/") if topic_path is not None else folder_topic,
        topic_key=keys.text("topic_key", None),
        status=keys.choice("status", STATUSES, "active"),
        supersedes=keys.texts("supersedes"),
        superseded_by=superseded_by[0] if superseded_by else None,
        related_via=keys.related(),
        edges=keys.edges(memory_id),
        created=created,
        updated=keys.when("updated", created, "created") or created,
        valid_from=keys.when("valid_from", None),
        valid_to=keys.when("valid_to", None),
        ingested_at=keys.when("ingested_at", created, "created") or created,
        expires=keys.when("expires", None),
        trust=keys.number("trust", 0, 3, 2.0),
        credibility=keys.number("credibility", 1, 5, 3.0),
        confidence=keys.optional_number("confidence", 0, 1),
        emotion=keys.number("emotion", -5, 5, 0.0),
        tier=keys.choice("tier", TIERS, "normal"),
        source=keys.text("source", None),
        session_id=keys.text("session_id", None),
        lang=keys.text("lang", "en") or "en",
        original=keys.text("original", None),
        body=body,
        content_hash=hashlib.sha256(data).hexdigest(),
        mtime=mtime,
        extra=MappingProxyType(extra),
        frontmatter=MappingProxyType(dict(front.raw)),
        key_lines=MappingProxyType(dict(front.lines)),
    )


@functools.lru_cache(maxsize=1024)
def _did_you_mean(key: str) -> str | None:
    """A known key an unknown one is probably a typo of (`recall-when`, `tag`), else None."""
    folded = key.strip().lower().replace("-", "_").replace(" ", "_")
    if folded in KNOWN_KEYS:
        return folded
    close = difflib.get_close_matches(folded, KNOWN_KEYS, n=1, cutoff=0.85)
    return close[0] if close else None


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def read_vault(
    root: str | os.PathLike[str],
    *,
    cache: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
    sessions: bool = True,
) -> Vault:
    """Read every memory, digest and transcript below `root` into a `Vault`.

    Raises only when the root itself is missing (`FileNotFoundError`) or not a folder
    (`NotADirectoryError`); every other defect is a `Problem` in the result.

    `cache=True` keeps each memory file's parsed record in the reading cache
    (`readcache.py`, in `.recall/`) and parses only the files whose size, times or inode
    changed since the last cached read; the result is the same Vault. Without it, reading
    writes nothing at all. `progress(done, total, "reading")` is called as files are read
    (every READ_PROGRESS_EVERY files and at the end).

    When many memory files need parsing (a first read: PARALLEL_MIN_FILES or more) and the
    machine has more than one core, they are parsed in a pool of worker processes
    (`parallel.py`); the Vault is the same, problems included, in the same order. `workers`
    sets the pool's size (0 or 1: parse here; None: one per core, when that many files).

    `sessions=False` leaves the session logs unread (no turns, no problems of theirs), for an
    open that reads them after the memories are usable (`engine/opening.py`); such a Vault is
    never a basis for `patch_vault`.
    """
    # Reading makes hundreds of thousands of objects and no reference cycles: the cyclic
    # collector would only walk them again and again as they pile up (a third of a re-read).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_vault(root, cache, progress, workers, sessions)
    finally:
        if collecting:
            gc.enable()


def _read_vault(
    root: str | os.PathLike[str],
    cache: bool,
    progress: Callable[[int, int, str], None] | None,
    workers: int | None = None,
    sessions: bool = True,
) -> Vault:
    root_path = os.path.abspath(os.fspath(root))
    if not os.path.exists(root_path):
        raise FileNotFoundError(errno.ENOENT, "no vault folder here", root_path)
    if not os.path.isdir(root_path):
        raise NotADirectoryError(errno.ENOTDIR, "the vault must be a folder", root_path)

    problems: list[Problem] = []
    memories: dict[str, Memory] = {}
    digests: list[DigestParagraph] = []
    turns: list[Turn] = []
    turn_logs: dict[str, str] = {}  # session log -> its signature
    rcache = ReadCache.open(root_path) if cache else None
    fresh: list[tuple[str, FileKey, bytes]] = []
    files = _walk(root_path, problems)
    walked = len(problems)  # (the walk's problems; the files' follow)
    decoded: dict[str, tuple[Memory | None, list[Problem]]] = {}
    keys: dict[str, FileKey | None] = {}
    all_cached = False  # every memory file's record came from the reading cache
    records: dict[str, tuple[FileKey, Record]] = {}  # what this process keeps of the read
    mproblems: list[Problem] = []  # the memory files' problems, the whole-vault steps' too
    memo = remembered(root_path) if rcache is not None else None
    # The result of this process's last read for the memory files, when every one is as it
    # was then (same paths, same keys: every record came from the memo): the same memories,
    # chains, graph and problems (each file's and the whole-vault steps').
    kept: _Kept | None = None
    gone: list[str] = []
    snap: SnapshotWriter | None = None  # (a read not from this process's memo writes one)
    sig = None
    if rcache is not None:
        keys = _memory_keys(files)
        if memo is None:
            sig = vault_signature(keys)
            got = _from_snapshot(root_path, rcache, keys, sig) if sig is not None else None
            if got is not None:
                kept, records = got
            else:
                snap = SnapshotWriter(snapshot_path(rcache.path))
    if rcache is not None and kept is None:
        decoded, gone, from_memo = _cached_records(
            rcache, keys, memo.records if memo else None, snap)
        all_cached = len(decoded) == len(keys)
        if memo is not None and from_memo and all_cached and not gone \
                and len(keys) == len(memo.records):
            kept = memo.whole
            if kept is not None:
                records = memo.records
    shown = [0]  # files reported to `progress` so far: it never goes back

    def tick(n: int) -> None:
        if progress is not None and n >= shown[0]:
            shown[0] = n
            progress(n, len(files), "reading")

    if kept is None:
        _parse_in_parallel(files, decoded, keys, fresh, rcache, workers, tick, snap)
    # (with `kept`, every memory file and its problems are there: only the others are read;
    # their numbers skip the memory files, so the start is reported here)
    tick(0)
    for n, f in enumerate(files) if kept is None else _numbered_others(files, keys):
        if n % READ_PROGRESS_EVERY == 0:
            tick(n)
        # (a memory file, the common case, goes to the last branch without splitting its path)
        parts = _NO_SPLIT if _is_memory_file(f.rel) else f.rel.split("/")
        if parts[0] == DIGESTS_DIR and len(parts) > 1:
            if len(parts) == 3 and parts[1] in DIGEST_PERIODS and parts[2].endswith(".md"):
                digests.extend(_read_digest(f, parts[1], problems))
            elif f.rel.endswith(".md"):
                problems.append(
                    _not_read(f.rel, "digests live in consolidation/{daily,weekly,quarterly}/")
                )
        elif parts[0] == SESSIONS_DIR and len(parts) > 1:
            if not sessions:
                continue
            if len(parts) == 2 and parts[1].endswith(".jsonl"):
                turns.extend(_read_turns(f, problems, rcache, turn_logs))
            elif f.rel.endswith(".md"):
                problems.append(
                    _not_read(f.rel, "sessions/ holds transcripts (<session_id>.jsonl)")
                )
        elif f.rel.endswith(".md"):
            if kept is not None:
                continue  # (every memory, and every problem of theirs, is in `kept`)
            if rcache is None:
                hit = decoded.pop(f.rel, None)
                if hit is None:
                    memory = _read_memory(f, mproblems)
                else:
                    memory = hit[0]
                    mproblems.extend(hit[1])
            else:
                memory = _read_memory_cached(
                    f, mproblems, decoded, keys, fresh, rcache, records, snap)
            if memory is None:
                continue
            first = memories.get(memory.id)
            if first is not None:
                mproblems.append(
                    Problem(
                        memory.path,
                        memory.key_lines.get("id"),
                        f"duplicate id '{memory.id}' (first used by {first.path}); file skipped",
                    )
                )
                continue
            memories[memory.id] = memory

    tick(len(files))
    if rcache is not None and sessions:  # (else every log's record would look gone)
        rcache.store_turn_logs()
    if kept is not None:
        if rcache is not None:
            rcache.close()
        sig, memories, chains, graph, added = kept
    else:
        if rcache is not None:
            rcache.store(fresh, gone)
            if sig is None:
                sig = vault_signature(keys)
        try:
            memories, chains = _whole_vault(memories, mproblems, rcache, sig, all_cached)
        finally:
            if rcache is not None:
                rcache.close()
        added = tuple(mproblems)
        graph = EntityGraph.build(tuple(e for m in memories.values() for e in m.edges))
        if snap is not None:
            snap.finish(sig, records, memories, chains, graph, added)
    walk_problems, file_problems = problems[:walked], problems[walked:]  # (for a patch)
    problems.extend(added)  # (sorted below with the digests' and transcripts')

    problems.sort(key=_problem_order)
    vault = Vault(
        root=root_path,
        memories=MappingProxyType(memories),
        problems=tuple(problems),
        digests=tuple(digests),
        turns=tuple(turns),
        chains=chains,
        graph=graph,
        turn_logs=MappingProxyType(turn_logs),
    )
    if rcache is not None:
        remember(root_path, vault, records,
                 (sig, memories, chains, graph, added) if sig is not None else None)
        if sessions and len(records) == len(keys):  # every record there: patchable
            note_read(vault, walk_problems, file_problems, added, records)
        else:
            forget_read(root_path)
    return vault


def _whole_vault(
    memories: dict[str, Memory],
    problems: list[Problem],
    rcache: ReadCache | None,
    sig: bytes | None,
    all_cached: bool,
) -> tuple[dict[str, Memory], tuple[Chain, ...]]:
    """The steps that look at the whole vault (unknown links dropped, supersession resolved,
    chains, status warnings): the memories as they leave them, their problems added to
    `problems`, and the chains. Their result depends only on the memory records, so it is
    kept in the reading cache under the vault's signature (every memory file's path and key)
    and taken from there when every record came from the cache too (an unchanged vault)."""
    if rcache is not None and sig is not None and all_cached:
        blob = rcache.vault_result(sig)
        if blob is not None:
            try:
                return _apply_whole(memories, problems, blob)
            except Exception:  # a result this reader cannot load: run the steps
                pass
    before = memories
    n = len(problems)
    memories = _drop_unknown_links(memories, problems)
    links, memories = _supersession_links(memories, problems)
    order = {mid: i for i, mid in enumerate(memories)}
    chains = _build_chains(links, order)
    _status_warnings(memories, links, problems)
    if rcache is not None and sig is not None:
        changed = tuple(
            (mid, m.supersedes, m.superseded_by,
             tuple((r.id, r.score, r.relation) for r in m.related_via))
            for mid, m in memories.items()
            if before.get(mid) is not m
        )
        added = tuple((p.path, p.line, p.reason, p.severity) for p in problems[n:])
        rcache.store_vault_result(
            sig, marshal.dumps((added, changed, tuple(c.ids for c in chains)))
        )
    return memories, chains


def _apply_whole(
    memories: dict[str, Memory], problems: list[Problem], blob: bytes
) -> tuple[dict[str, Memory], tuple[Chain, ...]]:
    """`_whole_vault`'s kept result applied to the memories read from the cache."""
    added, changed, chains = marshal.loads(blob)
    new_problems = [Problem(*p) for p in added]
    if changed:
        memories = dict(memories)
        for mid, supersedes, superseded_by, related in changed:
            memories[mid] = replace(
                memories[mid],
                supersedes=supersedes,
                superseded_by=superseded_by,
                related_via=tuple([RelatedLink(*r) for r in related]),
            )
    problems.extend(new_problems)
    return memories, tuple([Chain(ids) for ids in chains])


#: What a read made of the memory files: the vault signature, the memories, chains, entity
#: graph and the memory files' problems (each file's, then the whole-vault steps').
_Kept = tuple[bytes | None, dict[str, Memory], tuple[Chain, ...], EntityGraph, tuple[Problem, ...]]


def _from_snapshot(
    root: str, rcache: ReadCache, keys: dict[str, FileKey | None], sig: bytes
) -> tuple[_Kept, dict[str, tuple[FileKey, Record]]] | None:
    """The memory files' result of the read that wrote the reading snapshot, when it was
    written for exactly these files and keys (`sig`), and the records to remember; else
    None. Its memories are lazy: a record is decoded on first use (`readcache.Snapshot`)."""
    snapshot = load_snapshot(root, rcache.path)
    if snapshot is None or snapshot.sig != sig:
        return None
    got = snapshot.build(keys)
    if got is None:
        return None
    return (sig, got.memories, got.chains, got.graph, got.problems), got.records


def _reparse(root: str, rel: str) -> Memory | None:
    """One memory file parsed again (a damaged record in the reading snapshot)."""
    return _read_memory(_File(rel, os.path.join(root, rel)), [])


readcache._REPARSE[:] = [_reparse]


def _parse_in_parallel(
    files: list[_File],
    decoded: dict[str, tuple[Memory | None, list[Problem]]],
    keys: dict[str, FileKey | None],
    fresh: list[tuple[str, FileKey, bytes]],
    rcache: ReadCache | None,
    workers: int | None,
    tick: Callable[[int], None],
    snap: SnapshotWriter | None = None,
) -> None:
    """Parse the memory files not in `decoded` in worker processes when there are enough of
    them (see `read_vault`), adding their records to `decoded` (and to the reading cache,
    in batches, as they arrive). Files the pool did not parse are left to the serial loop."""
    todo = [
        (f.rel, f.path)
        for f in files
        if f.rel not in decoded and _is_memory_file(f.rel)  # (a re-read: all in decoded)
        and (rcache is None or keys.get(f.rel) is not None)
    ]
    n = pool_size() if workers is None else workers
    if n < 2 or not todo or (workers is None and len(todo) < PARALLEL_MIN_FILES):
        return
    for rel, blob in parse_in_pool(todo, n, tick):
        try:
            decoded[rel] = cache_loads(blob)
        except Exception:  # cannot happen with this reader's records: parse it
            continue
        key = keys.get(rel)
        if rcache is not None and key is not None:
            if snap is not None:
                snap.add(rel, blob)
            fresh.append((rel, key, blob))
            if len(fresh) >= CACHE_WRITE_EVERY:
                rcache.store(fresh, [])
                fresh.clear()


def _worker_main() -> None:
    """A parsing worker (`parallel.py`): read its chunks of (rel, path) files (one marshalled
    list) from stdin; for each chunk write the list of the files' records, encoded for the
    reading cache, to stdout."""
    import sys

    gc.disable()  # as `read_vault`: many objects, no cycles
    chunks = marshal.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    for chunk in chunks:
        srcs: list[tuple[str | None, int] | None] = []
        records = _read_memories(chunk, srcs)
        write_chunk(out, [cache_dumps(r, s) for r, s in zip(records, srcs, strict=True)])


def _read_memories(
    chunk: list[tuple[str, str]], srcs: list[tuple[str | None, int] | None] | None = None
) -> list[Record]:
    """`_read_memory`'s record of each (rel, path) file, the same, made step by step over the
    whole chunk (read every file, then split and load every frontmatter, then build every
    Memory): each step's code stays hot in the processor's caches, which a loop through all
    the steps file by file does not (a worker spent ~0.05-0.1 ms a file more that way).
    `srcs` gets each file's frontmatter source (`_read_memory`'s `src`; None without a
    Memory)."""
    records: list[Record] = []
    read: list[tuple[int, str, str, bytes, float]] = []
    for rel, path in chunk:
        file_problems: list[Problem] = []
        got = _read_text(_File(rel, path), file_problems)
        records.append((None, file_problems))
        if got is not None:
            read.append((len(records) - 1, rel, got[0], got[1], got[2].st_mtime))
    split: list[tuple[int, str, _Front, str, bytes, float]] = []
    sources: list[tuple[int, str | None, int]] = []
    for i, rel, text, data, mtime in read:
        file_problems = records[i][1]
        try:
            fm, fm_line, body, _ = _split_frontmatter(text)
            front = (_load_frontmatter(rel, fm, fm_line, file_problems) if fm is not None
                     else _Front())
        except _SkipFile as skip:
            file_problems.append(Problem(rel, skip.line, skip.reason))
            continue
        split.append((i, rel, front, body, data, mtime))
        sources.append((i, fm, fm_line))
    for i, rel, front, body, data, mtime in split:
        file_problems = records[i][1]
        records[i] = (_build_memory(rel, front, body, data, mtime, file_problems), file_problems)
    if srcs is not None:
        srcs.extend([None] * len(records))
        for i, fm, fm_line in sources:
            srcs[i] = (fm, fm_line)
    return records


def _not_read(rel: str, why: str) -> Problem:
    return Problem(rel, None, f"not read: {why}", "warning")


def _problem_order(p: Problem) -> tuple[str, int, str]:
    return (p.path, p.line or 0, p.reason)
