"""The MCP server of a REAL Runwatch server (docs/MCP.md), spoken to by the Python `mcp` package over Streamable HTTP
with a project key: it lists the tools, and a run sent with this client is found, read, scored and waited for; an
unknown run is a tool error naming it; a key without one is refused before any MCP exchange."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from runwatch import Runwatch

from .conftest import RealServer

pytestmark = pytest.mark.integration


def mcp_client(real_server: RealServer, http: httpx2.AsyncClient) -> Client:
    return Client(streamable_http_client(f"{real_server.base_url}/mcp", http_client=http))


def http_client(key: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=120))


def answer(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def test_lists_the_tools_and_calls_them_on_a_run_sent_by_this_client(
    real_server: RealServer, client: Runwatch
) -> None:
    rid = f"py-mcp-{uuid.uuid4()}"
    with client.run("py-mcp-agent", input={"question": "hi"}, sdk_run_id=rid) as run:
        run.set_output("hello")
    real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")

    async with http_client(real_server.api_key) as http, mcp_client(real_server, http) as mcp:
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert {"search_runs", "get_run", "get_span", "wait_for_run", "get_scores", "post_score"} <= set(tools)
        assert tools["search_runs"].input_schema["properties"]["limit"]["maximum"] == 100

        found = answer(await mcp.call_tool("search_runs", {"filter": "agent:py-mcp-agent", "limit": 5}))
        assert rid in [r["sdk_run_id"] for r in found["runs"]]
        got = answer(await mcp.call_tool("get_run", {"sdk_run_id": rid}))
        assert got["run"]["status"] == "success"
        assert got["input"] == {"question": "hi"}
        assert got["output"] == "hello"

        scored = answer(await mcp.call_tool("post_score", {"sdk_run_id": rid, "name": "helpful", "value": True}))
        scores = answer(await mcp.call_tool("get_scores", {"sdk_run_id": rid}))
        got_scores = [(s["score_id"], s["name"], s["value"]) for s in scores["scores"]]
        assert got_scores == [(scored["score_id"], "helpful", True)]

        sql = "SELECT sdk_run_id, status FROM runs WHERE sdk_run_id = {rid:String}"
        rows = answer(await mcp.call_tool("run_sql", {"sql": sql, "params": {"rid": rid}}))
        assert [c["name"] for c in rows["columns"]] == ["sdk_run_id", "status"]
        assert rows["rows"] == [[rid, "success"]]
        refused = await mcp.call_tool("run_sql", {"sql": "SELECT name FROM system.tables"})
        assert refused.is_error

        missing = await mcp.call_tool("get_run", {"sdk_run_id": f"py-missing-{uuid.uuid4()}"})
        assert missing.is_error
        assert "not found" in missing.content[0].text
        too_many = await mcp.call_tool("search_runs", {"limit": 10_000})
        assert too_many.is_error
        assert "limit" in too_many.content[0].text

        quiet = answer(await mcp.call_tool("wait_for_run", {"filter": "agent:nobody-sends-this", "timeout_seconds": 1}))
        assert quiet["matched"] is False
        assert quiet["message"] == "no run matched within 1 s"


async def test_a_request_without_a_valid_key_is_refused_before_any_exchange(real_server: RealServer) -> None:
    async with http_client("ab" * 32) as http:
        res = await http.post(
            f"{real_server.base_url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert res.status_code == 401
    assert res.json()["error"]["code"] == "invalid_api_key"
