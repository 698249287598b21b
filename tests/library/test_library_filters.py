"""The library filters on every surface that answers or checks: ``lit3r check``, ``POST /v1/check``, thread
messages, the MCP tools, the chat-completions endpoint and the collections the web UI lists. One library of two
collections ("Thesis": the radar paper, 182 m/yr; "Reading": the model paper, 150 m/yr); a surface filters for
real when what it cites or judges comes only from the chosen collection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app

from fakes.encoders import HashingEncoder
from fakes.library import write_two_collections

runner = CliRunner()
QUESTION = "What was the median surface velocity of the Aletsch glacier tongue?"
CLAIM = "The median surface velocity of the Aletsch glacier tongue was 182 metres per year."
THESIS, READING = "moraine2021radar", "serac2019model"


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module", autouse=True)
def encoder() -> Iterator[HashingEncoder]:
    """Every model load in the index code gives one HashingEncoder, for the whole module (one index)."""
    shared = HashingEncoder()
    with pytest.MonkeyPatch.context() as patch:
        for module in ("lit3r.index.build", "lit3r.index.corpus_index"):
            patch.setattr(f"{module}.load_encoder", lambda *_a, **_k: shared)
            patch.setattr(f"{module}.load_paper_encoder", lambda *_a, **_k: shared)
        yield shared


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An indexed home of two papers from a .bib, one per collection."""
    tmp = tmp_path_factory.mktemp("library")
    bib = write_two_collections(tmp)
    home = tmp / "home"
    _run(home, "ingest", str(bib))
    _run(home, "index")
    return home


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[object]:
    from fastapi.testclient import TestClient

    from lit3r.server.app import create_app
    from lit3r.settings import load_settings

    with TestClient(create_app(load_settings(None, home=home), watch=False), base_url="http://127.0.0.1") as opened:
        yield opened


def _judged(document: dict) -> set[str]:
    return {p["paper_id"] for p in document["papers"]}


def test_cli_check_judges_only_the_chosen_collection(home: Path) -> None:
    whole = json.loads(_run(home, "check", CLAIM, "--json"))
    assert _judged(whole) == {THESIS, READING}
    reading = json.loads(_run(home, "check", CLAIM, "--collection", "Reading", "--json"))
    assert _judged(reading) == {READING}
    thesis = json.loads(_run(home, "check", CLAIM, "--author", "moraine", "--year", "2020-", "--json"))
    assert _judged(thesis) == {THESIS} and thesis["papers"][0]["verdict"] == "supports"
    trace = json.loads(Path(reading["trace_path"]).read_text(encoding="utf-8"))
    assert trace["restricted_to"] == [READING] and trace["allowed"] is None
    from lit3r.app.check import replay_check
    from lit3r.settings import load_settings

    replayed = replay_check(load_settings(None, home=home), str(reading["trace_path"]))
    assert replayed.reproduced, replayed.first_difference  # the replay checks within the same papers
    result = runner.invoke(app, ["--home", str(home), "check", CLAIM, "--collection", "Nope"])
    assert result.exit_code == 1
    assert "no paper matches collection 'Nope' (the corpus has collections: Reading, Thesis)" in result.output
    result = runner.invoke(app, ["--home", str(home), "check", CLAIM, "--year", "soon"])
    assert result.exit_code == 1 and "--year 'soon'" in result.output


def test_api_check_takes_the_filters_of_ask(client) -> None:
    reading = client.post("/v1/check", json={"claim": CLAIM, "collections": ["Reading"]})
    assert reading.status_code == 200, reading.text
    assert _judged(reading.json()) == {READING}
    tagged = client.post("/v1/check", json={"claim": CLAIM, "authors": ["Firn"], "papers": [THESIS, READING]})
    assert tagged.status_code == 200 and _judged(tagged.json()) == {THESIS}
    refused = client.post("/v1/check", json={"claim": CLAIM, "collections": ["Nope"]})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "no_matching_papers"
    assert "Reading, Thesis" in refused.json()["error"]["message"]
    bad = client.post("/v1/check", json={"claim": CLAIM, "year": "soon"})
    assert bad.status_code == 422 and "year 'soon'" in bad.json()["error"]["message"]


def _cited(document: dict) -> set[str]:
    return {c["paper_id"] for c in document["citations"]}


def _event(lines, name: str) -> dict:
    """The data of the first server-sent event called ``name``."""
    event = None
    for line in lines:
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event == name:
            return json.loads(line.split(":", 1)[1])
    raise AssertionError(f"no {name} event")


def test_thread_messages_take_the_filters_of_ask(client) -> None:
    thread = client.post("/v1/threads", json={}).json()["thread_id"]
    first = client.post(f"/v1/threads/{thread}/messages", json={"message": QUESTION, "collections": ["Thesis"]})
    assert first.status_code == 200, first.text
    assert _cited(first.json()) == {THESIS} and "182" in first.json()["answer"]
    second = client.post(f"/v1/threads/{thread}/messages", json={"message": QUESTION, "collections": ["Reading"]})
    assert second.status_code == 200, second.text
    assert _cited(second.json()) == {READING} and "150" in second.json()["answer"]  # the earlier pool stays out
    with client.stream(
        "POST", f"/v1/threads/{thread}/messages/stream", json={"message": QUESTION, "authors": ["Serac"]}
    ) as streamed:
        assert streamed.status_code == 200
        answer = _event(streamed.iter_lines(), "answer")
    assert _cited(answer) == {READING}
    refused = client.post(f"/v1/threads/{thread}/messages", json={"message": QUESTION, "tags": ["none-such"]})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "no_matching_papers"
    bad = client.post(f"/v1/threads/{thread}/messages/stream", json={"message": QUESTION, "year": "19x"})
    assert bad.status_code == 422 and "year '19x'" in bad.json()["error"]["message"]  # a status, not an event


def test_mcp_tools_take_the_library_filters(home: Path) -> None:
    import anyio
    from mcp import Client

    from lit3r.app.session import Session
    from lit3r.mcp import build_server
    from lit3r.settings import load_settings

    async def body(client) -> dict:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return {
            "tools": tools,
            "status": await client.call_tool("corpus_status", {}),
            "ask": await client.call_tool("ask", {"question": QUESTION, "collections": ["Reading"]}),
            "search": await client.call_tool("search", {"query": "median surface velocity", "authors": ["Moraine"]}),
            "check": await client.call_tool("check_claim", {"claim": CLAIM, "year": "2019"}),
            "none": await client.call_tool("ask", {"question": QUESTION, "collections": ["Nope"]}),
            "bad": await client.call_tool("search", {"query": "velocity", "year": "nineteen"}),
        }

    async def main() -> dict:
        async with Client(build_server(session)) as client:
            return await body(client)

    with Session(load_settings(None, home=home)) as session:
        got = anyio.run(main)
    for name, required in (("ask", "question"), ("search", "query"), ("check_claim", "claim")):
        tool = got["tools"][name]
        assert {"collections", "tags", "year", "authors"} <= set(tool.input_schema["properties"])
        assert "library filters" in tool.description and tool.input_schema["required"] == [required]
    assert got["status"].structured_content["collections"] == ["Reading", "Thesis"]
    assert {c["paper_id"] for c in got["ask"].structured_content["citations"]} == {READING}
    assert {h["paper_id"] for h in got["search"].structured_content["results"]} == {THESIS}
    assert _judged(got["check"].structured_content) == {READING}
    assert got["none"].is_error and "no paper matches collection 'Nope'" in got["none"].content[0].text
    assert got["bad"].is_error and "year 'nineteen'" in got["bad"].content[0].text


def test_chat_completions_take_the_filters_in_the_lit3r_object(client) -> None:
    def ask(**lit3r) -> object:
        body = {"model": "lit3r", "messages": [{"role": "user", "content": QUESTION}]}
        return client.post("/v1/chat/completions", json={**body, "lit3r": lit3r} if lit3r else body)

    reading = ask(collections=["Reading"])
    assert reading.status_code == 200, reading.text
    assert _cited(reading.json()) == {READING}
    assert "150 metres" in reading.json()["choices"][0]["message"]["content"]
    thesis = ask(year="2021", papers=[THESIS, READING])
    assert thesis.status_code == 200 and _cited(thesis.json()) == {THESIS}
    refused = ask(collections=["Nope"])
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "no_matching_papers"
    bad = ask(year="later")
    assert bad.status_code == 422 and "year 'later'" in bad.json()["error"]["message"]
    unknown = ask(tag=["radar"])  # a misspelt field is named, not ignored
    assert unknown.status_code == 422 and "lit3r.tag" in unknown.json()["error"]["message"]
    with client.stream("POST", "/v1/chat/completions", json={
        "model": "lit3r", "stream": True, "messages": [{"role": "user", "content": QUESTION}],
        "lit3r": {"authors": ["Serac"]},
    }) as streamed:  # fmt: skip
        chunks = [json.loads(line[5:]) for line in streamed.iter_lines() if line.startswith("data:") and "{" in line]
    last = next(c for c in chunks if c["choices"] and c["choices"][0].get("finish_reason") == "stop")
    assert {c["paper_id"] for c in last["citations"]} == {READING}


def test_chat_completions_export_the_answer_with_its_library_references(client) -> None:
    import bibtexparser

    body = {"model": "lit3r", "messages": [{"role": "user", "content": QUESTION}]}
    got = client.post("/v1/chat/completions", json={**body, "lit3r": {"collections": ["Reading"], "format": "bibtex"}})
    assert got.status_code == 200, got.text
    document = got.json()["lit3r"]
    entries = bibtexparser.parse_string(document["export"]).entries
    assert len(entries) == 1 and "Serac" in entries[0].fields_dict["author"].value  # the library's metadata
    plain = client.post("/v1/chat/completions", json=body).json()["lit3r"]
    assert plain.get("export") is None


def test_the_library_route_lists_what_the_filters_can_name(client) -> None:
    listed = client.get("/v1/library")
    assert listed.status_code == 200
    assert listed.json() == {"collections": ["Reading", "Thesis"], "tags": [], "years": [2019, 2021]}


def test_cli_search_with_filters_opens_the_index_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lit3r.index.corpus_index import CorpusIndex

    opened = []
    original = CorpusIndex.open.__func__

    def counted(cls, *args, **kwargs):
        opened.append(args)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(CorpusIndex, "open", classmethod(counted))
    hits = json.loads(_run(home, "search", "median surface velocity", "--collection", "Thesis", "--json"))
    assert hits and {h["paper_id"] for h in hits} == {THESIS}
    assert len(opened) == 1, "the filter reads the papers of the index the search opened"
    result = runner.invoke(app, ["--home", str(home), "search", "velocity", "--tag", "none-such"])
    assert result.exit_code == 1 and "no paper matches tag 'none-such'" in result.output
