"""The frontmatter's bounds check is skipped for short frontmatter (branch read24): no text
YAML gives is longer than the source it came from (escapes and line folding only shrink it,
aliases share the object), so frontmatter of at most MAX_VALUE_CHARS characters never holds a
text to cut. This checks that claim on generated YAML (the shapes that could grow a text:
escapes, block and folded scalars, aliases, merge keys, tags) and that a long text is still
cut, with its problem, through both parsers. And the fast path against PyYAML on every .md
of every vault in the repository."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recall_tui.vault import frontmatter as fmod
from recall_tui.vault.yamlbounds import MAX_VALUE_CHARS
from tests.conftest import FIXTURES, ROOT
from tests.test_properties import PROPS, _norm, free_text, frontmatter
from tests.test_read_cache import _strings

ESCAPES = ("\\x41", "\\u263A", "\\U0001F600", "\\N", "\\_", "\\L", "\\P", "\\t", "\\\\", "\\\"",
           "\\0", "\\e", "\\ ")
escaped = st.lists(st.one_of(st.sampled_from(ESCAPES), free_text.map(
    lambda t: t.replace("\\", "").replace('"', ""))), max_size=6).map(lambda p: '"' + "".join(p) + '"')
block = st.tuples(st.sampled_from(["|", ">", "|-", ">+", "|2", ">-"]),
                  st.lists(free_text.map(lambda t: t.replace("\n", " ")), min_size=1, max_size=4)
                  ).map(lambda b: b[0] + "\n" + "\n".join("  " + line for line in b[1]))
grown = st.one_of(
    frontmatter(),
    st.lists(st.one_of(escaped, block), min_size=1, max_size=4).map(
        lambda vs: "".join(f"k{i}: {v}\n" for i, v in enumerate(vs))),
    st.tuples(escaped, st.integers(1, 6)).map(
        lambda a: f"a: &x {a[0]}\nb: [{', '.join(['*x'] * a[1])}]\nc: !!str *x\n"),
    st.tuples(free_text, free_text).map(
        lambda a: f"base: &b {{p: {a[0]!r}}}\nm:\n  <<: *b\n  q: !!str {a[1]!r}\n"),
)


@settings(PROPS, max_examples=120)  # (suite time: ~4 s under load)
@given(grown)
@example('a: "\\U0001F600\\x41\\N"\n')
@example("a: >\n  x\n\n  y\n")
@example("a: &x [long, words]\nb: [*x, *x, *x]\n")
def test_no_text_is_longer_than_its_frontmatter(fm):
    problems: list = []
    try:
        front = fmod._yaml_front("x.md", fm, 2, problems)
    except fmod._SkipFile:
        return  # not YAML: nothing to bound
    texts = _strings(front.raw, [])
    assert all(len(t) <= len(fm) for t in texts), (fm, texts)


def test_a_long_text_is_still_cut_by_either_parser():
    long = "x" * (MAX_VALUE_CHARS + 10)
    for fm in (f"title: {long}\n", f'title: "{long}"\n', f"tags:\n  - {long}\n",
               f"title: |\n  {long}\n"):
        problems: list = []
        front = fmod._load_frontmatter("x.md", fm, 2, problems)
        got = front.raw["title"] if "title" in front.raw else front.raw["tags"][0]
        assert got.rstrip("\n") == "x" * MAX_VALUE_CHARS
        assert [p.reason for p in problems] == [
            f"{'title' if 'title' in front.raw else 'tags'}: a text over "
            f"{MAX_VALUE_CHARS:,} characters; cut to the first {MAX_VALUE_CHARS:,}"]
    # At the limit exactly nothing is cut, though the frontmatter itself is longer.
    problems = []
    front = fmod._load_frontmatter("x.md", f"title: {'y' * MAX_VALUE_CHARS}\n", 2, problems)
    assert len(front.raw["title"]) == MAX_VALUE_CHARS and problems == []


def test_the_fast_path_reads_every_vault_of_the_repo_as_pyyaml_does():
    """Every .md of every vault in the repository (the sample vaults, the chat and turns
    vaults, the test fixtures) whose frontmatter the fast path accepts: the same keys, values
    (and their types), lines and list items as PyYAML, and the same problems."""
    files = sorted(p for p in ROOT.glob("sample-vault*/**/*.md")) + sorted(FIXTURES.rglob("*.md"))
    accepted = 0
    for path in files:
        try:
            fm, first, _, _ = fmod._split_frontmatter(path.read_text(encoding="utf-8-sig"))
        except (UnicodeDecodeError, fmod._SkipFile):
            continue
        if fm is None:
            continue
        fast_problems: list = []
        fast = fmod._fast_front(fm, first, "x.md", fast_problems)
        if fast is None:
            continue
        accepted += 1
        slow_problems: list = []
        slow = fmod._yaml_front("x.md", fm, first, slow_problems)
        assert (_norm(fast.raw), list(fast.raw), fast.lines, fast.items, fast_problems) == (
            _norm(slow.raw), list(slow.raw), slow.lines, slow.items, slow_problems), path
        assert {k: fast.source.get(k) for k in slow.source} == slow.source, path
    assert accepted >= 300
