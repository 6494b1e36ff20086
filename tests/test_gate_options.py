"""The regression gate offered where a preset is scored or deployed (issue 23, item 4):
`recall-tui eval --gate BASELINE` is `recall-tui gate BASELINE` (the same code, the same
verdict and output), and `recall-tui preset use NAME --gate BASELINE` activates NAME only when
the gate passes. In process, keyword channels only, one baseline for the module."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recall_tui.agent.active import read_active
from recall_tui.cli import main
from recall_tui.tuning import snapshot as S
from tests.conftest import SAMPLE_VAULT

NOW = "2026-11-21T09:00:00Z"
PLANTED = 'extends = "default"\n[keyword]\nenabled = false\n[fuzzy]\nenabled = false\n'


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(vault, baseline snapshot of its golden set under default, a preset that turns the
    keyword channels off: a planted regression)."""
    dst = tmp_path_factory.mktemp("gateopt") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    out = dst.parent / "base.json"
    assert main(["snapshot", "--vault", str(dst), "--queries", str(dst / "golden.jsonl"),
                 "--preset", "default", "--embedder", "none", "--now", NOW, "--k", "5",
                 "--out", str(out)]) == 0
    planted = dst.parent / "no-keywords.toml"
    planted.write_text(PLANTED, encoding="utf-8")
    return dst, out, planted


def test_eval_gate_is_the_gate(setup, capsys):
    vault, base, planted = setup
    capsys.readouterr()
    common = ["--vault", str(vault), "--embedder", "none"]
    assert main(["eval", "--gate", str(base), "--preset", "default", *common, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] and doc["diff"]["summary"]["changed"] == 0
    assert doc["diff"]["summary"]["queries"] == len(S.load(base).entries)

    assert main(["eval", "--gate", str(base), "--preset", str(planted), *common]) == 1
    via_eval = capsys.readouterr().out
    assert main(["gate", str(base), "--preset", str(planted), *common]) == 1
    via_gate = capsys.readouterr().out
    assert via_eval == via_gate and "gate failed" in via_eval and "lost relevant" in via_eval

    # the options that do not apply are refused, naming why
    assert main(["eval", "--gate", str(base), "--queries", str(vault / "golden.jsonl"),
                 *common]) == 2
    assert "drop --queries" in capsys.readouterr().err
    assert main(["eval", "--gate", str(base), "--preset", "default", "--preset", "bastra",
                 *common]) == 2
    assert "at most once" in capsys.readouterr().err
    assert main(["eval", "--gate", str(vault / "nope.json"), *common]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err


def test_preset_use_activates_only_when_the_gate_passes(setup, capsys):
    vault, base, planted = setup
    assert main(["preset", "use", str(planted), "--vault", str(vault), "--embedder", "none",
                 "--gate", str(base)]) == 1
    captured = capsys.readouterr()
    assert "gate failed" in captured.out and "not made active" in captured.err
    assert not (vault / ".recall" / "active.json").exists()
    assert main(["preset", "use", "default", "--vault", str(vault), "--embedder", "none",
                 "--gate", str(base)]) == 0
    assert "gate passed" in capsys.readouterr().out
    act = read_active(vault)
    assert act.preset == "default" and act.embedder == "none"


def test_eval_defaults_to_the_tuis_judgements_and_keeps_an_explicit_queries_file(setup, capsys):
    """Without --queries, `eval` reads `.recall/golden.jsonl` (where the TUI judges) once it
    exists, else the vault's golden.jsonl; --queries still wins."""
    vault, _base, _planted = setup
    common = ["--vault", str(vault), "--embedder", "none", "--now", NOW, "--k", "5", "--json"]
    judged = vault / ".recall" / "golden.jsonl"
    lines = [json.loads(x) for x in (vault / "golden.jsonl").read_text().splitlines()[:2]]
    capsys.readouterr()
    try:
        assert main(["eval", *common]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["queries_file"] == str(vault / "golden.jsonl")
        judged.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        assert main(["eval", *common]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["queries_file"] == str(judged)
        assert [q["query"] for q in doc["presets"]["default"]["queries"]] == [x["query"] for x in lines]
        assert main(["eval", *common, "--queries", str(vault / "golden.jsonl")]) == 0
        assert json.loads(capsys.readouterr().out)["queries_file"] == str(vault / "golden.jsonl")
    finally:
        judged.unlink(missing_ok=True)
