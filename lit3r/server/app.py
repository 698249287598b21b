"""The application factory: routes under ``/v1``, the health check, the web UI, errors as JSON, keys, CORS,
body limits, and a place for sub-applications (``mounts``, e.g. an MCP server under ``/mcp``) behind the same
key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from lit3r import __version__
from lit3r.mcp.http import MCPApp
from lit3r.server.auth import KeyGuard
from lit3r.server.errors import install_error_handlers
from lit3r.server.limits import BodyLimit
from lit3r.server.mcp_mount import PATH as MCP_PATH
from lit3r.server.mcp_mount import mcp_app
from lit3r.server.routes import answers, check, corpus, ingest, openai, runtime_of, traces
from lit3r.server.runtime import Runtime
from lit3r.server.schemas import ERROR_RESPONSES
from lit3r.server.site_guard import SiteGuard
from lit3r.settings import Settings

STATIC = Path(__file__).parent / "static"
API = "/v1"


def create_app(
    settings: Settings,
    *,
    runtime: Runtime | None = None,
    mounts: Mapping[str, ASGIApp] | None = None,
    watch: bool = True,
) -> FastAPI:
    """The lit3r server as an ASGI application.

    Args:
        settings: All settings (``settings.server`` for keys and limits; ``settings.home`` for the corpus).
        runtime: The server state to use (default: a new one for ``settings``); started and closed by the
            application's lifespan.
        mounts: Sub-applications by path prefix (e.g. ``{"/mcp": mcp_app}``), guarded by the same key; a
            Starlette sub-application's own lifespan runs inside this one's.
        watch: Look for index generations built by other processes (``server.index_poll_s``).
    """
    runtime = runtime or Runtime(settings)
    mounts = dict(mounts or {})
    server = runtime.settings.server
    if server.mcp and MCP_PATH not in mounts:
        mounts[MCP_PATH] = mcp_app(runtime)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(runtime.start, watch=watch)
        try:
            async with AsyncExitStack() as stack:
                for sub in mounts.values():
                    if isinstance(sub, MCPApp):  # its sessions' task group (a Starlette router does not run it)
                        await stack.enter_async_context(sub.lifespan())
                        continue
                    context = getattr(getattr(sub, "router", None), "lifespan_context", None)
                    if context is not None:
                        await stack.enter_async_context(context(sub))
                yield
        finally:
            await run_in_threadpool(runtime.close)

    app = FastAPI(
        title="lit3r",
        version=__version__,
        summary="Answers over scientific papers with citations to passages that exist, and a trace of every step.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI would load its assets from a CDN; the document itself is at /openapi.json
        redoc_url=None,
    )
    app.state.runtime = runtime
    install_error_handlers(app)
    for module in (answers, corpus, traces, openai, check):
        app.include_router(module.router, prefix=API, responses=ERROR_RESPONSES)
    limits = {"max_files": server.max_upload_files, "max_fields": 10}
    app.include_router(ingest.router, prefix=API, responses=ERROR_RESPONSES, form_limits=limits)
    _meta_routes(app)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for path, sub in mounts.items():  # the MCP endpoint and any sub-application, behind the same key guard
        if isinstance(sub, MCPApp):
            app.add_route(path, sub, methods=["GET", "POST", "DELETE"], include_in_schema=False)
        else:
            app.mount(path, sub)
    app.add_middleware(BodyLimit, request_bytes=server.max_request_bytes, upload_bytes=server.max_upload_bytes)
    app.add_middleware(KeyGuard, keys=runtime.keys)
    app.add_middleware(
        SiteGuard,
        check_host=not runtime.keys or bool(server.allowed_hosts),
        allowed_hosts=server.allowed_hosts,
        cors_origins=server.cors_origins,
    )
    if server.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=server.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.openapi = lambda: _openapi(app, bool(runtime.keys))  # type: ignore[method-assign]
    return app


def _meta_routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["meta"])
    async def health(request: Request) -> dict:
        """Liveness and readiness (no key needed): whether an index is loaded."""
        runtime = runtime_of(request)
        return {"status": "ok", "version": __version__, "ready": runtime.holder.ready}

    @app.get(f"{API}/status", tags=["meta"], responses=ERROR_RESPONSES)
    async def status(request: Request) -> dict:
        """What the server answers from: papers and chunks of the index in use, answer runs, jobs, planners."""
        runtime = runtime_of(request)
        index: dict[str, Any] | None = None
        chat_model = False
        if runtime.holder.ready:
            with runtime.lease() as lease:
                session = lease.session
                chat_model = session.chat_model is not None
                index = {
                    "generation": lease.generation.name if lease.generation else None,
                    "papers": len(session.index.papers),
                    "chunks": len(session.index.chunks),
                }
        running = runtime.jobs.running
        return {
            "version": __version__,
            "index": index,
            "answers": {"running": runtime.slots.running, "limit": runtime.slots.limit},
            "job": running.snapshot() if running else None,
            "planners": ["fixed", "llm"] if chat_model else ["fixed"],
            "upload_types": runtime.settings.server.upload_types,
            "max_upload_bytes": runtime.settings.server.max_upload_bytes,
        }

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def _openapi(app: FastAPI, keyed: bool) -> dict[str, Any]:
    """The OpenAPI document, with the bearer scheme (required on every route but the health check when keyed)."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
        schema.setdefault("components", {})["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        if keyed:
            schema["security"] = [{"bearer": []}]
            schema["paths"]["/healthz"]["get"]["security"] = []
        app.openapi_schema = schema
    return app.openapi_schema
