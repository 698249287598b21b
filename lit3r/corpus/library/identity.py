"""Paper identity: DOIs and arXiv ids normalised, found in text, and citation keys made from metadata.

The same paper reaches lit3r in many spellings: ``https://doi.org/10.1145/ABC``,
``doi:10.1145/abc``, ``arXiv:2401.01234v3``, ``https://arxiv.org/pdf/2401.01234v1.pdf``,
``hep-th/9901001v2``, or the arXiv DOI ``10.48550/arXiv.2401.01234``. Each normaliser
returns one canonical form (DOIs lowercase and bare, arXiv ids without version) or
None for something that is not one, so that equal strings mean the same paper.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from pathlib import Path

from lit3r.models import ParsedPaper

log = logging.getLogger(__name__)

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}]+)", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*|doi\s+)", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_NEW_ARXIV = r"\d{4}\.\d{4,5}"
_OLD_ARXIV = r"[a-z][a-z\-]+(?:\.[a-z]{2})?/\d{7}"
_ARXIV_ID = re.compile(rf"^(?P<id>{_NEW_ARXIV}|{_OLD_ARXIV})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^(?:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/|arxiv:\s*)", re.IGNORECASE)
_ARXIV_IN_TEXT = re.compile(
    rf"(?:arxiv(?:\.org/(?:abs|pdf))?[:/]\s*|10\.48550/arxiv\.)(?P<id>{_NEW_ARXIV}|{_OLD_ARXIV})(?:v\d+)?",
    re.IGNORECASE,
)
_TRAILING = ".,;:)]}'\""


def normalise_doi(value: str | None) -> str | None:
    """The bare lowercase DOI in ``value`` ('https://doi.org/10.1/X.' -> '10.1/x'), or None if it holds none."""
    if not value:
        return None
    text = _DOI_PREFIX.sub("", value.strip())
    match = _DOI.match(text)
    if not match:
        return None
    doi = match.group(1).rstrip(_TRAILING).lower()
    if doi.count("(") < doi.count(")"):  # '(see 10.1/abc)': the closing parenthesis is not part of the DOI
        doi = doi.rstrip(")")
    return doi


def normalise_arxiv(value: str | None) -> str | None:
    """The arXiv id in ``value`` without its version ('arXiv:2401.01234v2' -> '2401.01234'), or None."""
    if not value:
        return None
    text = value.strip()
    arxiv_doi = _ARXIV_DOI.match(text)
    if arxiv_doi:
        text = arxiv_doi.group(1)
    text = _ARXIV_PREFIX.sub("", text).removesuffix(".pdf").rstrip(_TRAILING)
    match = _ARXIV_ID.match(text)
    return match["id"].lower() if match else None


def find_doi(text: str) -> str | None:
    """The first DOI written in ``text`` (an arXiv DOI counts as an arXiv id, not here)."""
    for match in _DOI.finditer(text):
        doi = normalise_doi(match.group(1))
        if doi and not _ARXIV_DOI.match(doi):
            return doi
    return None


def find_arxiv(text: str) -> str | None:
    """The first arXiv id written with its marker in ``text`` ('arXiv:2401.01234v1', 'arxiv.org/abs/...')."""
    match = _ARXIV_IN_TEXT.search(text)
    return match["id"].lower() if match else None


def identity_keys(doi: str | None, arxiv_id: str | None) -> list[str]:
    """The keys that say two records are one paper: ``doi:...`` and ``arxiv:...``."""
    keys = [f"doi:{doi}"] if doi else []
    return keys + ([f"arxiv:{arxiv_id}"] if arxiv_id else [])


FRONT_CHARS = 4000
"""How much of a PDF's first page is searched for its own DOI or arXiv id (references cite others later)."""


def ids_shown(parsed: ParsedPaper) -> tuple[str | None, str | None]:
    """The DOI and arXiv id a parsed paper shows on its first page (arXiv's margin stamp, a journal's DOI line).

    The parsed text is searched first; for a PDF, its first page is then read as it is printed (headers,
    footers and the rotated arXiv stamp, which the parser leaves out of the body)."""
    front = " ".join(b.text for b in parsed.blocks if b.page in (None, 1))[:FRONT_CHARS]
    text = f"{parsed.paper.abstract} {front}"
    doi, arxiv_id = find_doi(text), find_arxiv(text)
    if not (doi or arxiv_id) and parsed.paper.source_format == "pdf" and parsed.paper.source:
        page = first_page_text(Path(parsed.paper.source))
        doi, arxiv_id = find_doi(page), find_arxiv(page)
    return doi, arxiv_id


def first_page_text(path: Path) -> str:
    """A PDF's first page as printed, rotated text (arXiv's margin stamp) included; '' when it cannot be read.

    Read with PDFium, whose text page holds every character of the page, rotated ones too, in the order they
    are drawn. It runs in the ingesting process for every PDF whose parsed text shows no id, so its cost is
    paid once per file, serially: PDFium reads a page in milliseconds, pdfminer took a fifth of a second.
    """
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(path))
    except (OSError, pdfium.PdfiumError) as exc:  # it parsed once already
        log.debug("%s: first page not read for its DOI (%s)", path, exc)
        return ""
    try:
        if len(doc) == 0:
            return ""
        page = doc[0]
        textpage = page.get_textpage()
        try:
            return textpage.get_text_range()
        finally:
            textpage.close()
            page.close()
    finally:
        doc.close()


def same_title(one: str, other: str) -> bool:
    """Titles that name one paper: equal once normalised, or one the other plus a subtitle (20+ characters)."""
    a, b = _title_key(one), _title_key(other)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 20 and long.startswith(short))


def _title_key(title: str) -> str:
    decomposed = unicodedata.normalize("NFKD", title)
    return " ".join(
        re.sub(r"[\W_]+", " ", "".join(c for c in decomposed if not unicodedata.combining(c)).lower()).split()
    )


_STOP_WORDS = frozenset("a an the on of in for and to with from by at is are towards toward via".split())


def make_citation_key(authors: list[str], year: int | None, title: str) -> str:
    """A Better BibTeX-style key: first author's surname, year, first significant title word ('lovelace2023dense')."""
    surname = _ascii_word(_surname(authors[0])) if authors else ""
    words = [_ascii_word(w) for w in title.split()]
    word = next((w for w in words if w and w not in _STOP_WORDS), "")
    key = f"{surname or 'anon'}{year or ''}{word}"
    return key or "untitled"


def _surname(name: str) -> str:
    """'Lovelace, Ada' -> 'Lovelace'; 'Ada Lovelace' -> 'Lovelace'."""
    if "," in name:
        return name.split(",")[0]
    parts = name.split()
    return parts[-1] if parts else ""


def _ascii_word(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in decomposed if not unicodedata.combining(c)).lower())


def surname(name: str) -> str:
    """The surname of an author name in either order ('Lovelace, Ada' or 'Ada Lovelace')."""
    return _surname(name).strip()
