"""The synthetic vault's records and text: the `Entity` and `Planned` records `plan_vault`
fills, the entity pool, and the titles, summaries and bodies rendered from a plan, each
driven by the caller's seeded `random.Random`. Re-exported by
`recall_tui.diagnostics.synth`. Headless.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from recall_tui.diagnostics.synth_words import (
    ACTIVITIES,
    CAUSES,
    CHECKS,
    END,
    ENVS,
    FILES,
    FIRST_NAMES,
    FOLLOWUPS,
    LAST_NAMES,
    PLACES,
    PREFS,
    PROJECT_A,
    PROJECT_B,
    QUALS,
    REASONS,
    SERVICE_A,
    SERVICE_B,
    SERVICE_C,
    TOOLS,
    VERBS,
    _cap,
    _day,
    _pick,
    _slug,
)

# --------------------------------------------------------------------------------------------
# the plan


@dataclass
class Entity:
    """One entity of the synthetic graph."""

    slug: str
    """The lower-cased name the graph keys on."""
    display: str
    """How the text mentions it."""
    kind: str
    """person, service, place or tool."""


@dataclass(slots=True)
class Planned:
    """Everything decided about one memory before any text is rendered (a mutable work record
    of the planner, never handed out of the synth modules)."""

    n: int
    id: str = ""
    folder: str = ""
    role: str = "normal"
    type: str = "fact"
    domain: str = ""
    sub: str = ""
    noun: str = ""
    title: str = ""
    summary: str = ""
    recall_when: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    related: list[tuple[str, float, str]] = field(default_factory=list)
    topic_key: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    status: str = "active"
    created: datetime = END
    updated: datetime = END
    session_id: str | None = None


def _entity_pool(rng: random.Random, n: int) -> list[Entity]:
    """About n/20 entities (at least 12): people, services, places and tools, no duplicates."""
    size = max(12, n // 20)
    people = [(f, la) for f in FIRST_NAMES for la in LAST_NAMES]
    services = [f"{a}-{b}-{c}".rstrip("-") for c in SERVICE_C for a in SERVICE_A for b in SERVICE_B]
    services += [f"project-{a}-{b}" for a in PROJECT_A for b in PROJECT_B]
    rng.shuffle(people)
    rng.shuffle(services)
    pool: list[Entity] = []
    for p in PLACES:
        pool.append(Entity(p, _cap(p), "place"))
    for t in TOOLS:
        pool.append(Entity(t, t, "tool"))
    pi = si = 0
    while len(pool) < max(size, len(PLACES) + len(TOOLS) + 4):
        if (len(pool) % 2 == 0 and pi < len(people)) or si >= len(services):
            f, la = people[pi]
            pi += 1
            pool.append(Entity(f"{f}-{la}", f"{_cap(f)} {_cap(la)}", "person"))
        else:
            pool.append(Entity(services[si], services[si], "service"))
            si += 1
        if pi >= len(people) and si >= len(services):
            break
    return pool


def _words_between(text: str, lo: int, hi: int, pad: str) -> str:
    words = text.split()
    if len(words) > hi:
        words = words[:hi]
    while len(words) < lo:
        words.append(pad)
    return " ".join(words)


#: type -> title templates, called as t(rng, noun, verb, qualifier, person, thing).
TITLES: dict[str, tuple[Callable[..., str], ...]] = {
    "fact": (lambda r, n, v, q, a, b: f"{_cap(n)} for {b} runs on {_pick(r, ENVS)}",
             lambda r, n, v, q, a, b: f"Where the {n} of {b} is configured"),
    "event": (lambda r, n, v, q, a, b: f"{_cap(q)} {n} on {_pick(r, ENVS)} during {_pick(r, ACTIVITIES)}",
              lambda r, n, v, q, a, b: f"{a} found the {n} {q}"),
    "instruction": (lambda r, n, v, q, a, b: f"Always {v} the {n} before {_pick(r, ACTIVITIES)}",
                    lambda r, n, v, q, a, b: f"How to {v} the {n} safely"),
    "task": (lambda r, n, v, q, a, b: f"{_cap(v)} the {n} for {b}",
             lambda r, n, v, q, a, b: f"Follow up with {a} on the {n}"),
    "lesson": (lambda r, n, v, q, a, b: f"{_cap(q)} {n} came from {_pick(r, CAUSES)}",
               lambda r, n, v, q, a, b: f"Lesson from the {q} {n}"),
    "preference": (lambda r, n, v, q, a, b: f"{a} prefers {_pick(r, PREFS)[0]} for the {n}",
                   lambda r, n, v, q, a, b: f"How {a} likes the {n} handled"),
    "project-fact": (lambda r, n, v, q, a, b: f"{b} keeps its {n} in {_pick(r, FILES)}",
                     lambda r, n, v, q, a, b: f"{_cap(n)} setup of {b}"),
    "decision": (lambda r, n, v, q, a, b: f"Decided to {v} the {n} with {_pick(r, TOOLS)}",
                 lambda r, n, v, q, a, b: f"Decision on the {n} for {b}"),
}
#: type -> the first sentence of a summary, same arguments as TITLES.
SUMMARIES: dict[str, Callable[..., str]] = {
    "fact": lambda r, n, v, q, a, b: f"The {n} for {b} runs on {_pick(r, ENVS)} and {a} owns it.",
    "event": lambda r, n, v, q, a, b: f"The {n} turned {q} during {_pick(r, ACTIVITIES)}; {a} {_pick(r, FOLLOWUPS)}.",
    "instruction": lambda r, n, v, q, a, b: (f"Always {v} the {n} before {_pick(r, ACTIVITIES)}, "
                                             f"otherwise it breaks on {_pick(r, ENVS)}."),
    "task": lambda r, n, v, q, a, b: f"{_cap(v)} the {n} for {b}; {a} is waiting on it.",
    "lesson": lambda r, n, v, q, a, b: (f"The {q} {n} was caused by {_pick(r, CAUSES)}; "
                                        f"next time check {_pick(r, CHECKS)}."),
    "preference": lambda r, n, v, q, a, b: "{} prefers {} over {} when dealing with the {}.".format(
        a, *_pick(r, PREFS), n),
    "project-fact": lambda r, n, v, q, a, b: (f"{b} configures the {n} in {_pick(r, FILES)} "
                                              f"and deploys it to {_pick(r, ENVS)}."),
    "decision": lambda r, n, v, q, a, b: (f"We chose to {v} the {n} with {_pick(r, TOOLS)} "
                                          f"because {_pick(r, REASONS)}."),
}
#: Optional second sentences of a summary.
SECOND: tuple[Callable[..., str], ...] = (
    lambda m, a, b: f"Ask {a} before changing it.",
    lambda m, a, b: f"Last checked on {_day(m.created)}.",
    lambda m, a, b: f"It came up again with {b}.",
    lambda m, a, b: f"See the runbook for {b} for details.",
)


def _title(rng: random.Random, m: Planned, e0: Entity, e1: Entity) -> str:
    t = _pick(rng, TITLES[m.type])(rng, m.noun, _pick(rng, VERBS), _pick(rng, QUALS), e0.display, e1.display)
    return _words_between(t, 4, 10, "notes")


def _summary(rng: random.Random, m: Planned, e0: Entity, e1: Entity) -> str:
    first = SUMMARIES[m.type](rng, m.noun, _pick(rng, VERBS), _pick(rng, QUALS), e0.display, e1.display)
    if rng.random() < 0.5:
        return first
    return f"{first} {_pick(rng, SECOND)(m, e0.display, e1.display)}"


#: Memory-independent body fragments, every combination rendered once at import so a body
#: line costs one pick and one format (this is what keeps 100k memories fast).
_DO_ON_AFTER = tuple(f"{_cap(v)} the {{}} on {e} after {a}." for v in VERBS for e in ENVS for a in ACTIVITIES)
_AGAIN_CAUSE = tuple(f"{q} again; cause looked like {c}." for q in QUALS for c in CAUSES)
_NUMBERS = tuple(f"Numbers from the last check: p50 {p50} ms, p95 {p95} ms, {err} errors a day."
                 for p50 in (4, 7, 12, 18, 25, 33, 41, 60, 85) for p95 in (120, 180, 250, 400, 650, 900)
                 for err in (0, 1, 3, 8, 15, 40))
_NOTE = tuple(f"Note to self: {v} it before {a}." for v in VERBS for a in ACTIVITIES)
_COMMANDS = tuple(f"{t} {v.split()[0]} {{}} --env {_slug(e)}" for t in TOOLS for v in VERBS for e in ENVS)
_BODY_LINES: tuple[Callable[..., str], ...] = (
    lambda r, m, a, b: "- " + _pick(r, _DO_ON_AFTER).format(m.noun),
    lambda r, m, a, b: f"- {a} noticed it was {_pick(r, _AGAIN_CAUSE)}",
    lambda r, m, a, b: f"Context: {b} depends on the {m.noun}, so check {_pick(r, CHECKS)}.",
    lambda r, m, a, b: f"- Owner: {a}. Backup contact: {_pick(r, m.entities).display}.",
    lambda r, m, a, b: f"- Decided {_day(m.created)}: {_pick(r, REASONS)}.",
    lambda r, m, a, b: _pick(r, _NUMBERS),
    lambda r, m, a, b: f"- Config lives in `{_pick(r, FILES)}`.",
    lambda r, m, a, b: _pick(r, _NOTE),
    lambda r, m, a, b: "",
)


def _body(rng: random.Random, m: Planned, by_id: dict[str, Planned]) -> str:
    """3 to 40 lines: a heading or not, prose, bullets, a command block, maybe `## Related`."""
    a = m.entities[0].display
    b = m.entities[-1].display
    target = min(40, max(3, int(rng.triangular(3, 40, 8))))
    out: list[str] = []
    if rng.random() < 0.4:
        out += [f"# {m.title}", ""]
    while len(out) < target:
        if rng.random() < 0.08 and len(out) + 4 <= target:
            if out and out[-1]:
                out.append("")
            out += ["```sh", _pick(rng, _COMMANDS).format(_slug(m.noun)), "```", ""]
            continue
        line = _pick(rng, _BODY_LINES)(rng, m, a, b)
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    if len(out) < 3:
        out += [f"- Tagged {', '.join(m.tags)}.", f"- Mentioned by {a}."][: 3 - len(out)]
    if m.related and len(out) + 3 <= 40 and rng.random() < 0.5:
        out += ["", "## Related"]
        out += [f"- [[{rid}]] {by_id[rid].title}" for rid, _, _ in m.related[: 40 - len(out)]]
    return "\n".join(out[:40]) + "\n"
