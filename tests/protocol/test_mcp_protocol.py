"""The MCP server over real transports, driven by the SDK's own client: the installed ``lit3r mcp`` launched over
stdio on the demo corpus; ``lit3r mcp --transport http`` as a process; the ASGI app mounted in a host app behind
a bearer key; the Host-header guard; loopback only."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from lit3r.app.session import Session
from lit3r.cli import app
from lit3r.mcp import asgi_app

from fakes.corpus import QUESTION
from fakes.demo import DEMO_QUESTION
from fakes.mcp_client import cited_answer

LIT3R = str(Path(sys.executable).parent / "lit3r")
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LIT3R_PRESET": "default",  # offline even where the local model is installed
    "PATH": os.environ.get("PATH", ""),
}
KEY = "test-key-1234"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_the_installed_lit3r_mcp_over_stdio_answers_the_demo_question_with_quotes_from_its_chunks(demo_home):
    params = StdioServerParameters(command=LIT3R, args=["--home", str(demo_home), "mcp"], env=OFFLINE)
    progress: list[str] = []

    async def on_progress(_value, _total, message) -> None:
        progress.append(message)

    async def main():
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            bad = await client.call_tool("ask", {"question": 42})
            result = await cited_answer(client, DEMO_QUESTION, on_progress)
            return tools, bad, result

    tools, bad, result = anyio.run(main)
    assert {"ask", "search", "fetch", "get_chunk", "list_papers", "get_paper", "corpus_status", "get_trace"} <= set(
        tools
    )
    assert tools["ask"].input_schema["properties"]["question"]["type"] == "string" and tools["ask"].output_schema
    assert bad.is_error and "valid string" in bad.content[0].text  # an MCP error, and the server answered on
    assert result["candidate_papers"][0] == "demo-evidence-verification"
    assert progress and result["trace_id"] and (demo_home / "traces" / f"{result['trace_id']}.json").is_file()


@contextlib.contextmanager
def process(args: list[str], port: int) -> Iterator[subprocess.Popen]:
    """A server process until the block ends (stopped by its pid), once its port accepts connections."""
    proc = subprocess.Popen(args, env=OFFLINE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"the server exited: {proc.stderr.read()}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.3)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_lit3r_mcp_over_streamable_http_on_loopback(demo_home) -> None:
    port = free_port()
    with process([LIT3R, "--home", str(demo_home), "mcp", "--transport", "http", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/mcp"

        async def main():
            async with Client(url) as client:
                found = await client.call_tool("search", {"query": "unsupported claims", "mode": "bm25", "k": 2})
                status = await client.call_tool("corpus_status", {})
                return found, status

        found, status = anyio.run(main)
        assert found.structured_content["results"][0]["paper_id"] == "demo-evidence-verification"
        assert status.structured_content["papers"] == 7
        hostile = httpx.post(url, headers={"Host": "evil.example", "Content-Type": "application/json"}, json={})
        assert hostile.status_code == 421  # DNS-rebinding guard: only loopback Host headers


def test_http_refuses_to_bind_beyond_loopback_and_an_unindexed_home_is_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--home", str(tmp_path), "mcp", "--transport", "http", "--host", "0.0.0.0"])
    assert result.exit_code == 1 and "binds loopback only" in result.output and "lit3r serve" in result.output
    result = CliRunner().invoke(app, ["--home", str(tmp_path), "mcp"])
    assert result.exit_code == 1 and "run `lit3r index` first" in result.output


class BearerKey(BaseHTTPMiddleware):
    """What a host server does in front of the mounted app: a bearer key on every request."""

    async def dispatch(self, request, call_next):
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return JSONResponse({"error": {"code": "unauthorized", "message": "bearer key required"}}, 401)
        return await call_next(request)


@contextlib.contextmanager
def serving(asgi, port: int) -> Iterator[None]:
    """Uvicorn serving ``asgi`` on a loopback port in a thread, stopped when the block ends."""
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_the_asgi_app_mounts_under_mcp_behind_a_host_bearer_key(memory_index) -> None:
    settings = memory_index.settings.model_copy(update={"reranker": "lexical"})
    with Session(settings, index=memory_index) as session:
        mcp = asgi_app(session)

        @contextlib.asynccontextmanager
        async def lifespan(_app):
            async with mcp.lifespan():
                yield

        async def health(_request):
            return JSONResponse({"ok": True})

        host = Starlette(
            routes=[Route("/v1/health", health), Route("/mcp", endpoint=mcp, methods=["GET", "POST", "DELETE"])],
            middleware=[Middleware(BearerKey)],
            lifespan=lifespan,
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        with serving(host, port):
            denied = httpx.post(url, json={})

            async def main():
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
                async with http, Client(streamable_http_client(url, http_client=http)) as client:
                    return await cited_answer(client, QUESTION)

            result = anyio.run(main)
    assert denied.status_code == 401
    assert result["sufficient"] and result["candidate_papers"][0] == "sparse"
