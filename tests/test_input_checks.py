"""Bad input is refused or warned about, never silently run (issue 11, bug 9).

`--k 0` / `--k -1` are usage errors (exit 2, a message naming the flag) on every command that
takes k. A type filter naming no memory type (`--type bogus`, inline `type:decsion`) would keep
nothing: the query.parse stage records a warning naming the value and listing the known types,
and the command line prints it on stderr.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.engine import Filters, open_engine
from recall_tui.vault.model import MEMORY_TYPES
from tests.conftest import PINNED_NOW


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checks") / "vault"
    (root / "work").mkdir(parents=True)
    (root / "work" / "d.md").write_text(
        "---\nid: deploy-decision\ntype: decision\ntitle: Deploy on Tuesdays\n---\n"
        "We deploy on Tuesdays after the postgres backup.\n", encoding="utf-8")
    (root / "work" / "f.md").write_text(
        "---\nid: deploy-fact\ntitle: Deploy script\n---\nThe deploy script lives in ops/.\n",
        encoding="utf-8")
    (root / "golden.jsonl").write_text('{"query": "deploy", "relevant": ["deploy-fact"]}\n')
    return root


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recall_tui", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("k", ["0", "-1"])
@pytest.mark.parametrize("command", [
    ["query", "deploy", "--embedder", "none"],
    ["eval", "--embedder", "none"],
])
def test_a_k_below_one_is_refused_with_exit_2(vault, command, k):
    out = cli(*command, "--vault", str(vault), "--k", k, stdin='{"prompt": "deploy"}')
    assert out.returncode == 2, (command, k, out.stdout, out.stderr)
    assert "--k" in out.stderr and "at least 1" in out.stderr and k in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("k", ["0", "-1", "many"])
def test_the_hook_warns_about_a_bad_k_and_still_injects(vault, k):
    """Exit 2 from a prompt hook blocks the user's prompt in Claude Code: the hook says what is
    wrong on stderr, uses the preset's k and exits 0."""
    payload = (f'{{"session_id": "s{k}", "hook_event_name": "UserPromptSubmit", "prompt": "deploy", '
               f'"cwd": "{vault}"}}')  # a session each: one session's repeat window would skip deploy-fact
    out = cli("hook", "prompt-submit", "--no-serve", "--embedder", "none", "--vault", str(vault),
              "--k", k, stdin=payload)
    assert out.returncode == 0, out.stderr
    assert "--k" in out.stderr and "at least 1" in out.stderr and k in out.stderr
    assert "deploy-fact" in out.stdout or "Deploy script" in out.stdout, out.stdout


def test_a_valid_k_still_runs(vault):
    out = cli("query", "deploy", "--vault", str(vault), "--embedder", "none", "--k", "1")
    assert out.returncode == 0, out.stderr
    assert "deploy-" in out.stdout and "warning" not in out.stderr


def test_unknown_type_option_warns_with_the_known_types(vault):
    out = cli("query", "deploy", "--vault", str(vault), "--embedder", "none", "--type", "bogus")
    assert out.returncode == 0, out.stderr
    assert "warning: unknown type 'bogus'" in out.stderr
    assert all(t in out.stderr for t in MEMORY_TYPES)


def test_inline_type_typo_warns_and_suggests(vault):
    out = cli("query", "type:decsion deploy", "--vault", str(vault), "--embedder", "none", "--json")
    assert out.returncode == 0, out.stderr
    assert "unknown type 'decsion'" in out.stderr and "did you mean 'decision'" in out.stderr
    assert '"warning"' in out.stdout  # the trace JSON carries it too


def test_known_types_give_no_warning(vault):
    out = cli("query", "type:decision deploy", "--vault", str(vault), "--embedder", "none",
              "--type", "fact")
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr


def test_the_parse_stage_records_the_warning_in_the_trace(vault):
    engine = open_engine(vault, embedder="none")
    try:
        trace = engine.recall("type:decsion deploy", now=PINNED_NOW)
        assert trace.hits == ()
        (w,) = trace.warnings()
        assert "'decsion'" in w and "'decision'" in w and "project-fact" in w
        assert ("warning", w) in trace.stage("query.parse").info
        # the same through the call's filters, and again from the cache
        for _ in range(2):
            t2 = engine.recall("deploy", now=PINNED_NOW, filters=Filters(types=("bogus", "fact")))
            assert len(t2.warnings()) == 1 and "'bogus'" in t2.warnings()[0]
        good = engine.recall("type:decision deploy", now=PINNED_NOW)
        assert good.warnings() == () and [h.id for h in good.hits] == ["deploy-decision"]
    finally:
        if engine.index is not None:
            engine.index.close()
