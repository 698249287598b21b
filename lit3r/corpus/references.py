"""Reference lists: split a References section into entries, parse each entry, resolve them to corpus papers.

Parsing is heuristic and covers the common styles::

    ACL / NeurIPS   Ada Lovelace and Alan Turing. 2023. Dense Passage Retrieval for Papers. In Proc. of ACL.
    APA             Lovelace, A., & Turing, A. (2023). Dense passage retrieval for papers. ACL.
    numbered        [12] A. Lovelace, B. Turing. Dense Passage Retrieval for Papers. arXiv, 2023.
    chemistry (ACS) (3) Lovelace, A.; Turing, A. M. Dense Passage Retrieval. J. Chem. Inf. 2023, 12, 1-9.
    IEEE            A. Lovelace and A. Turing, "Dense passage retrieval for papers," in Proc. ACL, 2023.
    plain           Ada Lovelace, Alan Turing. Dense Passage Retrieval for Papers. ACL, 2023.

A reference whose title cannot be found keeps ``title=None``; its raw text is always kept. A DOI or an
arXiv id written in the entry is kept normalised: references are resolved by those first, then by title.
"""

from __future__ import annotations

import re
import unicodedata

from lit3r.corpus.library.identity import find_arxiv, find_doi
from lit3r.corpus.textutil import join_lines
from lit3r.models import Paper, Reference

YEAR = re.compile(r"(?<![\w/:.])((?:19|20)\d{2})[a-z]?(?![\w/]|\.\d)")
"""A publication year; not part of an arXiv id ('1901.04592'), a DOI or a URL."""
MARKER = re.compile(r"^\s*(?:\[(\d{1,4})\]|\((\d{1,4})\)|(\d{1,4})\.(?=\s))\s*")
QUOTED = re.compile(r"[“\"](?P<title>[^”\"]{8,}?)[,.]?[”\"]")
APA = re.compile(r"^(?P<authors>.+?)\s*\((?P<year>(?:19|20)\d{2})[a-z]?(?:,[^)]*)?\)\.?\s*(?P<rest>.+)$")
ACL = re.compile(r"^(?P<authors>.+?)\.\s+(?P<year>(?:19|20)\d{2})[a-z]?\.\s+(?P<rest>.+)$")
_SURNAME_INITIALS = r"[^\W\d_][\w'’\- ]{0,40}?,\s*(?:[A-Z][a-z]?\.\s?-?)+"
ACS = re.compile(
    rf"^(?P<authors>(?:{_SURNAME_INITIALS};\s*(?:and\s+)?)*{_SURNAME_INITIALS}(?:,?\s*et al\.)?)\s*(?P<rest>\S.*)$"
)
SURNAME_FIRST = re.compile(r"[^\W\d_][\w'’\- ]{0,40}?,\s(?:[A-Z][a-z]?\.\s?-?)+")
ABBREVIATIONS = {"al", "vs", "proc", "vol", "no", "pp", "eds", "ed", "inc", "jr", "st", "conf", "intl", "int", "j"}
AUTHOR_START = re.compile(
    r"^(?:[^\W\d_][\w'’\-]+,\s+(?:[A-Z]\.|[A-Z][a-z]+)"  # Lovelace, A.  /  Lovelace, Ada
    r"|(?:[A-Z]\.\s?)+[^\W\d_][\w'’\-]+,"  # A. Lovelace,
    r"|[A-Z][\w'’\-]+(?:\s[A-Z][\w'’.\-]*){1,3},\s[A-Z]"  # Ada Lovelace, Alan
    r"|[A-Z][\w'’\-]+(?:\s[A-Z][\w'’.\-]*){0,3}\s(?:and|&)\s[A-Z]"  # Ada Lovelace and Alan
    r"|[A-Z][\w'’\-]+(?:\s[A-Z][\w'’.\-]*){0,3}\.\s(?:19|20)\d{2})"  # OpenAI. 2023.
)


def normalise_title(title: str) -> str:
    """Lowercase, accents stripped (NFKD), punctuation dropped, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", title)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    return " ".join(re.sub(r"[\W_]+", " ", stripped).split())


def split_reference_list(text: str) -> list[str]:
    """Split the raw text of a References section into one string per entry.

    Blank lines, when present, separate entries (the PDF parser marks entries that way from the layout);
    numbered markers ('[3]', '(3)', '3.') split further. Otherwise a line starts a new entry when the
    previous line ended a sentence and this one opens with an author list. Wrapped lines are joined and
    hyphenation at line ends is undone.
    """
    chunks = [chunk.split("\n") for chunk in re.split(r"\n\s*\n", text.strip()) if chunk.strip()]
    by_layout = len(chunks) > 1
    entries: list[list[str]] = []
    for lines in chunks:
        lines = [line.strip() for line in lines if line.strip()]
        numbered = _split_numbered(lines)
        if numbered:
            entries.extend(numbered)
        elif by_layout:
            entries.append(lines)
        else:
            entries.extend(_split_hanging(lines))
    return [entry for entry in (join_lines(lines) for lines in entries) if len(entry) >= 8]


def _split_numbered(lines: list[str]) -> list[list[str]]:
    """Entries by '[n]' / '(n)' / 'n.' markers with increasing numbers, or [] when the first line has none."""
    first = MARKER.match(lines[0]) if lines else None
    if not first:
        return []
    style = next(i for i, group in enumerate(first.groups()) if group)
    entries, last = [[lines[0]]], int(first.group(style + 1))
    for line in lines[1:]:
        match = MARKER.match(line)
        number = int(match.group(style + 1)) if match and match.group(style + 1) else None
        if number is not None and last < number <= last + 3:
            entries.append([line])
            last = number
        else:
            entries[-1].append(line)
    return entries


def _split_hanging(lines: list[str]) -> list[list[str]]:
    entries: list[list[str]] = []
    for line in lines:
        ended = bool(entries) and re.search(r"[.)\d]$|https?://\S+$", entries[-1][-1])
        if not entries or (ended and AUTHOR_START.match(line)):
            entries.append([line])
        else:
            entries[-1].append(line)
    return entries


def parse_reference(raw: str) -> Reference:
    """Title, authors and year of one reference entry, as far as its style allows."""
    text = " ".join(raw.split())
    body = MARKER.sub("", text, count=1)
    authors, title, year = _parse_body(body)
    if year is None:
        years = YEAR.findall(body)
        year = int(years[-1]) if years else None
    title = _clean_title(title)
    return Reference(
        raw=text, title=title, authors=split_authors(authors), year=year, doi=find_doi(text), arxiv_id=find_arxiv(text)
    )


def _parse_body(body: str) -> tuple[str, str | None, int | None]:
    """``(authors text, title, year)`` by the first style that fits."""
    quoted = QUOTED.search(body)
    if quoted and len(quoted["title"].split()) >= 3 and re.search(r"(?:^|[,.:])\s*$", body[: quoted.start()]):
        return body[: quoted.start()].rstrip(" ,."), quoted["title"], None
    for pattern in (APA, ACL):
        match = pattern.match(body)
        if match and not YEAR.search(match["authors"]) and len(match["authors"]) < 400:
            return match["authors"], _first_sentence(match["rest"]), int(match["year"])
    match = ACS.match(body)
    if match:
        return match["authors"], _first_sentence(match["rest"]), None
    sentences = _sentences(body)
    if not sentences:
        return "", None, None
    if len(sentences) > 1 and _looks_like_authors(sentences[0]):
        return sentences[0], sentences[1], None
    return "", sentences[0], None


def _sentences(text: str) -> list[str]:
    """Split at '. ' and '? ' but not after initials ('A.') or abbreviations ('et al.' ends the authors)."""
    pieces = re.split(r"(?<=[.?!])\s+", text)
    merged: list[str] = []
    for piece in pieces:
        previous = merged[-1] if merged else ""
        words = previous.rstrip(".").split()
        last_word = words[-1] if words else ""  # a piece of dots alone ('...') has no last word
        joins = previous.endswith(".") and (
            re.fullmatch(r"[A-Z]|[A-Z][a-z]?", last_word) or last_word.lower() in ABBREVIATIONS - {"al"}
        )
        if merged and joins:
            merged[-1] = f"{previous} {piece}"
        else:
            merged.append(piece)
    return [s.strip() for s in merged if s.strip()]


def _first_sentence(text: str) -> str | None:
    sentences = _sentences(text)
    return sentences[0] if sentences else None


def _looks_like_authors(text: str) -> bool:
    """Capitalised name tokens, commas or 'and'; not a lowercase-heavy phrase such as a title."""
    words = re.findall(r"[^\W\d_][\w'’\-]*", text)
    if not words:
        return False
    lower = [w for w in words if w[0].islower() and w not in ("and", "et", "al", "van", "von", "de", "der", "others")]
    return len(lower) <= max(1, len(words) // 5) and ("," in text or " and " in text or len(words) <= 4)


def _clean_title(title: str | None) -> str | None:
    if not title:
        return None
    title = re.sub(r"^(?:In:?\s+)", "", title.strip(" .,;:“”\"'"))
    title += "”" * (title.count("“") - title.count("”"))
    return title if len(title) >= 3 and re.search(r"[^\W\d_]{2}", title) else None


def split_authors(text: str) -> list[str]:
    """Author names from an author list in any of the supported styles."""
    text = re.sub(r"\bet al\.?|\band others\b", "", text).strip(" ,;")
    if not text.strip("."):
        return []
    if re.search(r"\b[A-Z]$", text):  # 'Turing, A' lost its period to the sentence split
        text += "."
    if ";" in text:
        parts = text.split(";")
    elif SURNAME_FIRST.match(text) and len("".join(SURNAME_FIRST.findall(text))) >= 0.8 * len(text):
        parts = SURNAME_FIRST.findall(text)
    else:
        parts = re.split(r",\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*", text)
    names = [" ".join(re.sub(r"^(?:and|&)\s+", "", p.strip(" ,;&")).split()) for p in parts]
    names = [re.sub(r"(?<=[^\s.][^\s.])\.$", "", name) for name in names]
    return [name for name in names if name and len(name) <= 60]


def resolve_references(papers: list[Paper]) -> int:
    """Point references at the corpus papers they cite; return how many were resolved.

    A reference that gives a DOI or an arXiv id matches the paper with that DOI or arXiv id (the
    surest match); otherwise it matches when the normalised titles are equal, and a reference without
    a parsed title matches when its raw text contains a corpus title of at least 20 characters. A paper
    never resolves to itself.
    """
    by_title: dict[str, list[str]] = {}
    by_id: dict[str, list[str]] = {}
    for paper in papers:
        key = normalise_title(paper.title)
        if key:
            by_title.setdefault(key, []).append(paper.id)
        for ident in (f"doi:{paper.doi}" if paper.doi else None, f"arxiv:{paper.arxiv_id}" if paper.arxiv_id else None):
            if ident:
                by_id.setdefault(ident, []).append(paper.id)
    long_titles = sorted((key for key in by_title if len(key) >= 20), key=len, reverse=True)
    resolved = 0
    for paper in papers:
        for reference in paper.references:
            target = _match_id(reference, paper.id, by_id) or _match(reference, paper.id, by_title, long_titles)
            if target:
                reference.resolved_id = target
                resolved += 1
    return resolved


def _match_id(reference: Reference, own_id: str, by_id: dict[str, list[str]]) -> str | None:
    doi = reference.doi or find_doi(reference.raw)  # references stored before DOIs were kept: read them now
    arxiv_id = reference.arxiv_id or find_arxiv(reference.raw)
    idents = [f"doi:{doi}" if doi else "", f"arxiv:{arxiv_id}" if arxiv_id else ""]
    for ident in idents:
        for paper_id in by_id.get(ident, []):
            if paper_id != own_id:
                return paper_id
    return None


def _match(reference: Reference, own_id: str, by_title: dict[str, list[str]], long_titles: list[str]) -> str | None:
    if reference.title:
        keys = [normalise_title(reference.title)]
    else:
        raw = f" {normalise_title(reference.raw)} "
        keys = [key for key in long_titles if f" {key} " in raw]
    for key in keys:
        for paper_id in by_title.get(key, []):
            if paper_id != own_id:
                return paper_id
    return None
