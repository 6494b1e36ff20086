"""The vault reader: every default, every problem kind, chains, entities, digests, turns.

Fixtures: tests/fixtures/bad-vault (one file per problem kind plus good memories) and
tests/fixtures/chain-vault (a clean vault with chains declared every way, edges, digests and
transcripts). Binary, oversized, symlinked and unreadable files are made in a tmp copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from recall_tui.vault import reader as vault_mod
from recall_tui.vault import walk as walk_mod
from recall_tui.vault.model import Role
from recall_tui.vault.reader import MAX_FILE_BYTES, read_vault

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BAD = FIXTURES / "bad-vault"
CHAINS = FIXTURES / "chain-vault"
UTC = timezone.utc


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file below root, dot-folders included, symlinks not followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


@pytest.fixture(scope="module")
def bad():
    before = tree_hashes(BAD)
    vault = read_vault(BAD)
    assert tree_hashes(BAD) == before, "reading the vault changed or added a file"
    return vault


@pytest.fixture(scope="module")
def chains():
    return read_vault(CHAINS)


def problems_of(vault, path):
    return [(p.line, p.severity, p.reason) for p in vault.problems if p.path == path]


# --- every problem kind ---------------------------------------------------------------------

EXPECTED_BAD = [
    ("bad-dates.md", 2, "error", "created: expected an ISO-8601 date or datetime, got '2026-02-30'; using the file's modification time"),
    ("bad-dates.md", 3, "error", "updated: expected an ISO-8601 date or datetime, got 'next tuesday'; using created"),
    ("bad-dates.md", 4, "error", "expires: expected an ISO-8601 date or datetime, got 12; using none"),
    ("bad-utf8.md", 4, "error", "not valid UTF-8 (byte offset 24); skipped"),
    ("bad-yaml.md", 5, "error", "frontmatter is not valid YAML (while parsing a flow sequence did not find expected ',' or ']'); file skipped"),
    ("consolidation/notes.md", None, "warning", "not read: digests live in consolidation/{daily,weekly,quarterly}/"),
    ("dup-b.md", 3, "error", "duplicate id 'shared-id' (first used by dup-a.md); file skipped"),
    ("dup-key.md", 4, "warning", "tags: appears again (first on line 3); the later value is used"),
    ("links/broken-links.md", 3, "error", "supersedes: unknown id 'ghost-1'; link dropped"),
    ("links/broken-links.md", 4, "error", "superseded_by: unknown id 'ghost-2'; link dropped"),
    ("links/broken-links.md", 5, "error", "related_via: unknown id 'ghost-3'; link dropped"),
    ("links/contra-new-b.md", 3, "error", "supersedes: 'contra-old' but 'contra-old' says superseded_by: 'contra-new-a'; link dropped"),
    ("links/cycle-x.md", 3, "error", "supersession cycle cycle-x -> cycle-y -> cycle-z -> cycle-x (each superseded by the next); dropped the link cycle-z -> cycle-x"),
    ("not-a-mapping.md", 2, "error", "frontmatter is a list, not a mapping of keys; every key uses its default"),
    ("sessions/sess-42.jsonl", 2, "error", "not valid JSON (Expecting ',' delimiter); line skipped"),
    ("sessions/sess-42.jsonl", 3, "error", "role: expected user or assistant, got 'robot'; line skipped"),
    ("status/stale-new.md", 3, "warning", "status is superseded but it is the newest in its chain; nothing replaces it"),
    ("status/stale-old.md", 3, "warning", "status is active but 'stale-new' supersedes it; it will still be recalled"),
    ("typo-key.md", 3, "warning", "unknown key 'recall-when' kept as an extra; did you mean 'recall_when'?"),
    ("unclosed.md", 1, "error", "frontmatter opens with `---` on line 1 but never closes; file skipped"),
    ("unknown-enums.md", 2, "error", "type: expected one of fact, event, instruction, task, lesson, preference, project-fact, decision, got 'note'; using fact"),
    ("unknown-enums.md", 3, "error", "status: expected one of active, superseded, archived, got 'live'; using active"),
    ("unknown-enums.md", 4, "error", "tier: expected one of core, normal, got 'gold'; using normal"),
    ("wrong-types.md", 3, "error", 'title: expected text, got ["not", "text"]; using the first heading or the file name'),
    ("wrong-types.md", 4, "error", "trust: expected a number 0..3, got 'high'; using 2"),
    ("wrong-types.md", 5, "error", "credibility: expected a number 1..5, got 9; using 3"),
    ("wrong-types.md", 6, "error", "confidence: expected a number 0..1, got 2; using none"),
    ("wrong-types.md", 7, "error", "emotion: expected a number -5..5, got 'sad'; using 0"),
    ("wrong-types.md", 8, "error", 'recall_when: expected a list of text, got {"a": 1}; using []'),
    ("wrong-types.md", 11, "error", 'tags[1]: expected text, got {"nested": "map"}; item dropped'),
    ("wrong-types.md", 13, "error", "related_via[0].score: expected a number 0..1, got 1.5; using 1"),
    ("wrong-types.md", 14, "error", 'related_via[1]: expected {id, score, relation} with an id, got {"42.5x": "nope"}; link dropped'),
    ("wrong-types.md", 16, "error", 'edges[0]: expected "subject -[relation]-> object" or {subject, relation, object}, got \'no arrow here\'; edge dropped'),
    ("wrong-types.md", 17, "error", 'edges[1]: expected "subject -[relation]-> object" or {subject, relation, object}, got {"subject": "only-subject"}; edge dropped'),
]  # fmt: skip


def test_bad_vault_reports_every_problem_with_path_line_and_reason(bad):
    got = [(p.path, p.line, p.severity, p.reason) for p in bad.problems]
    assert got == EXPECTED_BAD


def test_problem_lines_point_at_the_key(bad):
    """The reported line really holds the key the reason names."""
    for p in bad.problems:
        key = p.reason.split(":", 1)[0]
        if p.line and p.path.endswith(".md") and key in ("trust", "credibility", "tags", "id"):
            line = (BAD / p.path).read_text().splitlines()[p.line - 1]
            assert line.startswith(key + ":"), (p, line)


def test_bad_files_skipped_and_the_rest_loads(bad):
    ids = set(bad.memories)
    for skipped in ("bad-yaml", "bad-utf8", "unclosed"):
        assert skipped not in ids
    # the first file of a duplicate id wins
    assert bad.memories["shared-id"].path == "dup-a.md"
    assert len(bad.memories) == 20


def test_bad_keys_degrade_to_their_defaults(bad):
    m = bad.memories["wrong-types"]
    assert (m.trust, m.credibility, m.confidence, m.emotion) == (2.0, 3.0, None, 0.0)
    assert m.title == "Wrong types"  # from the heading, since `title` was a list
    assert m.recall_when == ()
    assert m.tags == ("fine",)
    assert [(r.id, r.score) for r in m.related_via] == [("good-full", 1.0)]
    assert m.edges == ()
    e = bad.memories["unknown-enums"]
    assert (e.type, e.status, e.tier) == ("fact", "active", "normal")
    d = bad.memories["bad-dates"]
    mtime = datetime.fromtimestamp((BAD / "bad-dates.md").stat().st_mtime, UTC)
    assert d.created == mtime and d.updated == mtime and d.expires is None
    n = bad.memories["not-a-mapping"]
    assert (n.id, n.title, n.summary) == (
        "not-a-mapping",
        "Not a mapping",
        "The body still counts.",
    )
    assert bad.memories["dup-key"].tags == ("second",)
    assert dict(bad.memories["typo-key"].extra) == {
        "recall-when": ["deploying on friday"],
        "reviewer": "maya",
    }


def test_broken_links_are_dropped_and_good_links_kept(bad):
    m = bad.memories["broken-links"]
    assert m.supersedes == ("archived-note",)
    assert m.superseded_by is None
    assert [r.id for r in m.related_via] == ["core-rule"]
    assert bad.memories["contra-new-b"].supersedes == ()
    assert bad.chain_of("contra-old").ids == ("contra-old", "contra-new-a")


def test_cycle_is_broken_at_the_link_running_backwards_in_time(bad):
    assert bad.chain_of("cycle-y").ids == ("cycle-x", "cycle-y", "cycle-z")
    assert bad.memories["cycle-x"].supersedes == ()


def test_a_full_memory_loads_every_key(bad):
    m = bad.memories["good-full"]
    assert m.path == "good/full-memory.md" and m.role is Role.NORMAL
    assert m.title == "Billing database runs Postgres 16"
    assert (m.type, m.scope, m.status, m.tier) == (
        "project-fact",
        "project:billing",
        "active",
        "core",
    )
    assert m.summary == "The billing service uses Postgres 16 on RDS since October."
    assert m.recall_when == ("choosing SQL features for billing", "upgrading the billing database")
    assert m.tags == ("database", "billing")
    assert m.keywords == ("postgres", "rds", "upgrade")
    assert (m.topic_path, m.topic_key) == ("work/billing/database", "billing.db.engine")
    assert [(r.id, r.score, r.relation) for r in m.related_via] == [
        ("no-frontmatter", 0.4, "see_also"),
        ("core-rule", 1.0, "related"),
    ]
    assert [str(e) for e in m.edges] == [
        "billing service -[uses]-> postgres 16",
        "postgres 16 -[runs_on]-> aws rds",
    ]
    assert all(e.memory_id == "good-full" for e in m.edges)
    cet = timezone(timedelta(hours=2))
    assert m.created == datetime(2026, 10, 2, 10, 0, tzinfo=cet)
    assert m.updated == datetime(2026, 10, 20, tzinfo=UTC)
    assert m.valid_from == datetime(2026, 10, 1, tzinfo=UTC) and m.valid_to is None
    assert m.ingested_at == datetime(2026, 10, 2, 9, 0, tzinfo=UTC)
    assert m.expires == datetime(2027, 10, 1, tzinfo=UTC)
    assert (m.trust, m.credibility, m.confidence, m.emotion) == (3.0, 4.0, 0.9, -1.0)
    assert (m.source, m.session_id, m.lang) == ("claude-code", "sess-42", "en")
    assert m.original == "Die Abrechnungsdatenbank läuft auf Postgres 16."
    assert dict(m.extra) == {"reviewer": "maya"}
    assert list(m.frontmatter)[:3] == ["id", "title", "type"]
    lines = (BAD / m.path).read_text().splitlines()
    assert m.key_lines["id"] == 2 and lines[m.key_lines["reviewer"] - 1] == "reviewer: maya"
    assert len(m.key_lines) == 28
    raw = (BAD / m.path).read_bytes()
    assert m.content_hash == hashlib.sha256(raw).hexdigest()
    assert m.body == raw.decode().split("---\n", 2)[2]
    assert m.mtime == (BAD / m.path).stat().st_mtime


def test_a_memory_without_frontmatter_gets_every_default(bad):
    m = bad.memories["no-frontmatter"]
    path = BAD / "work/infra/no-frontmatter.md"
    assert m.id == "no-frontmatter" and m.path == "work/infra/no-frontmatter.md"
    assert m.title == "Nightly backups of the home-lab"
    assert (
        m.summary == "The NAS takes a restic snapshot every night at 02:00 and keeps thirty days."
    )
    assert m.topic_path == "work/infra" and m.topic_key is None
    assert (m.type, m.scope, m.status, m.tier, m.lang) == (
        "fact",
        "global",
        "active",
        "normal",
        "en",
    )
    assert (m.recall_when, m.tags, m.keywords, m.supersedes) == ((), (), (), ())
    assert m.superseded_by is None and m.related_via == () and m.edges == ()
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    assert m.created == mtime and m.updated == mtime and m.ingested_at == mtime
    assert (m.valid_from, m.valid_to, m.expires, m.confidence) == (None, None, None, None)
    assert (m.trust, m.credibility, m.emotion) == (2.0, 3.0, 0.0)
    assert (m.source, m.session_id, m.original) == (None, None, None)
    assert m.body == path.read_text() and dict(m.extra) == {} and dict(m.key_lines) == {}


def test_bom_crlf_and_reserved_folders(bad):
    raw = (BAD / "_always-load/core-rule.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf---\r\n")  # the fixture really has a BOM and CRLF
    core = bad.memories["core-rule"]
    assert core.body == "# Never touch production\r\n\r\nAsk before any write to production.\r\n"
    assert core.role is Role.ALWAYS_LOAD and core.topic_path == ""
    assert (core.type, core.tags, core.title) == (
        "instruction",
        ("safety",),
        "Never touch production",
    )
    assert core.summary == "Ask before any write to production."
    assert core.key_lines["created"] == 5
    archived = bad.memories["archived-note"]
    assert archived.role is Role.ARCHIVE and archived.topic_path == "old-notes"
    assert archived.status == "archived" and not archived.is_recallable_by_default


def test_digests_and_turns_of_the_bad_vault(bad):
    assert [(d.label, d.line, d.text) for d in bad.digests] == [
        ("2026-11-18", 3, "Moved the billing database to Postgres 16.\nNo downtime."),
    ]
    assert [(t.seq, t.line) for t in bad.turns] == [(1, 1), (4, 4)]


# --- cases made in a private copy ------------------------------------------------------------


@pytest.fixture()
def hostile(tmp_path):
    """The bad vault plus binary, oversized, symlinked and special files."""
    root = tmp_path / "vault"
    shutil.copytree(BAD, root, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nid: secret\n---\nOutside.\n")
    (root / "binary.md").write_bytes(b"---\nid: binary\n---\nabc\x00def\n")
    (root / "big.md").write_bytes(b"---\nid: big\n---\n" + b"x" * MAX_FILE_BYTES)
    (root / "exactly-max.md").write_bytes(
        b"---\nid: exactly-max\n---\n" + b"y" * (MAX_FILE_BYTES - 24)
    )
    os.symlink(outside / "secret.md", root / "escape.md")
    os.symlink(outside, root / "escape-dir")
    os.symlink("..", root / "work" / "loop")
    os.symlink("self.md", root / "self.md")
    os.symlink("missing.md", root / "dangling.md")
    os.symlink("good/full-memory.md", root / "alias.md")
    os.symlink("good", root / "good-again")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "inner.md").write_text("---\nid: hidden-inner\n---\nOnly via a link.\n")
    os.symlink(".hidden", root / "linked-hidden")
    (root / ".hidden" / "only-linked.md").write_text("---\nid: hidden-link\n---\nLinked.\n")
    os.symlink(".hidden/only-linked.md", root / "hidden-link.md")
    os.mkfifo(root / "pipe.md")
    return root


def test_hostile_files_are_reported_and_skipped(hostile):
    before = tree_hashes(hostile)
    v = read_vault(hostile)
    assert tree_hashes(hostile) == before
    found = {p.path: (p.line, p.severity, p.reason) for p in v.problems}
    assert found["binary.md"] == (None, "error", "binary file (NUL byte at offset 22); skipped")
    assert found["big.md"] == (None, "error", "file is 1.0 MiB, over the 1 MiB limit; skipped")
    assert "exactly-max.md" not in found and "exactly-max" in v.memories
    assert found["escape.md"][2].endswith("leads outside the vault; skipped")
    assert found["escape-dir"][2].endswith("leads outside the vault; skipped")
    assert found["self.md"][2] == "symlink loop (-> self.md); skipped"
    assert found["dangling.md"][2] == "broken symlink (-> missing.md); skipped"
    assert found["work/loop"] == (
        None,
        "error",
        "symlink loop: folder link to .. leads back to its own parent; skipped",
    )
    assert found["good-again"] == (
        None,
        "warning",
        "symlink to folder good is already read as 'good'; skipped",
    )
    assert found["alias.md"] == (
        None,
        "warning",
        "symlink to good/full-memory.md is already read as 'good/full-memory.md'; skipped",
    )
    # a file reached both through a folder link and a file link is read once
    assert v.memories["hidden-link"].path == "linked-hidden/only-linked.md"
    assert found["hidden-link.md"][1:] == (
        "warning",
        "symlink to .hidden/only-linked.md is already read as "
        "'linked-hidden/only-linked.md'; skipped",
    )
    assert found["pipe.md"] == (None, "error", "not a regular file; skipped")
    assert "secret" not in v.memories
    assert v.memories["hidden-inner"].path == "linked-hidden/inner.md"
    assert v.memories["good-full"].path == "good/full-memory.md"
    assert not (hostile / ".recall").exists()


def test_oversized_by_one_byte(tmp_path):
    (tmp_path / "a.md").write_bytes(b"z" * (MAX_FILE_BYTES + 1))
    (tmp_path / "b.md").write_bytes(b"z" * MAX_FILE_BYTES)
    v = read_vault(tmp_path)
    assert [p.path for p in v.problems] == ["a.md"] and list(v.memories) == ["b"]


def test_a_file_that_grew_since_its_stat_is_read_whole_or_refused(tmp_path, monkeypatch):
    # The read is sized by the file's stat; a file that grew after it (an agent appending)
    # is still read to its end, and one that grew past the limit is still refused.
    (tmp_path / "grew.md").write_bytes(b"---\nid: grew\n---\n" + b"w" * 5000 + b" end\n")
    (tmp_path / "huge.md").write_bytes(b"h" * (MAX_FILE_BYTES + 10))
    real = os.fstat

    def shrunk(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((*st[:6], 10, *st[7:]))  # st_size as it was before the growth

    monkeypatch.setattr(walk_mod.os, "fstat", shrunk)
    v = read_vault(tmp_path)
    assert v.memories["grew"].body.endswith("w end\n")
    assert [(p.path, p.reason) for p in v.problems] == [
        ("huge.md", "file is 1.0 MiB, over the 1 MiB limit; skipped")
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file_is_reported(tmp_path):
    f = tmp_path / "locked.md"
    f.write_text("hello\n")
    f.chmod(0)
    v = read_vault(tmp_path)
    assert [(p.path, p.reason) for p in v.problems] == [
        ("locked.md", "cannot read the file (Permission denied); skipped")
    ]


def test_missing_root_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_vault(tmp_path / "nope")
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(NotADirectoryError):
        read_vault(tmp_path / "file.md")


def test_empty_vault(tmp_path):
    v = read_vault(tmp_path)
    assert (len(v.memories), v.problems, v.chains, v.digests, v.turns) == (0, (), (), (), ())
    assert not (tmp_path / ".recall").exists()


# --- chains, entities, digests, turns ---------------------------------------------------------


def test_chain_vault_is_clean(chains):
    assert chains.problems == ()


def test_chains_from_either_end_both_ends_and_merge(chains):
    assert [c.ids for c in chains.chains] == [
        ("editor-old", "editor-new"),  # declared at both ends
        ("diet-v1", "diet-v2", "diet-v3"),  # v1 -> v2 by superseded_by, v2 -> v3 by supersedes
        ("standup-b0", "standup-b", "standup-merged"),  # merge: the longest path is the chain
    ]
    assert chains.chain_of("standup-a") is None  # the shorter merged branch is in no chain
    assert chains.chain_of("diet-v2").head == "diet-v3"
    # declarations stay as written: one end only is enough
    assert chains.memories["diet-v2"].superseded_by is None


def test_entity_names_are_normalised(chains):
    assert chains.graph.entities == ("berlin", "kestrel pay", "maya okafor", "priya nair")
    assert [str(e) for e in chains.graph.edges] == [
        "maya okafor -[works_at]-> kestrel pay",
        "kestrel pay -[based in]-> berlin",
        "priya nair -[manages]-> maya okafor",
    ]
    assert chains.graph.neighbours("maya okafor") == ("kestrel pay", "priya nair")
    assert chains.memories_with_entity("maya okafor") == ("maya", "priya")


def test_digest_paragraphs(chains):
    got = [(d.period, d.label, d.index, d.line, d.text, d.id) for d in chains.digests]
    assert got == [
        ("daily", "2026-11-18", 0, 7, "Moved the billing database\nto Postgres 16.", "digest:2026-11-18#0"),
        ("daily", "2026-11-18", 1, 10, "Nobody noticed the switch.", "digest:2026-11-18#1"),
        ("daily", "2026-11-18", 2, 13, "Replaced the router.", "digest:2026-11-18#2"),
        ("quarterly", "2026-Q4", 0, 3, "Quarter of migrations.", "digest:2026-Q4#0"),
        ("weekly", "2026-W46", 0, 1, "Week 46: billing on Postgres 16, new router at home.", "digest:2026-W46#0"),
    ]  # fmt: skip
    d = chains.digests[0]
    assert d.content_hash == hashlib.sha256(d.text.encode()).hexdigest()
    lines = (CHAINS / d.path).read_text().splitlines()
    assert lines[d.line - 1] == "Moved the billing database"


def test_turns(chains):
    got = [(t.id, t.role, t.text, t.at, t.line) for t in chains.turns]
    assert got == [
        ("turn:sess-1#1", "user", "What's for dinner?", datetime(2026, 11, 20, 18, tzinfo=UTC), 1),
        ("turn:sess-1#2", "assistant", "Something vegan.", datetime(2026, 11, 20, 17, 0, 4, tzinfo=UTC), 3),
        ("turn:sess-2#1", "user", "hi", None, 1),
    ]  # fmt: skip


def test_status_warnings_cover_merge_leftovers(tmp_path):
    (tmp_path / "a.md").write_text("---\nsupersedes: [b, c]\n---\nA\n")
    (tmp_path / "b.md").write_text("---\nstatus: superseded\n---\nB\n")
    (tmp_path / "c.md").write_text("C\n")
    v = read_vault(tmp_path)
    assert [c.ids for c in v.chains] == [("b", "a")]
    assert [(p.path, p.severity, p.reason) for p in v.problems] == [
        ("c.md", "warning", "status is active but 'a' supersedes it; it will still be recalled")
    ]


def test_self_supersession(tmp_path):
    (tmp_path / "a.md").write_text("---\nid: a\nsupersedes: a\n---\nA\n")
    v = read_vault(tmp_path)
    assert [(p.line, p.reason) for p in v.problems] == [
        (3, "supersedes: 'a' supersedes itself; link dropped")
    ]
    assert v.chains == () and v.memories["a"].supersedes == ()


# --- YAML details ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frontmatter", "attr", "expected"),
    [
        ("title: 2026", "title", "2026"),
        ("title: 'It''s here'", "title", "It's here"),
        ('title: "quoted: colon"', "title", "quoted: colon"),
        ("title: yes", "title", "yes"),
        ("tags: solo", "tags", ("solo",)),
        ("tags: [a, 'b, c', 3]", "tags", ("a", "b, c", "3")),
        ("recall_when:\n- unindented item\n- second", "recall_when", ("unindented item", "second")),
        ("keywords: a, b ,c", "keywords", ("a", "b", "c")),
        ("keywords: [x y, z]", "keywords", ("x y", "z")),
        ("keywords: tone verbosity", "keywords", ("tone verbosity",)),
        ("supersedes: other", "supersedes", ("other",)),
        ("created: 2026-01-05", "created", datetime(2026, 1, 5, tzinfo=UTC)),
        ("created: 2026-01-05 10:30:00", "created", datetime(2026, 1, 5, 10, 30, tzinfo=UTC)),
        ("created: '2026-01-05T10:30:00Z'", "created", datetime(2026, 1, 5, 10, 30, tzinfo=UTC)),
        ("created: '2026-01-05'", "created", datetime(2026, 1, 5, tzinfo=UTC)),
        ("trust: 0", "trust", 0.0),
        ("trust: 1.5", "trust", 1.5),
        ("emotion: -5", "emotion", -5.0),
        ("type: Decision", "type", "decision"),
        ("topic_path: /work/infra/", "topic_path", "work/infra"),
        ("title: a # trailing comment", "title", "a"),
        ("summary: |\n  block\n  scalar", "summary", "block\nscalar"),
        ("tags: &t [x]\nrecall_when: *t", "recall_when", ("x",)),
        ("", "title", "x"),
    ],
)
def test_frontmatter_values(tmp_path, frontmatter, attr, expected):
    (tmp_path / "x.md").write_text(f"---\n{frontmatter}\n---\nBody.\n")
    (tmp_path / "other.md").write_text("---\nstatus: superseded\n---\nTarget.\n")
    v = read_vault(tmp_path)
    assert v.problems == ()
    assert getattr(v.memories["x"], attr) == expected


@pytest.mark.parametrize(
    ("frontmatter", "reason"),
    [
        ("trust: '2'", "trust: expected a number 0..3, got '2'; using 2"),
        ("trust: true", "trust: expected a number 0..3, got true; using 2"),
        ("trust: .nan", "trust: expected a number 0..3, got NaN; using 2"),
        ("superseded_by: [a, b]", 'superseded_by: expected one id, got ["a", "b"]; using none'),
        ("id: [a]", "id: expected text, got [\"a\"]; using the file name 'x'"),
        ("keywords: {a: 1}", 'keywords: expected text or a list of text, got {"a": 1}; using none'),
        ("created: 1700000000", "created: expected an ISO-8601 date or datetime, got 1700000000; using the file's modification time"),
        ("? [a]\n: b", "a frontmatter key that is not plain text; ignored"),
    ],
)  # fmt: skip
def test_frontmatter_problems(tmp_path, frontmatter, reason):
    (tmp_path / "x.md").write_text(f"---\n{frontmatter}\n---\nBody.\n")
    v = read_vault(tmp_path)
    assert [(p.path, p.line, p.reason) for p in v.problems] == [("x.md", 2, reason)]
    assert "x" in v.memories


TRICKY_FRONTMATTER = [
    "a: 1\nb: 1.5\nc: -3\nd: 0x1f\ne: 1_000\nf: 1:30\ng: .inf\nh: -.Inf",
    "a: yes\nb: No\nc: on\nd: OFF\ne: ~\nf: null\ng: Null\nh:",
    "a: 2026-01-05\nb: 2026-01-05T10:00:00+01:00\nc: 2026-01-05 10:00\nd: 2026-1-5",
    "a: x-y\nb: -x\nc: a:b\nd: a#b\ne: 'q'\nf: \"d\"\ng: ''\nh: \"\"",
    "a: [1, x, 'y, z', \"w\", yes, ~]\nb: []\nc: {k: v, n: 2}\nd: {}",
    "a:\n  - {id: x, score: 0.5}\n  - plain\n  - 'quoted'\n  - 3\nb:\n- z",
    "a: value\na: again\nb: 007\nc: 08\nd: +5\ne: 0o17\nf: =",
    'related_via:\n  - {id: a, score: 0.55, relation: caused_by}\nedges:\n  - "x -[r]-> y"',
]


@pytest.mark.parametrize("fm", TRICKY_FRONTMATTER)
def test_fast_path_agrees_with_pyyaml(fm):
    fast = vault_mod._fast_front(fm, 2, "x.md", [])
    if fast is None:  # refused: PyYAML reads it, which is always right
        return
    slow = vault_mod._yaml_front("x.md", fm, 2, [])
    assert (fast.raw, list(fast.raw), fast.lines) == (slow.raw, list(slow.raw), slow.lines)
    assert fast.items == slow.items
    assert {k: fast.source.get(k) for k in slow.source} == slow.source


def test_fast_path_reads_the_real_files_as_pyyaml_does(sample_vault_path):
    files = sorted(sample_vault_path.rglob("*.md")) + sorted(FIXTURES.rglob("*.md"))
    accepted = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8-sig")
            fm, first, _, _ = vault_mod._split_frontmatter(text)
        except (UnicodeDecodeError, vault_mod._SkipFile):
            continue
        if fm is None:
            continue
        fast = vault_mod._fast_front(fm, first, "x.md", [])
        if fast is None:
            continue
        accepted += 1
        slow = vault_mod._yaml_front("x.md", fm, first, [])
        assert (fast.raw, list(fast.raw), fast.lines, fast.items) == (
            slow.raw,
            list(slow.raw),
            slow.lines,
            slow.items,
        ), path
    assert accepted >= 20


# --- the sample vault -------------------------------------------------------------------------


def test_sample_vault_reads_clean(sample_vault_path):
    before = tree_hashes(sample_vault_path)
    v = read_vault(sample_vault_path)
    assert tree_hashes(sample_vault_path) == before
    assert [str(p) for p in v.problems] == []
    assert len(v.memories) >= 150
    assert len(v.chains) >= 6 and max(len(c.ids) for c in v.chains) >= 3
    assert len(v.graph.entities) >= 40


def test_reader_is_headless():
    code = (
        "import sys, recall_tui.vault.reader; print([m for m in ('textual', 'rich') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


ATOMS = (
    "a", "yes", "No", "on", "~", "null", "1", "-1", "+1", "0x1F", "0o7", "1_0", "1:30", "1.5",
    "-.inf", ".NaN", "2026-01-05", "2026-02-30", "2026-01-05 10:00", "2026-01-05T10:00:00Z",
    "x y", "a:b", "a#b", "a #b", "'q'", "'it''s'", '"d"', '"a\\nb"', "'a, b'", "[a, b]",
    "{k: v}", "[]", "{}", "-x", "- x", "=", "!t x", "&a x", "*a", "|", "> x", "@x", "%x",
    "a: b", "é", "x,y", "[a,[b]]", "{a: {b: c}}", "[a,]", "0", "08", "1e3", "1.0e+3", "True",
    "Off", "y", "2026-13-01", "190:20:30", "0b101", ".5", "-0",
)  # fmt: skip


def test_fast_path_agrees_with_pyyaml_on_random_frontmatter():
    """A deterministic fuzz: whatever the fast path accepts, PyYAML reads the same way."""
    import math
    import random

    def norm(x):
        if isinstance(x, float) and math.isnan(x):
            return "nan"
        if isinstance(x, list):
            return [norm(i) for i in x]
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        return (type(x).__name__, x)

    rnd = random.Random(7)
    accepted = 0
    for _ in range(3000):
        lines = []
        for _ in range(rnd.randint(1, 5)):
            key, r = rnd.choice(["a", "b", "tags", "x_y"]), rnd.random()
            if r < 0.6:
                lines.append(f"{key}: {rnd.choice(ATOMS)}")
            elif r < 0.8:
                lines.append(f"{key}:")
                indent = rnd.choice(["", "  ", "    "])
                lines += [f"{indent}- {rnd.choice(ATOMS)}" for _ in range(rnd.randint(0, 3))]
            else:
                items = ", ".join(rnd.choice(ATOMS) for _ in range(rnd.randint(0, 3)))
                lines.append(f"{key}: [{items}]")
        fm = "\n".join(lines) + "\n"
        fast_problems: list = []
        fast = vault_mod._fast_front(fm, 2, "x.md", fast_problems)
        if fast is None:
            continue
        accepted += 1
        slow_problems: list = []
        slow = vault_mod._yaml_front("x.md", fm, 2, slow_problems)
        assert (norm(fast.raw), list(fast.raw), fast.lines, fast.items) == (
            norm(slow.raw),
            list(slow.raw),
            slow.lines,
            slow.items,
        ), fm
        assert {k: fast.source.get(k) for k in slow.source} == slow.source, fm
        assert fast_problems == slow_problems, fm
    assert accepted > 1000
