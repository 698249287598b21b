"""``lit3r serve``: the HTTP API, the OpenAI-compatible endpoint and the web UI (needs the ``serve`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lit3r.cli.app import app, err, fail, state


@app.command()
def serve(
    home: Annotated[Path | None, typer.Option(help="Corpus home folder (overrides the global --home).")] = None,
    host: Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1, loopback).")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port (default 8000).", min=0, max=65535)] = None,
    api_key_file: Annotated[
        Path | None, typer.Option(help="File of accepted API keys, one a line (required beyond loopback).")
    ] = None,
) -> None:
    """Serve the API (/v1, OpenAPI at /openapi.json), the OpenAI-compatible /v1/chat/completions and the web UI."""
    try:
        import uvicorn

        from lit3r.server.app import create_app
        from lit3r.server.auth import KeyFileError, check_exposure, load_keys
    except ImportError as exc:
        fail(f"lit3r serve needs the 'serve' extra: pip install -e '.[serve]' ({exc})")

    settings = state.settings
    updates = {k: v for k, v in (("host", host), ("port", port), ("api_key_file", api_key_file)) if v is not None}
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update=updates), **({"home": home} if home else {})}
    )
    if not settings.home.is_dir():
        what = "is a file, not a folder" if settings.home.exists() else "does not exist"
        fail(
            f"no lit3r home at {settings.home}: the folder {what} (check --home or LIT3R_HOME; `lit3r ingest` "
            "creates one, and an empty folder serves an empty corpus that uploads fill)",
            code=2,
        )
    try:
        keys = load_keys(settings.server)
        check_exposure(settings.server.host, keys)
    except KeyFileError as exc:
        fail(str(exc), code=2)
    except PermissionError as exc:
        fail(str(exc), code=2)
    where = f"http://{settings.server.host}:{settings.server.port}"
    access = f"{len(keys)} API key(s) required" if keys else "no API key (loopback only)"
    err.print(f"lit3r serve: {where}  (UI /, API /v1, OpenAPI /openapi.json; {access}; home {settings.home})")
    uvicorn.run(
        create_app(settings),
        host=settings.server.host,
        port=settings.server.port,
        log_level="info",
        server_header=False,
        timeout_graceful_shutdown=5,
    )
