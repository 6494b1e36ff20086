"""`recall-tui mcp` over stdio, driven by the real `mcp` SDK client: the server's version, a
title and `readOnlyHint` on every tool, output schemas the client validates (and that we
validate again here), the flight recorder holding byte for byte the serialized result the
client received, `why_not`/`load_memory` recorded as answers about a memory (not
injections), a query length cap and argument errors in one line naming the argument, the
active configuration followed by content during a session (a preset re-saved under the same
name, `preset use`, a missing active preset -> `default` with a warning), the first recall
on a fresh vault answering from the text channels while the vectors are made, and the same
ids in the same order from the hook's log entry, `recall-tui query` and the MCP tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from recall_tui import __version__
from recall_tui.agent.active import write_active
from recall_tui.agent.log import find_recall, read_agent_log

pytestmark = pytest.mark.slow


def _server(vault, *extra: str) -> StdioServerParameters:
    env = dict(os.environ)
    env["RECALL_TUI_SERVE"] = "off"
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "recall_tui", "mcp", "--vault", str(vault), *extra],
                                 env=env)


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _wire(data: dict) -> str:
    """What Claude Code hands the model: the compact JSON of structuredContent."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


async def test_mcp_tools_over_stdio(vault_copy):
    async with Client(_server(vault_copy, "--no-watch")) as client:
        assert client.server_info.version == __version__ and client.server_info.name == "recall-tui"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"recall", "load_memory", "why_not"} <= set(tools)
        for t in tools.values():
            assert t.title, t.name
            assert t.annotations is not None and t.annotations.read_only_hint is True, t.name
            assert t.annotations.destructive_hint is False
            schema = t.output_schema
            assert schema and schema.get("properties") and schema.get("required"), t.name
        props = tools["recall"].input_schema["properties"]
        assert {"query", "k", "preset", "include_superseded", "as_of", "types"} <= set(props)
        assert set(tools["recall"].output_schema["required"]) >= {"trace_id", "preset", "hits"}

        res = await client.call_tool("recall", {"query": "postgres major upgrade analyze", "k": 3})
        assert not res.is_error, _text(res)
        data = res.structured_content
        jsonschema.validate(data, tools["recall"].output_schema)
        assert _text(res) == _wire(data)  # the text content is the same compact JSON
        assert data["trace_id"] and len(data["hits"]) == 3 and "query" not in data
        assert {"id", "rank", "title", "summary", "score", "channels"} <= set(data["hits"][0])
        assert "lesson-pg-upgrade-analyze" in [h["id"] for h in data["hits"]]
        recall_data = data

        res = await client.call_tool("load_memory", {"id": "prod-safety-rules", "verbosity": "full"})
        assert not res.is_error, _text(res)
        jsonschema.validate(res.structured_content, tools["load_memory"].output_schema)
        assert res.structured_content["frontmatter"]["title"]
        load_data = res.structured_content

        res = await client.call_tool("why_not", {"query": "postgres upgrade",
                                                 "id": "billing-db-postgres14"})
        assert not res.is_error, _text(res)
        why = res.structured_content
        jsonschema.validate(why, tools["why_not"].output_schema)
        assert why["id"] == "billing-db-postgres14" and why["stage"] and why["found"] is False

        res = await client.call_tool("load_memory", {"id": "no-such-memory"})
        assert res.is_error and "no memory with id 'no-such-memory'" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "k": 0})
        assert res.is_error and "k must be between 1 and" in _text(res)

        for args, name in (({"query": "postgres", "k": "many"}, "k"), ({"k": 3}, "query"),
                           ({"query": "pg", "types": 7}, "types"),
                           ({"query": "pg", "include_superseded": "perhaps"}, "include_superseded")):
            res = await client.call_tool("recall", args)
            msg = _text(res)
            assert res.is_error and "\n" not in msg and f"argument '{name}'" in msg, msg
            assert "pydantic" not in msg and "validation error" not in msg, msg

        res = await client.call_tool("recall", {"query": "postgres " * 1000})
        msg = _text(res)
        assert res.is_error and "\n" not in msg and "the limit is 4,000" in msg, msg
        assert len(msg) < 300  # the query is not echoed back

        res = await client.call_tool("recall", {"query": "postgres", "preset": "nope"})
        assert res.is_error and "unknown preset 'nope'" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "as_of": "yesterday"})
        assert res.is_error and "as_of 'yesterday'" in _text(res)

    recs = read_agent_log(vault_copy, served_by="mcp")
    assert [r.event for r in recs] == ["why_not", "load_memory", "recall"]
    why_rec, load_rec, rec = recs
    # byte for byte what the client received
    assert rec.id == recall_data["trace_id"] and rec.injected_text == _wire(recall_data)
    assert rec.injected_ids == [h["id"] for h in recall_data["hits"]] and rec.about_ids == []
    assert rec.prompt == "postgres major upgrade analyze"
    assert rec.trace is not None and rec.trace.query == "postgres major upgrade analyze"
    assert load_rec.injected_text == _wire(load_data) and load_rec.injected_ids == []
    assert load_rec.about_ids == ["prod-safety-rules"]
    assert why_rec.id == why["trace_id"] and why_rec.injected_text == _wire(why)
    assert why_rec.injected_ids == [] and why_rec.about_ids == ["billing-db-postgres14"]


def _save_mine(vault: Path, body: str) -> None:
    """A preset re-saved under the same name, as `tune --save mine --overwrite` does."""
    d = vault / ".recall" / "presets"
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".mine.tmp"
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, d / "mine.toml")


async def test_mcp_follows_the_active_configuration_by_content(vault_copy):
    write_active(vault_copy, preset="default", embedder="none")
    _save_mine(vault_copy, 'extends = "default"\nk = 3\n')
    async with Client(_server(vault_copy, "--no-watch")) as client:
        async def recall() -> dict:
            res = await client.call_tool("recall", {"query": "postgres major upgrade analyze"})
            assert not res.is_error, _text(res)
            return res.structured_content

        first = await recall()
        assert first["preset"] == "default"
        write_active(vault_copy, preset="mine")  # `preset use mine` during the session
        a = await recall()
        assert a["preset"] == "mine" and len(a["hits"]) == 3
        _save_mine(vault_copy, 'extends = "default"\nk = 4\n[keyword]\ntitle = 9.0\n')
        b = await recall()
        assert b["preset"] == "mine" and len(b["hits"]) == 4
        hash_a = find_recall(vault_copy, a["trace_id"]).config_hash
        hash_b = find_recall(vault_copy, b["trace_id"]).config_hash
        assert hash_a and hash_b and hash_a != hash_b

        (vault_copy / ".recall" / "presets" / "mine.toml").unlink()  # the active preset deleted
        c = await recall()
        assert c["preset"] == "default" and c["hits"]
        rec = find_recall(vault_copy, c["trace_id"])
        assert "active preset 'mine'" in rec.warning and "'default'" in rec.warning

    r = subprocess.run([sys.executable, "-m", "recall_tui", "preset", "show", "--vault", str(vault_copy)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "preset default" in r.stdout
    assert "warning: active preset 'mine'" in r.stdout and "not found" in r.stdout


async def test_first_recall_on_a_fresh_vault_answers_from_the_text_channels(bare_vault_copy):
    """No index yet: the server opens the vault in the background with the vectors deferred;
    a recall made while they are being made says so (result and log) and its trace shows the
    vector channel skipped for that reason; once they exist, the note is gone."""
    vault = bare_vault_copy
    async with Client(_server(vault, "--no-watch")) as client:
        res = await client.call_tool("recall", {"query": "postgres major upgrade analyze", "k": 5})
        assert not res.is_error, _text(res)
        data = res.structured_content
        assert data["hits"] and data["hits"][0]["id"] == "lesson-pg-upgrade-analyze"
        rec = find_recall(vault, data["trace_id"])
        vector = rec.trace.stage("vector")
        if "note" in data:  # the usual case: embedding the vault takes seconds
            assert data["note"].startswith("vector channel still building (embedding ")
            assert rec.note == data["note"]
            assert vector.skipped and vector.reason.startswith("embedding ")
        else:
            assert not vector.skipped

        async def settled() -> dict:
            import anyio

            with anyio.fail_after(600):
                while True:
                    r = await client.call_tool("recall", {"query": "postgres major upgrade analyze"})
                    if "note" not in r.structured_content:
                        return r.structured_content
                    await anyio.sleep(0.5)

        done = await settled()
        assert not find_recall(vault, done["trace_id"]).trace.stage("vector").skipped


async def test_same_ids_from_hook_query_and_mcp(vault_copy):
    """One prompt: the hook's log entry, `recall-tui query` with the entry's k, now and preset,
    and the MCP tool with that k give the same ids in the same order. (The hook asks the
    engine for k plus the always-load count; the comparison is made at that same k.)"""
    prompt = "postgres major upgrade analyze"
    env = dict(os.environ, RECALL_TUI_SERVE="off")
    payload = {"session_id": "x1", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "prompt-submit", "--vault",
                        str(vault_copy), "--no-serve"], input=json.dumps(payload),
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    entry = read_agent_log(vault_copy, session="x1")[0]
    trace = entry.trace
    ids = [h.id for h in trace.hits]
    assert entry.injected_ids == [i for i in ids if i in entry.injected_ids] and ids
    r = subprocess.run([sys.executable, "-m", "recall_tui", "query", prompt, "--vault", str(vault_copy),
                        "--k", str(trace.k), "--now", trace.now, "--preset", entry.preset,
                        "--embedder", entry.embedder, "--json"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert [h["id"] for h in json.loads(r.stdout)["hits"]] == ids
    async with Client(_server(vault_copy, "--no-watch", "--preset", entry.preset,
                              "--embedder", entry.embedder)) as client:
        res = await client.call_tool("recall", {"query": prompt, "k": trace.k})
        assert not res.is_error, _text(res)
        assert [h["id"] for h in res.structured_content["hits"]] == ids


def test_a_lone_surrogate_in_an_mcp_query_is_recalled_and_logged(vault_copy):
    """A JS client may send `"\\ud800"` (valid JSON, not UTF-8); the SDK's parser refuses the
    line and never answers, so the server cleans such escapes from each stdin line first.
    The official Python client cannot send one, hence raw JSON-RPC lines here."""
    import queue
    import threading

    write_active(vault_copy, embedder="none")
    env = dict(os.environ, RECALL_TUI_SERVE="off")
    p = subprocess.Popen([sys.executable, "-m", "recall_tui", "mcp", "--vault", str(vault_copy), "--no-watch"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in p.stdout], daemon=True).start()

    def send(raw: str) -> None:
        p.stdin.write(raw.encode() + b"\n")
        p.stdin.flush()

    def answer(rid: int) -> dict:
        while True:
            msg = json.loads(lines.get(timeout=300))
            if msg.get("id") == rid:
                return msg

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        assert answer(1)["result"]["serverInfo"]["version"] == __version__
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall", '
             '"arguments": {"query": "postgres major upgrade \\ud800 analyze \\ud83d\\ude00", "k": 3}}}')
        res = answer(2)["result"]
    finally:
        p.stdin.close()
        p.wait(60)
    assert not res.get("isError"), res
    data = res["structuredContent"]
    assert "lesson-pg-upgrade-analyze" in [h["id"] for h in data["hits"]]
    rec = find_recall(vault_copy, data["trace_id"])
    assert rec.prompt == "postgres major upgrade \ufffd analyze \U0001f600"
    assert rec.injected_text == res["content"][0]["text"] == _wire(data)
