"""Filters by what the library knows: collection, tag, year, author, resolved into the paper ids retrieval
is restricted to (the same restriction ``--paper`` gives).

Within one kind of filter any value matches (``--tag radar --tag lidar``: either tag); different kinds
must all match (``--collection Thesis --year 2020-2023``: both). A filter that leaves no paper is an error
that says what the corpus has instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lit3r.app.errors import NotFound, UserError
from lit3r.corpus.library.entry import in_collection
from lit3r.corpus.references import normalise_title
from lit3r.models import Paper
from lit3r.settings import Settings

_YEARS = re.compile(r"^\s*(?P<lo>\d{4})?\s*(?P<dash>-|–|\.\.)?\s*(?P<hi>\d{4})?\s*$")


class NoMatchingPapers(ValueError):
    """A filter that no paper of the corpus passes; the message says what the corpus holds."""


@dataclass(frozen=True)
class PaperFilter:
    """What a question is restricted to, by library metadata; empty fields do not filter."""

    collections: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    years: tuple[int | None, int | None] | None = None
    """Inclusive bounds; None on a side: open."""
    authors: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        collections: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        year: str | None = None,
        authors: Sequence[str] | None = None,
    ) -> PaperFilter:
        """A filter from surface options; ``ValueError`` for a year range it cannot read."""
        return cls(tuple(collections or ()), tuple(tags or ()), parse_years(year) if year else None,
                   tuple(authors or ()))  # fmt: skip

    @property
    def empty(self) -> bool:
        return not (self.collections or self.tags or self.years or self.authors)

    def describe(self) -> str:
        parts = [f"collection {' or '.join(map(repr, self.collections))}"] if self.collections else []
        parts += [f"tag {' or '.join(map(repr, self.tags))}"] if self.tags else []
        if self.years:
            lo, hi = self.years
            span = str(lo) if lo == hi else f"{lo or ''}-{hi or ''}"
            parts.append(f"year {span}")
        parts += [f"author {' or '.join(map(repr, self.authors))}"] if self.authors else []
        return ", ".join(parts)

    def matches(self, paper: Paper) -> bool:
        if self.collections and not any(in_collection(paper.collections, c) for c in self.collections):
            return False
        if self.tags and not {t.casefold() for t in paper.tags} & {t.casefold() for t in self.tags}:
            return False
        if self.years:
            lo, hi = self.years
            if paper.year is None or (lo is not None and paper.year < lo) or (hi is not None and paper.year > hi):
                return False
        return not self.authors or any(_author_matches(paper, a) for a in self.authors)


def parse_years(text: str) -> tuple[int | None, int | None]:
    """'2021' -> (2021, 2021); '2019-2021', '2019-', '-2021', '2019..2021'; ``ValueError`` otherwise."""
    match = _YEARS.match(text)
    if not match or not (match["lo"] or match["hi"]) or (not match["dash"] and not (match["lo"] and not match["hi"])):
        raise ValueError(f"--year {text!r}: give a year (2021) or a range (2019-2021, 2019-, -2021)")
    lo = int(match["lo"]) if match["lo"] else None
    hi = int(match["hi"]) if match["hi"] else (None if match["dash"] else lo)
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"--year {text!r}: the range ends before it starts")
    return lo, hi


def _author_matches(paper: Paper, wanted: str) -> bool:
    """A name or surname, whole words, case and accents ignored ('lovelace' matches 'Ada Lovelace')."""
    needle = f" {normalise_title(wanted)} "
    return needle.strip() != "" and any(needle in f" {normalise_title(name)} " for name in paper.authors)


def restrict(
    papers: Mapping[str, Paper], paper_filter: PaperFilter, allowed: Sequence[str] | None = None
) -> list[str] | None:
    """The paper ids that pass ``paper_filter`` (within ``allowed`` when given); ``allowed`` as it is for an
    empty filter; :class:`NoMatchingPapers` when none passes."""
    if paper_filter.empty:
        return list(allowed) if allowed is not None else None
    within = set(allowed) if allowed is not None else None
    ids = [pid for pid, paper in papers.items() if (within is None or pid in within) and paper_filter.matches(paper)]
    if not ids:
        raise NoMatchingPapers(f"no paper matches {paper_filter.describe()}{_what_there_is(papers, paper_filter)}")
    return ids


def library_restriction(
    papers: Mapping[str, Paper],
    allowed: Sequence[str] | None = None,
    *,
    collections: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    year: str | None = None,
    authors: Sequence[str] | None = None,
) -> list[str] | None:
    """:func:`restrict` for a surface that maps app errors (the API, MCP): :class:`UserError` naming ``year``
    for a year it cannot read, :class:`NotFound` (``no_matching_papers``) when no paper passes."""
    try:
        paper_filter = PaperFilter.of(collections, tags, year, authors)
    except ValueError as exc:
        raise UserError(str(exc).replace("--year", "year")) from exc
    try:
        return restrict(papers, paper_filter, allowed)
    except NoMatchingPapers as exc:
        raise NotFound(str(exc), "no_matching_papers") from exc


def library_facets(papers: Mapping[str, Paper]) -> dict[str, list]:
    """The collections, tags and years the corpus's papers carry (what a user can filter by)."""
    return {
        "collections": sorted({c for p in papers.values() for c in p.collections}),
        "tags": sorted({t for p in papers.values() for t in p.tags}, key=str.casefold),
        "years": sorted({p.year for p in papers.values() if p.year}),
    }


def _what_there_is(papers: Mapping[str, Paper], paper_filter: PaperFilter) -> str:
    facets = library_facets(papers)
    hints = []
    if paper_filter.collections:
        hints.append("collections: " + (", ".join(facets["collections"][:10]) or "none (no paper came from a library)"))
    if paper_filter.tags:
        hints.append("tags: " + (", ".join(facets["tags"][:15]) or "none"))
    if paper_filter.years and facets["years"]:
        hints.append(f"years {facets['years'][0]}-{facets['years'][-1]}")
    return f" (the corpus has {'; '.join(hints)})" if hints else ""


def indexed_papers(settings: Settings) -> dict[str, Paper]:
    """The papers of the current index (what retrieval can be restricted to), with their library metadata."""
    from lit3r.index.corpus_index import CorpusIndex

    return CorpusIndex.open(settings).papers


def restrict_for(
    settings: Settings, paper_filter: PaperFilter, allowed: Sequence[str] | None = None
) -> list[str] | None:
    """:func:`restrict` over the current index's papers (the index is opened only for a non-empty filter)."""
    if paper_filter.empty:
        return list(allowed) if allowed is not None else None
    return restrict(indexed_papers(settings), paper_filter, allowed)
