"""The MCP endpoint of ``lit3r serve``: streamable HTTP at /mcp behind the server's key, over its current session."""

from __future__ import annotations

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from fakes.demo import DEMO_QUESTION
from fakes.lit3r_server import KEY, ServeProcess
from fakes.mcp_client import cited_answer


def test_mcp_at_slash_mcp_answers_with_quotes_from_their_chunks_behind_the_key(keyed_server: ServeProcess) -> None:
    url = f"{keyed_server.base_url}/mcp"
    denied = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"}, timeout=30)
    wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer nope"}, timeout=30)

    async def main() -> tuple[set[str], dict, dict]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=120)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            result = await cited_answer(client, DEMO_QUESTION)
            status = (await client.call_tool("corpus_status", {})).structured_content
            return tools, result, status

    tools, result, status = anyio.run(main)
    assert denied.status_code == 401 and wrong.status_code == 401
    assert {"ask", "search", "fetch", "get_chunk", "list_papers", "get_paper", "corpus_status", "get_trace"} <= tools
    assert result["sufficient"] and result["trace_id"]
    api = httpx.get(f"{keyed_server.base_url}/v1/status", headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    assert status["papers"] == api.json()["index"]["papers"]  # the same session as the HTTP API


def test_mcp_refuses_a_foreign_host_header(server: ServeProcess) -> None:
    response = httpx.post(f"{server.base_url}/mcp", json={}, headers={"Host": "evil.example"}, timeout=30)
    assert response.status_code == 421
