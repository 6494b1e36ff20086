"""`.recall/` never goes into the vault's git: whatever makes or writes in it leaves a
`.gitignore` of `*` there when there is none, and never touches one that is there."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.agent.active import write_active
from recall_tui.agent.log import AgentRecall, append_recall
from recall_tui.vault.reader import read_vault
from recall_tui.vault.recalldir import GITIGNORE_TEXT, keep_out_of_git
from tests.conftest import SAMPLE_VAULT


def git(vault: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull,
                                        "GIT_CONFIG_NOSYSTEM": "1"})
    assert r.returncode == 0, r.stderr
    return r.stdout


def small_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("homelab-immich.md", "homelab-overview.md"):
        shutil.copy(SAMPLE_VAULT / "homelab" / name, vault / name)
    return vault


def test_keep_out_of_git(tmp_path):
    folder = tmp_path / ".recall"
    folder.mkdir()
    assert keep_out_of_git(folder) is True
    assert (folder / ".gitignore").read_text() == GITIGNORE_TEXT
    assert "*" in GITIGNORE_TEXT.splitlines()
    assert keep_out_of_git(folder) is False  # there already: left alone
    (folder / ".gitignore").write_text("index.sqlite\n")  # the user's own rules
    assert keep_out_of_git(folder) is False
    assert (folder / ".gitignore").read_text() == "index.sqlite\n"
    assert sorted(p.name for p in folder.iterdir()) == [".gitignore"]  # no temp file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_left_without_one(tmp_path):
    folder = tmp_path / ".recall"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert keep_out_of_git(folder) is False
    finally:
        folder.chmod(0o700)
    assert not (folder / ".gitignore").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_add_all_in_a_vault_commits_nothing_of_recall(tmp_path):
    """Each writer of `.recall/` (the reading cache, the index, the agent log, the active
    configuration) leaves the `.gitignore`; `git add -A` then stages only the memories."""
    vault = small_vault(tmp_path)
    git(vault, "init", "-q")
    read_vault(vault, cache=True)  # the reading cache makes .recall/
    assert (vault / ".recall" / ".gitignore").read_text() == GITIGNORE_TEXT

    writers = {
        "index": lambda: subprocess.run(
            [sys.executable, "-m", "recall_tui", "index", "--embedder", "none", str(vault)],
            capture_output=True, text=True, timeout=300, check=True),
        "active": lambda: write_active(vault, preset="default"),
        "log": lambda: append_recall(vault, AgentRecall(
            id="r1", time="2026-11-21T09:00:00Z", served_by="hook", event="UserPromptSubmit",
            prompt="my password is hunter2")),
    }
    for name, write in writers.items():
        shutil.rmtree(vault / ".recall")
        if name != "index":
            (vault / ".recall").mkdir()  # made before this rule, without a .gitignore
        write()
        assert (vault / ".recall" / ".gitignore").read_text() == GITIGNORE_TEXT, name

    subprocess.run([sys.executable, "-m", "recall_tui", "query", "--vault", str(vault),
                    "--embedder", "none", "photo library"], capture_output=True, text=True,
                   timeout=300, check=True)
    git(vault, "add", "-A")
    staged = git(vault, "diff", "--cached", "--name-only").split()
    assert sorted(staged) == ["homelab-immich.md", "homelab-overview.md"]
    assert len(list((vault / ".recall").iterdir())) > 2  # there was plenty to commit

