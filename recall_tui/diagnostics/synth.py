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
"""

from __future__ import annotations

import bisect
import concurrent.futures
import functools
import gc
import itertools
import json
import multiprocessing
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

#: Memory types with their share of a vault (every type appears once N >= 8).
TYPE_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("fact", 24), ("event", 16), ("instruction", 10), ("task", 12),
    ("lesson", 10), ("preference", 10), ("project-fact", 12), ("decision", 6),
)
#: Most memory files one folder holds; a fuller topic folder spills into `part-2`, `part-3`, ….
FOLDER_CAP = 200
#: The generated story ends here (the day before the tests' pinned now).
END = datetime(2026, 11, 20, 18, 0, tzinfo=timezone.utc)
#: …and spans two years.
SPAN = timedelta(days=730)
#: Number of judged queries written to queries.jsonl (fewer when the vault is tiny).
QUERY_COUNT = 50

# --------------------------------------------------------------------------------------------
# vocabulary

#: domain -> subtopic -> noun phrases a memory in that folder talks about.
TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "work": {
        "infra": ("postgres replica", "deploy pipeline", "staging cluster", "load balancer",
                  "terraform state", "helm chart", "node pool", "TLS certificate", "DNS zone",
                  "backup job", "container registry", "service mesh"),
        "billing": ("invoice export", "payment retry queue", "tax rounding rule", "refund webhook",
                    "currency table", "dunning emails", "ledger migration", "Stripe sync job"),
        "auth": ("OAuth client", "session cookie", "SSO login", "token rotation", "password reset flow",
                 "permission matrix", "audit log", "MFA enrolment"),
        "frontend": ("checkout page", "design tokens", "bundle size budget", "feature flag",
                     "accessibility audit", "form validation", "dark mode toggle", "router config"),
        "data": ("nightly ETL", "warehouse schema", "event tracking plan", "dbt model",
                 "retention report", "Kafka consumer", "parquet export", "metrics dashboard"),
        "oncall": ("pager rotation", "alert threshold", "runbook", "incident review",
                   "error budget", "status page", "escalation policy", "latency alert"),
        "planning": ("quarterly roadmap", "sprint board", "OKR draft", "capacity plan",
                     "release calendar", "tech debt list", "hiring plan", "design review"),
    },
    "personal": {
        "health": ("dentist appointment", "physio exercises", "allergy medication", "blood test",
                   "sleep routine", "eye check", "vaccination record"),
        "finance": ("tax return", "rent payment", "savings plan", "insurance renewal",
                    "credit card statement", "pension transfer", "utility bill"),
        "home": ("boiler service", "lease renewal", "grocery order", "bike repair",
                 "balcony plants", "washing machine", "internet contract"),
        "family": ("birthday gift", "school pickup", "holiday plans", "parents visit",
                   "family dinner", "photo album"),
        "travel": ("flight booking", "train tickets", "hotel reservation", "passport renewal",
                   "travel insurance", "packing list", "visa appointment"),
        "fitness": ("running plan", "climbing session", "swim training", "half marathon",
                    "gym membership", "stretching routine"),
    },
    "homelab": {
        "network": ("router firmware", "VLAN layout", "wireguard tunnel", "Pi-hole blocklist",
                    "tailscale subnet router", "mesh access point"),
        "storage": ("NAS pool", "ZFS snapshot", "offsite backup", "disk replacement",
                    "restic repository", "SMART warnings"),
        "automation": ("home assistant", "heating schedule", "door sensor", "energy monitor",
                       "cron script", "MQTT broker"),
    },
    "learning": {
        "rust": ("borrow checker", "async runtime", "cargo workspace", "error handling crate",
                 "lifetime annotations"),
        "ml": ("embedding model", "fine tuning run", "evaluation set", "vector index",
               "tokenizer config", "reranker"),
        "books": ("reading list", "book notes", "library loan", "book club pick"),
    },
    "projects": {
        "side-app": ("landing page", "signup funnel", "push notifications", "app store listing",
                     "sqlite schema", "sync engine"),
        "blog": ("draft post", "static site build", "RSS feed", "comment spam", "analytics script"),
        "open-source": ("issue triage", "release checklist", "contributor guide", "CI matrix",
                        "changelog", "license question"),
    },
}

#: Third-level folders used once the vault is big (N >= FACET_FROM) so folders stay small.
FACETS: tuple[str, ...] = ("notes", "decisions", "incidents", "howto", "followups", "reviews",
                           "reference", "meetings", "ideas", "history")
FACET_FROM = 2000

FIRST_NAMES = ("priya", "tomas", "lea", "sam", "nora", "jonas", "ingrid", "maya", "omar", "yuki",
               "carla", "dmitri", "amara", "felix", "hana", "luca", "zoe", "ravi", "elena", "kofi",
               "mei", "pablo", "sofia", "arjun", "greta", "malik", "ines", "theo", "aisha", "bruno",
               "clara", "diego", "emma", "farid", "gwen", "hugo", "ida", "jamal", "kira", "lars")
LAST_NAMES = ("nair", "herrera", "moreau", "adeyemi", "okafor", "becker", "sorensen", "tanaka",
              "silva", "kowalski", "haddad", "novak", "mensah", "fischer", "rossi", "park",
              "lindqvist", "chen", "garcia", "dubois", "ivanova", "osei", "meyer", "costa",
              "yilmaz", "kim", "olsen", "bauer", "ali", "moretti")
SERVICE_A = ("orion", "atlas", "kestrel", "juniper", "cobalt", "falcon", "harbor", "maple",
             "nimbus", "quartz", "raven", "sierra", "tundra", "vega", "willow", "zephyr",
             "ember", "lumen", "onyx", "pico", "delta", "boreal", "cinder", "drift", "echo")
SERVICE_B = ("api", "gateway", "worker", "scheduler", "billing", "search", "ledger", "auth",
             "ingest", "notifier", "exporter", "proxy", "cache", "portal", "sync", "reports")
SERVICE_C = ("", "eu", "us", "edge", "internal", "legacy", "v2")
PROJECT_A = ("quiet", "brave", "amber", "swift", "lunar", "rusty", "golden", "silent", "clever",
             "hidden", "crimson", "gentle", "rapid", "frozen", "wild", "bright", "hollow", "tiny",
             "proud", "lucky", "misty", "noble", "polar", "royal", "sunny", "velvet", "windy",
             "cosmic", "dusty", "fuzzy")
PROJECT_B = ("otter", "heron", "badger", "lynx", "panda", "falcon", "walrus", "gecko", "bison",
             "koala", "marten", "orca", "puffin", "quokka", "raccoon", "salmon", "tapir", "urchin",
             "vole", "wombat", "yak", "zebra", "alpaca", "beetle", "cricket", "dingo", "egret",
             "ferret", "gopher", "ibis")
PLACES = ("berlin", "lisbon", "oslo", "kyoto", "porto", "vienna", "krakow", "lyon", "bologna",
          "tallinn", "ghent", "leipzig", "seville", "bergen", "utrecht", "malmo", "graz", "turin")
TOOLS = ("neovim", "tmux", "docker", "kubectl", "terraform", "grafana", "sentry", "postgres",
         "redis", "duckdb", "ansible", "github-actions", "argocd", "vault", "caddy", "nginx")
RELATIONS_PERSON = ("works_on", "owns", "reviewed", "maintains", "asked_about", "reports_to")
RELATIONS_THING = ("depends_on", "uses", "deployed_to", "blocked_by", "replaces", "talks_to")
RELATED_KINDS = ("related", "see_also", "follow_up", "caused_by", "updates", "context")

VERBS = ("rotate", "upgrade", "migrate", "pin", "rebuild", "benchmark", "review", "renew",
         "clean up", "document", "split", "tune", "back up", "restart", "audit", "schedule")
QUALS = ("flaky", "slow", "noisy", "stale", "intermittent", "broken", "expired", "oversized",
         "misconfigured", "duplicated", "silent", "late")
ENVS = ("staging", "production", "the eu-central cluster", "the laptop", "the NAS", "the CI runners",
        "the preview environment", "the home server")
ACTIVITIES = ("a release", "the Friday deploy", "travelling", "a long weekend", "the quarterly review",
              "a database migration", "an on-call handover", "month end", "the team offsite")
CAUSES = ("a missing index", "an expired token", "clock skew", "a wrong timezone", "a full disk",
          "a retry storm", "an unpinned dependency", "a stale cache entry", "a typo in the config",
          "a race in the worker", "DNS caching", "a silent cron failure")
CHECKS = ("the logs first", "the dashboard", "the runbook", "disk usage", "the certificate dates",
          "the queue depth", "the last deploy", "the calendar", "the config diff")
PREFS = (("short answers", "long explanations"), ("diffs", "prose"), ("morning meetings", "evening calls"),
         ("trains", "flights"), ("plain SQL", "an ORM"), ("tabs", "spaces"), ("email", "chat"),
         ("one big PR", "many small PRs"), ("paper notes", "apps"), ("dark roast", "green tea"))
REASONS = ("it halves the cost", "the old setup kept paging us", "support ends next year",
           "it is simpler to operate", "the team already knows it", "latency dropped a lot in tests",
           "it removes a vendor", "backups become trivial")
FILES = ("config/settings.toml", "deploy/values.yaml", "Makefile", ".github/workflows/ci.yml",
         "docker-compose.yml", "infra/main.tf", "notes/README.md", "scripts/backup.sh")
FOLLOWUPS = ("wrote the postmortem", "opened a ticket", "added an alert", "asked for a review",
             "promised a fix next week", "rolled it back", "paired on the fix")
WHEN_TEMPLATES: tuple[Callable[..., str], ...] = (
    lambda n, e, v, q: f"{v} the {n}",
    lambda n, e, v, q: f"{e} asks about the {n}",
    lambda n, e, v, q: f"the {n} looks {q}",
    lambda n, e, v, q: f"planning work on the {n} with {e}",
    lambda n, e, v, q: f"debugging a {q} {n}",
    lambda n, e, v, q: f"before touching the {n}",
    lambda n, e, v, q: f"someone mentions {e} and the {n}",
    lambda n, e, v, q: f"deciding whether to {v} the {n}",
)
STOP = frozenset("a an the to of and with for on in is it its about whether".split())

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9 ,.'()/_+-]*[A-Za-z0-9.)]$")
_YAML_WORDS = frozenset("yes no on off true false null y n ~".split())


def _q(s: str) -> str:
    """A YAML scalar for `s`: plain when unambiguous, else a JSON (YAML double-quoted) string."""
    if _PLAIN.match(s) and s.lower() not in _YAML_WORDS and ": " not in s and " #" not in s:
        return s
    return json.dumps(s, ensure_ascii=False)


def _pick(rng: random.Random, seq):  # noqa: ANN001, ANN202 - hot path, any sequence
    """rng.choice, about five times faster (rng.random is one C call); still seed-deterministic."""
    return seq[int(rng.random() * len(seq))]


def _below(rng: random.Random, n: int) -> int:
    """A whole number in [0, n), the fast way (see _pick)."""
    return int(rng.random() * n)


def _randint(rng: random.Random, lo: int, hi: int) -> int:
    """A whole number in [lo, hi], the fast way (see _pick)."""
    return lo + int(rng.random() * (hi - lo + 1))


def _few(rng: random.Random, seq, k: int) -> list:  # noqa: ANN001 - any sequence
    """Up to k distinct items of seq (k is 1-3 here, so rejection beats random.sample)."""
    k = min(k, len(seq))
    idx: list[int] = []
    while len(idx) < k:
        j = int(rng.random() * len(seq))
        if j not in idx:
            idx.append(j)
    return [seq[j] for j in idx]


@functools.lru_cache(maxsize=4096)
def _key_part(s: str, sep: str = "_") -> str:
    """A slug for a topic key or a tag (a few hundred distinct inputs, so cached)."""
    return _slug(s).replace("-", sep)


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _iso(dt: datetime) -> str:
    """UTC ISO-8601 with a Z, whole seconds (isoformat is several times faster than strftime)."""
    return dt.isoformat(timespec="seconds")[:19] + "Z"


def _day(dt: datetime) -> str:
    return dt.isoformat()[:10]


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
    of the planner, never handed out of this module)."""

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
    queries: int
    """Judged queries in queries.jsonl."""
    seconds: float
    """Wall time of the whole write."""


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
                      workers: int | None = None) -> SynthReport:
    """Write the vault into `out`, which must not exist or be empty. Returns what was written.

    Planning is sequential (links and chains need the whole history); rendering and writing
    run in `workers` forked processes (default: the CPU count, at most 8; 1 = in this process).
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
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as ex:
                list(ex.map(_render_range, chunks))
        else:
            for c in chunks:
                _render_range(c)
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
                       len(sessions), len(queries), time.perf_counter() - t0)


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
