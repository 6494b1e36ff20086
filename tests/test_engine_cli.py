"""The engine commands as a user runs them: `query --json` (the stable schema), `load`,
and the two Claude Code hooks with their outputs and budgets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from recall_tui.engine.trace import STAGE_ORDER, TRACE_VERSION, Trace

NOW = "2026-11-21T09:00:00Z"


def cli(*args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "recall_tui", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=e)


def test_query_json_schema(session_vault_copy):
    r = cli("query", "postgres upgrade", "--vault", str(session_vault_copy), "--embedder", "none",
            "--now", NOW, "--json", "--why", "billing-db-postgres14", "--preset", "default")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["trace_version"] == TRACE_VERSION
    assert data["query"] == "postgres upgrade" and data["preset"] == "default"
    assert data["now"] == NOW
    assert [s["name"] for s in data["stages"]] == list(STAGE_ORDER)
    for s in data["stages"]:
        assert {"name", "ms", "skipped", "reason", "candidates", "dropped", "info"} <= set(s)
    assert data["hits"], "no hits"
    for h in data["hits"]:
        assert {"id", "rank", "score", "channels", "explain", "summary", "staleness"} <= set(h)
        assert {"channels", "fused", "boosts", "boosted", "final", "matched_terms"} <= set(h["explain"])
    assert data["why"][0]["id"] == "billing-db-postgres14" and data["why"][0]["stage"] == "filter"
    assert data["vault"]["memories"] > 100 and len(data["config_hash"]) == 64
    Trace.from_dict(data)


def test_query_errors_are_clear(tmp_path):
    r = cli("query", "x", "--vault", str(tmp_path / "missing"))
    assert r.returncode == 2 and "no such vault folder" in r.stderr
    r = cli("query", "x", "--vault", str(tmp_path), "--now", "yesterday")
    assert r.returncode == 2 and "--now 'yesterday' is not an ISO-8601" in r.stderr


def test_query_table_and_preset_error(session_vault_copy):
    r = cli("query", "kubectl production", "--vault", str(session_vault_copy), "--embedder",
            "none", "--now", NOW, "--why", "no-such")
    assert r.returncode == 0, r.stderr
    assert "prod-safety-rules" in r.stdout and "stages" in r.stdout and "unknown id" in r.stdout
    r = cli("query", "x", "--vault", str(session_vault_copy), "--preset", "nope", "--embedder", "none")
    assert r.returncode == 2 and "unknown preset 'nope'" in r.stderr


def test_load_lean_and_full(sample_vault_path):
    lean = json.loads(cli("load", "prod-safety-rules", "--vault", str(sample_vault_path), "--json").stdout)
    full = json.loads(cli("load", "prod-safety-rules", "--vault", str(sample_vault_path), "--json",
                          "--verbosity", "full").stdout)
    assert "related_via" not in lean["frontmatter"] and "related_via" in full["frontmatter"]
    assert lean["frontmatter"]["title"] == full["frontmatter"]["title"]
    r = cli("load", "nope", "--vault", str(sample_vault_path))
    assert r.returncode == 1 and "no memory with id 'nope'" in r.stderr


def hook(event: str, vault, payload: dict, *extra: str, env=None) -> tuple[dict, str]:
    r = cli("hook", event, *extra, stdin=json.dumps(payload),
            env={"RECALL_TUI_VAULT": str(vault), **(env or {})})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


def test_session_start_injects_always_load(session_vault_copy):
    out, _ = hook("session-start", session_vault_copy, {"session_id": "s1", "cwd": "/tmp"},
                  "--budget-ms", "20000")
    hso = out["hookSpecificOutput"]
    n = len(list((session_vault_copy / "_always-load").glob("*.md")))
    assert hso["hookEventName"] == "SessionStart"
    assert hso["additionalContext"].startswith(f"Loaded {n} MemoryVault always-load entries")
    assert "(prod-safety-rules)" in hso["additionalContext"]


def test_prompt_submit_dedups_always_load(session_vault_copy):
    payload = {"prompt": "never touch production without an explicit OK kubectl", "session_id": "s1"}
    out, _ = hook("prompt-submit", session_vault_copy, payload, "--budget-ms", "20000",
                  "--transparency")
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "UserPromptSubmit"
    line = hso["additionalContext"].splitlines()[0]
    assert line.startswith("Loaded ") and " relevant entries: " in line
    ids = line.split(": ", 1)[1].split(", ")
    assert 1 <= len(ids) <= 5
    assert "prod-safety-rules" not in ids  # already injected at session start
    assert out["systemMessage"] == line


@pytest.mark.parametrize("event", ["session-start", "prompt-submit"])
def test_overrun_warns_and_returns_valid_output(session_vault_copy, event):
    out, err = hook(event, session_vault_copy, {"prompt": "postgres"}, "--budget-ms", "0")
    assert "over the 0 ms budget" in err
    assert out["hookSpecificOutput"]["hookEventName"] in ("SessionStart", "UserPromptSubmit")
    assert out["hookSpecificOutput"]["additionalContext"].startswith("Loaded ")


def test_hook_without_vault_does_not_block(tmp_path):
    r = cli("hook", "prompt-submit", stdin="not json", env={"RECALL_TUI_VAULT": ""})
    assert r.returncode == 0 and "no vault" in r.stderr
    assert json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] == ""


def test_prompt_submit_fits_its_budget_once_warm(session_vault_copy):
    r = cli("hook", "prompt-submit", "--warm", "--vault", str(session_vault_copy))
    assert r.returncode == 0, r.stderr
    out, err = hook("prompt-submit", session_vault_copy, {"prompt": "postgres upgrade"})
    assert "over the" not in err, err  # the default 300 ms budget, measured in the command
    assert out["hookSpecificOutput"]["additionalContext"].startswith("Loaded ")
    assert "relevant entries: " in out["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in out  # the transparency line is opt-in (issue 12)
