"""Ingest: ``POST /v1/ingest`` (upload files; they are parsed and indexed by a job), ``POST /v1/index`` (build
the index of what is already in the corpus), ``/v1/jobs`` (state, and progress as server-sent events).

Uploads are kept under ``<home>/uploads/<first 12 hex digits of the sha256>/<name>``, so a PDF can later be
shown page by page. A name with a path in it, a hidden name, or an ending the server does not accept
(``server.upload_types``) is refused by name; the request's size is bounded (``server.max_upload_bytes``: 413).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, File, Path, Request, UploadFile
from fastapi.responses import JSONResponse

from lit3r.server.errors import ApiError
from lit3r.server.jobs import Job, JobBusy
from lit3r.server.routes import runtime_of
from lit3r.server.runtime import Runtime
from lit3r.server.schemas import JOB_ID
from lit3r.server.sse import PING, SSE_RESPONSE, frame, stream

router = APIRouter(tags=["ingest"])
JobId = Annotated[str, Path(pattern=JOB_ID, description="A job id.")]
READ_BYTES = 1 << 20
NAME_CHARS = 200
POLL_S = 0.25
PING_EVERY = 60
"""Polls without news between keep-alive comments (15 s)."""


def name_problem(name: str, accepted: list[str]) -> str | None:
    """Why an uploaded file name is refused, or None."""
    if not name or len(name) > NAME_CHARS:
        return f"the file name must have 1 to {NAME_CHARS} characters"
    if any(c in name for c in "/\\\x00") or name in (".", ".."):
        return "the file name must not contain a path"
    if name.startswith("."):
        return "hidden files are not accepted"
    if not name.lower().endswith(tuple(accepted)):
        return f"unsupported file type; this server accepts {', '.join(accepted)}"
    return None


async def store_upload(upload: UploadFile, folder: FilePath, name: str) -> dict[str, Any]:
    """Write an upload under ``folder/<sha12>/<name>`` (written aside, then renamed) and describe it."""
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f".upload-{uuid.uuid4().hex}"
    digest = hashlib.sha256()
    size = 0
    try:
        with scratch.open("wb") as handle:
            while block := await upload.read(READ_BYTES):
                digest.update(block)
                size += len(block)
                handle.write(block)
        sha = digest.hexdigest()
        target = folder / sha[:12] / name
        target.parent.mkdir(exist_ok=True)
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
    return {"name": name, "size": size, "sha256": sha, "path": str(target.resolve())}


def _start(runtime: Runtime, kind: str, files: dict[str, str] | None = None) -> Job:
    try:
        return runtime.jobs.start(kind, files)  # type: ignore[arg-type]
    except JobBusy as exc:
        raise ApiError(409, "job_running", str(exc)) from exc


@router.post("/ingest", status_code=202)
async def ingest_files(
    request: Request,
    files: Annotated[list[UploadFile], File(description="Papers: PDF, Markdown, text, QASPER JSON, JSON lines.")],
) -> JSONResponse:
    """Upload papers and start a job that ingests them and rebuilds the index (follow it at
    `/v1/jobs/{job_id}/events`). Files refused by name are listed in `rejected`; 415 when every file is."""
    runtime = runtime_of(request)
    if runtime.jobs.running is not None:
        raise ApiError(409, "job_running", f"job {runtime.jobs.running.id} is still running; wait for it to finish")
    accepted = runtime.settings.server.upload_types
    stored, rejected = [], []
    for upload in files:
        name = upload.filename or ""
        problem = name_problem(name, accepted)
        if problem:
            rejected.append({"name": name, "problem": problem})
            continue
        stored.append(await store_upload(upload, runtime.uploads, name))
    if not stored:
        detail = "; ".join(f"{r['name'] or '(no name)'}: {r['problem']}" for r in rejected)
        raise ApiError(415, "unsupported_type", f"no file was accepted: {detail}")
    job = _start(runtime, "ingest", {s["path"]: s["name"] for s in stored})
    public = [{k: s[k] for k in ("name", "size", "sha256")} for s in stored]
    return JSONResponse({"job": job.snapshot(), "stored": public, "rejected": rejected}, status_code=202)


@router.post("/index", status_code=202)
async def build(request: Request) -> JSONResponse:
    """Start a job that brings the index up to date with the corpus (e.g. after `lit3r ingest`)."""
    job = _start(runtime_of(request), "index")
    return JSONResponse({"job": job.snapshot()}, status_code=202)


@router.get("/jobs")
async def list_jobs(request: Request) -> dict:
    """Recent jobs, newest first."""
    return {"jobs": [job.snapshot() for job in runtime_of(request).jobs.all()]}


def _job(request: Request, job_id: str) -> Job:
    job = runtime_of(request).jobs.get(job_id)
    if job is None:
        raise ApiError(404, "unknown_job", f"no job {job_id!r}")
    return job


@router.get("/jobs/{job_id}")
async def get_job(job_id: JobId, request: Request) -> dict:
    """A job's state, progress (files, chunks, papers, eta_s) and, once done, its report."""
    return _job(request, job_id).snapshot()


async def progress_frames(job: Job) -> AsyncIterator[bytes]:
    seen, marks, quiet = -1, 0, 0
    while True:
        snapshot = job.snapshot()
        for mark in job.marks(marks):  # every stage's start and end, even one that passed between two polls
            marks += 1
            if mark["seq"] > seen:
                seen = mark["seq"]
                yield frame("progress", mark)
        if snapshot["seq"] != seen:
            seen, quiet = snapshot["seq"], 0
            if snapshot["state"] == "done":
                yield frame("done", snapshot)
                return
            if snapshot["state"] == "failed":
                yield frame("error", {"error": snapshot["error"], "job": snapshot})
                return
            yield frame("progress", snapshot)
        else:
            quiet += 1
            if quiet % PING_EVERY == 0:
                yield PING
        await asyncio.sleep(POLL_S)


@router.get("/jobs/{job_id}/events", response_model=None, responses=SSE_RESPONSE)
async def job_events(job_id: JobId, request: Request):
    """A job's progress as server-sent events: `progress`... then `done` (with the report) or `error`."""
    return stream(progress_frames(_job(request, job_id)))
