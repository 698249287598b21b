"""Ingest and index jobs: uploaded files parsed into the corpus, then the index built, in a background thread.

One job runs at a time. Its progress is a snapshot clients poll or stream: the stage (``ingest``,
``embed chunks``, ``embed papers``, ``reload``), files parsed and texts embedded so far with their totals (the
texts that need a vector: those of earlier builds are reused), and the seconds left in the current stage
(``eta_s``, from that stage's rate so far; None until something is done). A snapshot is also kept as each
stage starts and ends (:meth:`Job.marks`), so a stream shows every stage however quickly it passed. A file
that cannot be ingested is named in the report with its problem and the rest go in, as ``lit3r ingest`` does.
When the build has published a new generation the job asks the server to switch to it (``on_built``), and is
done once requests are answered from the new index.

Jobs are recorded in ``<home>/jobs.json`` as they start and end, so a restarted server still lists them. A job
the server was stopped in (killed while parsing or embedding) is listed as ``interrupted`` and started again
(:meth:`Jobs.resume_interrupted`): its uploads are parsed again where they did not go in, and the index is
brought up to date with the corpus. Uploads that ingest refused (binary, corrupt, over a limit) are deleted
once the job has named them: only files the corpus reads from stay under ``<home>/uploads``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import EmptyCorpusError, build_index
from lit3r.server.catalog import now
from lit3r.settings import Settings

log = logging.getLogger(__name__)

JobKind = Literal["ingest", "index"]
JobState = Literal["queued", "running", "done", "failed", "interrupted"]
KEEP_JOBS = 20
JOURNAL = "jobs.json"
"""The record of the last :data:`KEEP_JOBS` jobs in the home folder."""
PAGES_STAGE = "parse pages"
"""The stage of PDF pages read during ingest (its total counted from the PDFs' page trees before parsing)."""


@dataclass
class Stage:
    name: str
    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def eta_s(self) -> float | None:
        if self.done <= 0 or self.total <= 0:
            return None
        elapsed = time.monotonic() - self.started
        return round(elapsed / self.done * max(self.total - self.done, 0), 1)


class Job:
    """One ingest (files, then the index) or index-only run, with a progress snapshot that is safe to read."""

    def __init__(self, kind: JobKind, files: dict[str, str]) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.kind = kind
        self.files = files  # stored path -> name as uploaded
        self.state: JobState = "queued"
        self.created_at = now()
        self.finished_at: str | None = None
        self.seq = 0
        self.result: dict[str, Any] = {}
        self.error: dict[str, str] | None = None
        self.stages: dict[str, Stage] = {}
        self.stage: str | None = None
        self.current_file: str | None = None
        self._marks: list[dict[str, Any]] = []
        self._started = time.monotonic()
        self._elapsed_s: float | None = None  # fixed when the job ends
        self.resumes: str | None = None  # the interrupted job this one starts again
        self._lock = threading.Lock()

    @classmethod
    def restore(cls, record: dict[str, Any]) -> Job:
        """A job of an earlier server from its journal record (``running`` or ``queued`` there: ``interrupted``)."""
        job = cls(record["kind"], dict(record.get("files") or {}))
        job.id, job.created_at, job.finished_at = record["job_id"], record["created_at"], record.get("finished_at")
        job.result, job.error = record.get("result") or {}, record.get("error")
        job.stage, job.resumes = record.get("stage"), record.get("resumes")
        job._elapsed_s = float(record.get("elapsed_s") or 0.0)
        job.state = record["state"]
        if job.state in ("queued", "running"):
            job.state = "interrupted"
            job.error = {
                "code": "interrupted",
                "message": f"the server stopped during this job (stage {job.stage or 'queued'}); "
                "it is started again when the server starts",
            }
        return job

    def advance(self, stage: str, done: int, total: int) -> None:
        """``done`` more units of ``stage`` (of ``total``) are finished."""
        with self._lock:
            new = stage not in self.stages
            if new:
                self.stages[stage] = Stage(stage, total)
            entry = self.stages[stage]
            finished = entry.done < total <= entry.done + done
            entry.total, entry.done = total, min(entry.done + done, total)
            self.stage = stage
            self.seq += 1
            if new or finished:
                self._marks.append(self._snapshot())

    def enter(self, stage: str) -> None:
        with self._lock:
            self.stage = stage
            self.seq += 1
            self._marks.append(self._snapshot())

    def marks(self, since: int) -> list[dict[str, Any]]:
        """Snapshots taken as each stage started and ended, from the ``since``-th on: a client that polls
        sees every stage even when one passes between two polls."""
        with self._lock:
            return list(self._marks[since:])

    def finish(self, state: JobState, *, result: dict[str, Any] | None = None, error: dict[str, str] | None = None):
        with self._lock:
            self.state, self.seq = state, self.seq + 1
            if state != "running":
                self.finished_at = now()
                self._elapsed_s = time.monotonic() - self._started
            self.result = result or self.result
            self.error = error

    def snapshot(self) -> dict[str, Any]:
        """The job as JSON-ready data."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, Any]:
        stage = self.stages.get(self.stage or "")
        pages = self.stages.get(PAGES_STAGE)
        if self.stage == "ingest" and pages is not None and pages.done < pages.total:
            stage = pages  # while PDFs are read, the time left follows their pages, not the files
        return {
            "job_id": self.id,
            "kind": self.kind,
            "state": self.state,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "elapsed_s": round(self._elapsed_s if self._elapsed_s is not None else time.monotonic() - self._started, 1),
            "stage": self.stage,
            "current_file": self.current_file,
            "files": _counts(self.stages.get("ingest")),
            "pages": _counts(self.stages.get(PAGES_STAGE)),
            "chunks": _counts(self.stages.get("embed chunks")),
            "papers": _counts(self.stages.get("embed papers")),
            "eta_s": stage.eta_s() if stage else None,
            "uploads": sorted(self.files.values()),
            "result": self.result or None,
            "error": self.error,
            "seq": self.seq,
            "resumes": self.resumes,
        }

    def record(self) -> dict[str, Any]:
        """What the journal keeps: the snapshot with the stored paths of the uploads."""
        with self._lock:
            return {**self._snapshot(), "files": dict(self.files)}


def _pages_in(paths: list[Path]) -> int:
    """Pages of the PDFs among ``paths`` (from their page trees; a file that cannot be opened counts 0)."""
    from lit3r.corpus.parsers import ParseError
    from lit3r.corpus.parsers.pdf_backends import BackendError
    from lit3r.corpus.parsers.pdf_pdfium import page_count

    total = 0
    for path in paths:
        if path.suffix.lower() == ".pdf":
            try:
                total += page_count(path)
            except (BackendError, ParseError, OSError):
                continue
    return total


def _counts(stage: Stage | None) -> dict[str, int] | None:
    return {"done": stage.done, "total": stage.total} if stage else None


class JobBusy(RuntimeError):
    """A job is running already."""


class Jobs:
    """Starts jobs one at a time and keeps the last :data:`KEEP_JOBS`."""

    def __init__(self, settings: Settings, on_built: Callable[[], object]) -> None:
        self.settings = settings
        self.on_built = on_built
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._running: Job | None = None
        self._journal_lock = threading.Lock()
        self.interrupted: list[Job] = []
        for record in self._read_journal():
            job = Job.restore(record)
            self._jobs[job.id] = job
        started_again = {job.resumes for job in self._jobs.values()}
        self.interrupted = [j for j in self._jobs.values() if j.state == "interrupted" and j.id not in started_again]
        if self.interrupted:
            self._write_journal()

    @property
    def journal(self) -> Path:
        return self.settings.home / JOURNAL

    def _read_journal(self) -> list[dict[str, Any]]:
        try:
            records = json.loads(self.journal.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s): the jobs of earlier runs are not listed", self.journal, exc)
            return []
        return [r for r in records if isinstance(r, dict) and {"job_id", "kind", "state", "created_at"} <= r.keys()]

    def _write_journal(self) -> None:
        with self._lock:
            records = [job.record() for job in self._jobs.values()]
        with self._journal_lock:
            try:
                self.journal.parent.mkdir(parents=True, exist_ok=True)
                scratch = self.journal.with_suffix(".json.tmp")
                scratch.write_text(json.dumps(records, indent=1), encoding="utf-8")
                os.replace(scratch, self.journal)
            except OSError as exc:
                log.warning("cannot write %s (%s): a restart will not list these jobs", self.journal, exc)

    def resume_interrupted(self) -> Job | None:
        """Start again the newest job an earlier server was stopped in (its uploads that are still on disk)."""
        if not self.interrupted:
            return None
        last = self.interrupted[-1]
        self.interrupted = []
        files = {path: name for path, name in last.files.items() if Path(path).is_file()}
        job = self.start("ingest" if files else "index", files, resumes=last.id)
        log.info("job %s starts again interrupted job %s", job.id, last.id)
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        with self._lock:
            return list(reversed(self._jobs.values()))

    @property
    def running(self) -> Job | None:
        with self._lock:
            return self._running

    def start(self, kind: JobKind, files: dict[str, str] | None = None, *, resumes: str | None = None) -> Job:
        """Start a job in a thread; raises :class:`JobBusy` while another runs."""
        job = Job(kind, files or {})
        job.resumes = resumes
        with self._lock:
            if self._running is not None:
                raise JobBusy(f"job {self._running.id} is still running; wait for it to finish")
            self._running = job
            self._jobs[job.id] = job
            while len(self._jobs) > KEEP_JOBS:
                self._jobs.pop(next(iter(self._jobs)))
        self._write_journal()
        threading.Thread(target=self._run, args=(job,), name=f"lit3r-job-{job.id}", daemon=True).start()
        return job

    def _run(self, job: Job) -> None:
        job.finish("running")
        self._write_journal()
        try:
            result = self._work(job)
        except EmptyCorpusError as exc:
            job.finish("failed", error={"code": "empty_corpus", "message": str(exc)})
        except Exception as exc:  # a job's failure is reported to its clients, and logged with its traceback
            log.exception("job %s failed", job.id)
            job.finish("failed", error={"code": "job_failed", "message": f"{type(exc).__name__}: {exc}"})
        else:
            job.finish("done", result=result)
        finally:
            with self._lock:
                self._running = None
            self._write_journal()

    def _work(self, job: Job) -> dict[str, Any]:
        result: dict[str, Any] = {}
        with CorpusStore(self.settings.home) as store:
            if job.files:
                job.advance("ingest", 0, len(job.files))
                pages_total = _pages_in([Path(p) for p in job.files])
                if pages_total:
                    job.advance(PAGES_STAGE, 0, pages_total)

                def parsed(path: Path) -> None:
                    job.current_file = job.files.get(str(path.resolve()), path.name)
                    job.advance("ingest", 1, len(job.files))

                def page_read(path: str, _done: int, _total: int) -> None:
                    job.current_file = job.files.get(path, Path(path).name)
                    job.advance(PAGES_STAGE, 1, pages_total)

                report = ingest(
                    [Path(p) for p in job.files],
                    store,
                    on_file=parsed,
                    on_page=page_read if pages_total else None,
                    limits=self.settings.limits,
                    chunker=self.settings.chunker,
                )
                self._delete_refused(job, [p for p, _ in report.failed])
                result["ingest"] = {
                    "added": [self._name(job, p) for p in report.added],
                    "unchanged": [self._name(job, p) for p in report.unchanged],
                    "failed": [[self._name(job, p), problem] for p, problem in report.failed],
                    "papers_added": report.papers_added,
                    "renamed": [list(pair) for pair in report.renamed],
                    "references_resolved": report.references_resolved,
                    "papers_in_corpus": store.count_papers(),
                }
            job.current_file = None
            build = build_index(self.settings, store, progress=job.advance)
        result["index"] = {
            "up_to_date": build.up_to_date,
            "papers": build.papers,
            "chunks": build.chunks,
            "chunks_embedded": build.chunks_embedded,
            "chunks_reused": build.chunks_reused,
            "generation": build.generation.name,
        }
        job.enter("reload")
        self.on_built()
        return result

    @staticmethod
    def _delete_refused(job: Job, failed: list[str]) -> None:
        """Delete the uploads ingest refused (named in the report; nothing reads them again)."""
        for path in failed:
            if path not in job.files:
                continue
            stored = Path(path)
            stored.unlink(missing_ok=True)
            try:
                stored.parent.rmdir()  # its <sha12> folder, when nothing else is in it
            except OSError:
                pass

    @staticmethod
    def _name(job: Job, path: str) -> str:
        """The name a file was uploaded as (stored paths stay on the server)."""
        return job.files.get(path, Path(path).name)
