"""The conventions every user tries first: --help, --version, unknown commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from recall_tui import __version__

BIN = Path(sys.executable).with_name("recall-tui")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_version_prints_the_package_version():
    out = run("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"recall-tui {__version__}"


def test_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0
    for command in ("check", "index", "query", "load", "eval", "hook", "tui"):
        assert f"    {command} " in out.stdout


def test_python_dash_m_works_like_the_console_script():
    out = subprocess.run(
        [sys.executable, "-m", "recall_tui", "--version"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert out.returncode == 0 and __version__ in out.stdout


def test_every_command_has_its_own_help():
    for command in ("check", "index", "query", "load", "eval"):
        out = run(command, "--help")
        assert out.returncode == 0, (command, out.stderr)
        assert "usage: recall-tui " + command in out.stdout


def test_every_command_says_a_bad_vault_folder_alike(tmp_path, capsys):
    """One guard (`is_folder_or_say`) for every command's vault folder: the same words for a
    missing folder and for a file given as the vault, exit 2. In this process: no children."""
    from recall_tui.cli import main

    missing, a_file = tmp_path / "nope", tmp_path / "file.md"
    a_file.write_text("x\n", encoding="utf-8")
    commands = (["query", "x"], ["load", "some-id"], ["log"], ["preset", "show"], ["eval"],
                ["errors"], ["tune"], ["report", "x"], ["bench"], ["serve"], ["mcp", "serve"])
    for bad, words in ((missing, "no such vault folder"), (a_file, "a file, not a vault folder")):
        for cmd in commands:
            assert main([*cmd, "--vault", str(bad)]) == 2, cmd
            err = capsys.readouterr().err
            assert f"recall-tui {cmd[0]}: {bad}: {words}" in err, (cmd, err)


def test_demo_opens_a_private_copy_of_the_bundled_sample(tmp_path, monkeypatch, capsys):
    """`recall-tui demo` copies the bundled sample (the tracked sample-vault/, packed) to a
    folder of the user's, kept until `--fresh`."""
    from pathlib import Path

    from recall_tui.cli import main
    from recall_tui.cli.demo import SAMPLE, demo_folder, pack_sample

    root = Path(__file__).resolve().parent.parent
    # the shipped archive is the tracked sample-vault/ (re-pack it after changing the sample)
    assert SAMPLE.read_bytes() == pack_sample(root / "sample-vault")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert main(["demo", "--path-only"]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert folder == demo_folder() and folder.is_relative_to(tmp_path)
    tracked = sorted(p.relative_to(root / "sample-vault") for p in (root / "sample-vault")
                     .rglob("*") if p.is_file() and ".recall" not in p.parts)
    copied = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert copied == tracked
    # the copy is the user's: an edit stays until --fresh
    (folder / "golden.jsonl").write_text("", encoding="utf-8")
    assert main(["demo", "--path-only"]) == 0
    assert (folder / "golden.jsonl").read_text(encoding="utf-8") == ""
    assert main(["demo", "--path-only", "--fresh"]) == 0
    assert (folder / "golden.jsonl").read_bytes() == (root / "sample-vault" /
                                                      "golden.jsonl").read_bytes()
