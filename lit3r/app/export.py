"""An answer with references: author-year or numbered citations, a reference list, BibTeX and CSL-JSON.

Pure functions of an :class:`~lit3r.models.Answer` and the metadata of the papers it cites (the index's
:class:`~lit3r.models.Paper` records, which carry the library's metadata when the papers came from one).
Citation keys are the library's when it has them, else made the way Better BibTeX makes them
(``lovelace2023dense``), unique within one export. Markers ``[n]`` in the answer become
``(Lovelace and Turing, 2023, p. 3)`` (author-year) or ``[1, p. 3]`` (numbered, one number per paper).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import bibtexparser
from bibtexparser.model import Entry, Field

from lit3r.corpus.library.identity import make_citation_key, surname
from lit3r.models import Answer, Citation, Locator, Paper

if TYPE_CHECKING:
    from lit3r.app.documents import AnswerDocument

ExportFormat = Literal["markdown", "bibtex", "csl-json"]
CitationStyle = Literal["author-year", "numbered"]
EXPORT_FORMATS: tuple[str, ...] = ("markdown", "bibtex", "csl-json")
_MARKERS = re.compile(r"(?:\s*\[\d+\])+")
_BIBTEX_TO_CSL = {"article": "article-journal", "inproceedings": "paper-conference", "book": "book",
                  "incollection": "chapter", "phdthesis": "thesis", "techreport": "report", "online": "webpage",
                  "unpublished": "manuscript"}  # fmt: skip


def cited_papers(answer: Answer, papers: Mapping[str, Paper]) -> list[Paper]:
    """The papers the answer cites, in order of first citation, each once (a paper the index lacks: a bare record)."""
    ids = dict.fromkeys(c.paper_id for c in answer.citations)
    return [papers.get(pid) or Paper(id=pid, title=pid) for pid in ids]


def citation_keys(cited: list[Paper]) -> dict[str, str]:
    """Paper id -> citation key: the library's, else a made one; repeats get 'a', 'b', ... appended."""
    keys: dict[str, str] = {}
    used: set[str] = set()
    for paper in cited:
        key = paper.citation_key or make_citation_key(paper.authors, paper.year, paper.title)
        unique, suffix = key, 0
        while unique in used:
            suffix += 1
            unique = f"{key}{chr(ord('a') + suffix - 1)}" if suffix <= 26 else f"{key}-{suffix}"
        used.add(unique)
        keys[paper.id] = unique
    return keys


def author_year(paper: Paper) -> str:
    """'Lovelace, 2023', 'Lovelace and Turing, 2023', 'Lovelace et al., 2023' ('n.d.' without a year)."""
    names = [surname(a) for a in paper.authors if surname(a)]
    if not names:
        who = paper.title if len(paper.title) <= 40 else paper.title[:37].rstrip() + "…"
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {paper.year or 'n.d.'}"


def short_locator(locator: Locator) -> str:
    """Where in the paper, as a reader cites it: 'p. 3, Table 1' or '§ 2 Method' (paragraph when nothing else)."""
    parts = [f"p. {locator.page}"] if locator.page is not None else []
    if locator.object_id:
        parts.append(locator.object_id)
    elif locator.section:
        parts.append(f"§ {locator.section}")
    if not parts and locator.paragraph is not None:
        parts.append(f"¶ {locator.paragraph}")
    return ", ".join(parts)


def reference_entry(paper: Paper) -> str:
    """One reference-list line: 'Lovelace, A., Turing, A. (2023). Title. *Venue*. https://doi.org/...'"""
    authors = ", ".join(_initials(a) for a in paper.authors) or "Anonymous"
    parts = [f"{authors} ({paper.year or 'n.d.'}). {paper.title.rstrip('.')}."]
    if paper.venue:
        parts.append(f"*{paper.venue.rstrip('.')}*.")
    if paper.doi:
        parts.append(f"https://doi.org/{paper.doi}")
    elif paper.arxiv_id:
        parts.append(f"arXiv:{paper.arxiv_id}")
    elif paper.url:
        parts.append(paper.url)
    return " ".join(parts)


def render_markdown(answer: Answer, papers: Mapping[str, Paper], style: CitationStyle = "author-year") -> str:
    """The answer with its markers as references, then the reference list and the quoted evidence."""
    cited = cited_papers(answer, papers)
    by_number = {c.number: c for c in answer.citations}
    paper_of = {p.id: p for p in cited}
    numbers = {p.id: i for i, p in enumerate(cited, 1)}

    def label(paper_id: str) -> str:
        return str(numbers[paper_id]) if style == "numbered" else author_year(paper_of[paper_id])

    def one(citation: Citation) -> str:
        where = short_locator(citation.locator)
        return label(citation.paper_id) + (f", {where}" if where else "")

    def replace(match: re.Match) -> str:
        marks = [by_number.get(int(n)) for n in re.findall(r"\[(\d+)\]", match.group())]
        places: dict[str, list[str]] = {}  # paper -> its locators, in the order cited ('p. 2; p. 5')
        for citation in marks:
            if citation is not None:
                where = short_locator(citation.locator)
                places.setdefault(citation.paper_id, [])
                if where and where not in places[citation.paper_id]:
                    places[citation.paper_id].append(where)
        if not places:
            return match.group()
        joined = "; ".join(", ".join([label(pid), "; ".join(wheres)] if wheres else [label(pid)])
                           for pid, wheres in places.items())  # fmt: skip
        return f" [{joined}]" if style == "numbered" else f" ({joined})"

    lines = [_MARKERS.sub(replace, answer.text).strip(), ""]
    if cited:
        lines += ["## References", ""]
        for paper in cited:
            lead = f"{numbers[paper.id]}. " if style == "numbered" else "- "
            lines.append(lead + reference_entry(paper))
        lines += ["", "## Evidence", ""]
        for citation in answer.citations:
            quote = " ".join(citation.quote.split())
            lines.append(f"- [{citation.number}] {one(citation)}: “{quote}”")
    return "\n".join(lines).rstrip() + "\n"


def render_bibtex(answer: Answer, papers: Mapping[str, Paper]) -> str:
    """A BibTeX entry for every paper the answer cites, keyed by :func:`citation_keys`."""
    cited = cited_papers(answer, papers)
    keys = citation_keys(cited)
    library = bibtexparser.Library()
    for paper in cited:
        fields = {
            "title": paper.title,
            "author": " and ".join(_bibtex_name(a) for a in paper.authors),
            "year": str(paper.year) if paper.year else "",
            "doi": paper.doi or "",
            "url": paper.url or "",
        }
        entry_type = paper.entry_type or ("article" if paper.venue else "misc")
        if paper.venue:
            fields[_venue_field(entry_type)] = paper.venue
        if paper.arxiv_id:
            fields |= {"eprint": paper.arxiv_id, "archiveprefix": "arXiv"}
        library.add(Entry(entry_type, keys[paper.id], [Field(k, _brace_safe(v)) for k, v in fields.items() if v]))
    return bibtexparser.write_string(library)


def render_csl_json(answer: Answer, papers: Mapping[str, Paper]) -> str:
    """The cited papers as CSL-JSON items (what Zotero, pandoc and citeproc read), ids = citation keys."""
    cited = cited_papers(answer, papers)
    keys = citation_keys(cited)
    items = []
    for paper in cited:
        item: dict = {"id": keys[paper.id], "citation-key": keys[paper.id],
                      "type": _BIBTEX_TO_CSL.get(paper.entry_type or "", "article"), "title": paper.title,
                      "author": [_csl_name(a) for a in paper.authors]}  # fmt: skip
        if paper.year:
            item["issued"] = {"date-parts": [[paper.year]]}
        for key, value in (("container-title", paper.venue), ("DOI", paper.doi), ("URL", paper.url)):
            if value:
                item[key] = value
        if paper.arxiv_id:
            item["number"] = f"arXiv:{paper.arxiv_id}"
        items.append(item)
    return json.dumps(items, indent=1, ensure_ascii=False) + "\n"


def export_answer(
    answer: Answer, papers: Mapping[str, Paper], fmt: ExportFormat, style: CitationStyle = "author-year"
) -> str:
    """The answer as ``fmt``: Markdown with references, or its bibliography as BibTeX or CSL-JSON."""
    if fmt == "markdown":
        return render_markdown(answer, papers, style)
    if fmt == "bibtex":
        return render_bibtex(answer, papers)
    if fmt == "csl-json":
        return render_csl_json(answer, papers)
    raise ValueError(f"unknown export format {fmt!r}: use {', '.join(EXPORT_FORMATS)}")


def _split(name: str) -> tuple[str, str]:
    """(given, family) of 'Ada Lovelace' or 'Lovelace, Ada'; a one-word name is all family."""
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        return given, family
    parts = name.split()
    return " ".join(parts[:-1]), parts[-1] if parts else ""


def _initials(name: str) -> str:
    given, family = _split(name)
    initials = " ".join(f"{p[0]}." for p in re.split(r"[\s\-]+", given) if p and p[0].isalpha())
    return f"{family}, {initials}" if initials else family


def _bibtex_name(name: str) -> str:
    given, family = _split(name)
    return f"{family}, {given}" if given else f"{{{family}}}"


def _csl_name(name: str) -> dict[str, str]:
    given, family = _split(name)
    return {"family": family, "given": given} if given else {"literal": family}


def _venue_field(entry_type: str) -> str:
    return {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}.get(
        entry_type, "howpublished")  # fmt: skip


def _brace_safe(value: str) -> str:
    """A field value whose braces balance (unbalanced ones would end the field early); kept as text otherwise."""
    depth = 0
    for char in value:
        depth += (char == "{") - (char == "}")
        if depth < 0:
            break
    return value if depth == 0 else value.replace("{", "(").replace("}", ")")


def with_export(
    document: AnswerDocument,
    answer: Answer,
    papers: Mapping[str, Paper],
    fmt: ExportFormat | None,
    style: CitationStyle = "author-year",
) -> AnswerDocument:
    """The answer document with ``export`` set to the answer as ``fmt`` (from the index's paper records, the
    library's metadata), as every surface that takes a format returns it; unchanged when ``fmt`` is None."""
    if not fmt:
        return document
    return document.model_copy(update={"export": export_answer(answer, papers, fmt, style)})
