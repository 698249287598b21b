"""Access and limits of the real server: keys (401 without or with a wrong one, the health check open), the
refusal to listen beyond loopback without a key, 413 for oversized uploads, type checks by name, 429 past the
answer-run limit, and an upload job whose progress streams, that names the bad file, and whose new papers are
answered from once it is done (the session swapped for the new index generation)."""

from __future__ import annotations

import json
import os
import subprocess
import threading

import httpx
import pytest

from fakes.lit3r_server import KEY, UPLOAD_LIMIT, lit3r_command
from fakes.pdfs import write_glacier_pdf

NEW_PAPER = """---
id: tidal-turbines
title: Tidal Stream Turbines in the Pentland Firth
year: 2025
---

## Abstract

We report the yearly energy yield of tidal stream turbines in the Pentland Firth.

## 1 Results

The four turbines of the array delivered 38 gigawatt hours in their first full year of operation.
"""


def test_keys_are_required_except_for_health(keyed_server) -> None:
    base = keyed_server.base_url
    assert httpx.get(f"{base}/healthz").status_code == 200
    for path in ("/v1/status", "/v1/papers", "/openapi.json", "/v1/models"):
        missing = httpx.get(f"{base}{path}")
        assert missing.status_code == 401 and missing.json()["error"]["code"] == "unauthorized", path
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = httpx.get(f"{base}{path}", headers={"Authorization": f"Bearer {KEY}x"})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_key", path
    malformed = httpx.post(f"{base}/v1/ask", content=b"{", headers={"content-type": "application/json"})
    assert malformed.status_code == 401, "the key is checked before the body is read"
    ok = httpx.get(f"{base}/v1/papers", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200
    schema = httpx.get(f"{base}/openapi.json", headers={"Authorization": f"Bearer {KEY}"}).json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert httpx.get(f"{base}/docs").status_code == 401  # guarded like every path but health and the page
    assert httpx.get(f"{base}/").status_code == 200  # the page's code holds no data


def test_refuses_to_listen_beyond_loopback_without_a_key(tmp_path) -> None:
    done = subprocess.run(
        [*lit3r_command(), "--home", str(tmp_path), "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "LIT3R_PRESET": "default"},
    )
    assert done.returncode == 2
    assert "refusing to listen on '0.0.0.0' without an API key" in done.stderr


def test_refuses_a_missing_home_like_every_read_only_command(tmp_path) -> None:
    missing = tmp_path / "typo"
    done = subprocess.run(
        [*lit3r_command(), "--home", str(missing), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    assert done.returncode == 2 and "the folder does not exist" in done.stderr
    assert not missing.exists(), "a mistyped --home is not created"


def test_oversized_upload_is_413(keyed: httpx.Client) -> None:
    big = b"x" * (UPLOAD_LIMIT + 10)
    response = keyed.post("/v1/ingest", files={"files": ("big.txt", big, "text/plain")})
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    large_json = keyed.post("/v1/ask", json={"question": "q", "options": ["y" * 400] * 26, "pad": "z" * (2 << 20)})
    assert large_json.status_code == 413


def test_uploads_refused_by_name(keyed: httpx.Client, keyed_server) -> None:
    files = [
        ("files", ("../../escape.md", b"# x", "text/markdown")),
        ("files", (".hidden.md", b"# x", "text/markdown")),
        ("files", ("tool.exe", b"MZ", "application/octet-stream")),
    ]
    response = keyed.post("/v1/ingest", files=files)
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_type"
    message = response.json()["error"]["message"]
    assert "../../escape.md: the file name must not contain a path" in message
    assert ".hidden.md: hidden files" in message and "tool.exe: unsupported file type" in message
    assert not (keyed_server.home.parent / "escape.md").exists() and not (keyed_server.home / "escape.md").exists()


def test_past_the_answer_limit_is_a_clean_429(keyed: httpx.Client) -> None:
    barrier = threading.Barrier(6)
    results: list[httpx.Response] = []

    def ask() -> None:
        barrier.wait()
        results.append(keyed.post("/v1/ask", json={"question": "Which reranker budget is recommended?"}))

    workers = [threading.Thread(target=ask) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    codes = sorted(r.status_code for r in results)
    assert set(codes) == {200, 429} and len(codes) == 6, codes
    busy = next(r for r in results if r.status_code == 429)
    assert busy.json()["error"]["code"] == "too_many_requests" and busy.headers["retry-after"] == "1"


def job_events(keyed: httpx.Client, job_id: str) -> list[tuple[str, dict]]:
    events, name = [], None
    with keyed.stream("GET", f"/v1/jobs/{job_id}/events") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line.partition(":")[2].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line.partition(":")[2])))
    return events


def test_upload_job_streams_progress_names_bad_files_and_swaps_the_index(keyed: httpx.Client, tmp_path) -> None:
    before = keyed.get("/v1/status").json()["index"]
    pdf = write_glacier_pdf(tmp_path / "glacier-copy.pdf").read_bytes()
    files = [
        ("files", ("tidal.md", NEW_PAPER.encode(), "text/markdown")),
        ("files", ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "application/pdf")),
        ("files", ("glacier-copy.pdf", pdf, "application/pdf")),
        ("files", ("notes.exe", b"MZ", "application/octet-stream")),
    ]
    started = keyed.post("/v1/ingest", files=files)
    assert started.status_code == 202, started.text
    body = started.json()
    assert [s["name"] for s in body["stored"]] == ["tidal.md", "broken.pdf", "glacier-copy.pdf"]
    assert body["rejected"] == [{"name": "notes.exe", "problem": pytest.approx(body["rejected"][0]["problem"])}]
    assert "/" not in json.dumps(body["stored"]).replace("\\/", "")  # no server paths in the reply
    events = job_events(keyed, body["job"]["job_id"])
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("progress") >= 2
    stages = {data["stage"] for name, data in events if name == "progress"}
    assert {"ingest", "embed chunks"} <= stages
    files_done = [data["files"]["done"] for name, data in events if data.get("files")]
    assert files_done == sorted(files_done) and files_done[-1] == 3
    report = events[-1][1]["result"]
    assert report["ingest"]["added"] == ["tidal.md", "glacier-copy.pdf"]
    assert [name for name, _ in report["ingest"]["failed"]] == ["broken.pdf"]
    assert report["index"]["papers"] == before["papers"] + 2
    after = keyed.get("/v1/status").json()["index"]
    assert after["generation"] != before["generation"] and after["papers"] == before["papers"] + 2
    hits = keyed.get("/v1/search", params={"q": "tidal turbines Pentland Firth", "k": 1}).json()["hits"]
    assert hits[0]["paper_id"] == "tidal-turbines"
    answer = keyed.post("/v1/ask", json={"question": "How much energy did the tidal turbines deliver?"}).json()
    assert any(c["paper_id"] == "tidal-turbines" for c in answer["citations"])
    copy = next(
        p
        for p in keyed.get("/v1/papers").json()["papers"]
        if p["title"].startswith("Radar") and p["paper_id"] != "glacier-radar"
    )
    chunk = keyed.get(f"/v1/papers/{copy['paper_id']}").json()["sections"][-1]["chunks"][0]
    passage = keyed.get(f"/v1/chunks/{chunk['chunk_id']}/page").json()
    assert passage["found"] == "exact" and passage["boxes"], "an uploaded PDF is kept and rendered"
    job = keyed.get(f"/v1/jobs/{body['job']['job_id']}").json()
    assert job["state"] == "done" and keyed.get("/v1/jobs").json()["jobs"][0]["job_id"] == job["job_id"]
