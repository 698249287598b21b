"""Jobs across a restart, refused uploads and a finished job's clock (RELIABILITY, server: items of the probe).

- A job the server was killed in is listed after a restart as ``interrupted`` and started again: its uploads
  go into the corpus and the index is built, without anyone starting a build by hand.
- Uploads that ingest refused are deleted once the job has named them (they used to stay in ``uploads/``).
- ``elapsed_s`` stops when the job ends.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from lit3r.corpus.store import CorpusStore
from lit3r.server.jobs import JOURNAL, Jobs
from lit3r.settings import Settings

PAPER = "---\nid: tidal\ntitle: Tidal Turbines\n---\n\n## Abstract\n\nThe array delivered 38 GWh in a year.\n"


def wait(job, seconds: float = 300.0) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        snapshot = job.snapshot()
        if snapshot["state"] in ("done", "failed"):
            return snapshot
        time.sleep(0.1)
    raise AssertionError(f"job {job.id} did not finish: {job.snapshot()}")


def upload(home: Path, name: str, data: bytes) -> str:
    path = home / "uploads" / "0123456789ab" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path.resolve())


def test_a_job_killed_mid_way_is_listed_as_interrupted_and_started_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stored = upload(home, "tidal.md", PAPER.encode())
    killed = {
        "job_id": "0badc0ffee00", "kind": "ingest", "state": "running", "created_at": "2026-12-01T10:00:00Z",
        "stage": "ingest", "elapsed_s": 4.2, "files": {stored: "tidal.md"},
    }  # fmt: skip
    (home / JOURNAL).write_text(json.dumps([killed]), encoding="utf-8")
    jobs = Jobs(Settings(home=home), on_built=lambda: None)
    listed = {j.id: j.snapshot() for j in jobs.all()}
    assert listed["0badc0ffee00"]["state"] == "interrupted"
    assert listed["0badc0ffee00"]["error"]["code"] == "interrupted"
    again = jobs.resume_interrupted()
    assert again is not None and again.snapshot()["resumes"] == "0badc0ffee00"
    done = wait(again)
    assert done["state"] == "done", done
    assert done["result"]["ingest"]["added"] == ["tidal.md"] and done["result"]["index"]["papers"] == 1
    with CorpusStore(home) as store:
        assert store.count_papers() == 1
    assert jobs.resume_interrupted() is None, "started again once"
    restarted = Jobs(Settings(home=home), on_built=lambda: None)  # the journal now says how both ended
    states = {j.id: j.snapshot()["state"] for j in restarted.all()}
    assert states == {"0badc0ffee00": "interrupted", again.id: "done"}
    assert restarted.resume_interrupted() is None


def test_refused_uploads_are_deleted_and_a_finished_jobs_clock_stops(tmp_path: Path) -> None:
    home = tmp_path / "home"
    binary = upload(home, "blob.txt", bytes(range(256)) * 64)
    jobs = Jobs(Settings(home=home), on_built=lambda: None)
    job = jobs.start("ingest", {binary: "blob.txt"})
    done = wait(job)
    assert done["state"] == "failed" and done["error"]["code"] == "empty_corpus"  # nothing went in
    assert not Path(binary).exists() and not Path(binary).parent.exists()
    first = job.snapshot()["elapsed_s"]
    time.sleep(0.3)
    assert job.snapshot()["elapsed_s"] == first
