"""The first read's cheaper parse (branch first9), checked against what it replaces:

- the fast path's scalar table (short scalars parsed once per process, block values and flow
  items apart) and its own timestamps (`2026-01-31`, `2026-01-31T10:00:00Z` built without
  PyYAML's resolver) give exactly PyYAML's value and type, whatever was parsed before;
- values with trailing spaces (the key and item patterns now strip them after the match);
- the workers' step-by-step parse of a chunk (`_read_memories`) gives the same records as
  `_read_memory` file by file, problems included, on every vault of the repository.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recall_tui.vault import frontmatter as fmod
from recall_tui.vault import reader
from recall_tui.vault.walk import _File
from tests.conftest import FIXTURES, ROOT
from tests.test_properties import PROPS, _norm, frontmatter, scalar_src

digits = st.text(alphabet="0123456789", min_size=1, max_size=4)
stamp = st.one_of(
    st.tuples(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32)).map(
        lambda d: f"{d[0]:04d}-{d[1]:02d}-{d[2]:02d}"),
    st.tuples(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
              st.integers(0, 61), st.integers(0, 61), st.sampled_from(["Z", "z", "", "+01:00"]),
              st.sampled_from(["T", "t", " "])).map(
        lambda d: f"{d[0]:04d}-{d[1]:02d}-{d[2]:02d}{d[7]}{d[3]:02d}:{d[4]:02d}:{d[5]:02d}{d[6]}"),
    st.lists(digits, min_size=1, max_size=6).map("-".join),
    st.sampled_from(["2024-02-29", "2023-02-29", "2026-02-30", "0000-01-01", "9999-12-31",
                     "2026-01-05T24:00:00Z", "2026-1-5", "2026-01-05T10:00:00.5Z",
                     "２０２６-01-05", "2026-01-05T10:00:00Z "]),
)


def _same_as_pyyaml(fm: str) -> None:
    fast_problems: list = []
    fast = fmod._fast_front(fm, 2, "x.md", fast_problems)
    if fast is None:  # refused: PyYAML reads it, which is right by definition
        return
    slow_problems: list = []
    slow = fmod._yaml_front("x.md", fm, 2, slow_problems)
    assert (_norm(fast.raw), list(fast.raw), fast.lines, fast.items, fast_problems) == (
        _norm(slow.raw), list(slow.raw), slow.lines, slow.items, slow_problems), fm
    assert {k: fast.source.get(k) for k in slow.source} == slow.source, fm


@settings(PROPS, max_examples=200)
@given(stamp)
@example("2026-02-30")
@example("2026-01-05T10:00:00Z")
def test_timestamps_are_pyyamls_in_every_position(text):
    """A timestamp-like scalar as a value, a block item and a flow item, twice (the second
    time from the scalar table): PyYAML's value and type each time."""
    for _ in range(2):
        _same_as_pyyaml(f"created: {text}\n")
        _same_as_pyyaml(f"dates:\n  - {text}\n  - x\n")
        _same_as_pyyaml(f"dates: [{text}, x]\n")
        _same_as_pyyaml(f"m: {{d: {text}}}\n")


@settings(PROPS, max_examples=150)
@given(st.lists(scalar_src, min_size=1, max_size=4), st.lists(st.sampled_from(["", " ", "   "]),
                                                              min_size=4, max_size=4))
def test_a_scalar_met_before_reads_the_same_in_a_block_and_in_a_flow(values, pads):
    """The same texts as block values, block items and flow items, in both orders (the table
    keeps block and flow apart: `a, b` is one text in a block, two items in a flow)."""
    block = "".join(f"k{i}: {v}{pads[i % 4]}\n" for i, v in enumerate(values))
    items = "items:\n" + "".join(f"  - {v}{pads[(i + 1) % 4]}\n" for i, v in enumerate(values))
    flow = f"f: [{', '.join(values)}]{pads[2]}\n"
    for fm in (block, items, flow, flow, items, block):
        _same_as_pyyaml(fm)


@settings(PROPS, max_examples=150)
@given(frontmatter(), st.sampled_from([" ", "  ", "\t"]))
def test_trailing_spaces_on_every_line_read_as_pyyaml_reads_them(fm, pad):
    _same_as_pyyaml(fm)
    _same_as_pyyaml("\n".join(line + pad if line else line for line in fm.split("\n")))


def test_the_workers_chunk_parse_equals_the_file_by_file_parse():
    """Every .md of every vault in the repository (the bad-vault fixture's unreadable,
    binary, unclosed and duplicate files included), as one chunk: the same Memory and the
    same problems, in the same order, as `_read_memory` gives each file."""
    files = sorted(ROOT.glob("sample-vault*/**/*.md")) + sorted(FIXTURES.rglob("*.md"))
    chunk = [(str(p.relative_to(p.parents[len(p.parents) - 1])), str(p)) for p in files]
    got = reader._read_memories(chunk)
    assert len(got) == len(chunk) >= 800
    skipped = 0
    for (rel, path), (memory, problems) in zip(chunk, got, strict=True):
        want_problems: list = []
        want = reader._read_memory(_File(rel, path), want_problems)
        assert (memory, problems) == (want, want_problems), rel
        skipped += memory is None
    assert skipped >= 3  # (the fixtures' files that cannot be read as memories)


plain_text = st.text(alphabet=st.one_of(st.sampled_from(list("-:#, []{}?&*!|>'\"%@`ab1.")),
                                        st.characters(blacklist_categories=("Cs",))),
                     min_size=1, max_size=8)


@settings(PROPS, max_examples=300)
@given(plain_text, st.booleans())
@example("-", False)
@example("- a", True)
@example("a:", False)
@example("a #b", False)
@example("a,b", True)
def test_the_plain_scalar_check_is_the_patterns(text, flow):
    """`_fast_scalar` refuses a plain scalar exactly when `_NOT_PLAIN` (in a flow,
    `_NOT_PLAIN_FLOW`) finds something in it, as before (str searches now); otherwise it
    gives the text or PyYAML's typed value of it."""
    if text[0] in "'\"":
        return
    pattern = fmod._NOT_PLAIN_FLOW if flow else fmod._NOT_PLAIN
    got = fmod._fast_scalar(text, text[0], flow)
    if pattern.search(text):
        assert got is fmod._REFUSED
        return
    try:
        want = (fmod._resolve_plain(text), text)
    except fmod._NotFast:
        want = fmod._REFUSED
    if got is not fmod._REFUSED and want is not fmod._REFUSED:
        assert (_norm(got[0]), got[1]) == (_norm(want[0]), want[1])
    else:
        assert got is want


@settings(PROPS, max_examples=200)
@given(st.lists(st.sampled_from(["---", "----", "--- ", "---x", "--", " ---", "a: b", "",
                                 "---\r", "-- -", "---\t", "x---"]), max_size=6))
def test_the_closing_line_is_the_patterns_first_match(lines):
    text = "---\n" + "\n".join(lines) + "\n"
    want = fmod._CLOSING_LINE.search(text, 4)
    got = fmod._closing_line(text, 4)
    assert (got and got.span()) == (want and want.span())
