"""Needs ../shared/data/pdfs: a .bib whose file fields point at the three real PDFs (relative, absolute and
Zotero-export shapes), then a Zotero-shaped folder holding the same PDFs, ingested into one corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

import lit3r.corpus.library.run as run
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore

from fakes.zotero import ZoteroFolder

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]


def _bib(tmp: Path, pdfs: Path) -> Path:
    (tmp / "pdfs").symlink_to(pdfs)
    bib = tmp / "mine.bib"
    bib.write_text(
        "@misc{he2025pasa,\n title = {{PaSa}: An {LLM} Agent for Comprehensive Academic Paper Search},\n"
        " author = {He, Yichen and Huang, Guanhua and Feng, Peiyuan},\n year = {2025},\n"
        " eprint = {2501.10120v1}, archivePrefix = {arXiv}, groups = {Agents},\n"
        " file = {:pdfs/pasa-llm-agent-paper-search.pdf:PDF}\n}\n"
        "@article{wellawatte2023perspective,\n"
        " title = {A Perspective on Explanations of Molecular Prediction Models},\n"
        " author = {Wellawatte, Geemi P. and Gandhi, Heta A. and Seshadri, Aditi and White, Andrew D.},\n"
        " journal = {Journal of Chemical Theory and Computation}, year = 2023, doi = {10.1021/acs.jctc.2c01235},\n"
        " groups = {Chemistry},\n"
        f" file = {{Full Text PDF:{pdfs / 'explanations-molecular-prediction-models.pdf'}:application/pdf}}\n}}\n"
        "@misc{sample2024,\n title = {A Sample with Tables, Equations and Images}, author = {Doe, Jane}, year = 2024,\n"
        f" file = {{{pdfs / 'tables-equations-images-sample.pdf'}}}\n}}\n",
        encoding="utf-8",
    )
    return bib


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    from conftest import shared

    pdfs = shared("pdfs")
    tmp = tmp_path_factory.mktemp("shared-library")
    bib = _bib(tmp, pdfs)
    store = CorpusStore(tmp / "home")
    first = ingest([bib], store)
    yield tmp, pdfs, bib, store, first
    store.close()


def test_the_bib_brings_the_real_pdfs_in_with_the_library_metadata(corpus) -> None:
    _, pdfs, _, store, first = corpus
    assert first.failed == [] and first.papers_added == 3
    pasa = store.get("he2025pasa").paper
    assert pasa.title == "PaSa: An LLM Agent for Comprehensive Academic Paper Search"
    assert pasa.authors == ["Yichen He", "Guanhua Huang", "Peiyuan Feng"] and pasa.year == 2025
    assert pasa.arxiv_id == "2501.10120" and pasa.collections == ["Agents"]
    assert pasa.source == str((pdfs / "pasa-llm-agent-paper-search.pdf").resolve())
    chem = store.get("wellawatte2023perspective").paper
    assert chem.doi == "10.1021/acs.jctc.2c01235" and chem.year == 2023 and chem.authors[-1] == "Andrew D. White"
    assert chem.references  # the PDF's reference list is kept under the library's metadata
    sample = store.get("sample2024")
    assert sample.paper.title == "A Sample with Tables, Equations and Images"  # the PDF shows a poster headline
    assert any(b.type == "table" for b in sample.blocks)


def test_the_arxiv_stamp_in_the_margin_is_read(corpus) -> None:
    from lit3r.corpus.library.identity import find_arxiv, first_page_text

    _, pdfs, _, _, _ = corpus
    assert find_arxiv(first_page_text(pdfs / "pasa-llm-agent-paper-search.pdf")) == "2501.10120"


def test_reingest_does_no_work(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, bib, store, _ = corpus
    calls: list = []
    monkeypatch.setattr(run, "read_file", lambda *a, **k: calls.append(a))
    again = ingest([bib], store)
    assert again.added == [] and len(again.unchanged) == 3 and calls == []


def test_a_zotero_folder_with_the_same_pdfs_is_recognised(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp, pdfs, _, store, _ = corpus
    z = ZoteroFolder(tmp / "Zotero")
    pasa_fields = {"title": "PaSa: An LLM Agent for Comprehensive Academic Paper Search", "date": "2025-01-17",
                   "url": "http://arxiv.org/abs/2501.10120v1"}  # fmt: skip
    pasa = z.item("preprint", pasa_fields, [("Yichen", "He")])
    z.attach(pasa, pdfs / "pasa-llm-agent-paper-search.pdf", "He - 2025 - PaSa.pdf")
    chem_fields = {"title": "A perspective on explanations of molecular prediction models", "date": "2023",
                   "DOI": "10.1021/ACS.JCTC.2C01235"}  # fmt: skip
    chem = z.item("journalArticle", chem_fields, [("Geemi", "Wellawatte")])
    z.attach(chem, pdfs / "explanations-molecular-prediction-models.pdf", "Wellawatte.pdf")
    z.close()
    calls: list = []
    monkeypatch.setattr(run, "read_file", lambda *a, **k: calls.append(a))
    report = ingest([], store, zotero=tmp / "Zotero")
    assert calls == [] and report.papers_added == 0 and store.count_papers() == 3
    why = dict(report.duplicates)
    assert len(why) == 2 and any("'he2025pasa'" in w for w in why.values())
    assert any("'wellawatte2023perspective'" in w for w in why.values())
