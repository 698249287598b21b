"""QASPER and JSON-record parsing: both QASPER layouts give the same papers; bad JSON is named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from lit3r.corpus.parsers import ParseError, parser_for
from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.corpus.parsers.records import parse_records

from conftest import shared
from fakes.qasper import qasper_paper, write_qasper

ORIGINAL = {
    "2101.00001": qasper_paper(
        "Sparse Models",
        [("Introduction", ["First paragraph.", "", "Second paragraph."]), ("Method ::: Loss", ["The loss."])],
    )
}


def _hf_row(paper_id: str, record: dict) -> dict:
    return {
        "id": paper_id,
        "title": record["title"],
        "abstract": record["abstract"],
        "full_text": {
            "section_name": [s["section_name"] for s in record["full_text"]],
            "paragraphs": [s["paragraphs"] for s in record["full_text"]],
        },
        "qas": {"question": [], "question_id": [], "answers": []},
        "figures_and_tables": {
            "caption": [f["caption"] for f in record["figures_and_tables"]],
            "file": [f["file"] for f in record["figures_and_tables"]],
        },
    }


def test_original_layout_blocks_sections_and_floats(tmp_path: Path) -> None:
    [paper] = parse_records(write_qasper(tmp_path / "q.json", ORIGINAL))
    assert paper.paper.id == "2101.00001"
    assert paper.paper.source_format == "qasper"
    texts = [(b.type, b.section, b.text) for b in paper.blocks]
    assert texts == [
        ("text", "Introduction", "First paragraph."),
        ("text", "Introduction", "Second paragraph."),  # the empty paragraph is dropped
        ("text", "Method ::: Loss", "The loss."),
        ("table", None, "Table 1: Results on the test set."),
    ]
    assert paper.blocks[-1].object_id == "Table 1"
    canonical = paper.canonical_text()
    for block in paper.blocks:
        assert canonical[block.char_start : block.char_end] == block.text


def test_hugging_face_layout_concatenated_objects_equal_original(tmp_path: Path) -> None:
    row = _hf_row("2101.00001", ORIGINAL["2101.00001"])
    path = tmp_path / "hf.json"
    path.write_text(json.dumps(row, indent=2) + "\n" + json.dumps(_hf_row("x2", ORIGINAL["2101.00001"]), indent=2))
    papers = parse_records(path)
    assert [p.paper.id for p in papers] == ["2101.00001", "x2"]
    [original] = parse_records(write_qasper(tmp_path / "q.json", ORIGINAL))
    assert papers[0].blocks == original.blocks


def test_gzip_and_dispatch(tmp_path: Path) -> None:
    path = tmp_path / "q.json.gz"
    path.write_bytes(gzip.compress(json.dumps(ORIGINAL).encode()))
    assert parser_for(path) is parse_records
    assert len(parse_records(path)) == 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [("", "empty"), ('{"a": ', "malformed JSON at line 1"), ("[1, 2]", "expected a JSON object")],
)
def test_bad_json_is_named(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ParseError) as info:
        parse_records(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_generic_records_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    records = [
        {
            "id": "p1",
            "title": "Graph Retrieval",
            "abstract": "We retrieve.",
            "venue": "ACL",
            "year": 2024,
            "authors": ["A. B", {"name": "C. D"}],
            "sections": [{"heading": "1 Intro", "paragraphs": ["Hello world."]}],
            "tables": [{"id": "Table 1", "caption": "Table 1: Scores.", "text": "| a | 1 |"}],
            "references": [{"title": "Sparse Models", "raw": "X. 2021. Sparse Models."}],
        },
        {"id": "p2", "title": "Text Only", "text": "Para one.\n\nPara two."},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records))
    p1, p2 = parse_records(path)
    assert p1.paper.venue_tag == "[ACL 2024]"
    assert p1.paper.authors == ["A. B", "C. D"]
    assert [b.type for b in p1.blocks] == ["text", "table"]
    assert p1.paper.references[0].title == "Sparse Models"
    assert [b.text for b in p2.blocks] == ["Para one.", "Para two."]


def test_generic_record_without_id_or_text_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"title": "No id"}))
    with pytest.raises(ParseError, match="needs an 'id'"):
        parse_records(path)
    path.write_text(json.dumps({"id": "x", "title": "Nothing"}))
    with pytest.raises(ParseError, match="no abstract and no body text"):
        parse_records(path)


@pytest.mark.shared_data
def test_shared_qasper_files_both_layouts() -> None:
    test_file = shared("qasper", "qasper-test-v0.3.corpus-and-dev-questions.json.gz")
    records = read_qasper_records(test_file)
    assert len(records) == 416
    assert sum(len(r["qas"]) for r in records.values()) == 940
    hf = parse_records(shared("qasper", "qasper-train-sample-10-papers.hf-layout.json"))
    assert len(hf) == 10
    assert all(p.blocks and p.paper.abstract for p in hf)
    hf_records = read_qasper_records(shared("qasper", "qasper-train-sample-10-papers.hf-layout.json"))
    assert sum(len(r["qas"]) for r in hf_records.values()) == 51
