"""``lit3r mcp``: the MCP server over stdio (default) or streamable HTTP on loopback; ``lit3r mcp config``."""

from __future__ import annotations

import ipaddress
import json
from typing import Annotated, Literal

import typer

from lit3r.cli.app import app, err, fail, state

mcp_app = typer.Typer(
    invoke_without_command=True,
    help="Serve the corpus to MCP clients (Claude Desktop, IDEs, agents): tools ask, search, fetch, get_chunk, "
    "list_papers, get_paper, corpus_status, get_trace; resources lit3r://papers/{id}, lit3r://chunks/{id}.",
)
app.add_typer(mcp_app, name="mcp")
Transport = Literal["stdio", "http"]
DEFAULT_PORT = 8765


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    transport: Annotated[str, typer.Option(help="'stdio' (a host launches it) or 'http' (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP: the loopback address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: the port; the endpoint is http://HOST:PORT/mcp.")] = DEFAULT_PORT,
    allow_host: Annotated[
        list[str] | None, typer.Option(help="HTTP: another accepted Host header, e.g. a proxy's name (repeat).")
    ] = None,
    max_seconds: Annotated[float | None, typer.Option(help="Time budget of each ask, in seconds.")] = None,
) -> None:
    """Serve the corpus over MCP until the client disconnects (stdio) or Ctrl-C (http)."""
    if ctx.invoked_subcommand is not None:
        return
    from lit3r.app.session import Session

    if transport not in ("stdio", "http"):
        fail(f"unknown transport {transport!r}: use stdio or http")
    if transport == "http" and not _loopback(host):
        fail(
            f"lit3r mcp serves without a key, so it binds loopback only, not {host!r}; to serve a network, use "
            "lit3r serve, which mounts this endpoint at /mcp behind its key"
        )
    with Session(state.settings) as session:  # app errors end in one line (lit3r.cli.app.Lit3rGroup)
        if transport == "stdio":
            from lit3r.mcp.server import build_server

            build_server(session, max_seconds=max_seconds).run("stdio")
        else:
            from lit3r.mcp.http import serve_http

            err.print(f"lit3r MCP endpoint: http://{host}:{port}/mcp (Ctrl-C stops)", highlight=False)
            serve_http(session, host=host, port=port, allowed_hosts=allow_host, max_seconds=max_seconds)


@mcp_app.command("config")
def config(
    client: Annotated[
        str, typer.Option(help="claude-desktop, claude-code, vscode, cursor, or all (one document per client).")
    ] = "all",
    transport: Annotated[str, typer.Option(help="'stdio' (the host starts lit3r) or 'http' (a running server).")] = (
        "stdio"
    ),
    port: Annotated[int, typer.Option(help="HTTP: the port of `lit3r mcp --transport http`.")] = DEFAULT_PORT,
) -> None:
    """Print ready MCP client configurations (absolute command, arguments and environment) for this home."""
    from lit3r.mcp.config import CLIENTS, client_config

    chosen = list(CLIENTS) if client == "all" else [client]
    unknown = [c for c in chosen if c not in CLIENTS]
    if unknown or transport not in ("stdio", "http"):
        fail(
            f"unknown client {unknown[0]!r}: use {', '.join(CLIENTS)} or all"
            if unknown
            else f"unknown transport {transport!r}: use stdio or http"
        )
    url = f"http://127.0.0.1:{port}/mcp" if transport == "http" else None
    documents = {}
    for name in chosen:
        if url and name == "claude-desktop":
            continue  # stdio only
        documents[name] = {
            "file": CLIENTS[name],  # type: ignore[index]
            "config": client_config(name, state.settings.home, preset=state.preset, url=url),  # type: ignore[arg-type]
        }
    if not documents:
        fail("Claude Desktop starts local servers over stdio only: use --transport stdio")
    print(json.dumps(documents[chosen[0]]["config"] if len(chosen) == 1 else documents, indent=2))
