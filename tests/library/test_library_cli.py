"""The library end to end on the command line: a .bib with file fields ingested, indexed, asked by collection,
and the answer exported as BibTeX and Markdown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bibtexparser
from typer.testing import CliRunner

from lit3r.cli import app

from fakes.library import write_two_collections

runner = CliRunner()
QUESTION = "What was the median surface velocity of the Aletsch glacier tongue?"


def _library(tmp: Path) -> Path:
    return write_two_collections(tmp, doi="10.1017/jog.2021.12")


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_ask_by_collection_and_export_the_references(tmp_path: Path, hashing_encoder) -> None:
    home = tmp_path / "home"
    report = json.loads(_run(home, "ingest", str(_library(tmp_path)), "--json"))
    assert report["papers_added"] == 2 and report["duplicates"] == [] and report["merged"] == []
    assert json.loads(_run(home, "ingest", str(tmp_path / "library.bib"), "--json"))["added"] == []
    _run(home, "index")
    library = json.loads(_run(home, "stats", "--json"))["library"]
    assert library == {"collections": ["Reading", "Thesis"], "tags": [], "years": [2019, 2021]}
    assert "Reading, Thesis" in _run(home, "stats")
    answer = json.loads(_run(home, "ask", QUESTION, "--collection", "Reading", "--json"))
    assert answer["citations"] and {c["paper_id"] for c in answer["citations"]} == {"serac2019model"}
    assert set(answer["candidate_papers"]) <= {"serac2019model"}
    bibtex = _run(home, "ask", QUESTION, "--collection", "Thesis", "--format", "bibtex")
    entries = bibtexparser.parse_string(bibtex).entries
    assert [e.key for e in entries] == ["moraine2021radar"]
    assert entries[0].fields_dict["doi"].value == "10.1017/jog.2021.12"
    markdown = _run(home, "ask", QUESTION, "--collection", "Thesis", "--format", "markdown")
    assert "(Moraine and Firn, 2021, p. 1" in markdown and "## References" in markdown
    chat = runner.invoke(app, ["--home", str(home), "chat", "--collection", "Reading"], input=QUESTION + "\n")
    assert chat.exit_code == 0, chat.output
    spoken = " ".join(chat.stdout.split())  # the console wraps long lines
    assert "150 metres per year" in spoken and "182 metres" not in spoken and "serac2019model" in spoken
    hits = json.loads(_run(home, "search", "median surface velocity", "--author", "serac", "--json"))
    assert hits and {h["paper_id"] for h in hits} == {"serac2019model"}


def test_a_filter_that_matches_nothing_is_one_clear_error(tmp_path: Path, hashing_encoder) -> None:
    home = tmp_path / "home"
    _run(home, "ingest", str(_library(tmp_path)))
    shutil.copytree(tmp_path / "pdfs", tmp_path / "copies")
    copies = json.loads(_run(home, "ingest", str(tmp_path / "copies"), "--json"))  # known papers: exit 0
    assert len(copies["duplicates"]) == 2 and copies["papers_added"] == 0 and copies["papers_in_corpus"] == 2
    _run(home, "index")
    result = runner.invoke(app, ["--home", str(home), "ask", QUESTION, "--collection", "Nope"])
    assert result.exit_code == 1
    assert "no paper matches collection 'Nope' (the corpus has collections: Reading, Thesis)" in result.output
    result = runner.invoke(app, ["--home", str(home), "ask", QUESTION, "--format", "docx"])
    assert result.exit_code == 1 and "unknown --format 'docx'" in result.output
    result = runner.invoke(app, ["--home", str(home), "search", "x", "--year", "nineteen"])
    assert result.exit_code == 1 and "--year 'nineteen'" in result.output


def test_ingest_needs_something_to_read(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--home", str(tmp_path / "home"), "ingest"])
    assert result.exit_code == 1 and "nothing to ingest" in result.output
    result = runner.invoke(app, ["--home", str(tmp_path / "home"), "ingest", str(tmp_path), "--collection", "X"])
    assert result.exit_code == 1 and "--collection picks entries of a library" in result.output


def test_the_api_filters_by_collection_and_returns_the_export(tmp_path: Path, hashing_encoder) -> None:
    import pytest

    from lit3r.app.errors import NotFound, UserError
    from lit3r.app.session import Session
    from lit3r.server import answering
    from lit3r.server.catalog import Catalog
    from lit3r.server.errors import as_api_error
    from lit3r.server.schemas import AskRequest
    from lit3r.settings import load_settings

    home = tmp_path / "home"
    _run(home, "ingest", str(_library(tmp_path)))
    _run(home, "index")
    catalog = Catalog(home)
    with Session(load_settings(None, home=home)) as session:
        request = AskRequest(question=QUESTION, collections=["Thesis"], format="bibtex")
        document = answering.ask(session, catalog, request, None)
        assert {c["paper_id"] for c in document["citations"]} == {"moraine2021radar"}
        assert [e.key for e in bibtexparser.parse_string(document["export"]).entries] == ["moraine2021radar"]
        plain = answering.ask(session, catalog, AskRequest(question=QUESTION), None)
        assert plain["export"] is None  # the one document's shape: the key is always there
        with pytest.raises(NotFound) as refused:
            answering.ask(session, catalog, AskRequest(question=QUESTION, tags=["none-such"]), None)
        assert as_api_error(refused.value).status == 404 and refused.value.code == "no_matching_papers"
        with pytest.raises(UserError) as bad_year:
            answering.ask(session, catalog, AskRequest(question=QUESTION, year="soon"), None)
        assert as_api_error(bad_year.value).status == 422 and "year 'soon'" in bad_year.value.message
    catalog.close()


def test_http_ask_with_format_and_the_export_route(tmp_path: Path, hashing_encoder) -> None:
    from fastapi.testclient import TestClient

    from lit3r.server.app import create_app
    from lit3r.settings import load_settings

    home = tmp_path / "home"
    _run(home, "ingest", str(_library(tmp_path)))
    _run(home, "index")
    with TestClient(create_app(load_settings(None, home=home), watch=False), base_url="http://127.0.0.1") as client:
        asked = client.post("/v1/ask", json={"question": QUESTION, "collections": ["Reading"], "format": "markdown"})
        assert asked.status_code == 200, asked.text
        document = asked.json()
        assert "(Serac, 2019, p. 1" in document["export"] and "## References" in document["export"]
        exported = client.post("/v1/export", json={"answer": document["answer"], "citations": document["citations"],
                                                   "format": "csl-json"})  # fmt: skip
        assert exported.status_code == 200, exported.text
        assert [item["id"] for item in json.loads(exported.json()["export"])] == ["serac2019model"]
        refused = client.post("/v1/ask", json={"question": QUESTION, "authors": ["Nobody"]})
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "no_matching_papers"
        assert client.post("/v1/ask", json={"question": QUESTION, "format": "docx"}).status_code == 422
