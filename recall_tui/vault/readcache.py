"""The reading cache: each memory file's parsed record, kept between reads of a vault.

`read_vault(root, cache=True)` parses only the memory files whose identity changed since the
last read: the cache key is the file's relative path with its size, modification time (ns),
status-change time (ns) and inode, so an edit that keeps the size still re-parses (its mtime
and ctime move; `touch -d` cannot set ctime), a file replaced by an atomic rename re-parses
(new inode), and a deleted file's row is dropped. What is kept is exactly what parsing the
file alone gives (the `Memory` and that file's problems). The steps that look at the whole
vault (unknown links, supersession, chains, status warnings) depend only on those records:
their result (the problems they add, the links they drop, the chains) is kept in the `vault`
table under a digest of every memory file's path and key, and a read whose every record came
from the cache and whose digest matches takes it from there. Records
are marshalled plain values (loading 100k of them is the bulk of a re-read), built back into
`Memory` objects without re-running their checks. A read not served from the process's memo
also writes every record into one snapshot file beside the cache (`snapshot.py`); a new
process whose vault signature matches it maps that file and builds lazy memories from its
head as `_LazyMemory`s (below): no row read, no record decoded until first used.

The file is `VAULT/.recall/read-cache.sqlite` (with its snapshot, the one place reading writes
inside a vault), or under the user's cache folder when `.recall/` is not writable; when
neither works, reading simply parses everything. The whole cache is dropped when READER_VERSION, the Memory record's fields or the Python version differ from
the ones that wrote it: a record is never trusted across reader or schema versions. Any
SQLite trouble (a locked, damaged or foreign file) makes the read fall back to parsing; a
damaged file is deleted and started again. Headless.

Long module: the record codec (packing, unpacking, lazy memories; `CODEC_VERSION`) and the
cache that stores its records (the stamp, the memo, the snapshot's name) change together, as
codec 7 (a front matter kept as its source) did; the codec is the part to move out
(`recordcodec.py`) when either grows again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import marshal
import os
import pickle
import sys
import threading
import weakref
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date, datetime
from itertools import chain
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import apsw
import yaml

from recall_tui.vault.frontmatter import _load_frontmatter
from recall_tui.vault.model import Edge, Memory, Problem, RelatedLink, Role
from recall_tui.vault.recalldir import keep_out_of_git

#: Bump whenever the reader gives a different record for the same bytes (a new field, a new
#: default, a new problem message): every cached record is then parsed again.
READER_VERSION = 2
CACHE_NAME = "read-cache.sqlite"
#: Bump when the record encoding below changes.
CODEC_VERSION = 7

#: The key of one file: (size, mtime_ns, ctime_ns, inode).
FileKey = tuple[int, int, int, int]


def _stamp() -> str:
    fields = ",".join(f"{f.name}:{f.type}" for f in dataclasses.fields(Memory))
    fields += "|" + ",".join(f.name for f in dataclasses.fields(Problem))
    digest = hashlib.sha256(fields.encode()).hexdigest()[:16]
    return (f"reader {READER_VERSION}; codec {CODEC_VERSION}; python {sys.version_info[:2]};"
            f" yaml {yaml.__version__}; fields {digest}")


def file_key(st: os.stat_result) -> FileKey:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def vault_signature(keys: dict[str, FileKey | None]) -> bytes | None:
    """What the whole-vault steps of a read depend on, as a digest: every memory file's path
    and key, in order (None when a file has no key: its record is not cached, so the
    result is not either)."""
    if None in keys.values():
        return None
    # (Not marshal: its bytes depend on reference counts, so they differ between processes.
    # Not repr either: at 100k files it cost ~2 % of a re-read. Paths hold no NUL.)
    h = hashlib.sha256(f"{_stamp()}\0{len(keys)}\0".encode())
    h.update("\0".join(keys).encode("utf-8", "surrogateescape"))
    try:
        known = cast("Iterable[FileKey]", keys.values())  # (no None: checked above)
        h.update(array("q", chain.from_iterable(known)).tobytes())
    except OverflowError:  # an inode or time beyond 64 bits: the slow, exact way
        h.update(repr(list(keys.values())).encode())
    return h.digest()


_MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))
_DATES = frozenset(
    {"created", "updated", "valid_from", "valid_to", "ingested_at", "expires"}
)
_ROLES = {r.value: r for r in Role}
_new = object.__new__


_DT = sys.intern("\x00datetime")
_DAY = sys.intern("\x00date")
#: Strings up to this length are interned in the cache records (types, statuses, tags,
#: entity names, frontmatter keys): 100k memories then share one object per distinct value.
_INTERN_MAX = 40
_intern = sys.intern


def _share(v: Any, done: dict[int, Any] | None = None) -> Any:
    """`v` with its short strings interned (marshal writes them as interned, and loading
    interns them again), lists and tuples walked; other values as they are. A list or dict
    met twice (YAML aliases) is copied once and stays shared (`done`, by id), so the record
    holds the structure as parsed, never its expansion (marshal keeps the sharing)."""
    t = type(v)
    if t is str:
        return _intern(v) if len(v) <= _INTERN_MAX else v
    if t is tuple:
        return tuple([_share(x, done) for x in v])
    if t is list or t is dict:
        if done is None:
            done = {}
        got = done.get(id(v))
        if got is not None:
            return got
        if t is list:
            out: Any = [_share(x, done) for x in v]
        else:
            out = {_share(k, done): _share(x, done) for k, x in v.items()}
        done[id(v)] = out
        return out
    return v


class _LazyFront(Mapping[str, Any]):
    """A memory's raw frontmatter from the reading cache, decoded on first use: a re-read of
    100k memories then does not build 100k dicts that only a detail view or an export reads
    (their decoding was a fifth of a re-read). Read-only like the `MappingProxyType` a parse
    gives, and equal to it when the contents are. `vals` are the Memory's own field values
    that the blob refers to instead of holding a copy (see `_pack_front`)."""

    __slots__ = ("_kind", "_blob", "_vals", "_raw")

    def __init__(self, kind: int, blob: bytes, vals: tuple[Any, ...] = ()):
        self._kind, self._blob, self._vals = kind, blob, vals
        self._raw: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        raw = self._raw
        if raw is None:  # two threads may both decode: the same dict, either one is kept
            raw = self._raw = _unpack_front(self._kind, self._blob, self._vals)
        return raw

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key: object) -> bool:
        return key in self._get()

    def __repr__(self) -> str:
        return f"mappingproxy({self._get()!r})"

    __hash__ = None  # type: ignore[assignment]  # as a mappingproxy of a dict


_NO_EXTRA: MappingProxyType[str, Any] = MappingProxyType({})


#: Memory fields a frontmatter value may be found equal to (a string, or a list of strings
#: for a tuple field): the cached frontmatter refers to the field instead of holding a copy.
_REF_FIELDS = frozenset({
    "id", "title", "type", "scope", "summary", "recall_when", "tags", "keywords",
    "topic_path", "topic_key", "status", "supersedes", "superseded_by", "tier", "source",
    "session_id", "lang", "original",
})
_REF = sys.intern("\x00field")
_REFL = sys.intern("\x00fieldlist")


def _ref_kind(v: object, mv: object) -> str | None:
    """_REF when the frontmatter value `v` is the Memory field's value `mv` (a string),
    _REFL when `v` is a list of strings equal to the tuple `mv`, else None."""
    if type(v) is str:
        return _REF if type(mv) is str and v == mv else None
    if type(v) is list and type(mv) is tuple and len(v) == len(mv) and \
            all(type(x) is str for x in v) and tuple(v) == mv:
        return _REFL
    return None


def _pack_front(raw: dict[str, Any], m: Memory | None = None) -> tuple[int, object, tuple[int, ...]]:
    """The raw frontmatter, for marshal, as (kind, blob, refs), with top-level datetimes and
    dates (YAML's timestamps) tagged as (_DT or _DAY, isoformat) tuples (YAML never gives
    tuples), and a value equal to `m`'s field of that name (the title, the tags, ...) stored
    as a (_REF or _REFL, j) tuple: the j-th of the fields listed in `refs` (record indexes),
    given back by the Memory when the record is loaded (at 100k memories the copies were
    ~50 MB). Anything else marshal cannot hold (a nested timestamp) makes the whole mapping
    pickled (slower to load: a fifth of the synthetic vault's records were, for a
    `valid_from` date)."""
    refs: list[int] = []
    tagged: dict[str, Any] = {}
    done: dict[int, Any] = {}  # (one for the whole mapping: YAML aliases stay shared)
    intern, most = _intern, _INTERN_MAX
    for k, v in raw.items():
        # Each value interned as `_share` of the whole mapping would, without walking the
        # tuples made here (their tags are interned already).
        t = type(v)
        if t is datetime:
            v = (_DT, intern(v.isoformat()))
        elif t is date:
            v = (_DAY, intern(v.isoformat()))
        elif m is not None and k in _REF_FIELDS and \
                (kind := _ref_kind(v, getattr(m, k))) is not None:
            v = (kind, len(refs))
            refs.append(_IDX[k])
        elif t is str:
            if len(v) <= most:
                v = intern(v)
        elif t is list or t is dict or t is tuple:
            v = _share(v, done)
        tagged[intern(k) if type(k) is str and len(k) <= most else _share(k, done)] = v
    try:
        return 0, marshal.dumps(tagged), tuple(refs)
    except ValueError:
        return 1, pickle.dumps(raw, protocol=5), ()


#: A record's frontmatter kept as its YAML source (`_pack_source`), parsed again on first use.
_K_SOURCE = 2


def _pack_source(src: tuple[str, int]) -> tuple[int, object, tuple[int, ...]]:
    """The frontmatter as the YAML text it was parsed from and its first line (kind
    _K_SOURCE): writing the text costs a copy, where packing the parsed mapping again cost
    a worker ~15 % of its first read (first10). Only a detail view, an export or an extra
    key reads the mapping; `_unpack_front` then parses the text again, which gives the same
    mapping (the parse depends on the text alone; the cache's stamp names the YAML
    library's version)."""
    return _K_SOURCE, src, ()


def _unpack_front(kind: int, blob: Any, vals: tuple[Any, ...] = ()) -> dict[str, Any]:
    if kind == _K_SOURCE:
        fm, first_line = blob
        if fm is None:
            return {}
        return dict(_load_frontmatter("", fm, first_line, []).raw)
    if kind:
        unpickled: dict[str, Any] = pickle.loads(blob)
        return unpickled
    value: dict[str, Any] = marshal.loads(blob)
    for k, v in value.items():
        if type(v) is tuple:
            tag = v[0]
            if tag == _DT:
                value[k] = _fromiso(v[1])
            elif tag == _DAY:
                value[k] = _dayiso(v[1])
            elif tag == _REF:
                value[k] = vals[v[1]]
            elif tag == _REFL:
                value[k] = list(vals[v[1]])
    return value


def _compile_pack(source: bool = False) -> Callable[..., tuple[Any, ...]]:
    """`_pack_memory(m)`: the Memory as a tuple of plain values, its short strings interned
    as `_share` would (by field, not a generic walk: `_share` over the whole record was a
    fifth of a first read's encoding), generated as straight-line code, one statement per
    field (a loop over the fields' kinds was ~a third of the encoding). With `source`,
    `_pack_memory_src(m, src)`: the frontmatter as its YAML source `src` (`_pack_source`)
    and the extra keys' values packed on their own (usually there are none)."""
    env: dict[str, Any] = {"_intern": _intern, "_share": _share, "_pack_front": _pack_front,
                           "_pack_source": _pack_source}
    most = _INTERN_MAX
    lines = ["def _pack_memory_src(m, src):" if source else "def _pack_memory(m):",
             "    intern = _intern"]
    for i, (name, kind) in enumerate(_PACK_KINDS):
        a = f"a{i}"
        lines.append(f"    {a} = m.{name}")
        if kind == _K_PLAIN:
            lines.append(f"    if type({a}) is str and len({a}) <= {most}: {a} = intern({a})")
            continue
        if kind == _K_STRS:
            v = f"tuple([intern(x) if len(x) <= {most} else x for x in {a}])"
        elif kind == _K_DATE:  # (created, updated and ingested_at: often one string)
            v = f"intern({a}.isoformat())"
        elif kind == _K_ROLE:
            v = f"intern({a}.value)"
        elif kind == _K_REL:
            v = f"tuple([(_share(r.id), r.score, _share(r.relation)) for r in {a}])"
        elif kind == _K_EDGES:
            v = (f"tuple([(_share(e.subject), _share(e.relation), _share(e.object),"
                 f" _share(e.memory_id)) for e in {a}])")
        elif kind == _K_FRONT:
            v = "_pack_source(src)" if source else f"_pack_front(dict({a}), m)"
        elif kind == _K_EXTRA and source:  # (kind _K_SOURCE: its values, not from the text)
            v = f"_pack_front(dict({a})) if {a} else None"
        elif kind == _K_EXTRA:  # its keys; the values are the frontmatter's
            v = f"tuple([_share(k) for k in {a}])"
        else:  # key_lines, as the (key, line) pairs `_shared_lines` looks its mapping up by
            v = f"tuple([(_share(k), n) for k, n in {a}.items()])"
        lines.append(f"    if {a} is not None: {a} = {v}")
    lines.append(f"    return ({', '.join(f'a{i}' for i in range(len(_PACK_KINDS)))},)")
    exec("\n".join(lines), env)  # code generated from the dataclass fields
    fn: Callable[..., tuple[Any, ...]] = env["_pack_memory_src" if source else "_pack_memory"]
    return fn


_K_PLAIN, _K_STRS, _K_DATE, _K_ROLE, _K_REL, _K_EDGES, _K_FRONT, _K_EXTRA, _K_LINES = range(9)
_STRS = frozenset({"recall_when", "tags", "keywords", "supersedes"})
_SPECIAL = {"role": _K_ROLE, "related_via": _K_REL, "edges": _K_EDGES,
            "frontmatter": _K_FRONT, "extra": _K_EXTRA, "key_lines": _K_LINES}
_PACK_KINDS = tuple(
    (name, _K_DATE if name in _DATES else _K_STRS if name in _STRS
     else _SPECIAL.get(name, _K_PLAIN))
    for name in _MEMORY_FIELDS
)
_pack_memory = _compile_pack()
_pack_memory_src = _compile_pack(source=True)


_IDX = {name: i for i, name in enumerate(_MEMORY_FIELDS)}
_DATE_IDX = frozenset(_IDX[name] for name in _DATES)
_I_ROLE, _I_REL, _I_EDGES = _IDX["role"], _IDX["related_via"], _IDX["edges"]
_I_FRONT, _I_EXTRA, _I_LINES = _IDX["frontmatter"], _IDX["extra"], _IDX["key_lines"]
_fromiso = datetime.fromisoformat
_dayiso = date.fromisoformat


_LINES: dict[tuple[tuple[str, int], ...], MappingProxyType[str, int]] = {}
_LINES_MAX = 50_000


def _shared_lines(pairs: tuple[tuple[str, int], ...]) -> MappingProxyType[str, int]:
    """One read-only `key_lines` mapping per distinct layout: files written from the same
    template share it (1.3k layouts for 10k synthetic memories). The record holds the
    (key, line) pairs themselves (codec 6), the lookup key: no dict, no items tuple."""
    proxy = _LINES.get(pairs)
    if proxy is None:
        if len(_LINES) >= _LINES_MAX:
            _LINES.clear()
        proxy = _LINES[pairs] = MappingProxyType(dict(pairs))
    return proxy


def _compile_unpack(skip: frozenset[int] = frozenset()) -> Callable[..., Any]:
    """`_unpack_memory(t) -> Memory`, generated as straight-line code (one slot write per
    field, no loop): building 100k Memory objects is the bulk of a re-read. With `skip`,
    `_fill(m, t)` instead: the slots of `m` but those fields' (a `_LazyMemory`'s)."""
    env: dict[str, Any] = {
        "_new": _new, "Memory": Memory, "_fromiso": _fromiso, "_ROLES": _ROLES,
        "RelatedLink": RelatedLink, "Edge": Edge, "MappingProxyType": MappingProxyType,
        "_LazyFront": _LazyFront, "_NO_EXTRA": _NO_EXTRA, "_shared_lines": _shared_lines,
        "_unpack_front": _unpack_front,
    }
    lines = [
        "def _fill(m, t):" if skip else "def _unpack_memory(t):",
        f"    f = t[{_I_FRONT}]",
        "    raw = _LazyFront(f[0], f[1], tuple([t[i] for i in f[2]]) if f[2] else ())",
    ]
    if not skip:
        lines.append("    m = _new(Memory)")
    for i, name in enumerate(_MEMORY_FIELDS):
        if i in skip:
            continue
        env[f"_s{i}"] = getattr(Memory, name).__set__  # the slot's own setter
        v = f"t[{i}]"
        if i in _DATE_IDX:
            v = f"(None if {v} is None else _fromiso({v}))"
        elif i == _I_ROLE:
            v = f"_ROLES[{v}]"
        elif i == _I_REL:
            v = f"tuple([RelatedLink(*r) for r in {v}]) if {v} else ()"
        elif i == _I_EDGES:
            v = f"tuple([Edge(*e) for e in {v}]) if {v} else ()"
        elif i == _I_FRONT:
            v = "raw"
        elif i == _I_EXTRA:  # unknown keys are rare: the frontmatter is decoded only for them
            v = (f"(MappingProxyType(_unpack_front(*{v})) if f[0] == {_K_SOURCE} else"
                 f" MappingProxyType({{k: raw[k] for k in {v}}})) if {v} else _NO_EXTRA")
        elif i == _I_LINES:
            v = f"_shared_lines({v})"
        lines.append(f"    _s{i}(m, {v})")
    lines.append("    return m")
    exec("\n".join(lines), env)  # code generated from the dataclass fields
    made: Callable[..., Any] = env["_fill" if skip else "_unpack_memory"]
    return made


# Built as unpickling builds a dataclass (no __init__ and its checks): the values were
# checked when the file was parsed.
_unpack_memory: Callable[[tuple[Any, ...]], Memory] = _compile_unpack()
_I_ID, _I_PATH = _IDX["id"], _IDX["path"]
#: A `_LazyMemory`'s fields set when it is made (the rest on first use, from its record).
_EAGER = frozenset({_I_ID, _I_PATH, _I_EDGES})
_fill_lazy: Callable[[Memory, tuple[Any, ...]], Memory] = _compile_unpack(_EAGER)


class _LazyMemory(Memory):
    """A `Memory` from the reading snapshot whose fields but `id`, `path` and `edges` are
    decoded from its record on first use (one attribute read fills every slot). To every
    consumer it is a Memory: `__class__` says so (so equality with a parsed Memory,
    `dataclasses.replace`, `repr` and pickling behave as for one), its fields are the same
    slots, and once filled an attribute read costs what a Memory's does. A re-read of an
    unchanged vault then builds 100k of these instead of decoding 100k records; whoever
    reads every field of every memory (an index sync in a fresh process) decodes them then."""

    __slots__ = ("_record",)
    #: A snapshot's memories are of a subclass made for it whose `_records(i)` gives the
    #: record tuple (map, start, end, CRC-32, source) of the memory with `_record` i: one
    #: int a memory instead of a tuple (reread9).
    _records: Callable[[int], tuple[Any, ...]]

    @property  # type: ignore[misc]  # (a Memory to every consumer, as unittest.mock's spec)
    def __class__(self) -> type[Memory]:  # type: ignore[override]  # (the same reason)
        return Memory

    def __getattr__(self, name: str) -> Any:
        # Only called for a slot not yet set (or a name a Memory does not have).
        try:
            rec = _get_record(self)
        except AttributeError:
            rec = None
        if rec is not None:
            if rec.__class__ is int:  # (its position in the snapshot: see `_records`)
                rec = type(self)._records(rec)
            _fill_from_record(self, rec)  # (two threads may both fill: equal values either way)
            _set_record(self, None)
        return _getattribute(self, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_memory_of, (tuple([getattr(self, n) for n in _MEMORY_FIELDS]),))


_get_record = _LazyMemory._record.__get__  # type: ignore[attr-defined]  # (a slot descriptor)
_set_record = _LazyMemory._record.__set__  # type: ignore[attr-defined]
_getattribute = object.__getattribute__
_set_id = vars(Memory)["id"].__set__  # (the slots' own setters, as in `_compile_unpack`)
_set_path = vars(Memory)["path"].__set__
_set_edges = vars(Memory)["edges"].__set__


def _memory_of(values: tuple[Any, ...]) -> Memory:
    return Memory(*values)


_LAZY_FIELDS = tuple(name for i, name in enumerate(_MEMORY_FIELDS) if i not in _EAGER)
_SETTERS = tuple(vars(Memory)[name].__set__ for name in _LAZY_FIELDS)


def _fill_from_record(m: Memory, rec: tuple[Any, ...]) -> None:
    """Fill a lazy memory's slots from its record in the snapshot; when the record is not
    what was written (its checksum, or it does not decode), from the file parsed again (and
    the snapshot is deleted: the next read writes a new one)."""
    buf, start, end, crc, source = rec
    data = buf[start:end]
    try:
        if zlib.crc32(data) != crc:
            raise ValueError("checksum")
        packed, _ = marshal.loads(data)
        _fill_lazy(m, packed)
        return
    except Exception:  # (a damaged snapshot)
        root, snap = source
        with contextlib.suppress(OSError):
            os.unlink(snap)
    parsed = _REPARSE[0](root, m.path) if _REPARSE else None
    if parsed is None:
        raise RuntimeError(
            f"{m.path}: its record in the reading snapshot {snap} is damaged and the file"
            " cannot be read again")
    for name, set_slot in zip(_LAZY_FIELDS, _SETTERS, strict=True):
        set_slot(m, getattr(parsed, name))


#: The reader's parse of one memory file, (root, rel) -> Memory | None, for a damaged record.
_REPARSE: list[Callable[[str, str], Memory | None]] = []


_EDGE_SETTERS = tuple(vars(Edge)[f.name].__set__ for f in dataclasses.fields(Edge))


def _edges(tuples: tuple[tuple[str, str, str, str], ...]) -> tuple[Edge, ...]:
    """Edge objects from (subject, relation, object, memory_id) tuples, without `__init__`
    (each slot set by its own setter: half the time of the frozen dataclass's init)."""
    s0, s1, s2, s3 = _EDGE_SETTERS
    out = []
    for a, b, c, d in tuples:
        e = _new(Edge)
        s0(e, a)
        s1(e, b)
        s2(e, c)
        s3(e, d)
        out.append(e)
    return tuple(out)


def dumps(
    record: tuple[Memory | None, list[Problem]], src: tuple[str | None, int] | None = None
) -> bytes:
    """A file's record (its Memory or None, and its problems) as bytes: one marshal of plain
    values, so a string the Memory and its frontmatter share stays one object when loaded
    (marshal keeps references), short strings interned. With `src`, the (YAML text, first
    line) the Memory's frontmatter was parsed from (None when the file has none), the
    frontmatter is kept as that text (`_pack_source`); without it, as the parsed mapping,
    pickled only when YAML gave nested dates and the like."""
    memory, problems = record
    packed = (
        (None if memory is None else _pack_memory(memory) if src is None
         else _pack_memory_src(memory, src)),
        tuple((p.path, p.line, p.reason, p.severity) for p in problems),
    )
    return marshal.dumps(packed)


def loads(blob: bytes) -> tuple[Memory | None, list[Problem]]:
    packed, problems = marshal.loads(blob)
    memory = _unpack_memory(packed) if packed is not None else None
    return memory, [Problem(*p) for p in problems]


#: Whether a cached read keeps its records in this process for the next cached read of the
#: same vault (see `remembered`); tests of the cache file itself switch it off.
REMEMBER_READS = True
#: Record of one memory file as a read gives it: its Memory (or None) and its problems.
Record = tuple[Memory | None, list[Problem]]


@dataclasses.dataclass(frozen=True)
class Remembered:
    """What a process keeps of its last cached read of one vault (see `remembered`)."""

    stamp: str
    records: dict[str, tuple[FileKey, Record]]
    """Every memory file's record by relative path, with the key its file had then."""
    whole: Any = None
    """The reader's whole-vault result of that read (its own shape), when it had one."""


_MEMOS: dict[str, Remembered] = {}
_MEMO_LOCK = threading.Lock()


def remembered(root: str) -> Remembered | None:
    """What this process kept of its last cached read of the vault at `root` (an absolute
    path); None when there is none (never read here, its Vault since dropped, or a different
    reader stamp). A re-read in the same process (the file watcher, a reload) takes an
    unchanged file's record from here: no SQLite row, no decoding, and the same `Memory`
    object as before."""
    if not REMEMBER_READS:
        return None
    with _MEMO_LOCK:
        entry = _MEMOS.get(root)
    if entry is None or entry.stamp != _stamp():
        return None
    return entry


def remember(
    root: str, owner: object, records: dict[str, tuple[FileKey, Record]], whole: Any = None
) -> None:
    """Keep `records` (and `whole`) for the next cached read of `root` while `owner` (the
    Vault they were read into) lives: the records' objects are the Vault's own, so keeping
    them costs only the dict, and they are let go with the Vault."""
    if not REMEMBER_READS:
        return
    entry = Remembered(_stamp(), records, whole)
    with _MEMO_LOCK:
        _MEMOS[root] = entry
    weakref.finalize(owner, _let_go, root, entry)


def _let_go(root: str, entry: Remembered) -> None:
    with _MEMO_LOCK:
        if _MEMOS.get(root) is entry:  # (a newer read's records stay)
            del _MEMOS[root]


def forget_reads(root: str | None = None) -> None:
    """Drop what `remember` keeps for the vault at `root` (every vault when None): the next
    cached read in this process goes to the cache file."""
    with _MEMO_LOCK:
        if root is None:
            _MEMOS.clear()
        else:
            _MEMOS.pop(os.path.abspath(root), None)


def cache_path(root: str) -> Path | None:
    """Where the reading cache of the vault at `root` lives: `.recall/` when it exists or can
    be made and is writable, else the user's cache folder; None when neither is writable."""
    local = Path(root) / ".recall"
    with contextlib.suppress(OSError):
        local.mkdir(exist_ok=True)
        if os.access(local, os.W_OK):
            keep_out_of_git(local)
            return local / CACHE_NAME
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:16]
    folder = Path(base) / "recall-tui" / digest
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder / CACHE_NAME
    return None


def drop_read_cache(root: str) -> None:
    """Delete the vault's reading cache (the next cached read parses every file)."""
    forget_reads(root)
    path = cache_path(root)
    if path is not None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.unlink(str(path) + suffix)
        with contextlib.suppress(OSError):
            os.unlink(snapshot_path(path))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files(
    rel TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, record BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS vault(
    id INTEGER PRIMARY KEY CHECK (id = 1), sig BLOB NOT NULL, result BLOB NOT NULL);
"""


#: Session logs' records (`vault/digests.py` makes and reads them): one row per log, keyed
#: like a memory file. Their own table and stamp, beside the memory records'.
_TURN_SCHEMA = """
CREATE TABLE IF NOT EXISTS turn_logs(
    rel TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, record BLOB NOT NULL);
"""
#: Bump when the session log table changes; the record itself carries the turn reader's
#: version (`digests.TURN_READER_VERSION`).
TURN_CODEC_VERSION = 1
#: Session log records queued are written once they hold this many bytes (and at the end).
TURN_WRITE_BYTES = 32 << 20


def _turn_stamp() -> str:
    return f"turn logs {TURN_CODEC_VERSION}; python {sys.version_info[:2]}"


def _open_turn_table(conn: apsw.Connection) -> None:
    """Create the session log table; empty it when another codec or Python wrote it."""
    conn.execute(_TURN_SCHEMA)
    row = conn.execute("SELECT value FROM meta WHERE key='turn_stamp'").fetchone()
    stamp = _turn_stamp()
    if row is None or row[0] != stamp:
        with conn:
            conn.execute("DELETE FROM turn_logs")
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('turn_stamp', ?)", (stamp,)
            )


class ReadCache:
    """One vault's reading cache (see the module docstring). `open` never raises."""

    def __init__(self, conn: apsw.Connection, path: Path):
        self._conn = conn
        self.path = path
        # Session log records parsed this read, not written yet, their bytes, and the logs
        # this read looked up (`store_turn_logs` drops the others' rows).
        self._turn_fresh: list[tuple[str, FileKey, bytes]] = []
        self._turn_bytes = 0
        self._turn_seen: set[str] = set()

    @classmethod
    def open(cls, root: str) -> ReadCache | None:
        path = cache_path(root)
        if path is None:
            return None
        for attempt in (1, 2):
            conn = None
            try:
                conn = apsw.Connection(str(path))
                conn.set_busy_timeout(2000)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
                _open_turn_table(conn)
                row = conn.execute("SELECT value FROM meta WHERE key='stamp'").fetchone()
                stamp = _stamp()
                if row is None or row[0] != stamp:
                    with conn:
                        conn.execute("DELETE FROM files")
                        conn.execute("DELETE FROM vault")
                        conn.execute(
                            "INSERT OR REPLACE INTO meta(key, value) VALUES ('stamp', ?)", (stamp,)
                        )
                return cls(conn, path)
            except apsw.BusyError:
                if conn is not None:
                    conn.close()
                return None
            except apsw.Error:
                if conn is not None:
                    conn.close()
                if attempt == 2:
                    return None
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(OSError):
                        os.unlink(str(path) + suffix)
        return None

    def rows(self) -> Iterator[tuple[str, FileKey, bytes]]:
        """(rel, key, record bytes) of every cached record, one at a time (nothing on a
        SQLite error: the reader then parses what it did not get)."""
        try:
            for rel, size, mtime, ctime, ino, blob in self._conn.execute(
                "SELECT rel, size, mtime_ns, ctime_ns, ino, record FROM files"
            ):
                yield rel, (size, mtime, ctime, ino), blob
        except apsw.Error:
            return

    def load(self) -> dict[str, tuple[FileKey, bytes]]:
        """Every cached record by relative path, with the key it was made under."""
        try:
            return {
                rel: ((size, mtime, ctime, ino), blob)
                for rel, size, mtime, ctime, ino, blob in self._conn.execute(
                    "SELECT rel, size, mtime_ns, ctime_ns, ino, record FROM files"
                )
            }
        except apsw.Error:
            return {}

    def store(self, fresh: list[tuple[str, FileKey, bytes]], gone: list[str]) -> None:
        """Write the records parsed this time and drop the files that vanished (best effort:
        a busy or read-only cache is left as it is)."""
        self._write_rows("files", fresh, gone)

    def _write_rows(
        self, table: str, fresh: list[tuple[str, FileKey, bytes]], gone: list[str]
    ) -> None:
        """Put `fresh` records in `table` (`files` or `turn_logs`) and drop the `gone` ones,
        in one transaction (best effort)."""
        if not fresh and not gone:
            return
        try:
            with self._conn:
                self._conn.executemany(f"DELETE FROM {table} WHERE rel=?", [(r,) for r in gone])
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO {table}(rel, size, mtime_ns, ctime_ns, ino, record)"
                    " VALUES (?,?,?,?,?,?)",
                    [(rel, *key, blob) for rel, key, blob in fresh],
                )
        except apsw.Error:
            pass

    def vault_result(self, sig: bytes) -> bytes | None:
        """The whole-vault result stored under `sig` (see `vault_signature`), else None."""
        try:
            row = self._conn.execute("SELECT sig, result FROM vault WHERE id=1").fetchone()
        except apsw.Error:
            return None
        if row is None or row[0] != sig:
            return None
        result: bytes = row[1]
        return result

    def store_vault_result(self, sig: bytes, result: bytes) -> None:
        """Keep the whole-vault result of the memory files `sig` names (best effort)."""
        try:
            with self._conn:
                self._conn.execute(
                    "INSERT OR REPLACE INTO vault(id, sig, result) VALUES (1, ?, ?)", (sig, result)
                )
        except apsw.Error:
            pass

    def turn_log(self, rel: str, key: FileKey) -> bytes | None:
        """The record of the session log `rel` when it was made under `key`, else None."""
        self._turn_seen.add(rel)
        try:
            row = self._conn.execute(
                "SELECT size, mtime_ns, ctime_ns, ino, record FROM turn_logs WHERE rel=?", (rel,)
            ).fetchone()
        except apsw.Error:
            return None
        if row is None or tuple(row[:4]) != key:
            return None
        blob: bytes = row[4]
        return blob

    def keep_turn_log(self, rel: str) -> None:
        """The session log `rel` was met without looking its record up: keep its row."""
        self._turn_seen.add(rel)

    def put_turn_log(self, rel: str, key: FileKey, record: bytes) -> None:
        """Queue the record of a session log just parsed (written in batches of
        TURN_WRITE_BYTES, the rest by `store_turn_logs`)."""
        self._turn_seen.add(rel)
        self._turn_fresh.append((rel, key, record))
        self._turn_bytes += len(record)
        if self._turn_bytes >= TURN_WRITE_BYTES:
            self._write_turn_logs([])

    def store_turn_logs(self) -> None:
        """At the end of a read that looked at every session log: write the queued records
        and drop the rows of logs this read did not meet (best effort)."""
        try:
            cached = [r for (r,) in self._conn.execute("SELECT rel FROM turn_logs")]
        except apsw.Error:
            cached = []
        self._write_turn_logs([r for r in cached if r not in self._turn_seen])

    def _write_turn_logs(self, gone: list[str]) -> None:
        fresh, self._turn_fresh, self._turn_bytes = self._turn_fresh, [], 0
        self._write_rows("turn_logs", fresh, gone)

    def close(self) -> None:
        with contextlib.suppress(apsw.Error):
            self._conn.close()


SNAPSHOT_NAME = "read-snapshot.bin"


def snapshot_path(cache_file: Path) -> Path:
    """Where the snapshot (`snapshot.py`) of the reading cache at `cache_file` lives."""
    return cache_file.with_name(SNAPSHOT_NAME)
