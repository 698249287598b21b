"""The API of the real server (a ``lit3r serve`` subprocess over the demo corpus and a PDF), driven with httpx:
ask as JSON and as a stream, threads, search, papers, chunks, page images, traces, and the JSON errors."""

from __future__ import annotations

import io
import json
import time

import httpx
from PIL import Image

from lit3r.textutil import fold_space

from fakes.pdfs import QUESTION as PDF_QUESTION

DEMO_QUESTION = "How much did evidence verification reduce unsupported claims?"


def assert_citations_resolve(client: httpx.Client, document: dict) -> None:
    """Every citation names a chunk of the index whose text holds its quote."""
    assert document["citations"], document
    for citation in document["citations"]:
        chunk = client.get(f"/v1/chunks/{citation['chunk_id']}").json()
        assert chunk["paper_id"] == citation["paper_id"]
        assert fold_space(citation["quote"]) in fold_space(chunk["text"])


def sse_events(response: httpx.Response) -> list[tuple[float, str, dict]]:
    """(arrival time, event, data) of each event of a stream, read as it arrives."""
    events, name, data = [], "message", []
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if not line:
            if data:
                events.append((time.monotonic(), name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            data.append(line.partition(":")[2].strip())
    return events


def test_health_and_status(client: httpx.Client) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["ready"] is True
    status = client.get("/v1/status").json()
    assert status["index"]["papers"] == 8 and status["index"]["chunks"] > 50
    assert status["answers"]["limit"] >= 1 and status["planners"] == ["fixed"]


def test_ask_returns_the_ask_json_document(client: httpx.Client) -> None:
    document = client.post("/v1/ask", json={"question": DEMO_QUESTION}).json()
    expected = {"answer", "citations", "sufficient", "option", "table", "candidate_papers", "rounds", "trace_path"}
    assert expected | {"question", "trace_id"} <= set(document)
    assert document["sufficient"] is True and document["question"] == DEMO_QUESTION
    assert "[1]" in document["answer"]
    assert_citations_resolve(client, document)
    trace = client.get(f"/v1/traces/{document['trace_id']}").json()
    assert trace["answer"]["text"] == document["answer"]


def test_ask_stream_sends_steps_before_the_answer(client: httpx.Client) -> None:
    with client.stream("POST", "/v1/ask/stream", json={"question": PDF_QUESTION}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)
    names = [name for _, name, _ in events]
    assert names[-2:] == ["answer", "done"] and set(names[:-2]) == {"step"}
    steps = [data for _, name, data in events if name == "step"]
    assert {"node", "tool", "ranking", "verdict"} <= {s["type"] for s in steps}
    assert all(s["summary"] and s["name"] for s in steps)
    first_step_at, answer_at = events[0][0], events[-2][0]
    assert answer_at - first_step_at > 0.01, "steps must arrive while the answer is being made, not with it"
    answer, done = events[-2][2], events[-1][2]
    assert done["trace_id"] == answer["trace_id"]
    assert any(c["paper_id"] == "glacier-radar" for c in answer["citations"])
    assert_citations_resolve(client, answer)
    trace = client.get(f"/v1/traces/{done['trace_id']}").json()
    assert len(trace["events"]) == len(steps) == len(trace["timeline"])


def test_threads_keep_citation_numbers_and_rewrite_follow_ups(client: httpx.Client) -> None:
    created = client.post("/v1/threads", json={"title": "LocatorQA"})
    assert created.status_code == 201
    thread_id = created.json()["thread_id"]
    first = client.post(
        f"/v1/threads/{thread_id}/messages", json={"message": "How many questions does LocatorQA contain?"}
    ).json()
    follow = client.post(f"/v1/threads/{thread_id}/messages", json={"message": "How many are unanswerable?"}).json()
    assert follow["thread_id"] == thread_id and follow["message"] == "How many are unanswerable?"
    assert follow["question"] != follow["message"] and "LocatorQA" in follow["question"]
    numbers = {c["chunk_id"]: c["number"] for c in first["citations"]}
    for citation in follow["citations"]:
        if citation["chunk_id"] in numbers:
            assert citation["number"] == numbers[citation["chunk_id"]]
    history = client.get(f"/v1/threads/{thread_id}").json()
    assert history["title"] == "LocatorQA" and history["turns"] == 2
    assert [t["message"] for t in history["history"]] == [first["message"], follow["message"]]
    assert [t["trace_id"] for t in history["history"]] == [first["trace_id"], follow["trace_id"]]
    listed = client.get("/v1/threads").json()["threads"]
    assert listed[0]["thread_id"] == thread_id


def test_thread_stream_and_unknown_thread(client: httpx.Client) -> None:
    thread_id = client.post("/v1/threads").json()["thread_id"]
    with client.stream("POST", f"/v1/threads/{thread_id}/messages/stream", json={"message": DEMO_QUESTION}) as r:
        names = [name for _, name, _ in sse_events(r)]
    assert names[-2:] == ["answer", "done"] and "step" in names
    missing = client.post("/v1/threads/no-such-thread/messages", json={"message": "hello there"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_thread"


def test_search_papers_and_chunks(client: httpx.Client) -> None:
    hits = client.get("/v1/search", params={"q": "glacier surface velocity", "k": 3}).json()["hits"]
    assert len(hits) == 3 and hits[0]["paper_id"] == "glacier-radar"
    assert set(hits[0]) == {"chunk_id", "paper_id", "score", "type", "locator", "text"}
    within = client.get("/v1/search", params={"q": "velocity", "paper": "demo-benchmark", "mode": "bm25"}).json()
    assert {h["paper_id"] for h in within["hits"]} <= {"demo-benchmark"}
    papers = client.get("/v1/papers").json()["papers"]
    assert len(papers) == 8
    glacier = next(p for p in papers if p["paper_id"] == "glacier-radar")
    assert glacier["has_pdf"] is True and glacier["source_format"] == "pdf"
    detail = client.get("/v1/papers/demo-evidence-verification").json()
    assert detail["has_pdf"] is False and detail["abstract"]
    headings = [s["heading"] for s in detail["sections"]]
    assert "3 Results" in headings
    chunk_ids = [c["chunk_id"] for s in detail["sections"] for c in s["chunks"]]
    assert chunk_ids == sorted(chunk_ids)
    chunk = client.get(f"/v1/chunks/{chunk_ids[1]}").json()
    assert chunk["paper_title"] == detail["title"] and chunk["locator"]["section"]


def test_page_image_highlights_the_quote(client: httpx.Client, server) -> None:
    document = client.post("/v1/ask", json={"question": PDF_QUESTION, "papers": ["glacier-radar"]}).json()
    citation = next(c for c in document["citations"] if "182 metres per year" in c["quote"])
    passage = client.get(f"/v1/chunks/{citation['chunk_id']}/page", params={"quote": citation["quote"]}).json()
    assert passage["page"] == 2 and passage["found"] == "exact"
    assert fold_space(passage["matched_text"]) == fold_space(citation["quote"])
    assert len(passage["boxes"]) == 3  # the sentence runs over three lines
    for x0, top, x1, bottom in passage["boxes"]:
        assert 0 <= x0 < x1 <= passage["width"] and 0 <= top < bottom <= passage["height"]
    image = client.get(passage["image"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    png = Image.open(io.BytesIO(image.content))
    assert abs(png.width - passage["width"] * 110 / 72) <= 1  # 110 dpi
    plain = client.get(f"/v1/chunks/{citation['chunk_id']}/page.png", params={"quote": "Coherence dropped"})
    assert plain.status_code in (200, 422) and plain.content != image.content
    no_pdf = client.get("/v1/chunks/demo-benchmark::c0001/page")
    assert no_pdf.status_code == 404 and no_pdf.json()["error"]["code"] == "no_pdf"
    foreign = client.get(f"/v1/chunks/{citation['chunk_id']}/page", params={"quote": "text from elsewhere"})
    assert foreign.status_code == 422 and foreign.json()["error"]["code"] == "quote_not_in_chunk"


def test_traces_list_and_one(client: httpx.Client) -> None:
    document = client.post("/v1/ask", json={"question": "Which reranker budget is recommended?"}).json()
    traces = client.get("/v1/traces", params={"limit": 5}).json()["traces"]
    assert traces[0]["trace_id"] == document["trace_id"]
    assert traces[0]["question"] == document["question"] and traces[0]["citations"] == len(document["citations"])
    trace = client.get(f"/v1/traces/{document['trace_id']}").json()
    row = trace["timeline"][0]
    assert set(row) >= {"offset_ms", "round", "type", "name", "duration_ms", "summary"}
    assert client.get("/v1/traces/20990101T000000-00000000").status_code == 404


def test_errors_are_json_with_a_code_and_a_message(client: httpx.Client) -> None:
    cases = [
        (client.post("/v1/ask", content=b"{not json", headers={"content-type": "application/json"}), 422),
        (client.post("/v1/ask", json={}), 422),
        (client.post("/v1/ask", json={"question": ""}), 422),
        (client.post("/v1/ask", json={"question": "x", "surprise": 1}), 422),
        (client.post("/v1/ask", json={"question": "x", "papers": ["no-such-paper"]}), 404),
        (client.get("/v1/search", params={"q": "x", "k": 0}), 422),
        (client.get("/v1/papers/no-such-paper"), 404),
        (client.get("/v1/chunks/no::c0001"), 404),
        (client.get("/v1/nothing-here"), 404),
        (client.delete("/v1/ask"), 405),
        (client.get("/v1/threads", params={"offset": 10**22}), 422),  # found by the fuzz run: once a 500
        (client.post("/v1/ask/stream", json={"question": "x", "planner": "llm"}), 400),  # before the stream
    ]
    for response, status in cases:
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["code"] and error["message"] and "Traceback" not in response.text
    missing = client.post("/v1/ask", json={}).json()["error"]["message"]
    assert "body.question" in missing


def test_paths_with_dot_dot_are_refused(client: httpx.Client, server) -> None:
    """Raw request targets (httpx would normalise them): nothing outside the API or the static folder is read."""
    import http.client

    targets = [
        "/v1/traces/../../corpus.sqlite",
        "/v1/traces/..%2F..%2Fcorpus.sqlite",
        "/v1/traces/..",
        "/static/../server.sqlite",
        "/static/..%2F..%2Fsettings.py",
        "/static/%2E%2E/%2E%2E/corpus.sqlite",
        "/v1/papers/..%2F..%2Fetc%2Fpasswd",
        "/v1/chunks/..%2F..%2Fthreads.sqlite/page.png",
    ]
    for target in targets:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", target)
        response = connection.getresponse()
        body = response.read()
        connection.close()
        assert response.status in (400, 404, 422), (target, response.status)
        assert b"SQLite format" not in body and b"root:" not in body, target


def test_trace_diff_of_two_runs(client: httpx.Client) -> None:
    first = client.post("/v1/ask", json={"question": DEMO_QUESTION}).json()
    again = client.post("/v1/ask", json={"question": DEMO_QUESTION}).json()
    other = client.post("/v1/ask", json={"question": "Which reranker budget is recommended?"}).json()
    same = client.get(f"/v1/traces/{first['trace_id']}/diff/{again['trace_id']}").json()
    assert same["identical"] is True and same["first_difference"] is None
    assert same["a"]["trace_id"] == first["trace_id"] and same["b"]["trace_id"] == again["trace_id"]
    apart = client.get(f"/v1/traces/{first['trace_id']}/diff/{other['trace_id']}").json()
    assert apart["identical"] is False and apart["first_difference"]
    assert apart["answer"]["same"] is False and not apart["subqueries"]["same"]
    assert {"tokens", "time_ms", "rankings", "pool", "final_papers", "citations"} <= set(apart)
    missing = client.get(f"/v1/traces/{first['trace_id']}/diff/20990101T000000-00000000")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_trace"
