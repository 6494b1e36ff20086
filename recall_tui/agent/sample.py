"""A query set from the prompts the agent really sent (`recall-tui log sample`).

The flight recorder keeps every prompt a hook or the MCP server recalled for. Judging starts
from those, not from queries made up afterwards: `sample_prompts` picks N of them, newest,
most frequent or at random (seeded), after

- dropping prompts that look like they hold a secret (API keys, tokens, private keys,
  `password=`; plus the caller's own patterns), and saying how many were dropped;
- merging near-duplicates (the same words up to case and punctuation, or word sets with a
  Jaccard similarity of at least 0.8), counting how often each was asked;
- cutting very long prompts to their question: the last sentence that ends in `?`, else the
  opening words, at a word boundary.

The result is written as JSON lines without `relevant` (unjudged): `recall-tui snapshot` and
`diff` read it as it is, and judging adds the `relevant` key `eval` needs. Headless.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Prompts matching any of these are never sampled (they would be copied into a file that
#: may be shared or committed).
SECRET_PATTERNS: tuple[str, ...] = (
    r"\bsk-[A-Za-z0-9_-]{16,}",                 # OpenAI / Anthropic style keys
    r"\bAKIA[0-9A-Z]{16}\b",                    # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",            # GitHub tokens
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",          # Slack tokens
    r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.",  # JWT
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    r"(?i)\b(password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S+",
)
BY = ("recent", "frequent", "random")
#: Longer prompts are cut to their question (`log sample --max-chars`).
DEFAULT_LIMIT = 300
NEAR_DUPLICATE = 0.8
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Sampled:
    """One sampled query: a prompt as asked (or cut to its question), and where it came from."""

    query: str
    count: int
    log_ids: list[str] = field(default_factory=list)
    first: str = ""
    last: str = ""
    cut: bool = False
    words: frozenset[str] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        note = f"sampled from {self.count} logged prompt(s), last {self.last}"
        if self.cut:
            note += "; cut to its question"
        return {"query": self.query, "note": note, "count": self.count,
                "log_ids": self.log_ids[-20:], "last": self.last}


@dataclass(frozen=True)
class SampleResult:
    queries: list[Sampled]
    prompts: int
    """Logged prompts considered."""
    secret: int
    """Dropped as looking like a secret."""
    excluded: int
    """Dropped by the caller's patterns."""
    merged: int
    """Folded into a near-duplicate."""


def question_of(text: str, limit: int) -> tuple[str, bool]:
    """`text` on one line, or when longer than `limit` its last question (a sentence ending in
    `?` that fits), else its opening cut at a word boundary; and whether it was cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat, False
    questions = [s for s in _SENTENCE_END.split(flat) if s.endswith("?") and len(s) <= limit]
    if questions:
        return questions[-1], True
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut, True


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= NEAR_DUPLICATE


def sample_prompts(records: Iterable[Any], *, n: int, by: str = "recent", seed: int = 0,
                   exclude: Sequence[str] = (), limit: int = DEFAULT_LIMIT) -> SampleResult:
    """Pick `n` queries from flight-recorder records (oldest first, as `read_agent_log` gives
    them reversed is fine: order is taken from each record's time). Raises ValueError for an
    unknown `by` or a bad pattern (naming it)."""
    if by not in BY:
        raise ValueError(f"--by {by!r}: choose one of {', '.join(BY)}")
    secrets = [re.compile(p) for p in SECRET_PATTERNS]
    mine = []
    for p in exclude:
        try:
            mine.append(re.compile(p))
        except re.error as exc:
            raise ValueError(f"--exclude {p!r} is not a regular expression: {exc}") from None
    groups: list[Sampled] = []
    by_key: dict[frozenset[str], Sampled] = {}
    prompts = secret = excluded = merged = 0
    for rec in sorted(records, key=lambda r: r.time):
        text = (rec.prompt or "").strip()
        if not text or rec.skipped or rec.event in ("why_not", "load_memory"):
            continue
        prompts += 1
        if any(p.search(text) for p in secrets):
            secret += 1
            continue
        if any(p.search(text) for p in mine):
            excluded += 1
            continue
        query, cut = question_of(text, limit)
        words = _words(query)
        group = by_key.get(words) or next((g for g in groups if _similar(g.words, words)), None)
        if group is None:
            group = Sampled(query, 0, first=rec.time, cut=cut, words=words)
            groups.append(group)
            by_key[words] = group
        else:
            merged += 1
        group.count += 1
        group.log_ids.append(rec.id)
        group.last = rec.time
    if by == "recent":
        groups.sort(key=lambda g: g.last, reverse=True)
    elif by == "frequent":
        groups.sort(key=lambda g: (-g.count, _neg(g.last)))
    else:
        random.Random(seed).shuffle(groups)
    return SampleResult(groups[:n], prompts, secret, excluded, merged)


def _neg(text: str) -> tuple[int, ...]:
    """A sort key that orders ISO times newest first inside an ascending sort."""
    return tuple(-ord(c) for c in text)


@dataclass(frozen=True)
class QueueItem:
    """One query of a query set to judge, with the logged recall the agent got for it."""

    query: str
    """The set's query: what the judgement is keyed by (what `eval`, `snapshot` re-run)."""
    line: int
    recall: Any
    """The newest `AgentRecall` with a trace among the line's `log_ids`, else the newest
    whose prompt samples to this query; None when the log no longer has one."""


def judge_queue(root: Any, set_path: Any) -> list[QueueItem]:
    """The queries of a query set (`log sample --out`, or any file `snapshot` reads), in the
    file's order, each with the logged recall to judge it on. Raises OSError / ValueError
    (GoldenError: file:line: reason) for a file that cannot be read."""
    import json
    from pathlib import Path

    from recall_tui.agent.log import read_agent_log
    from recall_tui.tuning.snapshot import read_query_set

    path = Path(set_path)
    queries = read_query_set(path)
    ids_of: dict[int, list[str]] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if raw.lstrip().startswith("{"):
            obj = json.loads(raw)
            ids = obj.get("log_ids") if isinstance(obj, dict) else None
            if isinstance(ids, list):
                ids_of[n] = [str(i) for i in ids]
    recs = [r for r in read_agent_log(root) if r.trace_dict is not None]  # newest first
    by_id = {r.id: r for r in recs}
    out: list[QueueItem] = []
    for q in queries:
        found = next((by_id[i] for i in reversed(ids_of.get(q.line, [])) if i in by_id), None)
        if found is None:
            found = next((r for r in recs if r.prompt and q.query in (
                question_of(r.prompt, DEFAULT_LIMIT)[0], " ".join(r.prompt.split()))), None)
        out.append(QueueItem(q.query, q.line, found))
    return out
