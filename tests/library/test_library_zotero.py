"""Zotero data folders: a database in Zotero's schema with items, attachments, collections, tags, a trashed item
and a missing file, ingested without writing to the folder."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

import lit3r.corpus.library.run as run
from lit3r.corpus.ingest import ingest
from lit3r.corpus.library import LibraryError
from lit3r.corpus.library.zotero import read_zotero
from lit3r.corpus.store import CorpusStore

from fakes.library import write_paper_pdf, write_snapshot
from fakes.zotero import LINK_IMPORTED_URL, ZoteroFolder


def build_zotero(tmp: Path) -> Path:
    """Four papers (two in 'Thesis/Chapter 2', one in 'Reading'), a trashed one, one whose PDF is gone, a note-only
    item without attachments, and an HTML snapshot."""
    pdfs = tmp / "made"
    folder = tmp / "Zotero"
    z = ZoteroFolder(folder)
    thesis = z.collection("Thesis")
    chapter = z.collection("Chapter 2", parent=thesis)
    reading = z.collection("Reading")

    glacier = z.item("journalArticle", {"title": "Radar Interferometry of Alpine Glacier Flow",
                                        "date": "2021-03-04 2021-03-04", "publicationTitle": "Journal of Glaciology",
                                        "DOI": "https://doi.org/10.1017/JOG.2021.12",
                                        "abstractNote": "Satellite radar maps of glacier speed.",
                                        "extra": "Citation Key: moraine2021radar"},
                     [("Ines", "Moraine"), ("Tomas", "Firn")])  # fmt: skip
    z.attach(
        glacier,
        write_paper_pdf(
            pdfs / "g.pdf",
            "Untitled draft",
            "I. M.",
            [
                "We measure glacier surface flow with satellite radar interferometry.",
                "The median surface velocity of the Aletsch glacier tongue was 182 metres per year.",
            ],
        ),
        "Moraine 2021.pdf",
    )
    z.file_in(chapter, glacier)
    z.tag(glacier, "radar")
    z.tag(glacier, "glaciers")

    bees = z.item("preprint", {"title": "Waggle Dances Encode Distance in Honeybees", "date": "2024",
                               "archiveID": "arXiv:2402.01234", "repository": "arXiv",
                               "url": "https://arxiv.org/abs/2402.01234v3"},
                  [("Mara", "Apis"), ("", "The Hive Consortium")])  # fmt: skip
    z.attach(
        bees,
        write_paper_pdf(
            pdfs / "b.pdf",
            "Waggle Dances",
            "M. Apis",
            [
                "Honeybee foragers report the distance to food through the duration of the waggle run.",
                "Each second of waggling stood for about 750 metres of flight.",
            ],
        ),
        "bees.pdf",
    )
    z.file_in(chapter, bees)
    z.file_in(reading, bees)
    z.tag(bees, "insects")

    web = z.item("webpage", {"title": "Soil Carbon After Wildfire", "date": "2019-07", "url": "https://example.org/soil"},
                 [("Ash", "Ember")])  # fmt: skip
    z.attach(web, write_snapshot(pdfs / "s.html", "Soil Carbon After Wildfire", [
        "Wildfire burns the litter layer and changes soil carbon for a decade.",
        "Soil organic carbon fell by 23 percent in the first two years after the fire."]),
        "snapshot.html", content_type="text/html", link_mode=LINK_IMPORTED_URL)  # fmt: skip
    z.file_in(reading, web)

    trashed = z.item("journalArticle", {"title": "A Paper I Threw Away", "date": "2020"}, [("Del", "Eted")])
    z.attach(trashed, write_paper_pdf(pdfs / "t.pdf", "A Paper I Threw Away", "D. E.", ["Nothing.", "Nothing."]),
             "trash.pdf")  # fmt: skip
    z.trash(trashed)

    gone = z.item("conferencePaper", {"title": "The Missing Manuscript", "date": "2018"}, [("Lo", "St")])
    z.attach(gone, None, "gone.pdf")
    z.item("journalArticle", {"title": "No Attachment Here", "date": "2017"}, [("No", "File")])
    z.close()
    return folder


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip


def test_zotero_items_come_in_with_their_metadata_and_the_folder_is_untouched(tmp_path: Path) -> None:
    folder = build_zotero(tmp_path)
    before = _tree(folder)
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([], store, zotero=folder)
        papers = {p.paper.title: p.paper for p in store.iter_papers()}
    assert _tree(folder) == before
    assert sorted(papers) == ["Radar Interferometry of Alpine Glacier Flow", "Soil Carbon After Wildfire",
                              "Waggle Dances Encode Distance in Honeybees"]  # fmt: skip
    glacier = papers["Radar Interferometry of Alpine Glacier Flow"]  # the PDF says 'Untitled draft': the library wins
    assert glacier.id == glacier.citation_key == "moraine2021radar"
    assert glacier.authors == ["Ines Moraine", "Tomas Firn"]
    assert (glacier.year, glacier.venue, glacier.doi, glacier.entry_type) == (
        2021,
        "Journal of Glaciology",
        "10.1017/jog.2021.12",
        "article",
    )
    assert glacier.collections == ["Thesis/Chapter 2"] and glacier.tags == ["glaciers", "radar"]
    assert glacier.library == f"zotero:{folder.resolve()}" and glacier.library_key
    assert glacier.source.endswith("Moraine 2021.pdf")
    bees = papers["Waggle Dances Encode Distance in Honeybees"]
    assert bees.arxiv_id == "2402.01234" and bees.authors == ["Mara Apis", "The Hive Consortium"]
    assert bees.citation_key == "apis2024waggle"  # no key in the library: one made like Better BibTeX's
    assert sorted(bees.collections) == ["Reading", "Thesis/Chapter 2"]
    soil = papers["Soil Carbon After Wildfire"]
    assert soil.source_format == "html" and soil.year == 2019
    skipped = dict(report.skipped_records)
    trashed = next(k for k in skipped if "A Paper I Threw Away" in k)
    assert "trash" in skipped[trashed]
    missing = next(k for k in skipped if "The Missing Manuscript" in k)
    assert "gone.pdf" in skipped[missing] and "missing" in skipped[missing]
    assert not any("No Attachment Here" in k for k in skipped)


def test_snapshot_text_without_scripts_or_navigation(tmp_path: Path) -> None:
    folder = build_zotero(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        ingest([], store, zotero=folder)
        soil = next(p for p in store.iter_papers() if p.paper.source_format == "html")
    text = soil.canonical_text()
    assert "23 percent" in text and "Log in" not in text and "tracker" not in text
    assert any(b.type == "table" and "| Ours | 0.61 |" in b.text for b in soil.blocks)
    assert soil.paper.references and soil.paper.references[0].year == 1998
    for block in soil.blocks:  # the title came from the library: the spans were recomputed
        assert text[block.char_start : block.char_end] == block.text


def test_reingest_does_no_work_and_a_metadata_change_does_not_reparse(tmp_path: Path, monkeypatch) -> None:
    folder = build_zotero(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        ingest([], store, zotero=folder)
        calls: list[Path] = []
        real = run.read_file
        monkeypatch.setattr(run, "read_file", lambda path, *a, **k: calls.append(path) or real(path, *a, **k))
        again = ingest([], store, zotero=folder)
        assert not again.added and len(again.unchanged) == 3 and calls == []
        db = sqlite3.connect(folder / "zotero.sqlite")  # the title edited in Zotero
        db.execute("UPDATE itemDataValues SET value = 'Waggle Dances Encode Distance' WHERE value LIKE 'Waggle%'")
        db.commit()
        db.close()
        third = ingest([], store, zotero=folder)
        titles = {p.paper.title for p in store.iter_papers()}
    assert len(third.added) == 1 and calls == []  # the stored parse was reused
    assert "Waggle Dances Encode Distance" in titles


def test_collection_restricts_and_an_unknown_one_is_named(tmp_path: Path) -> None:
    folder = build_zotero(tmp_path)
    library = read_zotero(folder, "Thesis")  # a collection holds its subcollections
    assert sorted(e.title for e in library.entries) == ["Radar Interferometry of Alpine Glacier Flow",
                                                       "Waggle Dances Encode Distance in Honeybees"]  # fmt: skip
    assert [e.title for e in read_zotero(folder, "reading").entries] == [
        "Waggle Dances Encode Distance in Honeybees",
        "Soil Carbon After Wildfire",
    ]
    with pytest.raises(LibraryError, match="no collection named 'Thesis/Chapter 9'.*Thesis/Chapter 2"):
        read_zotero(folder, "Thesis/Chapter 9")


def test_not_a_zotero_folder_is_named(tmp_path: Path) -> None:
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([], store, zotero=tmp_path)
    assert report.failed == [(str(tmp_path), "not a Zotero data folder (no zotero.sqlite in it)")]
    (tmp_path / "zotero.sqlite").write_bytes(b"garbage that is not sqlite" * 100)
    with pytest.raises(LibraryError, match="not a Zotero database"):
        read_zotero(tmp_path)
