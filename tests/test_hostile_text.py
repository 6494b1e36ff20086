"""Memory text never controls the terminal: a hostile vault through every command.

The fixture's titles, summaries, bodies, tags, recall_when phrases, ids, its golden file and
even its folder name hold terminal escapes (clear screen, colour, OSC 8 links, OSC 52 clipboard
writes, BEL, the 8-bit CSI) and Rich markup. Every command runs to a pipe and to a
pseudo-terminal; what it prints must hold none of those sequences, must show them in their
visible form (`␛[2J`), and must show markup as typed. JSON output keeps the exact text.
(Rich's own colours on a terminal are fine: the assertions look for the memory's sequences.)
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from recall_tui.vault.literal import json_text, literal, literal_line

#: The vault folder's name: an OSC title change ended by BEL.
VAULT_NAME = "v\x1b]0;T\x07"
EVIL_ID = "evil\x1b[31m:red-id"
MARKUP = "[bold red]x[/]"
#: Raw sequences that must never reach the output (each unique enough that Rich's own
#: styling cannot produce it).
FORBIDDEN = ("\x1b[2J", "\x1b[31m:red", "\x1b]", "\x07", "\x9b", "\u202e")
HOSTILE_MEMORY = (
    "---\n"
    'id: "evil\\e[31m:red-id"\n'
    'title: "T \\e[2J [bold red]x[/] \\e]8;;https://evil.example\\e\\\\link\\e]8;;\\e\\\\ postgres"\n'
    "type: decision\n"
    'summary: "S \\e[2J \\e[31m:red \\x9b1m [bold red]x[/] \\a bell \\e]52;c;aGk=\\a \\u202e postgres deploy"\n'
    'tags: [postgres, "\\e[2J[red]tag[/]"]\n'
    "recall_when:\n"
    '  - "postgres [bold red]x[/] deploy"\n'
    "---\n"
    "# Hostile\n\n"
    "Body \x1b[2J raw \x1b[31m:red \x1b]52;c;aGk=\x07 \x9b1m [bold red]x[/] postgres deploy.\n"
)
BAD_TYPE_MEMORY = (
    "---\nid: badtype\n"
    'title: "Bad type"\n'
    'type: "\\e[2Jdecsion"\n'
    "---\nPostgres deploy notes.\n"
)
ALWAYS_MEMORY = (
    "---\nid: always-evil\n"
    'title: "A \\e[2J \\x9b1m [bold red]x[/]"\n'
    "---\nAlways \x1b[2J loaded \x1b]52;c;aGk=\x07 body.\n"
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / VAULT_NAME
    (root / "work").mkdir(parents=True)
    (root / "_always-load").mkdir()
    (root / "work" / "hostile.md").write_text(HOSTILE_MEMORY, encoding="utf-8")
    (root / "work" / "badtype.md").write_text(BAD_TYPE_MEMORY, encoding="utf-8")
    (root / "work" / "plain.md").write_text("---\nid: plain\ntitle: Postgres plan\n---\nx\n")
    (root / "_always-load" / "always.md").write_text(ALWAYS_MEMORY, encoding="utf-8")
    (root / "golden.jsonl").write_text(
        json.dumps({"query": "postgres \x1b[2J deploy [bold red]x[/]",
                    "relevant": {EVIL_ID: 3, "gone\x1b[2J\x9b": 1}}) + "\n"
        + json.dumps({"query": "postgres plan", "relevant": {"plain": 1}}) + "\n", encoding="utf-8")
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(COLUMNS="250", LINES="50", TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "recall_tui", *args]


def run_pipe(args: list[str], stdin: str = "") -> tuple[int, str]:
    p = subprocess.run(_cmd(*args), input=stdin.encode(), capture_output=True, env=_env(),
                       timeout=120, check=False)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", errors="replace")


def run_pty(args: list[str], stdin: str = "") -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal (250x50), stdin from a pipe."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
    proc = subprocess.Popen(_cmd(*args), stdin=subprocess.PIPE, stdout=slave, stderr=slave,
                            env=_env(), close_fds=True)
    os.close(slave)
    assert proc.stdin is not None
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        assert ready, f"no output from {args} within 120 s"
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=120)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def assert_safe(out: str, args: list[str], *, on_pty: bool) -> None:
    for seq in FORBIDDEN:
        assert seq not in out, f"{args} printed the raw sequence {seq!r}:\n{out!r}"
    if not on_pty:  # nothing styles a pipe: no escape at all
        assert "\x1b" not in out, f"{args} printed an escape to a pipe:\n{out!r}"


@pytest.fixture(scope="module")
def trace_file(vault, tmp_path_factory) -> Path:
    code, _ = run_pipe(["index", str(vault), "--embedder", "none"])
    assert code == 0
    p = subprocess.run(_cmd("query", "postgres deploy", "--vault", str(vault), "--embedder", "none",
                            "--json"), capture_output=True, timeout=120, check=True, env=_env())
    f = tmp_path_factory.mktemp("trace") / "trace.json"
    f.write_bytes(p.stdout)
    return f


# (name, argv after the vault is filled in, stdin, what must be visible in the output)
def _cases(vault: Path, trace: Path) -> list[tuple[str, list[str], str, list[str]]]:
    v = str(vault)
    return [
        ("query", ["query", "postgres deploy", "--vault", v, "--embedder", "none", "--k", "5",
                   "--why", EVIL_ID, "--why", "badtype"],
         "", ["␛[2J", MARKUP, "␛[31m:red-id"]),
        ("load", ["load", EVIL_ID, "--vault", v], "", ["␛[2J", "␛]52;c;aGk=␇", MARKUP]),
        ("load full", ["load", EVIL_ID, "--vault", v, "--verbosity", "full"], "",
         ["␛[2J", MARKUP]),
        ("check", ["check", v], "", ["␛]0;T␇", "\\x1b[2Jdecsion"]),
        ("eval", ["eval", "--vault", v, "--queries", str(vault / "golden.jsonl"), "--embedder",
                  "none", "--per-query", "--now", "2026-11-21"], "",
         ["␛[2J deploy " + MARKUP, "gone␛[2J\\x9b"]),
        ("tune", ["tune", "--vault", v, "--queries", str(vault / "golden.jsonl"), "--embedder",
                  "none", "--folds", "2", "--budget", "3", "--now", "2026-11-21"], "", ["␛]0;T␇"]),
        ("report", ["report", "postgres deploy", "--vault", v, "--embedder", "none",
                    "--repeat", "1", "--now", "2026-11-21T09:00Z"], "", ["␛]0;T␇"]),
        ("edit", ["edit", EVIL_ID, "--vault", v, "--add", "deploy [b]y[/b]",
                  "--no-index", "--dry-run"], "", ['+  - "deploy [b]y[/b]"', MARKUP]),
        ("edit written", ["edit", EVIL_ID, "--vault", v, "--add", "another [i]one[/i]",
                          "--no-index"], "", ["␛[31m:red-id"]),
        ("edit typo", ["edit", "evil\x1b[31m:red-ix", "--vault", v, "--add", "x"], "",
         ["␛[31m:red-id"]),
        ("replay", ["replay", str(trace), "--print"], "", ["␛[2J", MARKUP]),
        ("index", ["index", v, "--embedder", "none"], "", ["␛]0;T␇"]),
        ("hook prompt-submit", ["hook", "prompt-submit", "--vault", v],
         json.dumps({"prompt": "postgres deploy"}), []),
        ("hook session-start", ["hook", "session-start", "--vault", v], "{}", []),
    ]


CASE_NAMES = ["query", "load", "load full", "check", "eval", "tune", "report", "edit", "edit written",
              "edit typo", "replay", "index", "hook prompt-submit", "hook session-start"]


@pytest.mark.parametrize("on_pty", [False, True], ids=["pipe", "pty"])
@pytest.mark.parametrize("name", CASE_NAMES)
def test_every_command_prints_memory_text_literally(vault, trace_file, name, on_pty):
    cases = {c[0]: c for c in _cases(vault, trace_file)}
    assert set(cases) == set(CASE_NAMES)
    _, args, stdin, visible = cases[name]
    code, out = (run_pty if on_pty else run_pipe)(args, stdin)
    assert code in (0, 1, 2), (args, code, out)
    assert_safe(out, args, on_pty=on_pty)
    flat = out.replace("\r\n", "\n")
    # a long value (the vault's path, longer under pytest-xdist) may wrap in a table cell
    unwrapped = re.sub(r"[ \t]*\n", "", flat)
    for v in visible:
        assert v in flat or v in unwrapped, f"{args}: the visible form {v!r} is not in:\n{out}"


def test_hook_json_keeps_the_exact_text(vault):
    code, out = run_pipe(["hook", "session-start", "--vault", str(vault)], "{}")
    assert code == 0
    assert_safe(out, ["hook"], on_pty=False)
    doc = json.loads(out.splitlines()[0])
    context = doc["hookSpecificOutput"]["additionalContext"]
    assert "A \x1b[2J \x9b1m [bold red]x[/]" in context
    assert "Always \x1b[2J loaded \x1b]52;c;aGk=\x07 body." in context


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


@pytest.mark.parametrize("args", [
    ["query", "postgres deploy", "--embedder", "none", "--json"],
    ["load", EVIL_ID, "--json"],
    ["check", "--json"],
    ["index", "--embedder", "none", "--json"],
])
def test_json_output_keeps_the_exact_text_without_raw_controls(vault, args):
    full = [*args, str(vault)] if args[0] in ("check", "index") else [*args, "--vault", str(vault)]
    p = subprocess.run(_cmd(*full), capture_output=True, timeout=120, check=False, env=_env())
    assert p.returncode in (0, 1), p.stderr
    text = p.stdout.decode("utf-8")
    assert_safe(text, full, on_pty=False)
    doc = json.loads(text)
    dumped = "\n".join(_strings(doc))
    if args[0] == "query":
        hit = next(h for h in doc["hits"] if h["id"] == EVIL_ID)
        assert hit["summary"].startswith("S \x1b[2J \x1b[31m:red \x9b1m [bold red]x[/] \x07 bell")
    elif args[0] == "load":
        assert "Body \x1b[2J raw \x1b[31m:red \x1b]52;c;aGk=\x07 \x9b1m" in doc["body"]
    else:
        assert VAULT_NAME in dumped


def test_literal_makes_every_control_visible_and_keeps_the_rest():
    raw = "a\x1b[2Jb\x1b]52;c;Zm9v\x07c\x9b31md\x00e\tf\ng\x7fh\r\ni\rj\u202ek [b]x[/b] ünï"
    assert literal(raw) == ("a␛[2Jb␛]52;c;Zm9v␇c\\x9b31md␀e\tf\ng␡h\ni␍j\\u202ek [b]x[/b] ünï")
    assert literal_line(raw) == literal(raw).replace("\t", " ").replace("\n", " ")
    assert literal("plain text") == "plain text"
    assert json.loads(json_text({"t": raw})) == {"t": raw}
    assert not any(c in json_text(raw) for c in "\x1b\x07\x9b\x7f\u202e")


@pytest.mark.parametrize("on_pty", [False, True], ids=["pipe", "pty"])
def test_agent_log_prints_prompts_and_ids_literally(vault, on_pty):
    """`recall-tui log` shows a hostile prompt (and the ids injected for it) literally."""
    payload = json.dumps({"session_id": "evil\x1b[2J", "prompt": "postgres \x1b]0;T\x07 deploy"})
    code, _ = run_pipe(["hook", "prompt-submit", "--vault", str(vault), "--no-serve"], payload)
    assert code == 0
    args = ["log", "--vault", str(vault), "--session", "evil"]
    code, out = (run_pty if on_pty else run_pipe)(args)
    assert code == 0, out
    assert_safe(out, args, on_pty=on_pty)
    assert "postgres ␛]0;T␇ deploy" in out.replace("\r\n", "\n")
