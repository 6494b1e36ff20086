"""`recall-tui hook install / uninstall` and `recall-tui mcp install`: only recall-tui's own
entries change; everything else in the user's settings file stays as it was."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.agent.install import MARK, vault_id
from recall_tui.cli import main


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def vaults(tmp_path) -> tuple[Path, Path]:
    a, b = tmp_path / "vault a", tmp_path / "vault-b"
    for v in (a, b):
        (v / "notes").mkdir(parents=True)
    return a, b


def user_settings(other_vault: Path) -> dict:
    """A user's file: their own keys and hooks, one hook sharing an entry with an old
    (pre-marker) recall-tui hook for vault a, and vault b's recall-tui hook."""
    return {
        "model": "opus",
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "echo mine"}]},
                {"hooks": [{"type": "command", "command": f"recall-tui hook prompt-submit --vault {other_vault}  {MARK}{vault_id(other_vault)}"}]},
            ],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        },
        "statusLine": {"type": "command", "command": "printf 'café ☕'"},
    }


def our_commands(data: dict, event: str, vault: Path) -> list[str]:
    return [h["command"] for e in data["hooks"].get(event, []) for h in e["hooks"]
            if h["command"].endswith(f"{MARK}{vault_id(vault)}")]


def test_install_edits_only_its_own_entries_and_uninstall_restores_the_file(tmp_path, vaults, capsys):
    a, b = vaults
    settings = tmp_path / "settings.json"
    original = user_settings(b)
    # the user's own hook shares an entry with a recall-tui hook written before the marker
    original["hooks"]["SessionStart"] = [{"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": "echo hello"},
        {"type": "command", "command": f"/old/bin/recall-tui hook session-start --vault '{a}'"}]}]
    text = json.dumps(original, indent="\t", ensure_ascii=False) + "\n"
    settings.write_text(text, encoding="utf-8")

    code, out, err = cli(capsys, "hook", "install", "--vault", str(a), "--write", str(settings))
    assert code == 0, err
    new = settings.read_text(encoding="utf-8")
    data = json.loads(new)
    assert list(data) == list(original)  # key order
    assert list(data["hooks"]) == ["UserPromptSubmit", "PreToolUse", "SessionStart", "Stop"]
    assert "\n\t\t\"UserPromptSubmit\"" in new and "café ☕" in new  # tabs, text as written
    assert data["statusLine"] == original["statusLine"] and data["permissions"] == original["permissions"]
    ups = data["hooks"]["UserPromptSubmit"]
    assert ups[:2] == original["hooks"]["UserPromptSubmit"]  # the user's and vault b's: untouched
    assert len(our_commands(data, "UserPromptSubmit", a)) == 1
    ss = data["hooks"]["SessionStart"]
    assert len(ss) == 1 and ss[0]["matcher"] == "startup|clear|compact"  # the user's entry kept
    assert ss[0]["hooks"][0] == {"type": "command", "command": "echo hello"}
    assert ss[0]["hooks"][1]["command"].endswith(f"{MARK}{vault_id(a)}")  # the old hook, updated in place
    assert "/old/bin" not in new

    code, out, _ = cli(capsys, "hook", "install", "--vault", str(a), "--write", str(settings))
    assert code == 0 and "nothing changed" in out and settings.read_text(encoding="utf-8") == new

    code, out, err = cli(capsys, "hook", "uninstall", "--vault", str(a), "--write", str(settings))
    assert code == 0 and "3 recall-tui hook(s) removed" in out, err  # Stop's too
    assert "Stop" not in json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["hooks"]["UserPromptSubmit"] == original["hooks"]["UserPromptSubmit"]  # b's stays
    assert data["hooks"]["SessionStart"] == [{"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": "echo hello"}]}]
    code, out, _ = cli(capsys, "hook", "uninstall", "--all", "--write", str(settings))
    assert code == 0 and "1 recall-tui hook(s) removed" in out
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["hooks"]["UserPromptSubmit"] == [{"hooks": [{"type": "command", "command": "echo mine"}]}]


def test_install_adds_the_stop_hook_in_claude_codes_shape_and_again_changes_nothing(tmp_path, vaults,
                                                                                   capsys):
    """The Stop hook (weak labels) is installed with the other two, in the entry shape Claude
    Code's hooks documentation shows (no matcher: Stop takes none), with only --vault; a
    second install changes nothing (no write, no backup); --no-stop takes ours out again and a
    hook stop with a bad option still exits 0 (exit 2 would keep the agent going)."""
    a, b = vaults
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "notify-send done"}]}]}}, indent=2) + "\n")
    code, out, err = cli(capsys, "hook", "install", "--vault", str(a), "--k", "2", "--write", str(settings))
    assert code == 0, err
    first = settings.read_text()
    stop = json.loads(first)["hooks"]["Stop"]
    assert stop[0] == {"hooks": [{"type": "command", "command": "notify-send done"}]}  # the user's
    assert len(stop) == 2 and set(stop[1]) == {"hooks"} and len(stop[1]["hooks"]) == 1
    hook = stop[1]["hooks"][0]
    assert set(hook) == {"type", "command", "timeout"} and hook["type"] == "command"
    assert hook["timeout"] == 30 and isinstance(hook["timeout"], int)
    assert hook["command"].endswith(f" hook stop --vault {shlex.quote(str(a.resolve()))}  "
                                    f"{MARK}{vault_id(a)}")  # only --vault: no --k
    assert " --k 2" in json.loads(first)["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    code, out, _ = cli(capsys, "hook", "install", "--vault", str(a), "--k", "2", "--write", str(settings))
    assert code == 0 and "nothing changed" in out and settings.read_text() == first
    assert [p.name for p in tmp_path.glob("settings.json.bak*")] == ["settings.json.bak.1"]
    assert cli(capsys, "hook", "install", "--vault", str(b), "--write", str(settings))[0] == 0
    assert len(json.loads(settings.read_text())["hooks"]["Stop"]) == 3  # one more vault's
    code, out, err = cli(capsys, "hook", "install", "--vault", str(a), "--no-stop", "--write", str(settings))
    assert code == 0, err
    data = json.loads(settings.read_text())
    assert not our_commands(data, "Stop", a) and len(our_commands(data, "Stop", b)) == 1
    assert data["hooks"]["Stop"][0] == stop[0] and len(our_commands(data, "UserPromptSubmit", a)) == 1
    code, out, err = cli(capsys, "hook", "stop", "--vault", str(a), "--budget-ms", "zz")
    assert code == 0 and "a hook never blocks" in err


def test_a_clean_install_then_uninstall_gives_back_the_same_text(tmp_path, vaults, capsys):
    a, b = vaults
    for i, (indent, eol) in enumerate(((2, "\n"), (4, "\n"), ("\t", "\n"), (None, "\n"), (2, "\r\n"))):
        settings = tmp_path / f"settings-{i}.json"
        text = (json.dumps(user_settings(b), indent=indent, ensure_ascii=False) + "\n").replace("\n", eol)
        settings.write_bytes(text.encode("utf-8"))
        assert cli(capsys, "hook", "install", "--vault", str(a), "--write", str(settings))[0] == 0
        assert settings.read_bytes().decode("utf-8") != text
        assert cli(capsys, "hook", "uninstall", "--vault", str(a), "--write", str(settings))[0] == 0
        assert settings.read_bytes().decode("utf-8") == text, (indent, eol)


def test_symlink_followed_mode_kept_numbered_backups(tmp_path, vaults, capsys):
    a, b = vaults
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    first = json.dumps({"model": "opus"}, indent=2) + "\n"
    real.write_text(first)
    real.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    assert cli(capsys, "hook", "install", "--vault", str(a), "--write", str(link))[0] == 0
    second = real.read_text()
    assert cli(capsys, "hook", "install", "--vault", str(b), "--write", str(link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    backups = sorted(p.name for p in real.parent.iterdir() if ".bak" in p.name)
    assert backups == ["claude-settings.json.bak.1", "claude-settings.json.bak.2"]
    assert (real.parent / backups[0]).read_text() == first
    assert (real.parent / backups[1]).read_text() == second
    assert stat.S_IMODE((real.parent / backups[0]).stat().st_mode) == 0o600
    data = json.loads(real.read_text())
    assert len(our_commands(data, "SessionStart", a)) == len(our_commands(data, "SessionStart", b)) == 1


@pytest.mark.parametrize(("content", "reason"), [
    ('{\n  "model": "opus",\n  "hooks": {,}\n}\n', ":3:13: not valid JSON"),
    ("[1, 2]", "holds a JSON array, not an object"),
    ('{"hooks": {"UserPromptSubmit": "recall-tui hook prompt-submit"}}',
     '"hooks"."UserPromptSubmit" is a JSON string, not an array'),
    ('{"hooks": ["x"]}', '"hooks" value is a JSON array, not an object'),
])
def test_a_malformed_file_is_refused_with_the_reason_and_left_alone(tmp_path, vaults, capsys, content, reason):
    settings = tmp_path / "settings.json"
    settings.write_text(content)
    code, _out, err = cli(capsys, "hook", "install", "--vault", str(vaults[0]), "--write", str(settings))
    assert code == 2 and str(settings) in err and reason in err and "not changed" in err
    assert settings.read_text() == content
    assert not list(tmp_path.glob("*.bak*"))


def test_dry_run_writes_nothing(tmp_path, vaults, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus"}\n')
    code, out, _ = cli(capsys, "hook", "install", "--vault", str(vaults[0]), "--write", str(settings),
                       "--dry-run")
    assert code == 0 and json.loads(out)["model"] == "opus" and "UserPromptSubmit" in json.loads(out)["hooks"]
    assert settings.read_text() == '{"model": "opus"}\n' and not list(tmp_path.glob("*.bak*"))


def test_every_flag_is_passed_and_the_command_runs_from_a_path_with_a_space(tmp_path, sample_vault_path):
    """Installed from a recall-tui whose path has a space, for a vault whose path has one:
    the written command runs in a shell and injects (it was exit 127, silently). It runs this
    Python without `site` on the package's launcher; with --no-serve the launcher hands over
    to the full command (site enabled in-process), whose output is the `recall-tui`
    script's, byte for byte."""
    import shutil

    venv = Path(sys.prefix)
    spaced = tmp_path / "my tools" / "venv"
    spaced.parent.mkdir()
    spaced.symlink_to(venv)
    vault = tmp_path / "my vault"
    shutil.copytree(sample_vault_path, vault, ignore=shutil.ignore_patterns(".recall"))
    flags = ["--k", "2", "--sources", "startup,resume", "--no-serve", "--budget-ms", "900",
             "--embedder", "none", "--preset", "default", "--transparency", "--repeat-window", "2"]
    r = subprocess.run([str(spaced / "bin" / "python"), "-m", "recall_tui", "hook", "install",
                        "--vault", str(vault), *flags], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    block = json.loads(r.stdout)
    assert "matcher" not in block["hooks"]["SessionStart"][0]  # every source runs; --sources decides
    cmd = block["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    launcher = Path(__file__).resolve().parents[1] / "recall_tui" / "launcher.py"
    assert cmd.startswith(shlex.join([str(spaced / "bin" / "python"), "-S", str(launcher)])
                          + " hook prompt-submit ") and f"'{vault}'" in cmd
    for flag in flags:
        assert f" {flag}" in cmd or f" {flag}" in cmd.replace("'", ""), flag
    env = {**os.environ, "RECALL_TUI_SERVE": "off"}
    payload = {"session_id": "s", "hook_event_name": "UserPromptSubmit",
               "prompt": "postgres major upgrade analyze"}
    done = subprocess.run(["sh", "-c", cmd], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["additionalContext"].startswith("Loaded 2 relevant entries")
    assert out["systemMessage"].startswith("Loaded 2 relevant entries")  # --transparency
    script = shlex.join([str(spaced / "bin" / "recall-tui"), *shlex.split(cmd, comments=True)[3:]])
    fresh = {**payload, "session_id": "s2"}  # (in session s, --repeat-window holds back repeats)
    done = subprocess.run(["sh", "-c", cmd], input=json.dumps(fresh), capture_output=True,
                          text=True, timeout=180, env=env)
    fresh["session_id"] = "s3"
    same = subprocess.run(["sh", "-c", script], input=json.dumps(fresh), capture_output=True,
                          text=True, timeout=180, env=env)
    assert same.returncode == 0 and same.stdout == done.stdout, same.stderr
    start = block["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    done = subprocess.run(["sh", "-c", start], input=json.dumps({"session_id": "s", "source": "resume"}),
                          capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].startswith("Loaded 5 ")


def test_mcp_install_writes_only_its_server(tmp_path, vaults, capsys):
    a, _b = vaults
    mcp = tmp_path / ".mcp.json"
    original = {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}
    mcp.write_text(json.dumps(original, indent=2) + "\n")
    code, out, err = cli(capsys, "mcp", "install", "--vault", str(a))
    assert code == 0, err
    entry = json.loads(out)["mcpServers"]["recall-tui"]
    assert entry["args"][-3:] == ["mcp", "--vault", str(a.resolve())]
    code, out, err = cli(capsys, "mcp", "install", "--vault", str(a), "--write", str(mcp))
    assert code == 0, err
    data = json.loads(mcp.read_text())
    assert list(data["mcpServers"]) == ["github", "recall-tui"]
    assert data["mcpServers"]["github"] == original["mcpServers"]["github"]
    assert (tmp_path / ".mcp.json.bak.1").exists()
    code, out, err = cli(capsys, "mcp", "install", "--vault", str(a), "--write", str(mcp), "--name", "github")
    assert code == 2 and "not recall-tui's" in err
    code, out, err = cli(capsys, "mcp", "uninstall", "--write", str(mcp))
    assert code == 0, err
    assert json.loads(mcp.read_text()) == original


def test_plugin_folder_written_and_a_foreign_plugin_refused(tmp_path, vaults, capsys):
    a, _b = vaults
    plugin = tmp_path / "plugin"
    code, out, err = cli(capsys, "hook", "install", "--vault", str(a), "--k", "3", "--plugin-dir", str(plugin))
    assert code == 0, err
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())
    assert " --k 3" in hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())["name"] == "recall-tui"
    assert json.loads((plugin / ".mcp.json").read_text())["mcpServers"]["recall-tui"]["args"][-2:] == \
        ["--vault", str(a.resolve())]
    other = tmp_path / "other"
    (other / ".claude-plugin").mkdir(parents=True)
    (other / ".claude-plugin" / "plugin.json").write_text('{"name": "mine"}')
    code, out, err = cli(capsys, "hook", "install", "--vault", str(a), "--plugin-dir", str(other))
    assert code == 2 and "'mine'" in err and not (other / "hooks").exists()


def test_an_older_command_of_ours_is_upgraded_to_the_launcher(tmp_path, vaults, capsys):
    """Settings written by a version that ran the `recall-tui` script (marker and all) keep
    working, and the next install replaces those entries in place with the launcher command
    (`python -S .../recall_tui/launcher.py`); a launcher command without the marker is ours
    too (uninstall finds it)."""
    from recall_tui.agent.install import hook_argv, is_ours

    a, _b = vaults
    settings = tmp_path / "settings.json"
    old = f"/old/bin/recall-tui hook prompt-submit --vault {shlex.quote(str(a.resolve()))}  {MARK}{vault_id(a)}"
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": old, "timeout": 30}]}]}}))
    code, _out, err = cli(capsys, "hook", "install", "--vault", str(a), "--write", str(settings))
    assert code == 0, err
    ups = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert len(ups) == 1 and len(ups[0]["hooks"]) == 1  # replaced where it stood, not added
    words = shlex.split(ups[0]["hooks"][0]["command"], comments=True)
    assert words == hook_argv(a, "prompt-submit")
    assert words[0] == sys.executable and words[1] == "-S" and words[2].endswith("recall_tui/launcher.py")
    bare = {"type": "command", "command": shlex.join(words)}  # without the marker
    assert is_ours(bare, vault_id(a)) and not is_ours(bare, vault_id(_b))
    assert not is_ours({"type": "command", "command": shlex.join(
        [sys.executable, "/elsewhere/launcher.py", *words[3:]])}, None)
