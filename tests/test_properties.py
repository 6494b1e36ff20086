"""Property-based tests (Hypothesis) for the parsers that read text written by others.

- the frontmatter fast path agrees with PyYAML on every frontmatter it accepts, and PyYAML
  reads every frontmatter the fast path accepts;
- the `recall_when` editor, on generated frontmatter, changes only the lines of that key: the
  rest of the file is byte-equal, and the reader sees exactly the new phrases;
- the query parser never raises, whatever the string.

Each property runs a fixed number of examples, derandomized (the same examples on every run),
with no deadline: fast and never flaky.
"""

from __future__ import annotations

import math

import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from recall_tui.engine.config import Config
from recall_tui.engine.stages.parse import parse_query
from recall_tui.vault import reader
from recall_tui.vault.edit import EditError, rewrite_recall_when

PROPS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow])

# --- frontmatter: fast path vs PyYAML -------------------------------------------------------

ATOMS = (
    "a", "yes", "No", "on", "~", "null", "1", "-1", "+1", "0x1F", "0o7", "1_0", "1:30", "1.5",
    "-.inf", ".NaN", "2026-01-05", "2026-02-30", "2026-01-05 10:00", "2026-01-05T10:00:00Z",
    "x y", "a:b", "a#b", "a #b", "'q'", "'it''s'", '"d"', '"a\\nb"', "'a, b'", "[a, b]",
    "{k: v}", "[]", "{}", "-x", "- x", "=", "!t x", "&a x", "*a", "|", "> x", "@x", "%x",
    "a: b", "é", "x,y", "[a,[b]]", "{a: {b: c}}", "[a,]", "0", "08", "1e3", "True", "Off",
)  # fmt: skip

#: Free text: any character but surrogates, with the YAML-significant ones made likely.
free_text = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(list(":#-'\",[]{}&*!|>%@` \\\x1b\x07\x85\x9b\u2028\ufeff\x00")),
    ),
    max_size=12,
)
scalar_src = st.one_of(
    st.sampled_from(ATOMS),
    free_text,
    free_text.map(lambda t: f'"{t}"'),
    free_text.map(lambda t: f"'{t}'"),
)
key = st.sampled_from(["a", "b", "tags", "x_y", "recall_when", "title"])


@st.composite
def frontmatter(draw) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        k = draw(key)
        shape = draw(st.sampled_from(["scalar", "block", "flow", "comment"]))
        if shape == "scalar":
            lines.append(f"{k}: {draw(scalar_src)}")
        elif shape == "block":
            lines.append(f"{k}:")
            indent = draw(st.sampled_from(["", "  ", "    "]))
            lines += [f"{indent}- {draw(scalar_src)}" for _ in range(draw(st.integers(0, 3)))]
        elif shape == "flow":
            items = draw(st.lists(scalar_src, max_size=3))
            lines.append(f"{k}: [{', '.join(items)}]")
        else:
            lines.append(f"# {draw(free_text)}")
    return "\n".join(lines) + "\n"


def _norm(x):
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, list):
        return [_norm(i) for i in x]
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return (type(x).__name__, x)


@PROPS
@given(frontmatter())
@example("title: a\x1bb\n")  # a raw control character: PyYAML refuses the file
@example('title: "a\x85b"\n')
@example("a: x\ufeffy\n")
def test_fast_path_agrees_with_pyyaml(fm):
    fast_problems: list = []
    fast = reader._fast_front(fm, 2, "x.md", fast_problems)
    if fast is None:  # refused: PyYAML reads it, which is right by definition
        return
    slow_problems: list = []
    try:
        slow = reader._yaml_front("x.md", fm, 2, slow_problems)
    except reader._SkipFile as exc:
        raise AssertionError(f"the fast path accepted what PyYAML refuses: {exc.reason}") from None
    assert (_norm(fast.raw), list(fast.raw), fast.lines, fast.items) == (
        _norm(slow.raw), list(slow.raw), slow.lines, slow.items)
    assert {k: fast.source.get(k) for k in slow.source} == slow.source
    assert fast_problems == slow_problems


# --- the recall_when editor -------------------------------------------------------------------

phrase = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(list(":#-'\",[]{}&*!|>%@` \\é\x1b\x85\x9b\u2028\ufeff")),
    ),
    min_size=1, max_size=20,
).filter(lambda p: p.strip() == p and p != "")
other_value = st.sampled_from(
    ["plain words", "'quoted: yes'", '"double # not a comment"', "[a, b]", "2026-01-05",
     "{k: v}", "|-\n  block\n  text", ">\n  folded", "\n  - x\n  - y", "~", ""])
existing = st.one_of(
    st.none(),  # no recall_when key
    st.lists(phrase, max_size=3).map(lambda ps: ("block", ps)),
    st.lists(phrase, max_size=3).map(lambda ps: ("flow", ps)),
    st.lists(phrase, max_size=3).map(lambda ps: ("dquote", ps)),
    st.lists(phrase, max_size=3).map(lambda ps: ("squote", ps)),
)


def _render_recall_when(form, phrases: list[str]) -> str:
    kind, ps = form
    if kind == "flow":
        return "recall_when: " + yaml.safe_dump(ps, default_flow_style=True, width=10**9,
                                                allow_unicode=True).strip() + "\n"
    if not ps:
        return "recall_when: []\n"
    if kind == "block":
        return "recall_when:\n" + yaml.safe_dump(ps, default_flow_style=False, width=10**9,
                                                 allow_unicode=True, indent=2)
    if kind == "dquote":
        return "recall_when:\n" + "".join(
            "  - " + yaml.safe_dump(p, default_style='"', width=10**9, allow_unicode=True)
            .split("\n...")[0].strip() + "\n" for p in ps)
    return "recall_when:\n" + "".join("  - '" + p.replace("'", "''") + "'\n" for p in ps)


def _without_recall_when(text: str) -> str:
    """`text` without the lines of its frontmatter's top-level `recall_when` key."""
    out, skipping, fences = [], False, 0
    for line in text.splitlines(keepends=True):
        if line.rstrip("\r\n") == "---" and fences < 2:
            fences += 1
            skipping = False
        elif fences == 1 and line.startswith("recall_when:"):
            skipping = True
            continue
        elif skipping and (line[:1] in (" ", "-") or not line.strip()):
            continue
        else:
            skipping = False
        out.append(line)
    return "".join(out)


@st.composite
def memory_file(draw) -> tuple[str, str, str]:
    """(text, the part before recall_when, the part after it)."""
    def keys(names):
        out = ""
        for n in names:
            v = draw(other_value)
            out += f"{n}:{'' if v == '' or v.startswith(chr(10)) else ' '}{v}\n"
        return out
    before = "---\nid: m\n" + keys(draw(st.lists(st.sampled_from(["title", "tags", "scope"]),
                                                  max_size=2, unique=True)))
    after = keys(draw(st.lists(st.sampled_from(["summary", "topic_key", "source"]), max_size=2,
                               unique=True)))
    after += "---\n" + draw(st.sampled_from(["Body.\n", "# T\n\nrecall_when: not this\n", ""]))
    form = draw(existing)
    middle = "" if form is None else _render_recall_when(form, form[1])
    return before + middle + after, before, after


_SIMPLE = ('---\nid: m\nrecall_when:\n  - "a"\n---\nB\n', "---\nid: m\n", "---\nB\n")


@PROPS
@given(memory_file(), st.lists(phrase, max_size=4))
@example(_SIMPLE, ["x\x9fy"])  # a C1 control written raw inside double quotes: unreadable
@example(_SIMPLE, ["x\x7fy"])
@example(_SIMPLE, ["tab\tinside", "é [b]x[/b] # not a comment"])
def test_recall_when_editor_changes_only_its_lines(tmp_path_factory, doc, new):
    text, before, after = doc
    try:
        out = rewrite_recall_when(text, new)
    except EditError as exc:
        # refused with a reason, nothing written; but never by the editor's own final check,
        # which would mean it produced a file that does not read back
        assert "internal check" not in str(exc), (text, new, str(exc))
        event(f"refused: {str(exc)[:40]}")
        return
    event("rewritten")
    assert _without_recall_when(out) == _without_recall_when(text), (text, out)
    if before + after != _without_recall_when(text):
        raise AssertionError(f"the generator's split is off: {(text, before, after)}")
    folder = tmp_path_factory.mktemp("edit")
    (folder / "m.md").write_text(out, encoding="utf-8")
    vault = reader.read_vault(folder)
    assert vault.get("m") is not None, (out, vault.problems)
    assert list(vault.get("m").recall_when) == list(dict.fromkeys(new)) or \
        list(vault.get("m").recall_when) == list(new), (new, out)
    assert not [p for p in vault.problems if "recall_when" in p.reason], vault.problems


# --- the query parser -------------------------------------------------------------------------

query_text = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(
        st.sampled_from(["type:", "scope:", "tag:", "as_of:", "topic:", "source:", "session:",
                         "TYPE:", "type:decision", "as_of:2026-02-30", "as_of:x", ":", "::"]),
        st.text(max_size=8)), max_size=8).map(" ".join),
)


@PROPS
@given(query_text, st.booleans(), st.booleans())
def test_query_parser_never_raises(text, stem, stop_words):
    cfg = Config().with_value("parse.stem", stem).with_value("parse.stop_words", stop_words)
    pq = parse_query(text, cfg)
    assert pq.raw == text
    for k, v in pq.inline:
        assert f"{k}:{v}".lower() in text.lower()
