"""The synthetic vault's vocabulary: its sizes and dates, the word lists and phrase templates,
and the small deterministic helpers (seeded picks, slugs, YAML scalars, dates) that render
them. Data and pure functions only; `synth_text.py` and `synth.py` build on it. Re-exported
by `recall_tui.diagnostics.synth`. Headless.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

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


def _pick(rng: random.Random, seq):  # hot path, any sequence
    """rng.choice, about five times faster (rng.random is one C call); still seed-deterministic."""
    return seq[int(rng.random() * len(seq))]


def _below(rng: random.Random, n: int) -> int:
    """A whole number in [0, n), the fast way (see _pick)."""
    return int(rng.random() * n)


def _randint(rng: random.Random, lo: int, hi: int) -> int:
    """A whole number in [lo, hi], the fast way (see _pick)."""
    return lo + int(rng.random() * (hi - lo + 1))


def _few(rng: random.Random, seq, k: int) -> list:  # any sequence
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
