"""A deterministic synthetic vault of N memories, for benchmarks and scale tests.

Same N and seed give byte-identical files on every machine: one `random.Random(seed)` drives
every choice, nothing iterates over a set of strings, and files are written as UTF-8 bytes
with '\\n' endings. The text is built from templates and word lists of believable technical
and personal memory language, so BM25, the topic and graph channels and the filters see
realistic field lengths and overlaps. Frontmatter is rendered with plain string templates
(yaml.dump per file would make 100k memories take minutes). Headless: no textual, no rich.

Besides the memories it writes a few consolidation digests, a few session transcripts and
`queries.jsonl`: judged queries whose relevant ids follow from how the vault was generated
(a memory's recall_when phrase or title with words dropped -> that memory, grade 3; its
related_via targets, grade 1; a superseded memory sharing the phrase, grade 0).

The vocabulary lives in `synth_words.py`, the plan's records and the rendered text in
`synth_text.py`; this module plans the vault and writes it.
"""

from __future__ import annotations

import bisect
import concurrent.futures
import gc
import itertools
import json
import multiprocessing
import os
import random
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from recall_tui.diagnostics.synth_text import (
    Entity,
    Planned,
    _body,
    _entity_pool,
    _summary,
    _title,
)
from recall_tui.diagnostics.synth_words import (
    END,
    FACET_FROM,
    FACETS,
    FOLDER_CAP,
    QUALS,
    QUERY_COUNT,
    RELATED_KINDS,
    RELATIONS_PERSON,
    RELATIONS_THING,
    SPAN,
    STOP,
    TOPICS,
    TYPE_WEIGHTS,
    VERBS,
    WHEN_TEMPLATES,
    _below,
    _day,
    _few,
    _iso,
    _key_part,
    _pick,
    _q,
    _randint,
    _slug,
)


@dataclass(frozen=True)
class SynthReport:
    """What `write_synth_vault` wrote."""

    root: str
    """The vault folder."""
    memories: int
    """Memory files written."""
    folders: int
    """Folders holding memory files."""
    entities: int
    """Entities in the pool."""
    chains: int
    """Supersession links (older -> newer pairs)."""
    digests: int
    """Consolidation digest files."""
    sessions: int
    """Session transcript files."""
    turns: int
    """Raw turns in the `turns-*` session logs (`--turns`; the few short transcripts linked
    from memories are not counted)."""
    queries: int
    """Judged queries in queries.jsonl."""
    seconds: float
    """Wall time of the whole write."""


def plan_vault(n: int, seed: int = 0) -> tuple[list[Planned], list[Entity]]:
    """Decide every memory (ids, folders, text, links, chains) without touching the disk."""
    if n < 1:
        raise ValueError("n must be at least 1")
    rng = random.Random(seed)
    pool = _entity_pool(rng, n)
    people = [e for e in pool if e.kind == "person"]
    things = [e for e in pool if e.kind != "person"]
    type_names = [t for t, _ in TYPE_WEIGHTS]
    type_cum = list(itertools.accumulate(w for _, w in TYPE_WEIGHTS))
    type_total = type_cum[-1]
    leaves = [(d, s) for d, subs in TOPICS.items() for s in subs]
    n_always = min(25, max(1, n // 100))
    folder_count: dict[str, int] = {}
    leaf_members: dict[str, list[int]] = {}
    used_ids: set[str] = set()
    plans: list[Planned] = []
    step = SPAN / max(1, n)
    start = END - SPAN
    n_always_done = 0
    always_every = max(1, n // n_always)
    for i in range(n):
        m = Planned(i)
        m.type = type_names[i] if i < len(type_names) else type_names[bisect.bisect_right(type_cum, rng.random() * type_total)]
        m.domain, m.sub = leaves[i] if i < len(leaves) else leaves[_below(rng, len(leaves))]
        # role: a few always-load memories spread over time, ~2% inbox, ~3% archive
        r = rng.random()
        if i % always_every == always_every // 2 and n_always_done < n_always:
            m.role = "always"
            n_always_done += 1
        elif r < 0.02:
            m.role = "inbox"
        elif r < 0.05:
            m.role = "archive"
            m.status = "archived"
        leaf = f"{m.domain}/{m.sub}"
        if n >= FACET_FROM:
            leaf += "/" + _pick(rng, FACETS)
        prefix = {"always": "_always-load", "inbox": "_inbox", "archive": "_archive"}.get(m.role)
        folder = prefix if m.role == "always" else (f"{prefix}/{m.domain}" if prefix else leaf)
        c = folder_count.get(folder, 0)
        folder_count[folder] = c + 1
        m.folder = folder if c < FOLDER_CAP else f"{folder}/part-{c // FOLDER_CAP + 1}"
        # supersession: ~5% replace a recent active memory of the same leaf, same subject
        members = leaf_members.setdefault(leaf, [])
        old: Planned | None = None
        if m.role == "normal" and members and rng.random() < 0.055:
            cand = plans[members[-1 - _below(rng, min(len(members), 5))]]
            if cand.superseded_by is None:
                old = cand
        m.noun = old.noun if old else _pick(rng, TOPICS[m.domain][m.sub])
        # skewed entity choice: low indices are hubs, the tail is long
        e0 = people[int(len(people) * rng.random() ** 2.5)]
        e1 = old.entities[1] if old else things[int(len(things) * rng.random() ** 2)]
        m.entities = [e0, e1]
        if rng.random() < 0.35:
            extra = pool[_below(rng, len(pool))]
            if extra not in m.entities:
                m.entities.append(extra)
        m.created = start + step * i + timedelta(minutes=_below(rng, 600))
        m.updated = min(END, m.created + timedelta(days=_pick(rng, (0, 0, 0, 1, 3, 14, 60))))
        m.title = _title(rng, m, e0, e1)
        base = "-".join(_slug(m.title).split("-")[:6])
        mid, bump = base, 0
        while mid in used_ids:
            bump += 1
            mid = f"{base}-{i}" if bump == 1 else f"{base}-{i}-{bump}"
        used_ids.add(mid)
        m.id = mid
        m.summary = _summary(rng, m, e0, e1)
        phrases: list[str] = [old.recall_when[0]] if old else []
        for t in _few(rng, WHEN_TEMPLATES, _pick(rng, (1, 2, 2, 3))):
            p = t(m.noun, _pick(rng, m.entities).display, _pick(rng, VERBS), _pick(rng, QUALS))
            if p not in phrases:
                phrases.append(p)
        m.recall_when = phrases[:3]
        m.tags = list(dict.fromkeys([m.sub, _key_part(m.noun.split()[-1], '-')] + ([m.domain] if rng.random() < 0.5 else [])))
        m.edges = [(e0.slug, _pick(rng, RELATIONS_PERSON), e1.slug)]
        if len(m.entities) > 2:
            m.edges.append((e1.slug, _pick(rng, RELATIONS_THING), m.entities[2].slug))
        if old:
            old.superseded_by, old.status = m.id, "superseded"
            m.supersedes = old.id
            m.topic_key = old.topic_key or f"{m.domain}.{m.sub}.{_key_part(old.noun)}"
            old.topic_key = m.topic_key
        elif rng.random() < 0.3:
            m.topic_key = f"{m.domain}.{m.sub}.{_key_part(m.noun)}.{_key_part(e1.slug)}"
        # related_via: 1-3 recent memories of the same leaf (recent ones of any leaf when empty)
        cands = members[-30:] if members else list(range(max(0, i - 30), i))
        for j in _few(rng, cands, _pick(rng, (1, 1, 2, 2, 3))):
            if plans[j].id != m.supersedes:
                m.related.append((plans[j].id, round(0.3 + 0.65 * rng.random(), 2), _pick(rng, RELATED_KINDS)))
        if m.role == "normal":
            members.append(i)
        plans.append(m)
    return plans, pool


def _frontmatter(m: Planned) -> str:
    lines = ["---", f"id: {m.id}", f"title: {_q(m.title)}", f"type: {m.type}"]
    if m.domain == "work":
        lines.append(f"scope: project:{m.sub}")
    lines.append(f"summary: {_q(m.summary)}")
    lines.append("recall_when:")
    lines += [f"  - {_q(p)}" for p in m.recall_when]
    lines.append(f"tags: [{', '.join(m.tags)}]")
    if m.role != "normal":
        lines.append(f"topic_path: {m.domain}/{m.sub}")
    if m.topic_key:
        lines.append(f"topic_key: {m.topic_key}")
    if m.status != "active":
        lines.append(f"status: {m.status}")
    if m.supersedes:
        lines.append(f"supersedes: {m.supersedes}")
    if m.superseded_by:
        lines.append(f"superseded_by: {m.superseded_by}")
    if m.related:
        lines.append("related_via:")
        lines += [f"  - {{id: {rid}, score: {s}, relation: {rel}}}" for rid, s, rel in m.related]
    lines.append("edges:")
    lines += [f'  - "{a} -[{rel}]-> {b}"' for a, rel, b in m.edges]
    lines.append(f"created: {_iso(m.created)}")
    if m.updated != m.created:
        lines.append(f"updated: {_iso(m.updated)}")
    if m.type == "event":
        lines.append(f"valid_from: {_day(m.created)}")
    if m.type == "task" and m.n % 3 == 0:
        lines.append(f"expires: {_day(m.created + timedelta(days=90))}")
    if m.role == "always":
        lines.append("tier: core")
    lines.append(f"trust: {1 + m.n % 3}")
    lines.append(f"credibility: {2 + m.n % 4}")
    if m.n % 7 == 0:
        lines.append(f"emotion: {(m.n // 7) % 7 - 3}")
    lines.append(f"source: {('claude-code', 'manual', 'codex', 'claude-code')[m.n % 4]}")
    if m.session_id:
        lines.append(f"session_id: {m.session_id}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _drop_words(rng: random.Random, phrase: str) -> str:
    """A paraphrase by word dropping: stop words first, then about a third of the rest (>= 2 kept)."""
    words = [w for w in phrase.split() if w.lower() not in STOP] or phrase.split()
    keep = max(2, len(words) - len(words) // 3)
    if len(words) > keep:
        drop = set(rng.sample(range(len(words)), len(words) - keep))
        words = [w for i, w in enumerate(words) if i not in drop]
    return " ".join(words)


def _queries(rng: random.Random, plans: list[Planned], by_id: dict[str, Planned]) -> list[dict]:
    live = [m for m in plans if m.status == "active" and m.role in ("normal", "always")]
    chained = [m for m in live if m.supersedes]
    picks: list[Planned] = []
    seen: set[int] = set()
    for m in rng.sample(chained, min(len(chained), QUERY_COUNT // 10)):
        picks.append(m)
        seen.add(m.n)
    rest = [m for m in live if m.n not in seen]
    picks += rng.sample(rest, min(len(rest), QUERY_COUNT - len(picks)))
    out = []
    for qi, m in enumerate(picks):
        relevant: dict[str, int] = {}
        for rid, _, _ in m.related:
            r = by_id[rid]
            if r.status == "active" and r.role in ("normal", "always"):
                relevant[rid] = 1
        if m.supersedes and qi < QUERY_COUNT // 10:
            query = _drop_words(rng, m.recall_when[0])
            relevant[m.supersedes] = 0
            note = f"synth: recall_when of {m.id} (shared with the memory it supersedes) with words dropped"
        elif qi % 5 == 4:
            query = _drop_words(rng, m.title)
            note = f"synth: title of {m.id} with words dropped"
        else:
            query = _drop_words(rng, _pick(rng, m.recall_when))
            note = f"synth: recall_when of {m.id} with words dropped"
        relevant[m.id] = 3
        out.append({"query": query, "relevant": relevant, "note": note})
    return out


#: Memories one render job writes. Fixed (not derived from the CPU count) and each memory has
#: its own body RNG, so the files do not depend on how many processes wrote them.
CHUNK = 4000
#: (plans, by_id, seed, root) for forked render workers; set only while a pool runs.
_SHARED: tuple[list[Planned], dict[str, Planned], int, str] | None = None


def _render_range(bounds: tuple[int, int]) -> int:
    """Render and write memories lo..hi-1 of the shared plan (a worker or the parent)."""
    assert _SHARED is not None
    plans, by_id, seed, base = _SHARED
    lo, hi = bounds
    for m in plans[lo:hi]:
        rng = random.Random(seed * 1_000_003 + m.n)
        text = _frontmatter(m) + _body(rng, m, by_id)
        with open(os.path.join(base, m.folder, m.id + ".md"), "wb") as fh:
            fh.write(text.encode("utf-8"))
    return hi - lo


def write_synth_vault(out: str | os.PathLike[str], n: int, seed: int = 0, *,
                      workers: int | None = None, turns: int = 0) -> SynthReport:
    """Write the vault into `out`, which must not exist or be empty. Returns what was written.

    Planning is sequential (links and chains need the whole history); rendering and writing
    run in `workers` forked processes (default: the CPU count, at most 8; 1 = in this process).
    `turns` > 0 also writes that many raw turns as session logs (`sessions/turns-*.jsonl`, at
    most TURNS_PER_SESSION a file, the format of docs/vault-format.md), each session's text
    drawn from its own seeded generator, so the files are the same whatever the worker count.
    """
    import time

    global _SHARED
    t0 = time.perf_counter()
    root = Path(out)
    if root.exists():
        if not root.is_dir():
            raise NotADirectoryError(f"{root}: exists and is not a folder")
        if any(root.iterdir()):
            raise FileExistsError(f"{root}: folder is not empty; synth writes only into a new or empty folder")
    # Planning makes a few hundred thousand objects and no cycles worth collecting; with the
    # collector off (and the heap frozen before forking) neither the planner nor the forked
    # workers keep walking, and copying, that heap.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        plans, pool = plan_vault(n, seed)
        rng = random.Random(seed + 1)
        by_id = {m.id: m for m in plans}
        # sessions: a few transcripts, some memories point at them
        n_sessions = min(8, max(1, n // 200))
        sessions = [f"sess-{seed}-{k:03d}" for k in range(n_sessions)]
        for m in plans[:: max(1, n // (n_sessions * 4))]:
            m.session_id = sessions[m.n % n_sessions]
        folders = sorted({m.folder for m in plans})
        for f in folders:
            os.makedirs(os.path.join(root, f), exist_ok=True)
        chunks = [(lo, min(n, lo + CHUNK)) for lo in range(0, n, CHUNK)]
        if workers is None:
            workers = min(8, os.cpu_count() or 1)
        workers = max(1, min(workers, len(chunks)))
        _SHARED = (plans, by_id, seed, str(root))
        gc.freeze()
        turn_jobs = _turn_sessions(turns)
        if turn_jobs:
            os.makedirs(root / "sessions", exist_ok=True)
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as ex:
                list(ex.map(_render_range, chunks))
                list(ex.map(_render_turns, turn_jobs, chunksize=16))
        else:
            for c in chunks:
                _render_range(c)
            for job in turn_jobs:
                _render_turns(job)
        digests = _write_digests(rng, root, plans)
        _write_sessions(rng, root, plans, sessions)
        queries = _queries(rng, plans, by_id)
        with open(root / "queries.jsonl", "wb") as fh:
            fh.write("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries).encode("utf-8"))
    finally:
        _SHARED = None
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()
    chains = sum(1 for m in plans if m.supersedes)
    return SynthReport(str(root), len(plans), len(folders), len(pool), chains, digests,
                       len(sessions) + len(turn_jobs), turns, len(queries),
                       time.perf_counter() - t0)


#: Raw turns per synthetic session log (a long working session of a heavy user).
TURNS_PER_SESSION = 200
#: The span the turn sessions cover, ending at END: a year of work.
TURN_SPAN_DAYS = 365


def _turn_sessions(turns: int) -> list[tuple[int, int]]:
    """(session number, turns in it) for `turns` raw turns."""
    return [(k, min(TURNS_PER_SESSION, turns - lo))
            for k, lo in enumerate(range(0, max(0, turns), TURNS_PER_SESSION))]


_ASK = ("Can you check {what}?", "What did we decide about {what}?", "Remind me how {what} works.",
        "Is {what} still owned by {who}?", "{who} asked about {what} again.",
        "Let's look at {what} before the {when} call.", "Why is {what} slow today?",
        "Where are the notes on {what}?")
_ANSWER = ("From the notes: {summary}", "{who} last touched {what}; {summary}",
           "I'd start with {phrase}.", "Done. {summary}", "Not sure yet; {phrase} might be related.",
           "Checked {what}: nothing changed since {when}.")
_WHEN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "standup", "retro", "planning")


def _render_turns(job: tuple[int, int]) -> int:
    """Write one session log of raw turns (a worker or the parent)."""
    assert _SHARED is not None
    plans, _by_id, seed, base = _SHARED
    k, count = job
    rng = random.Random(seed * 2_000_003 + k)
    start = END - timedelta(days=TURN_SPAN_DAYS) + timedelta(minutes=int(rng.random() * 60 * 24 * TURN_SPAN_DAYS))
    lines = []
    m = _pick(rng, plans)
    for seq in range(count):
        if seq % 6 == 0:  # a new subject every few exchanges
            m = _pick(rng, plans)
        fill = {"what": m.noun, "who": _pick(rng, m.entities).display if m.entities else "Sam",
                "when": _pick(rng, _WHEN), "summary": m.summary,
                "phrase": _pick(rng, m.recall_when) if m.recall_when else m.title}
        role = "user" if seq % 2 == 0 else "assistant"
        text = _pick(rng, _ASK if role == "user" else _ANSWER).format(**fill)
        lines.append(json.dumps({"seq": seq, "role": role, "text": text,
                                 "at": _iso(start + timedelta(seconds=40 * seq))}, ensure_ascii=False))
    with open(os.path.join(base, "sessions", f"turns-{seed}-{k:06d}.jsonl"), "wb") as fh:
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))
    return count


def _write_digests(rng: random.Random, root: Path, plans: list[Planned]) -> int:
    """Daily digests for the last few days and weekly ones for the last few weeks."""
    count = 0
    recent = plans[-min(len(plans), 60):]
    for period, days, label_of in (
        ("daily", (1, 2, 3, 4), lambda d: f"{d:%Y-%m-%d}"),
        ("weekly", (7, 14, 21), lambda d: f"{d:%G}-W{d:%V}"),
    ):
        folder = root / "consolidation" / period
        folder.mkdir(parents=True, exist_ok=True)
        for back in days:
            day = END - timedelta(days=back)
            paras = [f"# {period.capitalize()} digest {label_of(day)}"]
            for m in rng.sample(recent, min(len(recent), _randint(rng, 2, 4))):
                paras.append(f"Worked on the {m.noun} ({m.title}). {m.summary}")
            with open(folder / f"{label_of(day)}.md", "wb") as fh:
                fh.write(("\n\n".join(paras) + "\n").encode("utf-8"))
            count += 1
    return count


def _write_sessions(rng: random.Random, root: Path, plans: list[Planned], sessions: list[str]) -> None:
    folder = root / "sessions"
    folder.mkdir(exist_ok=True)
    for k, sid in enumerate(sessions):
        members = [m for m in plans if m.session_id == sid] or plans[k:k + 1]
        at = END - timedelta(days=3 * (len(sessions) - k))
        lines = []
        seq = 0
        for m in members[:6]:
            for role, text in (("user", f"Can you help with the {m.noun}? {_pick(rng, m.recall_when)}."),
                               ("assistant", f"Noted: {m.summary}")):
                lines.append(json.dumps({"seq": seq, "role": role, "text": text,
                                         "at": _iso(at + timedelta(minutes=seq))}, ensure_ascii=False))
                seq += 1
        with open(folder / f"{sid}.jsonl", "wb") as fh:
            fh.write(("\n".join(lines) + "\n").encode("utf-8"))
