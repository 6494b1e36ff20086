"""`recall-tui mcp` over stdio, driven by the real `mcp` SDK client: list the tools, recall,
load a memory, an unknown id and a bad argument are tool errors with a clear text, and every
recall lands in the flight recorder."""

from __future__ import annotations

import json
import os
import sys

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.slow


def _server(vault) -> StdioServerParameters:
    env = dict(os.environ)
    env["RECALL_TUI_SERVE"] = "off"
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "recall_tui", "mcp", "--vault", str(vault), "--no-watch"],
                                 env=env)


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _data(result) -> dict:
    if result.structured_content:
        return result.structured_content
    return json.loads(_text(result))


async def test_mcp_tools_over_stdio(vault_copy):
    async with Client(_server(vault_copy)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"recall", "load_memory", "why_not"} <= set(tools)
        props = tools["recall"].input_schema["properties"]
        assert {"query", "k", "preset", "include_superseded", "as_of", "types"} <= set(props)

        res = await client.call_tool("recall", {"query": "postgres major upgrade analyze", "k": 3})
        assert not res.is_error, _text(res)
        data = _data(res)
        assert data["trace_id"] and len(data["hits"]) == 3
        assert {"id", "title", "summary", "score", "channels", "hop"} <= set(data["hits"][0])
        assert "lesson-pg-upgrade-analyze" in [h["id"] for h in data["hits"]]

        res = await client.call_tool("load_memory", {"id": "prod-safety-rules", "verbosity": "full"})
        assert not res.is_error, _text(res)
        assert _data(res)["frontmatter"]["title"]

        res = await client.call_tool("why_not", {"query": "postgres upgrade",
                                                 "id": "billing-db-postgres14"})
        assert not res.is_error, _text(res)
        why = _data(res)
        assert why["id"] == "billing-db-postgres14" and why["stage"]

        res = await client.call_tool("load_memory", {"id": "no-such-memory"})
        assert res.is_error and "no memory with id 'no-such-memory'" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "k": 0})
        assert res.is_error and "k must be between 1 and" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "k": "many"})
        assert res.is_error and "k" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "preset": "nope"})
        assert res.is_error and "unknown preset 'nope'" in _text(res)

        res = await client.call_tool("recall", {"query": "postgres", "as_of": "yesterday"})
        assert res.is_error and "as_of 'yesterday'" in _text(res)

    from recall_tui.agent.log import read_agent_log

    recs = read_agent_log(vault_copy, served_by="mcp")
    assert [r.event for r in recs] == ["why_not", "recall"]
    assert recs[1].id == data["trace_id"] and recs[1].prompt == "postgres major upgrade analyze"
    assert recs[1].trace is not None and recs[1].trace.query == "postgres major upgrade analyze"
