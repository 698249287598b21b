"""What a library reader produces: entries with metadata and attached files, and the items it left out."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lit3r.corpus.library.identity import make_citation_key, normalise_arxiv, normalise_doi


class LibraryError(Exception):
    """A library that cannot be read at all; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


@dataclass
class LibraryEntry:
    """One paper of a library: its metadata as the library gives it, and the files attached to it."""

    title: str
    where: str
    """How a message names the entry: "entry 'lovelace2023' (line 12)", "Zotero item ABCD2345"."""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    abstract: str = ""
    doi: str | None = None
    arxiv_id: str | None = None
    citation_key: str | None = None
    library_key: str | None = None
    entry_type: str | None = None
    collections: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    url: str | None = None
    files: list[Path] = field(default_factory=list)
    """Attached PDFs and HTML snapshots that exist, best first (PDFs before snapshots)."""
    missing_files: list[str] = field(default_factory=list)
    """Attachments named by the library that are not on disk (named in the ingest report)."""

    def __post_init__(self) -> None:
        self.doi = normalise_doi(self.doi)
        self.arxiv_id = normalise_arxiv(self.arxiv_id)
        self.title = " ".join(self.title.split())
        self.abstract = " ".join(self.abstract.split())
        self.authors = [" ".join(a.split()) for a in self.authors if a.strip()]
        self.tags = sorted(dict.fromkeys(t.strip() for t in self.tags if t.strip()))
        self.collections = sorted(dict.fromkeys(self.collections))

    @property
    def key(self) -> str:
        """The entry's citation key, or one made from its metadata."""
        return self.citation_key or make_citation_key(self.authors, self.year, self.title)

    def metadata(self) -> dict:
        """The Paper fields this entry sets (what wins over what the PDF shows)."""
        return {
            "title": self.title,
            "authors": self.authors,
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
            "arxiv_id": self.arxiv_id,
            "citation_key": self.key,
            "library_key": self.library_key,
            "entry_type": self.entry_type,
            "collections": self.collections,
            "tags": self.tags,
            "url": self.url,
        }

    def metadata_hash(self) -> str:
        """Changes when the library's metadata of this entry (abstract included) changes."""
        data = {k: v for k, v in asdict(self).items() if k not in ("where", "files", "missing_files")}
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Library:
    """A library as one reader found it."""

    name: str
    """Where the metadata came from, e.g. 'zotero:/home/ada/Zotero' or 'bibtex:/home/ada/refs.bib'."""
    entries: list[LibraryEntry] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Items left out: ``(where, why)`` (a trashed item, an entry without a title, a missing attachment)."""


YEAR = re.compile(r"(?<!\d)(1[5-9]\d{2}|20\d{2})(?!\d)")


def year_of(value: object) -> int | None:
    """The year in a date field ('2023-05-12', 'May 2023', '2023'), or None."""
    if isinstance(value, int):
        return value
    match = YEAR.search(str(value or ""))
    return int(match.group(1)) if match else None


def split_keywords(value: str | None) -> list[str]:
    """Keywords of a field written 'a, b; c'."""
    return [k.strip() for k in re.split(r"[;,]", value or "") if k.strip()]


def display_name(name: str) -> str:
    """'Lovelace, Ada' -> 'Ada Lovelace' (the order papers print); a name without a comma as it is."""
    if name.count(",") == 1:
        last, first = (part.strip() for part in name.split(","))
        return f"{first} {last}".strip()
    return name.strip()


def in_collection(paths: list[str], name: str) -> bool:
    """``name`` is one of the collections (by name or path 'A/B'), or an ancestor of one (a collection holds
    its subcollections); case is ignored."""
    wanted = name.strip("/").casefold()
    for path in paths:
        parts = path.split("/")
        if any(wanted in ("/".join(parts[: i + 1]).casefold(), parts[i].casefold()) for i in range(len(parts))):
            return True
    return False
