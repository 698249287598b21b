"""BibTeX/BibLaTeX, RIS and CSL-JSON libraries: metadata, file fields in the shapes reference managers write,
entries without a file, bad blocks named, and identity across sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.library.files import split_file_field
from lit3r.corpus.store import CorpusStore

from fakes.library import write_paper_pdf

GLACIER = ["We measure glacier surface flow with satellite radar interferometry.",
           "The median surface velocity of the Aletsch glacier tongue was 182 metres per year."]  # fmt: skip
BEES = ["Honeybee foragers report distance through the waggle run.", "Each second stood for 750 metres of flight."]


def test_file_field_shapes() -> None:
    assert split_file_field(r"Full Text PDF:/home/ada/Zotero/storage/AB12/paper.pdf:application/pdf") == [
        "/home/ada/Zotero/storage/AB12/paper.pdf"
    ]  # Zotero's export
    assert split_file_field(r":papers/lovelace\:2023.pdf:PDF;Snapshot:snap.html:text/html") == [
        "papers/lovelace:2023.pdf",
        "snap.html",
    ]  # JabRef, with an escaped colon
    assert split_file_field(r"C\:\\Users\\ada\\paper.pdf") == [r"C:\Users\ada\paper.pdf"]  # JabRef on Windows
    assert split_file_field("/abs/one.pdf;/abs/two.pdf") == ["/abs/one.pdf", "/abs/two.pdf"]  # Better BibTeX
    assert split_file_field("papers/plain.pdf") == ["papers/plain.pdf"]


def write_bib(tmp: Path) -> Path:
    write_paper_pdf(tmp / "papers" / "glacier.pdf", "Draft", "anon", GLACIER)
    write_paper_pdf(tmp / "abs" / "bees.pdf", "Bees", "anon", BEES)
    bib = tmp / "refs" / "library.bib"
    bib.parent.mkdir()
    (tmp / "refs" / "papers").symlink_to(tmp / "papers")
    bib.write_text(
        "@string{jog = {Journal of Glaciology}}\n"
        "@article{moraine2021radar,\n  title = {Radar Interferometry of {Alpine} Glacier Flow},\n"
        "  author = {Moraine, In\\`es and Firn, Tomas},\n  journal = jog,\n  year = {2021},\n"
        "  doi = {doi:10.1017/JOG.2021.12},\n  keywords = {radar, glaciers},\n  groups = {Thesis},\n"
        "  file = {:papers/glacier.pdf:PDF}\n}\n"
        "@misc{apis2024waggle,\n  title = {Waggle Dances Encode Distance},\n  author = {Mara Apis},\n"
        "  date = {2024-02-01},\n  eprint = {2402.01234v3},\n  archivePrefix = {arXiv},\n"
        f"  file = {{{tmp / 'abs' / 'bees.pdf'}}}\n}}\n"
        "@inproceedings{ember2019soil,\n  title = {Soil Carbon After Wildfire},\n  author = {Ember, Ash},\n"
        "  booktitle = {Proceedings of Soil Science},\n  year = 2019,\n"
        "  abstract = {Soil organic carbon fell by 23 percent in the two years after the fire.}\n}\n"
        "@article{lost2018,\n  title = {The Missing Manuscript},\n  author = {St, Lo},\n  year = 2018,\n"
        "  file = {Full Text:papers/gone.pdf:application/pdf}\n}\n"
        "@article{broken,\n  title = {Never closed,\n"
        "@article{notitle,\n  author = {No One},\n  year = 2000\n}\n",
        encoding="utf-8",
    )
    return bib


def test_bib_entries_come_in_with_metadata_files_and_abstracts(tmp_path: Path) -> None:
    bib = write_bib(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([bib], store)
        papers = {p.paper.id: p for p in store.iter_papers()}
    assert sorted(papers) == ["apis2024waggle", "ember2019soil", "lost2018", "moraine2021radar"]
    glacier = papers["moraine2021radar"].paper
    assert glacier.title == "Radar Interferometry of Alpine Glacier Flow"  # the PDF says 'Draft'
    assert glacier.authors == ["Inès Moraine", "Tomas Firn"] and glacier.year == 2021
    assert glacier.venue == "Journal of Glaciology" and glacier.doi == "10.1017/jog.2021.12"
    assert glacier.tags == ["glaciers", "radar"] and glacier.collections == ["Thesis"]
    assert glacier.source == str((tmp_path / "papers" / "glacier.pdf").resolve())
    assert "182 metres per year" in papers["moraine2021radar"].canonical_text()
    assert papers["apis2024waggle"].paper.arxiv_id == "2402.01234" and papers["apis2024waggle"].paper.year == 2024
    soil = papers["ember2019soil"]  # no file: metadata and abstract
    assert soil.blocks == [] and "23 percent" in soil.paper.abstract and soil.paper.entry_type == "inproceedings"
    skipped = dict(report.skipped_records)
    assert any("gone.pdf" in why and "metadata came in" in why for why in skipped.values())
    assert any("line 33" in where and "not valid BibTeX" in why for where, why in skipped.items())
    assert any("'notitle'" in where and "no title" in why for where, why in skipped.items())


def test_bib_reingest_does_no_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lit3r.corpus.library.run as run

    bib = write_bib(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        ingest([bib], store)
        calls: list[Path] = []
        monkeypatch.setattr(run, "read_file", lambda path, *a, **k: calls.append(path))
        again = ingest([bib], store)
    assert again.added == [] and len(again.unchanged) == 4 and calls == [] and again.references_resolved == 0


def test_a_folder_ingested_first_takes_the_library_metadata_and_keeps_its_id(tmp_path: Path) -> None:
    bib = write_bib(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        ingest([tmp_path / "papers"], store)
        [before] = list(store.iter_papers())
        report = ingest([bib], store)
        after = store.get(before.paper.id)
        again = ingest([tmp_path / "papers", bib], store)
    assert after.paper.title == "Radar Interferometry of Alpine Glacier Flow" and after.paper.citation_key == (
        "moraine2021radar"
    )
    assert [pid for _, pid in report.merged] == [before.paper.id]
    assert again.added == [] and again.duplicates == []


def test_the_same_paper_from_two_libraries_is_found_by_doi(tmp_path: Path) -> None:
    bib = write_bib(tmp_path)
    ris = tmp_path / "other.ris"
    ris.write_text(
        "TY  - JOUR\nTI  - Radar interferometry of alpine glacier flow\nAU  - Moraine, Ines\nPY  - 2021\n"
        "DO  - https://doi.org/10.1017/jog.2021.12\nER  - \n"
        "TY  - JOUR\nTI  - Lichen Growth Rates on Moraines\nAU  - Moss, Rhi\nPY  - 2015\nDO  - 10.5555/lichen\n"
        "AB  - Lichens grow 0.4 mm a year on granite.\nKW  - lichen\nER  - \n",
        encoding="utf-8",
    )
    with CorpusStore(tmp_path / "home") as store:
        ingest([bib], store)
        report = ingest([ris], store)
        ids = [p.paper.id for p in store.iter_papers()]
    [(where, why)] = report.duplicates
    assert "reference 1" in where and "'moraine2021radar'" in why
    assert "moss2015lichen" in ids and len(ids) == 5


def test_csl_json_items_come_in(tmp_path: Path) -> None:
    items = [
        {"id": "apis2024", "type": "article-journal", "title": "Waggle Dances Encode Distance",
         "author": [{"family": "Apis", "given": "Mara"}, {"literal": "The Hive Consortium"}],
         "issued": {"date-parts": [[2024, 2]]}, "container-title": "Insect Science", "DOI": "10.5555/BEES",
         "abstract": "Each second of waggling stood for 750 metres.", "keyword": "bees, dance"},
    ]  # fmt: skip
    path = tmp_path / "export.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    with CorpusStore(tmp_path / "home") as store:
        ingest([path], store)
        [paper] = [p.paper for p in store.iter_papers()]
    assert (paper.id, paper.title, paper.year, paper.venue, paper.doi) == (
        "apis2024",
        "Waggle Dances Encode Distance",
        2024,
        "Insect Science",
        "10.5555/bees",
    )
    assert paper.authors == ["Mara Apis", "The Hive Consortium"] and paper.tags == ["bees", "dance"]


def test_an_unreadable_library_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ris"
    bad.write_text("this is not RIS\n", encoding="utf-8")
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([bad], store)
    [(where, why)] = report.failed
    assert where == str(bad) and "RIS" in why


def test_an_attachment_over_the_size_limit_is_named(tmp_path: Path) -> None:
    from lit3r.settings import LimitsSettings

    bib = write_bib(tmp_path)
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([bib], store, limits=LimitsSettings(max_file_mb=0.0001))
        ids = sorted(p.paper.id for p in store.iter_papers())
    too_big = [(where, why) for where, why in report.failed if "max_file_mb" in why]
    assert len(too_big) == 2 and any("'moraine2021radar'" in where for where, _ in too_big)
    assert ids == ["ember2019soil", "lost2018"]  # the entries without a readable file still came in
