"""The recall_when editor: byte preservation on tricky files, refusals, conflicts, atomicity."""

from __future__ import annotations

import difflib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recall_tui.vault import edit
from recall_tui.vault.edit import (
    EditConflict,
    EditError,
    content_hash,
    rewrite_recall_when,
    set_recall_when,
)

BIN = Path(sys.executable).with_name("recall-tui")

TRICKY = (
    "---\n"
    "# leading comment: keep me\n"
    "summary: >\n"
    "  folded text: with a colon\n"
    "  and a # hash\n"
    "id: tricky\n"
    "zz_unknown: {nested: [1, 2], flag: yes}\n"
    'title: "Deploy: the \'blue\' #1 path"   # trailing comment\n'
    "recall_when:   # situations\n"
    "    - deploying to prod   # why\n"
    '    - "rolling back: fast"\n'
    "    # a comment inside the list\n"
    "    - 'it''s late'\n"
    "\n"
    "# comment after the list\n"
    "tags:\n"
    "    - ops\n"
    "    - deploy\n"
    "created: 2026-01-05T10:12:00+01:00\n"
    "---\n"
    "# Body\n"
    "\n"
    "text with --- inside\n"
    "---\n"
    "recall_when: not frontmatter\n"
    "last line without newline"
)


def _lines(s: str) -> list[str]:
    return s.split("\n")


def _frontmatter(text: str) -> dict:
    body = text.lstrip("\ufeff").replace("\r\n", "\n")
    return yaml.safe_load(body.split("---\n", 2)[1]) or {}


def assert_only_recall_when_changed(old: str, new: str) -> None:
    """Every line the diff removes or adds is a recall_when key line or one of its items (or
    a blank/comment line that lived inside the old list); all other lines are byte-identical."""
    a, b = _lines(old), _lines(new)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in a[i1:i2] + b[j1:j2]:
            s = line.rstrip("\r").strip()
            assert (
                s.startswith("recall_when:") or s.startswith("- ") or s.startswith("#") or not s
            ), f"unexpected change: {line!r}"


def test_block_list_with_comments_and_quotes():
    new = rewrite_recall_when(TRICKY, ["a: b", "x #y", "yes", "- dash", "it's"])
    # the file's quote style is mixed (plain, "…", '…'): phrases are plain unless unsafe, in
    # which case yaml quotes them; the key line keeps its comment; 4-space items as before
    expected_block = (
        "recall_when:   # situations\n"
        "    - 'a: b'\n"
        "    - 'x #y'\n"
        "    - 'yes'\n"
        "    - '- dash'\n"
        "    - it's\n"
    )
    old_block = "".join(TRICKY.splitlines(keepends=True)[8:13])
    assert new == TRICKY.replace(old_block, expected_block)
    assert_only_recall_when_changed(TRICKY, new)
    fm_old, fm_new = _frontmatter(TRICKY), _frontmatter(new)
    assert fm_new["recall_when"] == ["a: b", "x #y", "yes", "- dash", "it's"]
    assert list(fm_new) == list(fm_old)
    assert {k: v for k, v in fm_new.items() if k != "recall_when"} == {
        k: v for k, v in fm_old.items() if k != "recall_when"
    }
    # body (with its --- lines and a fake recall_when) and missing final newline untouched
    assert new.endswith(TRICKY.split("---\n# Body", 1)[1])
    assert not new.endswith("\n")


def test_flow_list_becomes_block_list_in_file_indent():
    old = "---\ntitle: T\nrecall_when: [a, \"b: c\"]\ntags:\n- x\n---\nbody\n"
    new = rewrite_recall_when(old, ["one", "two"])
    # tags uses column-0 items, so the new list does too
    assert new == "---\ntitle: T\nrecall_when:\n- one\n- two\ntags:\n- x\n---\nbody\n"


def test_multiline_flow_list_and_scalar():
    old = "---\nrecall_when: [first,\n  second]\nid: z\n---\n"
    assert rewrite_recall_when(old, ["n"]) == "---\nrecall_when:\n  - n\nid: z\n---\n"
    old = "---\nid: z\nrecall_when: when the build breaks\n---\nB"
    assert rewrite_recall_when(old, ["n"]) == "---\nid: z\nrecall_when:\n  - n\n---\nB"
    assert edit.read_phrases(old) == ("when the build breaks",)


def test_double_quoted_style_is_kept():
    old = '---\nrecall_when:\n  - "a"\n  - "b"\n---\n'
    assert rewrite_recall_when(old, ['say "hi"', "c"]) == '---\nrecall_when:\n  - "say \\"hi\\""\n  - "c"\n---\n'


def test_absent_key_is_inserted_after_summary_or_title_or_at_end():
    old = "---\nid: a\ntitle: T\nsummary: |\n  two\n  lines\nzz: 1\n---\nbody"
    new = rewrite_recall_when(old, ["p"])
    assert new == "---\nid: a\ntitle: T\nsummary: |\n  two\n  lines\nrecall_when:\n  - p\nzz: 1\n---\nbody"
    old = "---\ntags: [x]\ntitle: T\n---\n"
    assert rewrite_recall_when(old, ["p"]) == "---\ntags: [x]\ntitle: T\nrecall_when:\n  - p\n---\n"
    old = "---\nzz: 1\n---\n"
    assert rewrite_recall_when(old, ["p"]) == "---\nzz: 1\nrecall_when:\n  - p\n---\n"
    old = "---\n---\nbody\n"
    assert rewrite_recall_when(old, ["p"]) == "---\nrecall_when:\n  - p\n---\nbody\n"


def test_no_frontmatter_gets_one():
    old = "# Just a note\n\nwith a body\n"
    new = rewrite_recall_when(old, ["p q"])
    assert new == "---\nrecall_when:\n  - p q\n---\n" + old


def test_crlf_and_bom_are_kept():
    old = "\ufeff" + TRICKY.replace("\n", "\r\n")
    new = rewrite_recall_when(old, ["alpha", "beta"])
    assert new.startswith("\ufeff---\r\n")
    assert "\n" not in new.replace("\r\n", "")  # every line ending is still CRLF
    assert new == old.replace(
        "".join(old.split("\r\n")[8:13][i] + "\r\n" for i in range(5)),
        "recall_when:   # situations\r\n    - alpha\r\n    - beta\r\n",
    )
    assert_only_recall_when_changed(old, new)


def test_empty_list_keeps_key_comment():
    new = rewrite_recall_when(TRICKY, [])
    assert "recall_when: []  # situations\n\n# comment after the list\n" in new
    assert _frontmatter(new)["recall_when"] == []
    assert_only_recall_when_changed(TRICKY, new)


@pytest.mark.parametrize(
    ("text", "phrases", "reason"),
    [
        ("---\nid: [unclosed\n---\n", ["p"], "not valid YAML"),
        ("---\n- a list\n---\n", ["p"], "not a mapping"),
        ("---\nid: x\n", ["p"], "never closes"),
        ("---\nrecall_when: [a]\nrecall_when: [b]\n---\n", ["p"], "appears 2 times"),
        ("---\nid: x\n---\n", ["two\nlines"], "one line"),
        ("---\nid: x\n---\n", ["  "], "cannot be empty"),
    ],
)
def test_refusals(text, phrases, reason):
    with pytest.raises(EditError, match=reason):
        rewrite_recall_when(text, phrases)


def test_check_refuses_when_the_rewrite_would_break_another_key():
    # tags is an alias of recall_when's anchor: replacing recall_when's lines drops the
    # anchor, the re-parse check notices and nothing is returned
    old = "---\nrecall_when: &rw [a, b]\ntags: *rw\n---\n"
    with pytest.raises(EditError, match="internal check failed"):
        rewrite_recall_when(old, ["p"])


def test_key_text_inside_a_block_scalar_is_not_the_key():
    old = "---\nsummary: |\n  recall_when: inside a block scalar\nid: x\n---\n"
    new = rewrite_recall_when(old, ["p"])
    assert _frontmatter(new)["summary"] == "recall_when: inside a block scalar\n"
    assert new == "---\nsummary: |\n  recall_when: inside a block scalar\nrecall_when:\n  - p\nid: x\n---\n"


# ------------------------------------------------------------------------------------------
# the file


def _write(tmp_path, text: str, name: str = "m.md"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def test_set_recall_when_writes_atomically_and_keeps_mode(tmp_path):
    p = _write(tmp_path, TRICKY)
    os.chmod(p, 0o640)
    before = p.read_bytes()
    res = set_recall_when(p, ["new phrase"], expected_hash=content_hash(before))
    assert res.changed
    assert res.old_phrases == ("deploying to prod", "rolling back: fast", "it's late")
    assert res.new_phrases == ("new phrase",)
    after = p.read_bytes()
    assert res.new_hash == content_hash(after) != res.old_hash
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["m.md"]  # no temp file left behind
    assert_only_recall_when_changed(before.decode(), after.decode())


def test_unchanged_edit_writes_nothing(tmp_path):
    p = _write(tmp_path, "---\nrecall_when:\n  - a\n---\n")
    os.utime(p, (1_000_000, 1_000_000))
    res = set_recall_when(p, ["a"])
    assert not res.changed
    assert os.stat(p).st_mtime == 1_000_000


def test_conflict_writes_nothing_and_carries_both_versions(tmp_path):
    p = _write(tmp_path, TRICKY)
    read_hash = content_hash(p.read_bytes())
    changed_by_someone = TRICKY.replace("id: tricky", "id: tricky\nowner: sam")
    p.write_bytes(changed_by_someone.encode())
    with pytest.raises(EditConflict) as info:
        set_recall_when(p, ["mine"], expected_hash=read_hash)
    exc = info.value
    assert p.read_bytes().decode() == changed_by_someone  # untouched
    assert exc.disk_text == changed_by_someone
    assert exc.intended_text is not None and "owner: sam" in exc.intended_text
    assert _frontmatter(exc.intended_text)["recall_when"] == ["mine"]
    assert exc.expected_hash == read_hash and exc.disk_hash == content_hash(changed_by_someone.encode())
    assert sorted(os.listdir(tmp_path)) == ["m.md"]


def test_failed_rename_leaves_original_and_no_temp(tmp_path, monkeypatch):
    p = _write(tmp_path, TRICKY)
    before = p.read_bytes()

    def crash(src, dst):  # simulates a crash between writing the temp file and the rename
        raise OSError("simulated crash")

    monkeypatch.setattr(edit.os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        set_recall_when(p, ["x"], expected_hash=content_hash(before))
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.md"]


def test_symlink_is_followed_not_replaced(tmp_path):
    real = _write(tmp_path, "---\nid: r\n---\n", "real.md")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    set_recall_when(link, ["p"])
    assert link.is_symlink()
    assert "recall_when" in real.read_text()


def test_not_utf8_is_refused(tmp_path):
    p = tmp_path / "bin.md"
    p.write_bytes(b"---\nid: \xff\n---\n")
    with pytest.raises(EditError, match="not UTF-8"):
        set_recall_when(p, ["p"])
    assert p.read_bytes() == b"---\nid: \xff\n---\n"


def test_apply_changes():
    assert edit.apply_changes(["a", "b"], add=["c", "a"], remove=["b", "zz"]) == (["a", "c"], ["zz"])
    assert edit.apply_changes(["a"], set_to=["x"], add=["y"]) == (["x", "y"], [])


# ------------------------------------------------------------------------------------------
# the command


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), "edit", *args], capture_output=True, text=True, timeout=120, check=False)


def test_cli_edits_rereads_and_reindexes(vault_copy):
    from recall_tui.index.embed import make_embedder
    from recall_tui.index.store import Index
    from recall_tui.vault.reader import read_vault

    vault = read_vault(vault_copy)
    target = next(m for m in vault.memories.values() if len(m.recall_when) >= 2)
    Index.open(vault, make_embedder("none")[0]).close()
    path = vault_copy / target.path
    before = path.read_bytes()
    drop = target.recall_when[0]
    r = _cli(target.id, "--vault", str(vault_copy), "--add", "zanzibar quokka migration",
             "--remove", drop)
    assert r.returncode == 0, r.stderr
    assert "+  - zanzibar quokka migration" in r.stdout or "+- zanzibar quokka migration" in r.stdout
    assert "index updated: 1 changed" in r.stdout
    after = path.read_bytes()
    assert_only_recall_when_changed(before.decode(), after.decode())
    again = read_vault(vault_copy).get(target.id)
    assert again.recall_when == (*target.recall_when[1:], "zanzibar quokka migration")
    idx = Index.open(read_vault(vault_copy), make_embedder("none")[0], read_only=True)
    try:
        assert [i for i, _ in idx.fts("quokka", 5)] == [target.id]
    finally:
        idx.close()


def test_cli_dry_run_and_errors(vault_copy):
    from recall_tui.vault.reader import read_vault

    vault = read_vault(vault_copy)
    target = next(iter(vault.memories.values()))
    path = vault_copy / target.path
    before = path.read_bytes()
    r = _cli(target.id, "--vault", str(vault_copy), "--recall-when", "only this", "--dry-run")
    assert r.returncode == 0 and "only this" in r.stdout and r.stdout.startswith("---")
    assert path.read_bytes() == before
    r = _cli("no-such-memory-id", "--vault", str(vault_copy), "--add", "x")
    assert r.returncode == 2 and "no memory with id 'no-such-memory-id'" in r.stderr
    r = _cli(target.id, "--vault", str(vault_copy))
    assert r.returncode == 2 and "nothing to do" in r.stderr
    r = _cli(target.id, "--vault", str(vault_copy), "--add", "two\nlines", "--no-index")
    assert r.returncode == 1 and "one line" in r.stderr
    assert path.read_bytes() == before


def test_the_vault_reader_sees_the_edits(tmp_path):
    from recall_tui.vault.reader import read_vault

    files = {
        "tricky.md": TRICKY,
        "crlf-bom.md": "\ufeff" + TRICKY.replace("id: tricky", "id: crlf-bom").replace("\n", "\r\n"),
        "plain.md": "# A plain note\n\nno frontmatter at all\n",
        "flow.md": "---\nid: flow\nrecall_when: [old one, \"old: two\"]\n---\nbody\n",
    }
    for name, text in files.items():
        p = _write(tmp_path, text, name)
        set_recall_when(p, ["fresh phrase", "with: colon"], expected_hash=content_hash(p.read_bytes()))
    vault = read_vault(tmp_path)
    assert [str(p) for p in vault.problems] == []
    for mid in ("tricky", "crlf-bom", "plain", "flow"):
        assert vault.memories[mid].recall_when == ("fresh phrase", "with: colon"), mid
    assert vault.memories["tricky"].title == "Deploy: the 'blue' #1 path"
    assert vault.memories["plain"].title == "A plain note"
