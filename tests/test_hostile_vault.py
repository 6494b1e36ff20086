"""Every command on a hostile vault, each in a process with a capped address space.

A vault is written by agents and people; one file must never take a command down. The vault
here is a copy of the sample vault plus files shaped to hurt: a 365-byte YAML alias bomb (387
million values once expanded), a value that contains itself, a `<<` merge chain, values nested
990 deep, 60,000 keys, a 100,000-item list, a 1 MB single-line value and body line, a 50 MB
file, a binary file and invalid UTF-8 named `.md`, `!!python/...` tags (never constructed),
a transcript line nested 100,000 deep. Each command runs as Claude Code or a user would run
it, in a subprocess under `RLIMIT_AS`, and must finish, exit as it does on a clean vault, and
still answer from the good memories; `check` names every bad file and why.

The limits, RLIMIT_AS (address space, not resident memory), measured on the plain sample
vault on a 2-core machine: `check` and `query --embedder none` pass at 256 MiB and fail at
192; `query --embedder local` passes at 384 and fails at 320; `index --embedder local` from
nothing (246 texts embedded) passes at 1,024 MiB and fails at 768 (onnxruntime's arena). So
LIMIT_MB, for the commands that load the local model, is 1,536 (1.5x the heaviest), and
SMALL_LIMIT_MB, for those that do not, 512 (2x: OpenBLAS reserves per core). The alias bomb
grew to 22 GB: before the bounds, `test_alias_bomb_is_bounded` failed within seconds
(MemoryError, in `check` already).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import SAMPLE_VAULT

#: RLIMIT_AS for a command that loads the local embedder (see the module docstring).
LIMIT_MB = 1536
#: RLIMIT_AS for a command that does not (`--embedder none`, `check`).
SMALL_LIMIT_MB = 512
#: A safety net only: a bounded command on this vault takes seconds.
TIMEOUT = 300

#: Runs `recall_tui.cli.main(argv)` with RLIMIT_AS set first (argv[1] in MiB). The limit is
#: inherited by anything the command starts.
_LIMITED = (
    "import resource, sys\n"
    "lim = int(sys.argv[1]) << 20\n"
    "resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    "from recall_tui.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)

#: A normal sample memory and a query that finds it: the good part of the vault still answers.
GOOD_QUERY, GOOD_ID = "postgres major upgrade analyze", "lesson-pg-upgrade-analyze"


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """`a: &a [lol x9]`, `b: &b [*a x9]`, ... and `title: *i`: 365 bytes, 9**9 values."""
    lines, prev = ["---"], ""
    for i in range(levels):
        name = chr(ord("a") + i)
        items = ",".join(["lol" if not prev else f"*{prev}"] * width)
        lines.append(f"{name}: &{name} [{items}]")
        prev = name
    return "\n".join([*lines, f"title: *{prev}", "---", "the alias bomb's body", ""])


#: file -> (bytes, what `check` must say about it). None: the file loads (its own problems
#: may be warnings).
def hostile_files() -> dict[str, tuple[bytes, str | None]]:
    merge = "".join(
        f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: {i}}}\n" if i else "m0: &m0 {k: 0}\n"
        for i in range(30)
    )
    files: dict[str, tuple[str | bytes, str | None]] = {
        "hostile/bomb.md": (alias_bomb(), "YAML aliases expand past 10,000 values"),
        "hostile/cycle.md": ("---\na: &a [*a]\ntitle: *a\n---\nrecursive\n",
                             "a value that contains itself"),
        "hostile/merge.md": (f"---\n{merge}title: merged\n---\nmerge chain\n",
                             "YAML aliases expand past 10,000 values"),
        "hostile/deep.md": ("---\ntitle: deep\nx: " + "[" * 990 + "]" * 990 + "\ny: "
                            + "{a: " * 900 + "1" + "}" * 900 + "\n---\ndeep\n",
                            "nested deeper than 64 levels"),
        "hostile/many-keys.md": ("---\n" + "".join(f"k{i}: {i}\n" for i in range(60_000))
                                 + "---\nmany keys\n", "60,000 unknown keys"),
        "hostile/many-items.md": ("---\ntitle: many items\ntags: ["
                                  + ", ".join(f"t{i}" for i in range(100_000))
                                  + "]\n---\nmany items\n", None),
        "hostile/long-value.md": ("---\ntitle: " + "A" * 1_000_000 + "\n---\nlong value\n",
                                  "title: a text over 65,536 characters; cut"),
        "hostile/long-line.md": ("---\ntitle: long body line\n---\n" + "word" * 250_000 + "\n",
                                 None),
        "hostile/huge.md": ("---\ntitle: huge\nsummary: " + "B" * 50_000_000 + "\n---\n",
                            "over the 1 MiB limit"),
        "hostile/binary.md": (bytes(range(256)) * 64, "binary file"),
        "hostile/bad-utf8.md": (b"---\ntitle: bad \xff\xfe\n---\nbody\n", "not valid UTF-8"),
        "hostile/python-tag.md": ("---\ntitle: !!python/object/apply:os.system "
                                  "['touch PWNED']\n---\nbody\n",
                                  "could not determine a constructor"),
        "hostile/python-name.md": ("---\ntitle: ok\nx: !!python/name:os.system\n---\nbody\n",
                                   "could not determine a constructor"),
        "sessions/hostile-deep.jsonl": ("[" * 100_000 + "]" * 100_000 + "\n", "nested too deep"),
    }
    return {k: (v.encode() if isinstance(v, str) else v, why) for k, (v, why) in files.items()}


def write_hostile(vault: Path) -> dict[str, str | None]:
    out = {}
    for rel, (data, why) in hostile_files().items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
        out[rel] = why
    return out


def run_limited(args: list[str], *, limit_mb: int = LIMIT_MB, stdin: str | None = None,
                cwd: Path | None = None, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e["RECALL_TUI_SERVE"] = "off"  # the hook answers in its own process (the limited one)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", _LIMITED, str(limit_mb), *args], input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT, env=e, cwd=cwd)


def prompt_payload(prompt: str, cwd: Path) -> str:
    """A UserPromptSubmit payload as Claude Code sends it."""
    return json.dumps({"session_id": "hostile-1",
                       "transcript_path": "/home/u/.claude/projects/x/hostile-1.jsonl",
                       "cwd": str(cwd), "permission_mode": "default",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def test_alias_bomb_is_bounded(tmp_path):
    """The 365-byte bomb next to one normal memory: `check`, `query` (twice: the second reads
    the reading cache) and `load` finish in a small address space and name the file."""
    vault = tmp_path / "vault"
    vault.mkdir()
    shutil.copy(SAMPLE_VAULT / "homelab" / "homelab-immich.md", vault / "immich.md")
    (vault / "bomb.md").write_text(alias_bomb())
    r = run_limited(["check", str(vault)], limit_mb=SMALL_LIMIT_MB)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "bomb.md:" in r.stdout and "YAML aliases expand past 10,000 values" in r.stdout
    for _ in range(2):  # the first query fills the reading cache, the second reads it back
        r = run_limited(["query", "--vault", str(vault), "--embedder", "none", "--json",
                         "photo library"], limit_mb=SMALL_LIMIT_MB)
        assert r.returncode == 0, r.stderr[-2000:]
        assert json.loads(r.stdout)["hits"][0]["id"] == "immich"
    r = run_limited(["load", "--vault", str(vault), "--json", "--verbosity", "full", "bomb"], limit_mb=SMALL_LIMIT_MB)
    assert r.returncode == 0, r.stderr[-2000:]
    front = json.loads(r.stdout)["frontmatter"]
    assert {"a", "b", "c", "d"} <= set(front)  # within the alias budget: kept as written
    assert not {"e", "f", "g", "h", "i", "title"} & set(front)  # past it: ignored


def test_reading_cache_keeps_aliases_shared(tmp_path):
    """What the aliases within the budget share stays shared in the reading cache: the
    record holds `d` (6,561 values once expanded) as its 4 lists of 9, never the expansion."""
    import apsw

    from recall_tui.vault.reader import read_vault

    (tmp_path / "bomb.md").write_text(alias_bomb())
    first = read_vault(tmp_path, cache=True).memories["bomb"].frontmatter
    again = read_vault(tmp_path, cache=True).memories["bomb"].frontmatter  # from the cache
    assert again == first
    assert again["d"][0] is again["d"][8] and again["d"][0][0] is again["c"][0]
    conn = apsw.Connection(str(tmp_path / ".recall" / "read-cache.sqlite"))
    (size,) = conn.execute("SELECT length(record) FROM files WHERE rel='bomb.md'").fetchone()
    conn.close()
    assert size < 4096


@pytest.mark.slow
def test_every_command_on_a_hostile_vault(vault_copy, tmp_path):
    expected = write_hostile(vault_copy)
    pwned = vault_copy / "PWNED"

    r = run_limited(["check", "--json", str(vault_copy)], limit_mb=SMALL_LIMIT_MB, cwd=vault_copy)
    assert r.returncode == 1, r.stderr[-2000:]
    problems = json.loads(r.stdout)["problems"]["items"]
    for rel, why in expected.items():
        if why is not None:
            said = [p["reason"] for p in problems if p["path"] == rel]
            assert any(why in s for s in said), (rel, said)

    r = run_limited(["index", "--embedder", "local", str(vault_copy)], cwd=vault_copy)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "problem(s) in the vault" in r.stdout

    r = run_limited(["query", "--vault", str(vault_copy), "--embedder", "local", "--json",
                     GOOD_QUERY], cwd=vault_copy)
    assert r.returncode == 0, r.stderr[-2000:]
    assert GOOD_ID in [h["id"] for h in json.loads(r.stdout)["hits"]]
    r = run_limited(["query", "--vault", str(vault_copy), "--embedder", "local", "--json",
                     "lol many keys merged deep recursive"], cwd=vault_copy)
    assert r.returncode == 0, r.stderr[-2000:]

    r = run_limited(["hook", "prompt-submit", "--vault", str(vault_copy), "--embedder", "local"],
                    stdin=prompt_payload(GOOD_QUERY, vault_copy), cwd=vault_copy)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"({GOOD_ID})" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]

    r = run_limited(["eval", "--vault", str(vault_copy), "--embedder", "local", "--json",
                     "--now", "2026-11-21T09:00:00Z"], cwd=vault_copy)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)

    assert not pwned.exists()


@pytest.mark.slow
async def test_mcp_recall_on_a_hostile_vault(vault_copy):
    write_hostile(vault_copy)
    env = dict(os.environ)
    env["RECALL_TUI_SERVE"] = "off"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", _LIMITED, str(LIMIT_MB), "mcp", "--vault", str(vault_copy), "--no-watch"],
        env=env)
    async with Client(server) as client:
        res = await client.call_tool("recall", {"query": GOOD_QUERY, "k": 5})
        assert not res.is_error, res.content
        data = res.structured_content or json.loads(res.content[0].text)
        assert GOOD_ID in [h["id"] for h in data["hits"]]
        res = await client.call_tool("load_memory", {"id": "bomb", "verbosity": "full"})
        assert not res.is_error, res.content


#: Opens the Textual app on argv[2] with argv[3] as its query, headless, and prints the vault's
#: problems and the recall's hits once the recall is on screen.
_TUI = (
    "import asyncio, resource, sys, time\n"
    "lim = int(sys.argv[1]) << 20\n"
    "resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    "from recall_tui.tui.app import make_app\n"
    "async def main():\n"
    "    app = make_app(sys.argv[2], query=sys.argv[3])\n"
    "    async with app.run_test(size=(120, 36)) as pilot:\n"
    "        deadline = time.monotonic() + 240\n"
    "        while app.recall_pending or app.trace is None:\n"
    "            assert time.monotonic() < deadline, 'the recall never showed'\n"
    "            await pilot.pause()\n"
    "        print('problems', *sorted({p.path for p in app.vault.problems}))\n"
    "        print('hits', *[h.id for h in app.trace.hits])\n"
    "asyncio.run(main())\n"
)


@pytest.mark.slow
def test_tui_opens_a_hostile_vault(vault_copy):
    write_hostile(vault_copy)
    e = dict(os.environ, RECALL_TUI_SERVE="off")
    r = subprocess.run([sys.executable, "-c", _TUI, str(LIMIT_MB), str(vault_copy), GOOD_QUERY],
                       capture_output=True, text=True, timeout=TIMEOUT, env=e)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert "hostile/bomb.md" in lines["problems"].split()
    assert GOOD_ID in lines["hits"].split()

