"""Answers with references: Markdown with author-year (or numbered) citations and locators, BibTeX that a BibTeX
parser reads back with exactly the cited papers, CSL-JSON; library filters resolved into paper ids."""

from __future__ import annotations

import json

import bibtexparser
import pytest

from lit3r.app.export import author_year, citation_keys, render_bibtex, render_csl_json, render_markdown
from lit3r.app.filters import NoMatchingPapers, PaperFilter, restrict
from lit3r.models import Answer, Citation, Locator, Paper

PAPERS = {
    "glacier": Paper(id="glacier", title="Radar Interferometry of Alpine Glacier Flow", year=2021,
                     authors=["Inès Moraine", "Tomas Firn"], venue="Journal of Glaciology", doi="10.1017/jog.2021.12",
                     citation_key="moraine2021radar", entry_type="article", collections=["Thesis/Chapter 2"],
                     tags=["radar"]),
    "bees": Paper(id="bees", title="Waggle Dances Encode Distance {in} Honeybees", year=2024,
                  authors=["Mara Apis", "B. Drone", "C. Queen"], arxiv_id="2402.01234", collections=["Reading"]),
    "bees2": Paper(id="bees2", title="Waggle Runs at Night", year=2024, authors=["Mara Apis"], tags=["Radar"]),
    "uncited": Paper(id="uncited", title="Never Cited", year=1999, authors=["No Body"]),
}  # fmt: skip
ANSWER = Answer(
    question="How fast does the glacier flow, and how do bees tell distance?",
    text="The tongue flows 182 metres per year [1][2]. Bees encode distance in the waggle run [3]. At night too [4].",
    sufficient=True,
    citations=[
        Citation(number=1, chunk_id="glacier::c0003", paper_id="glacier", quote="182 metres per year",
                 locator=Locator(page=2, section="2 Results")),
        Citation(number=2, chunk_id="glacier::c0005", paper_id="glacier", quote="Table of speeds",
                 locator=Locator(page=3, object_id="Table 1")),
        Citation(number=3, chunk_id="bees::c0001", paper_id="bees", quote="the duration of the waggle run",
                 locator=Locator(section="1 Introduction", paragraph=2)),
        Citation(number=4, chunk_id="bees2::c0001", paper_id="bees2", quote="at night", locator=Locator(paragraph=0)),
    ],
)  # fmt: skip


def test_bibtex_export_parses_and_lists_exactly_the_cited_papers() -> None:
    library = bibtexparser.parse_string(render_bibtex(ANSWER, PAPERS))
    assert not library.failed_blocks
    entries = {e.key: {f.key: f.value for f in e.fields} for e in library.entries}
    assert sorted(entries) == ["apis2024waggle", "apis2024wagglea", "moraine2021radar"]  # the library's key kept
    glacier = entries["moraine2021radar"]
    assert glacier["doi"] == "10.1017/jog.2021.12" and glacier["journal"] == "Journal of Glaciology"
    assert glacier["author"] == "Moraine, Inès and Firn, Tomas" and glacier["year"] == "2021"
    assert entries["apis2024waggle"]["eprint"] == "2402.01234"
    assert "Never Cited" not in render_bibtex(ANSWER, PAPERS)


def test_markdown_shows_each_citation_with_author_year_and_locator() -> None:
    text = render_markdown(ANSWER, PAPERS)
    first_line = text.splitlines()[0]
    assert "(Moraine and Firn, 2021, p. 2, § 2 Results; p. 3, Table 1)" in first_line
    assert "(Apis et al., 2024, § 1 Introduction)" in first_line and "(Apis, 2024, ¶ 0)" in first_line
    assert "[1]" not in first_line
    references = text.split("## References")[1].split("## Evidence")[0]
    assert "Moraine, I., Firn, T. (2021). Radar Interferometry of Alpine Glacier Flow. *Journal of Glaciology*. " \
           "https://doi.org/10.1017/jog.2021.12" in references  # fmt: skip
    assert references.count("\n- ") == 3 and "Never Cited" not in text
    evidence = text.split("## Evidence")[1]
    assert "- [1] Moraine and Firn, 2021, p. 2, § 2 Results: “182 metres per year”" in evidence


def test_numbered_style_numbers_papers() -> None:
    text = render_markdown(ANSWER, PAPERS, style="numbered")
    assert text.startswith("The tongue flows 182 metres per year [1, p. 2, § 2 Results; p. 3, Table 1]. Bees encode "
                           "distance in the waggle run [2, § 1 Introduction]. At night too [3, ¶ 0].")  # fmt: skip
    assert "\n1. Moraine, I., Firn, T. (2021)" in text and "\n3. Apis, M. (2024). Waggle Runs at Night." in text


def test_csl_json_export() -> None:
    items = json.loads(render_csl_json(ANSWER, PAPERS))
    assert [i["id"] for i in items] == ["moraine2021radar", "apis2024waggle", "apis2024wagglea"]
    assert items[0]["type"] == "article-journal" and items[0]["DOI"] == "10.1017/jog.2021.12"
    assert items[0]["author"][0] == {"family": "Moraine", "given": "Inès"} and items[0]["issued"] == {
        "date-parts": [[2021]]
    }


def test_author_year_labels_and_keys() -> None:
    assert author_year(Paper(id="x", title="T", authors=["Lovelace, Ada"])) == "Lovelace, n.d."
    keys = citation_keys([Paper(id=str(i), title="Same", authors=["A B"], year=2020) for i in range(3)])
    assert list(keys.values()) == ["b2020same", "b2020samea", "b2020sameb"]


def test_filters_resolve_into_paper_ids() -> None:
    assert restrict(PAPERS, PaperFilter.of(collections=["Thesis"])) == ["glacier"]
    assert restrict(PAPERS, PaperFilter.of(tags=["radar"])) == ["glacier", "bees2"]  # tags ignore case
    assert restrict(PAPERS, PaperFilter.of(year="2020-")) == ["glacier", "bees", "bees2"]
    assert restrict(PAPERS, PaperFilter.of(authors=["apis"], year="2024")) == ["bees", "bees2"]
    assert restrict(PAPERS, PaperFilter.of(authors=["Ines Moraine"])) == ["glacier"]  # accents ignored
    assert restrict(PAPERS, PaperFilter.of(tags=["radar"]), allowed=["bees2"]) == ["bees2"]
    assert restrict(PAPERS, PaperFilter.of(), allowed=None) is None
    with pytest.raises(NoMatchingPapers, match=r"no paper matches collection 'Thesis/Chapter 9' \(the corpus has "
                       r"collections: Reading, Thesis/Chapter 2\)"):  # fmt: skip
        restrict(PAPERS, PaperFilter.of(collections=["Thesis/Chapter 9"]))
    with pytest.raises(ValueError, match="--year '20x'"):
        PaperFilter.of(year="20x")
