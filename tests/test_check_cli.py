"""`recall-tui check` through the real installed command, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_vault import BAD, CHAINS, EXPECTED_BAD, tree_hashes

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "recall-tui"


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"},
    )


def test_check_bad_vault_lists_every_problem_and_exits_1():
    before = tree_hashes(BAD)
    out = check(str(BAD))
    assert tree_hashes(BAD) == before, "check changed or added a file in the vault"
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    for path, line, severity, reason in EXPECTED_BAD:
        where = f"{path}:{line}" if line else path
        mark = "warning: " if severity == "warning" else ""
        assert f"{where}: {mark}{reason}" in lines
    assert "29 errors, 5 warnings:" in out.stdout


def test_check_json_matches_the_vault():
    before = tree_hashes(BAD)
    out = check(str(BAD), "--json")
    assert tree_hashes(BAD) == before
    assert out.returncode == 1
    data = json.loads(out.stdout)
    got = [(p["path"], p["line"], p["severity"], p["reason"]) for p in data["problems"]["items"]]
    assert got == EXPECTED_BAD
    assert data["problems"]["errors"] == 29 and data["problems"]["warnings"] == 5
    assert data["memories"]["total"] == 20
    assert data["memories"]["by_role"] == {"always-load": 1, "archive": 1, "normal": 18}
    assert data["memories"]["by_type"] == {"fact": 18, "instruction": 1, "project-fact": 1}
    assert data["chains"]["longest"] == [["cycle-x", "cycle-y", "cycle-z"]]
    assert data["digests"]["daily"] == {"files": 1, "paragraphs": 1}
    assert (data["sessions"], data["turns"]) == (1, 2)


def test_check_clean_vault_summary():
    out = check(str(CHAINS), "--json")
    assert out.returncode == 0, out.stdout
    data = json.loads(out.stdout)
    assert data["problems"] == {"errors": 0, "warnings": 0, "items": []}
    assert data["chains"] == {
        "count": 3,
        "lengths": {"2": 1, "3": 2},
        "longest": [
            ["diet-v1", "diet-v2", "diet-v3"],
            ["standup-b0", "standup-b", "standup-merged"],
        ],
    }
    assert (data["entities"], data["edges"]) == (4, 3)
    assert data["memories"]["by_status"] == {"active": 5, "superseded": 6}
    assert data["digests"] == {
        "daily": {"files": 1, "paragraphs": 3},
        "weekly": {"files": 1, "paragraphs": 1},
        "quarterly": {"files": 1, "paragraphs": 1},
    }
    assert (data["sessions"], data["turns"]) == (2, 3)
    human = check(str(CHAINS))
    assert human.returncode == 0
    assert "no problems" in human.stdout
    assert "diet-v1 -> diet-v2 -> diet-v3" in human.stdout


def test_check_defaults_to_the_current_folder():
    out = check("--json", cwd=CHAINS)
    assert out.returncode == 0
    assert json.loads(out.stdout)["memories"]["total"] == 11


@pytest.mark.parametrize("target", ["does-not-exist", "tests/test_check_cli.py"])
def test_check_missing_vault_exits_2(target):
    out = check(target)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith("recall-tui check: ") and target in out.stderr


def test_check_sample_vault_is_clean(sample_vault_path):
    before = tree_hashes(sample_vault_path)
    out = check(str(sample_vault_path), "--json")
    assert tree_hashes(sample_vault_path) == before
    data = json.loads(out.stdout)
    assert data["problems"]["items"] == []
    assert out.returncode == 0
    assert data["memories"]["total"] >= 150
    assert data["chains"]["count"] >= 6
    assert max(int(n) for n in data["chains"]["lengths"]) >= 3
    assert data["entities"] >= 40
