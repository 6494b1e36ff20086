"""Weak labels from the agent's answers (`recall-tui hook stop`): did the agent's last answer
use a memory it was given?

Claude Code's Stop hook fires when the agent finishes its answer; its payload names the
session and, in the versions that send it, the answer itself (`last_assistant_message`). For
the session's newest prompt recall that injected memories, each injected memory's terms (the
words of its id and title as the recall listed it, four characters or more, stop words out)
are looked up in the answer: the share found is its overlap, and a memory is "used" at
`USED_AT` or above. This is a guess, not a judgement: it is kept apart from the judged
queries, in `.recall/agent/weak-labels.jsonl` (one JSON object a line, `"by": "stop-hook"`),
never read by `eval` or `tune`, and the Agent pane shows it marked `weak`. A payload without
the answer records nothing. Standard library only (the hook's fast path).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recall_tui.agent.log import AgentRecall, clean_text, log_dir, now_iso, read_agent_log

WEAK_FILE = "weak-labels.jsonl"
#: A memory counts as used when at least this share of its terms is in the answer.
USED_AT = 0.5
#: How many of the session's newest records are searched for its last prompt recall.
LOOK_BACK = 20
_WORD = re.compile(r"[^\W_]{4,}", re.UNICODE)
_STOP = frozenset("""about after also been before being could does from have into just like
more most much only other over same some such than that their them then there these they this
those very what when where which while will with would your""".split())


def terms(text: str) -> set[str]:
    """Lower-cased words of four characters or more, without common stop words."""
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP}


def memory_terms(rec: AgentRecall) -> dict[str, set[str]]:
    """Each injected id -> the terms of its id and of its title as the recall listed it."""
    titles: dict[str, str] = {}
    for hit in (rec.trace_dict or {}).get("hits") or ():
        if isinstance(hit, Mapping) and isinstance(hit.get("id"), str):
            titles[hit["id"]] = str(hit.get("title") or "")
    return {mid: terms(mid.replace("-", " ").replace("_", " ") + " " + titles.get(mid, ""))
            for mid in rec.injected_ids}


def overlaps(answer: str, rec: AgentRecall) -> dict[str, float]:
    """Each injected id -> the share of its terms found in `answer` (0 when it has none)."""
    said = terms(answer)
    return {mid: (len(t & said) / len(t) if t else 0.0) for mid, t in memory_terms(rec).items()}


def weak_path(vault: str | os.PathLike[str]) -> Path:
    return log_dir(vault) / WEAK_FILE


def label_stop(vault: str | os.PathLike[str], payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Record the weak labels of a Stop payload's answer against the session's newest prompt
    recall that injected something; the record written, or None when there is nothing to
    label (no answer in the payload, no such recall). Never raises for a bad payload."""
    answer = payload.get("last_assistant_message")
    session = payload.get("session_id")
    if not isinstance(answer, str) or not answer.strip() or not isinstance(session, str):
        return None
    rec = next((r for r in read_agent_log(vault, session=session, limit=LOOK_BACK)
                if r.event == "UserPromptSubmit" and r.injected_ids), None)
    if rec is None:
        return None
    scores = overlaps(answer, rec)
    out = {"time": now_iso(), "by": "stop-hook", "method": "term overlap",
           "log_id": rec.id, "session_id": session, "used_at": USED_AT,
           "overlap": {m: round(s, 3) for m, s in scores.items()},
           "used": {m: s >= USED_AT for m, s in scores.items()}}
    folder = log_dir(vault)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = clean_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    fd = os.open(folder / WEAK_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())  # one write on O_APPEND: lines never interleave
    finally:
        os.close(fd)
    return out


def read_weak(vault: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """log id -> {memory id: `used 0.67` / `unused 0.00`}, the newest label of each record;
    unreadable lines are skipped (a guess is never worth an error)."""
    out: dict[str, dict[str, str]] = {}
    try:
        text = weak_path(vault).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for raw in text.splitlines():
        try:
            obj = json.loads(raw)
            overlap = obj["overlap"]
            used = obj["used"]
            out[str(obj["log_id"])] = {
                str(m): f"{'used' if used.get(m) else 'unused'} {float(s):.2f}"
                for m, s in overlap.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return out
