"""Identity: DOIs and arXiv ids normalised, references matched by them before titles, old stores migrated."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.library.identity import find_arxiv, find_doi, make_citation_key, normalise_arxiv, normalise_doi
from lit3r.corpus.references import parse_reference, resolve_references
from lit3r.corpus.store import SCHEMA_VERSION, CorpusStore
from lit3r.models import Paper


@pytest.mark.parametrize(
    "raw", ["10.1145/ABC.123", "doi:10.1145/abc.123", "DOI: 10.1145/abc.123", "https://doi.org/10.1145/ABC.123",
            "http://dx.doi.org/10.1145/abc.123.", " 10.1145/abc.123) "],
)  # fmt: skip
def test_doi_spellings_are_one_doi(raw: str) -> None:
    assert normalise_doi(raw) == "10.1145/abc.123"


@pytest.mark.parametrize(
    "raw", ["2401.01234", "arXiv:2401.01234v3", "https://arxiv.org/abs/2401.01234v2", "arxiv.org/pdf/2401.01234v1.pdf",
            "10.48550/arXiv.2401.01234", "https://arxiv.org/pdf/2401.01234"],
)  # fmt: skip
def test_arxiv_spellings_are_one_id(raw: str) -> None:
    assert normalise_arxiv(raw) == "2401.01234"


def test_old_style_arxiv_ids_and_non_ids() -> None:
    assert normalise_arxiv("hep-th/9901001v2") == "hep-th/9901001"
    assert normalise_arxiv("arXiv:math.GT/0309136") == "math.gt/0309136"
    assert normalise_arxiv("not an id") is None and normalise_doi("11.1/x") is None
    assert find_arxiv("Preprint arXiv:1810.04805v2 [cs.CL] 24 May 2019") == "1810.04805"
    assert find_doi("see https://doi.org/10.18653/v1/N19-1423.") == "10.18653/v1/n19-1423"
    assert find_doi("arXiv DOI 10.48550/arXiv.1810.04805") is None  # an arXiv DOI is an arXiv id


def test_citation_keys_like_better_bibtex() -> None:
    assert make_citation_key(["Ada Lovelace"], 2023, "The Dense Passage Retrieval") == "lovelace2023dense"
    assert make_citation_key(["Gödel, Kurt"], 1931, "Über formal") == "godel1931uber"
    assert make_citation_key([], None, "On") == "anon"


def test_references_resolve_by_doi_and_arxiv_before_titles() -> None:
    bert = Paper(id="bert", title="BERT: Pre-training of Deep Bidirectional Transformers", arxiv_id="1810.04805")
    other = Paper(id="other", title="A Different Paper", doi="10.5555/xyz")
    lookalike = Paper(id="lookalike", title="Attention Is All You Need")
    citing = Paper(id="citing", title="Citing", references=[
        parse_reference("J. Devlin. 2019. Bert: pre-training, the preprint. arXiv:1810.04805v2."),  # title differs
        parse_reference("A. Author. 2020. Attention is all you need. J. X, https://doi.org/10.5555/XYZ."),
    ])  # fmt: skip
    assert citing.references[0].arxiv_id == "1810.04805" and citing.references[1].doi == "10.5555/xyz"
    assert resolve_references([bert, other, lookalike, citing]) == 2
    assert [r.resolved_id for r in citing.references] == ["bert", "other"]  # the DOI beats the equal title


OLD_SCHEMA = """
CREATE TABLE sources (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, status TEXT NOT NULL, error TEXT,
    paper_ids TEXT NOT NULL, ingested_at TEXT NOT NULL);
CREATE TABLE papers (id TEXT PRIMARY KEY, source TEXT NOT NULL, content_hash TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX papers_source ON papers(source);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def test_a_store_of_the_first_layout_is_migrated_and_stays_readable(tmp_path: Path) -> None:
    """A home written before schema versions: no meta_hash, no DOI columns, papers without the new fields."""
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: Old Paper\n---\n\nSome old text about glaciers.\n", encoding="utf-8")
    from lit3r.corpus.store import file_sha256

    home = tmp_path / "home"
    home.mkdir()
    db = sqlite3.connect(home / "corpus.sqlite")
    db.executescript(OLD_SCHEMA)
    old_paper = {"paper": {"id": "note", "title": "Old Paper", "abstract": "", "venue": None, "year": None,
                           "authors": [], "references": [{"raw": "A. B. 2020. X. arXiv:2001.00001.", "title": "X",
                                                          "authors": ["A. B."], "year": 2020, "resolved_id": None}],
                           "source": str(note.resolve()), "source_format": "markdown", "doi": "10.1/old"},
                 "blocks": [{"type": "text", "text": "Some old text about glaciers.", "page": None, "section": None,
                             "object_id": None, "char_start": 12, "char_end": 41}]}  # fmt: skip
    db.execute("INSERT INTO papers VALUES ('note', ?, 'h', ?)", (str(note.resolve()), json.dumps(old_paper)))
    db.execute("INSERT INTO sources VALUES (?, ?, 'ok', NULL, '[\"note\"]', '2025-01-01T00:00:00+00:00')",
               (str(note.resolve()), file_sha256(note)))  # fmt: skip
    db.commit()
    db.close()
    with CorpusStore(home) as store:
        assert store.get("note").paper.title == "Old Paper" and store.source(str(note.resolve())).meta_hash is None
        assert store.find_identity("10.1/old", None) == [("note", str(note.resolve()))]  # backfilled
        report = ingest([note], store)
        assert report.unchanged == [str(note.resolve())] and report.added == []
    db = sqlite3.connect(home / "corpus.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()
    with CorpusStore(home) as store:  # opening again: nothing to migrate
        assert store.count_papers() == 1


def test_a_store_from_a_newer_lit3r_is_refused(tmp_path: Path) -> None:
    from lit3r.corpus.store import StoreError

    with CorpusStore(tmp_path):
        pass
    db = sqlite3.connect(tmp_path / "corpus.sqlite")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer lit3r"):
        CorpusStore(tmp_path)


def test_a_plain_pdf_showing_a_known_doi_is_a_duplicate_only_when_the_titles_agree(tmp_path: Path) -> None:
    from fakes.library import write_paper_pdf

    text = ["Radar maps of glacier speed from satellites.", "The tongue moved 182 metres per year."]
    stamp = "https://doi.org/10.5555/Glacier.2021"
    first = write_paper_pdf(tmp_path / "a" / "glacier.pdf", "Radar Maps of Glacier Speed", "I. Moraine", text, stamp)
    again = write_paper_pdf(tmp_path / "b" / "glacier-v2.pdf", "Radar Maps of Glacier Speed", "I. Moraine",
                            [*text, "A second version."], stamp)  # fmt: skip
    other = write_paper_pdf(tmp_path / "c" / "other.pdf", "Lichen on Moraines", "R. Moss",
                            ["Lichens grow slowly.", "Data: https://doi.org/10.5555/glacier.2021"], stamp)  # fmt: skip
    with CorpusStore(tmp_path / "home") as store:
        ingest([first], store)
        assert store.get("glacier").paper.doi == "10.5555/glacier.2021"
        report = ingest([again, other], store)
        ids = sorted(p.paper.id for p in store.iter_papers())
        lichen = store.get("other").paper
    assert [where for where, _ in report.duplicates] == [str(again.resolve())]
    assert "DOI 10.5555/glacier.2021" in report.duplicates[0][1] and "'glacier'" in report.duplicates[0][1]
    assert ids == ["glacier", "other"] and lichen.doi is None  # kept; the DOI it shows is not its own
