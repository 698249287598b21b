"""Ingest over a corpus of bad inputs: each case asserts which papers went in and the exact message.

Files are sniffed by content, encodings detected or refused, a bad record is skipped with its
position and id while the rest of its file goes in, and limits refuse what is too big.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from lit3r.corpus.ingest import IngestReport, ingest
from lit3r.corpus.store import CorpusStore
from lit3r.settings import ChunkerSettings, LimitsSettings

from fakes.bad_inputs import (
    damaged_pdf,
    encrypted_pdf,
    gzip_bomb,
    png_bytes,
    random_bytes,
    record,
    records_jsonl,
    text_pdf,
    textless_pdf,
    zero_page_pdf,
)


def _ingest(tmp_path: Path, *paths: Path, **options) -> tuple[IngestReport, dict[str, str]]:
    """Ingest ``paths`` into a fresh store; returns the report and {paper id: title} of the store."""
    with CorpusStore(tmp_path / "home") as store:
        report = ingest(list(paths), store, **options)
        titles = {p.paper.id: p.paper.title for p in store.iter_papers()}
    return report, titles


def _failed(report: IngestReport) -> dict[str, str]:
    return {Path(path).name: problem for path, problem in report.failed}


def _skipped(report: IngestReport) -> list[tuple[str, str]]:
    return [(Path(path).name, problem) for path, problem in report.skipped_records]


# --- sniffed by content ---------------------------------------------------------------------------


def test_a_pdf_named_txt_is_read_as_a_pdf(tmp_path: Path) -> None:
    disguised = text_pdf(tmp_path / "notes.txt", title="Disguised Retrieval Paper")
    report, titles = _ingest(tmp_path, disguised)
    assert report.failed == []
    assert titles == {"notes": "Disguised Retrieval Paper"}  # not a paper titled '%PDF-1.3'


def test_a_pdf_with_an_unknown_suffix_named_on_the_command_line_is_read(tmp_path: Path) -> None:
    _, titles = _ingest(tmp_path, text_pdf(tmp_path / "download.bin", title="Downloaded Paper"))
    assert titles == {"download": "Downloaded Paper"}


@pytest.mark.parametrize(
    ("name", "make", "problem"),
    [
        ("junk.txt", random_bytes, "binary data, not text, not a paper lit3r can read"),
        ("junk.json", random_bytes, "binary data, not text, not a paper lit3r can read"),
        ("figure.md", png_bytes, "a PNG image, not a paper lit3r can read"),
        ("scan.pdf", png_bytes, "a PNG image, not a paper lit3r can read"),
    ],
)
def test_binary_content_is_refused_by_what_it_is(tmp_path: Path, name: str, make, problem: str) -> None:
    report, titles = _ingest(tmp_path, make(tmp_path / name))
    assert titles == {} and _failed(report) == {name: problem}


def test_text_named_pdf_is_not_a_pdf(tmp_path: Path) -> None:
    path = tmp_path / "page.pdf"
    path.write_text("<html><body>Login required</body></html>")
    report, _ = _ingest(tmp_path, path)
    assert _failed(report) == {"page.pdf": "not a PDF file (no %PDF header; it holds text)"}


def test_gzip_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "papers.json"  # gzipped, without the .gz suffix
    path.write_bytes(gzip.compress(record("g1", "Gzipped Record").encode()))
    report, titles = _ingest(tmp_path, path)
    assert report.failed == [] and titles == {"g1": "Gzipped Record"}
    text = tmp_path / "notes.txt"
    text.write_bytes(gzip.compress(b"Title\n\nBody."))
    report, _ = _ingest(tmp_path, text)
    assert _failed(report) == {"notes.txt": "gzip-compressed data; lit3r unpacks only .json.gz and .jsonl.gz files"}


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_bytes(b"")
    report, _ = _ingest(tmp_path, tmp_path / "empty.md")
    assert _failed(report) == {"empty.md": "the file is empty"}


# --- PDFs that cannot be read ----------------------------------------------------------------------


def test_unreadable_pdfs_are_named_and_the_good_one_goes_in(tmp_path: Path) -> None:
    good = text_pdf(tmp_path / "good.pdf", title="Good Paper Title")
    files = [
        good,
        encrypted_pdf(tmp_path / "locked.pdf"),
        zero_page_pdf(tmp_path / "zero.pdf"),
        textless_pdf(tmp_path / "scan.pdf"),
        damaged_pdf(tmp_path / "damaged.pdf", good),
    ]
    report, titles = _ingest(tmp_path, *files)
    assert titles == {"good": "Good Paper Title"}
    failed = _failed(report)
    assert failed["locked.pdf"] == "the PDF is encrypted and needs a password"
    assert failed["zero.pdf"] == "the PDF has no pages (truncated or damaged file?)"
    assert failed["scan.pdf"] == "no extractable text (a scanned or image-only PDF?)"
    assert failed["damaged.pdf"].startswith(("damaged or unreadable PDF", "no extractable text"))
    assert set(failed) == {"locked.pdf", "zero.pdf", "scan.pdf", "damaged.pdf"}


# --- text encodings ----------------------------------------------------------------------------------

FRENCH = "Résumé des expériences\n\nNous étudions la récupération éparse; les résultats sont élevés à côté."


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("latin-1", FRENCH.encode("latin-1")),
        ("cp1252 quotes", "“Smart” quotes – and dashes\n\nThe café’s naïve results.".encode("cp1252")),
        ("utf-8 with BOM", codecs.BOM_UTF8 + FRENCH.encode("utf-8")),
        ("utf-16 with BOM", FRENCH.encode("utf-16")),
        ("utf-16-be with BOM", codecs.BOM_UTF16_BE + FRENCH.encode("utf-16-be")),
        ("utf-16-le without BOM", FRENCH.encode("utf-16-le")),
        ("utf-32 with BOM", FRENCH.encode("utf-32")),
        ("cp1251", "Поиск научных статей\n\nМы изучаем разреженный поиск для научных статей.".encode("cp1251")),
    ],
)
def test_text_encodings_are_detected(tmp_path: Path, encoding: str, data: bytes) -> None:
    path = tmp_path / "paper.txt"
    path.write_bytes(data)
    report, titles = _ingest(tmp_path, path)
    assert report.failed == [], encoding
    [title] = titles.values()
    expected = next(line for line in _decoded(encoding, data).split("\n") if line.strip())
    assert title == expected and "\ufffd" not in title


def _decoded(encoding: str, data: bytes) -> str:
    codec = {"latin-1": "latin-1", "cp1252 quotes": "cp1252", "utf-8 with BOM": "utf-8-sig"}.get(encoding)
    codec = codec or {"utf-16-be with BOM": "utf-16", "utf-16-le without BOM": "utf-16-le"}.get(encoding)
    return data.decode(codec or encoding.split()[0])


def test_text_in_no_known_encoding_is_refused_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "mixed.md"
    path.write_bytes("Résumé".encode("latin-1") + " and Привет".encode() + b"\n\nbody")
    report, titles = _ingest(tmp_path, path)
    assert titles == {}
    assert _failed(report) == {
        "mixed.md": "UTF-8 mixed with another encoding (invalid byte 0xe9 at offset 1); convert the file to UTF-8"
    }


def test_a_markdown_paper_in_latin1(tmp_path: Path) -> None:
    path = tmp_path / "paper.md"
    path.write_bytes("---\ntitle: Über Größe\n---\n\n## Einführung\n\nMüller schätzt die Länge.\n".encode("latin-1"))
    with CorpusStore(tmp_path / "home") as store:
        ingest([path], store)
        [parsed] = list(store.iter_papers())
    assert parsed.paper.title == "Über Größe"
    assert [(b.section, b.text) for b in parsed.blocks] == [("Einführung", "Müller schätzt die Länge.")]


# --- JSON records: a bad record costs only itself ----------------------------------------------------


def test_one_malformed_jsonl_line_skips_only_that_line(tmp_path: Path) -> None:
    lines = [record("a", "Alpha"), '{"id": "b", "title": ', record("c", "Gamma")]
    path = records_jsonl(tmp_path / "papers.jsonl", lines)
    report, titles = _ingest(tmp_path, path)
    assert titles == {"a": "Alpha", "c": "Gamma"}
    assert report.failed == []
    assert _skipped(report) == [("papers.jsonl", "line 2: malformed JSON at column 22: Expecting value")]


def test_a_qasper_paper_without_full_text_is_skipped_by_its_id(tmp_path: Path) -> None:
    good = {"title": "Kept Paper", "abstract": "a", "full_text": [{"section_name": "S", "paragraphs": ["x"]}]}
    path = tmp_path / "qasper.json"
    path.write_text(json.dumps({"p1": good, "p2": {"title": "Has A Title", "abstract": "b"}, "p3": good}))
    report, titles = _ingest(tmp_path, path)
    assert titles == {"p1": "Kept Paper", "p3": "Kept Paper"}
    assert _skipped(report) == [("qasper.json", "line 1: paper 'p2': no 'full_text' field")]


def test_hugging_face_rows_with_one_damaged_row(tmp_path: Path) -> None:
    row = {"id": "h1", "title": "Row One", "abstract": "a", "full_text": {"section_name": ["S"], "paragraphs": [["x"]]}}
    bad = {**row, "id": "h2", "full_text": {"section_name": ["S", "T"], "paragraphs": [["x"]]}}
    typed = {**row, "id": "h3", "full_text": {"section_name": ["S"], "paragraphs": "not a list"}}
    path = tmp_path / "rows.json"
    path.write_text("\n".join(json.dumps(r, indent=1) for r in (row, bad, typed)))  # pretty-printed stream
    report, titles = _ingest(tmp_path, path)
    assert titles == {"h1": "Row One"}
    assert [problem for _, problem in _skipped(report)] == [
        "document 2 (line 16): paper 'h2': section_name and paragraphs differ in length",
        "document 3 (line 32): paper 'h3': field 'full_text.paragraphs': Input should be a valid list",
    ]


def test_a_malformed_document_in_a_stream_resumes_at_the_next_one(tmp_path: Path) -> None:
    first = json.dumps(json.loads(record("s1", "First")), indent=1)
    broken = '{\n "id": "s2",\n "title": "Broken",,\n}'
    last = json.dumps(json.loads(record("s3", "Last")), indent=1)
    path = tmp_path / "stream.json"
    path.write_text(f"{first}\n{broken}\n{last}\n")
    report, titles = _ingest(tmp_path, path)
    assert titles == {"s1": "First", "s3": "Last"}
    [(_, problem)] = _skipped(report)
    assert problem.startswith("document 2 (line 6): malformed JSON at line 8") and "resumed at line 10" in problem


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (record("w1", "W1", sections="intro"), "line 2: record 'w1': field 'sections': Input should be a valid list"),
        (
            record("w2", "W2", sections=[{"heading": "S", "paragraphs": [{"text": "x"}]}]),
            "line 2: record 'w2': field 'sections[0].paragraphs[0]': Input should be a valid string",
        ),
        (record("w3", "W3", year=[2020]), "line 2: record 'w3': field 'year': Input should be a valid integer"),
        (
            json.dumps({"id": "w4", "title": ["a list"]}),
            "line 2: record 'w4': field 'title': Input should be a valid string",
        ),
        (json.dumps({"id": "w5", "abstract": "no title"}), "line 2: paper 'w5': a paper needs a 'title'"),
        (json.dumps({"title": "No Id", "abstract": "x"}), "line 2: record 'No Id': a paper needs an 'id'"),
        (json.dumps({"id": "w6", "title": "Empty"}), "line 2: paper 'w6': no abstract and no body text"),
        (json.dumps([1]), "line 2, item 1: expected a JSON object of a paper, found a number"),
        ('"a string"', "line 2: expected a JSON object of a paper, found a string"),
        (
            json.dumps({"name": "lit3r", "version": "1"}),
            "line 2: not a paper record (no 'id' or 'title'; its keys: name, version)",
        ),
        (record("a", "Alpha again"), "paper 'a': another paper of this file has the same id; the first is kept"),
    ],
)
def test_wrong_records_are_named_and_the_rest_goes_in(tmp_path: Path, line: str, problem: str) -> None:
    path = records_jsonl(tmp_path / "mixed.jsonl", [record("a", "Alpha"), line, record("z", "Zeta")])
    report, titles = _ingest(tmp_path, path)
    assert titles == {"a": "Alpha", "z": "Zeta"}
    assert _skipped(report) == [("mixed.jsonl", problem)]


def test_non_qasper_json_fails_with_the_first_reasons(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_text(json.dumps({"name": "x", "dependencies": {"a": "1"}}))
    report, titles = _ingest(tmp_path, path)
    assert titles == {}
    assert _failed(report) == {
        "package.json": "no papers found: line 1: not a paper record (no 'id' or 'title'; its keys: dependencies, name)"
    }


def test_deep_nesting_is_an_error_of_that_record(tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    path = records_jsonl(tmp_path / "deep.jsonl", [record("a", "Alpha"), deep])
    report, titles = _ingest(tmp_path, path)
    assert titles == {"a": "Alpha"}
    assert _skipped(report) == [("deep.jsonl", "line 2: JSON nested too deeply to read")]
    alone = tmp_path / "deep.json"
    alone.write_text(deep)
    report, _ = _ingest(tmp_path, alone)
    assert _failed(report) == {
        "deep.json": "no papers found: document 1: JSON nested too deeply to read; the rest of the file was not read"
    }


def test_control_characters_and_lone_surrogates_in_json_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"id": "o1", "title": "Bell\u0007 and \x1b[31mred", "abstract": "half \ud800 pair"}))
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([path], store)
        [parsed] = list(store.iter_papers())
    assert report.failed == []
    assert (parsed.paper.title, parsed.paper.abstract) == ("Bell and [31mred", "half  pair")


# --- limits -----------------------------------------------------------------------------------------


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("Big\n\n" + "words " * 400_000)  # 2.4 MB
    report, titles = _ingest(tmp_path, path, limits=LimitsSettings(max_file_mb=1))
    assert titles == {}
    assert _failed(report) == {
        "big.txt": "the file is 2.4 MB, more than limits.max_file_mb = 1 (LIT3R_LIMITS__MAX_FILE_MB raises it)"
    }


def test_a_huge_text_file_is_refused_by_the_paper_length_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    paragraph = "Lexical retrieval finds passages in papers quickly. " * 20
    path.write_text("Huge\n\n" + "\n\n".join([paragraph] * 20_000))  # 20.8 MB, as in the report that asked
    report, titles = _ingest(tmp_path, path)
    assert titles == {}
    assert _failed(report) == {
        "huge.txt": "the file holds 20,840,004 characters, more than one paper may hold "
        "(limits.max_paper_chars = 2,000,000; LIT3R_LIMITS__MAX_PAPER_CHARS raises it)"
    }


def test_papers_over_the_length_or_chunk_limit_are_skipped_alone(tmp_path: Path) -> None:
    long_text = "\n\n".join(["A paragraph about retrieval and ranking."] * 60)  # 2,538 characters
    path = records_jsonl(tmp_path / "p.jsonl", [record("short", "Short"), record("long", "Long", text=long_text)])
    report, titles = _ingest(tmp_path, path, limits=LimitsSettings(max_paper_chars=2_000))
    assert titles == {"short": "Short"}
    assert _skipped(report) == [
        (
            "p.jsonl",
            "paper 'long': the paper has 2,537 characters, more than one paper may hold "
            "(limits.max_paper_chars = 2,000; LIT3R_LIMITS__MAX_PAPER_CHARS raises it)",
        )
    ]
    tight = {"limits": LimitsSettings(max_chunks_per_paper=3), "chunker": ChunkerSettings(max_chars=200)}
    report, titles = _ingest(tmp_path, path, force=True, **tight)
    assert titles == {"short": "Short"}
    [(_, problem)] = _skipped(report)
    assert problem == (
        "paper 'long': the paper makes 16 chunks, more than limits.max_chunks_per_paper = 3 "
        "(LIT3R_LIMITS__MAX_CHUNKS_PER_PAPER raises it)"
    )


def test_a_gzip_bomb_is_stopped_at_the_size_limit(tmp_path: Path) -> None:
    bomb = gzip_bomb(tmp_path / "bomb.json.gz", unpacked_mb=30)
    assert bomb.stat().st_size < 100_000
    report, titles = _ingest(tmp_path, bomb, limits=LimitsSettings(max_file_mb=10))
    assert titles == {}
    assert _failed(report) == {"bomb.json.gz": "unpacks to more than limits.max_file_mb = 10 MB"}
    damaged = tmp_path / "cut.json.gz"
    damaged.write_bytes(bomb.read_bytes()[:2000])
    report, _ = _ingest(tmp_path, damaged)
    assert _failed(report)["cut.json.gz"].startswith("damaged gzip data")


def test_hundreds_of_tiny_files_all_go_in(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    for number in range(300):
        sub = folder / f"group-{number % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"paper-{number:03d}.md").write_text(f"# Tiny Paper {number}\n\nBody {number} text.\n")
    report, titles = _ingest(tmp_path, folder)
    assert report.failed == [] and len(report.added) == 300
    assert titles[f"paper-{299:03d}"] == "Tiny Paper 299" and len(titles) == 300
