"""The server's parts without a server process: the session swap, the answer-run limit (a deterministic 429 with a
run held open), body limits on a chunked upload, keys, the loopback rule, locating a quote on a PDF page, the
OpenAI conversation shapes, the catalogue and the server settings."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from lit3r.app.documents import answer_document
from lit3r.app.session import Reply
from lit3r.corpus.parsers import SUPPORTED_SUFFIXES
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.models import Answer
from lit3r.server import pages
from lit3r.server.app import create_app
from lit3r.server.auth import KeyFileError, check_exposure, is_loopback, key_matches, load_keys, read_key_file
from lit3r.server.catalog import Catalog, fingerprint
from lit3r.server.errors import ApiError
from lit3r.server.holder import AnswerSlots, Busy, NoSession, SessionHolder
from lit3r.server.openai_compat import planner_for, sources_block, split_conversation
from lit3r.server.runtime import Runtime
from lit3r.server.schemas import ChatMessage
from lit3r.settings import UPLOAD_SUFFIXES, ServerSettings, Settings

from fakes.pdfs import write_glacier_pdf

SENTENCE = (
    "The median surface velocity of the Aletsch glacier tongue was 182 metres per year, about a fifth faster than "
    "the stake measurements of the previous decade suggested"
)


class Closable:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_swap_closes_the_old_session_when_its_last_run_ends() -> None:
    holder = SessionHolder()
    with pytest.raises(NoSession):
        holder.lease()
    old, new = Closable("old"), Closable("new")
    holder.replace(old, Path("gen-0001"))
    running = holder.lease()
    holder.replace(new, Path("gen-0002"))
    assert not old.closed, "a run in flight keeps its session"
    with holder.lease() as lease:
        assert lease.session is new and holder.generation == Path("gen-0002")
    running.release()
    running.release()  # idempotent
    assert old.closed and not new.closed
    holder.close()
    assert new.closed and not holder.ready


def test_answer_slots_refuse_past_the_limit() -> None:
    slots = AnswerSlots(2)
    slots.take()
    slots.take()
    with pytest.raises(Busy, match="limit is 2"):
        slots.take()
    slots.give_back()
    slots.take()
    assert slots.running == 2


class BlockingSession:
    """Answers only when released, so a run can be held open while another request arrives."""

    chat_model = None

    def __init__(self, traces: Path) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.traces = traces
        self.index = type("Index", (), {"papers": {}})()

    def check_request(self, planner: str | None = None, papers: object = None) -> None:
        pass

    def reply(self, question: str, **_options: object) -> Reply:
        self.started.set()
        assert self.release.wait(30)
        path = self.traces / "20260101T000000-0123abcd.json"
        answer = Answer(question=question, text="No evidence.", sufficient=False, trace_path=str(path))
        return Reply(answer, answer_document(answer, {}))

    def close(self) -> None:
        pass


@pytest.fixture
def held_app(tmp_path: Path):
    settings = Settings(home=tmp_path / "home")
    settings.server.max_concurrent_answers = 1
    settings.server.max_request_bytes = 1000
    runtime = Runtime(settings)
    runtime.catalog = Catalog(settings.home)
    session = BlockingSession(tmp_path)
    runtime.holder.replace(session, None)
    yield TestClient(create_app(settings, runtime=runtime), base_url="http://127.0.0.1"), session
    session.release.set()
    runtime.close()


def test_a_second_run_past_the_limit_is_429_and_the_first_still_answers(held_app) -> None:
    client, session = held_app
    first: dict = {}
    worker = threading.Thread(target=lambda: first.update(r=client.post("/v1/ask", json={"question": "one"})))
    worker.start()
    assert session.started.wait(30)
    busy = client.post("/v1/ask", json={"question": "two"})
    assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
    assert busy.json()["error"]["code"] == "too_many_requests"
    session.release.set()
    worker.join(30)
    assert first["r"].status_code == 200 and first["r"].json()["trace_id"] == "20260101T000000-0123abcd"
    again = client.post("/v1/ask", json={"question": "three"})
    assert again.status_code == 200, "the slot was given back"


def test_a_chunked_body_past_the_limit_is_a_json_413(held_app) -> None:
    client, _ = held_app

    def chunks():
        for _ in range(20):
            yield b'{"question": "' + b"x" * 100

    response = client.post("/v1/ask", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    declared = client.post("/v1/ask", content=b"{" + b" " * 2000 + b"}", headers={"content-type": "application/json"})
    assert declared.status_code == 413


def test_no_index_is_a_409_that_says_what_to_do(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "empty")
    runtime = Runtime(settings)
    runtime.catalog = Catalog(settings.home)
    client = TestClient(create_app(settings, runtime=runtime), base_url="http://127.0.0.1")
    response = client.post("/v1/ask", json={"question": "anything?"})
    assert response.status_code == 409 and response.json()["error"]["code"] == "no_index"
    assert "POST /v1/ingest" in response.json()["error"]["message"]
    assert runtime.slots.running == 0
    assert client.get("/healthz").json()["ready"] is False
    assert client.get("/v1/status").json()["index"] is None
    runtime.close()


def test_keys(tmp_path: Path) -> None:
    assert key_matches("secret", ["other", "secret"]) and not key_matches("secre", ["secret"])
    assert not key_matches("", ["secret"])
    keys = tmp_path / "keys"
    keys.write_text("# comment\n\n  k1  \nk2\n", encoding="utf-8")
    assert read_key_file(keys) == ["k1", "k2"]
    assert load_keys(ServerSettings(api_keys=["k0"], api_key_file=keys)) == ["k0", "k1", "k2"]
    (tmp_path / "empty").write_text("# none\n", encoding="utf-8")
    with pytest.raises(KeyFileError, match="holds no key"):
        read_key_file(tmp_path / "empty")
    with pytest.raises(KeyFileError, match="cannot read"):
        read_key_file(tmp_path / "missing")


def test_loopback_rule() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.4", "example.org"))
    check_exposure("127.0.0.1", [])
    check_exposure("0.0.0.0", ["k" * 16])
    with pytest.raises(PermissionError, match="without an API key"):
        check_exposure("0.0.0.0", [])


@pytest.fixture(scope="module")
def glacier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_glacier_pdf(tmp_path_factory.mktemp("pdf") / "glacier.pdf")


def test_a_quote_is_found_across_lines_and_pages(glacier: Path) -> None:
    sha = file_sha256(glacier)
    exact = pages.locate(str(glacier), sha, 2, SENTENCE)
    assert exact.found == "exact" and exact.page == 2 and len(exact.boxes) == 2
    assert exact.matched_text == SENTENCE
    later = pages.locate(str(glacier), sha, 1, "Coherence dropped below 0.3 on fresh snow")
    assert later.found == "exact" and later.page == 2, "the pages after the chunk's page are searched too"
    partial = pages.locate(str(glacier), sha, 2, SENTENCE + " and a sentence this paper never wrote down.")
    assert partial.found == "partial" and partial.matched_text.startswith("The median surface velocity")
    missing = pages.locate(str(glacier), sha, 1, "nothing like this is printed anywhere")
    assert missing.found == "none" and missing.boxes == [] and missing.page == 1
    with pytest.raises(pages.PdfUnavailable, match="3 does not exist"):
        pages.locate(str(glacier), sha, 3, SENTENCE)
    png = pages.render(str(glacier), sha, 2, tuple(exact.boxes), 72)
    assert png.startswith(b"\x89PNG")


def test_fold_ignores_space_case_hyphens_and_pipes() -> None:
    assert pages.fold("Retrie-\nval | Recall")[0] == pages.fold("retrieval recall")[0] == "retrievalrecall"
    assert pages.fold("ﬁne")[0] == "fine"


def test_the_pdf_is_used_only_while_its_hash_matches(tmp_path: Path, glacier: Path) -> None:
    home = tmp_path / "home"
    copy = tmp_path / "paper.pdf"
    copy.write_bytes(glacier.read_bytes())
    with CorpusStore(home) as store:
        store.replace_source(str(copy), file_sha256(copy), [])
    assert pages.pdf_path(str(copy), home) == copy
    copy.write_bytes(glacier.read_bytes() + b"\n% changed")
    with pytest.raises(pages.PdfUnavailable, match="changed since it was ingested") as changed:
        pages.pdf_path(str(copy), home)
    assert changed.value.code == "pdf_changed"
    copy.unlink()
    with pytest.raises(pages.PdfUnavailable, match="is gone"):
        pages.pdf_path(str(copy), home)
    with pytest.raises(pages.PdfUnavailable) as other:
        pages.pdf_path(str(tmp_path / "paper.md"), home)
    assert other.value.code == "no_pdf"


def test_conversations_and_sources() -> None:
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="  first   question "),
        ChatMessage(role="assistant", content="an answer [1]"),
        ChatMessage(role="user", content=[{"type": "text", "text": "and"}, {"type": "text", "text": "then?"}]),
    ]
    prior, question = split_conversation(messages)
    assert prior == [("user", "first question"), ("assistant", "an answer [1]")] and question == "and then?"
    with pytest.raises(ApiError, match="last message"):
        split_conversation(messages[:3])
    assert planner_for("lit3r", False) == "fixed" and planner_for("lit3r-llm", True) == "llm"
    with pytest.raises(ApiError, match="offers lit3r$"):
        planner_for("lit3r-llm", False)
    citation = {"number": 1, "paper_id": "p", "paper_title": "A Paper", "locator": {"page": 2, "section": "2 Results"}}
    block = sources_block({"citations": [{**citation, "quote": "q " * 200}]})
    assert block.startswith("Sources:\n[1] A Paper (p), p. 2 · § 2 Results: “q q") and block.endswith("…”")


def test_catalogue(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path)
    assert fingerprint([("user", "a  b")]) == fingerprint([("user", " a b ")]) != fingerprint([("user", "a")])
    catalog.add_thread("t1")
    catalog.add_turn("t1", 0, "What is BM25?", "20260101T000000-00000000")
    catalog.add_turn("t2", 0, "Another thread", "20260101T000001-00000000")
    assert catalog.thread("t1")["title"] == "What is BM25?" and catalog.thread("t1")["turns"] == 1
    assert [t["id"] for t in catalog.threads()] == ["t2", "t1"]
    catalog.remember_conversation("k", "t1")
    assert catalog.conversation("k") == "t1" and catalog.conversation("other") is None
    catalog.close()


def test_server_settings() -> None:
    assert set(UPLOAD_SUFFIXES) == set(SUPPORTED_SUFFIXES), "uploads accept what ingest reads"
    assert ServerSettings(upload_types=[".PDF"]).upload_types == [".pdf"]
    with pytest.raises(ValueError, match="lit3r ingests only"):
        ServerSettings(upload_types=[".exe"])
    settings = Settings(server={"host": "0.0.0.0", "api_keys": ["s3cr3t-key"]})
    assert settings.server.api_keys[0].get_secret_value() == "s3cr3t-key"
    assert "s3cr3t-key" not in repr(settings) and "s3cr3t-key" not in settings.model_dump_json()


def test_a_mounted_app_runs_behind_the_key_with_its_lifespan(tmp_path: Path) -> None:
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    events: list[str] = []

    @asynccontextmanager
    async def lifespan(_app):
        events.append("started")
        yield
        events.append("stopped")

    sub = Starlette(routes=[Route("/ping", lambda _r: PlainTextResponse("pong"))], lifespan=lifespan)
    settings = Settings(home=tmp_path / "home", server={"api_keys": ["mount-key"]})
    with TestClient(create_app(settings, mounts={"/mcp": sub}, watch=False), base_url="http://127.0.0.1") as client:
        assert events == ["started"]
        assert client.get("/mcp/ping").status_code == 401
        assert client.get("/mcp/ping", headers={"Authorization": "Bearer mount-key"}).text == "pong"
        assert client.get("/healthz").json() == {"status": "ok", "version": "0.1.0", "ready": False}
    assert events == ["started", "stopped"]


def test_the_openapi_document_describes_every_route_and_its_errors(tmp_path: Path) -> None:
    app = create_app(Settings(home=tmp_path / "home"), watch=False)
    schema = app.openapi()
    operations = [(path, method, op) for path, ops in schema["paths"].items() for method, op in ops.items()]
    assert len(operations) >= 23
    for path, method, operation in operations:
        assert operation.get("description") or operation.get("summary"), (path, method)
        if path.startswith("/v1/"):
            error = operation["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
            assert error.endswith("/ErrorDocument"), (path, method)
    assert "text/event-stream" in schema["paths"]["/v1/ask/stream"]["post"]["responses"]["200"]["content"]


def test_build_progress_counts_only_what_is_embedded(settings: Settings, tmp_path: Path, hashing_encoder) -> None:
    """What an ingest job reports: the embed stages count the texts that need a vector, not the reused ones."""
    from lit3r.corpus.ingest import ingest
    from lit3r.index.build import build_index

    from fakes.corpus import eight_papers, paper_record, write_records

    calls: list[tuple[str, int, int]] = []
    with CorpusStore(settings.home) as store:
        ingest([eight_papers(tmp_path / "eight.jsonl")], store)
        build_index(settings, store)
        extra = paper_record("sparse") | {"id": "sparse-two", "title": "Okapi saturation revisited"}
        ingest([write_records(tmp_path / "one.jsonl", [extra])], store)
        report = build_index(settings, store, progress=lambda *call: calls.append(call))
    chunks = [c for c in calls if c[0] == "embed chunks"]
    assert chunks[0] == ("embed chunks", 0, report.chunks_embedded) and report.chunks_embedded < report.chunks
    assert sum(done for _, done, _ in chunks) == report.chunks_embedded
    assert {total for _, _, total in chunks} == {report.chunks_embedded}


def test_thread_titles_are_cut_at_a_word_with_an_ellipsis() -> None:
    from lit3r.server.catalog import TITLE_CHARS, title_of

    question = "How much did evidence verification reduce unsupported claims across the three rounds of the agent loop?"
    title = title_of(question)
    assert len(title) <= TITLE_CHARS and title.endswith("\u2026")
    assert question.startswith(title[:-1]) and question[len(title) - 1] == " "  # ends on a whole word
    assert title_of("  Which BM25\nconfiguration   was best?  ") == "Which BM25 configuration was best?"
