"""CSL-JSON files (Zotero's, Better BibTeX's and pandoc's export): a JSON list of CSL items.

There is no standard attachment field; a ``file`` key (a path or a list of paths) is read
when present, relative to the file's folder. Without one, an item comes in as metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError, split_keywords, year_of
from lit3r.corpus.library.files import resolve
from lit3r.corpus.library.identity import normalise_arxiv

CSL_TYPES = {"article-journal": "article", "paper-conference": "inproceedings", "book": "book",
             "chapter": "incollection", "thesis": "phdthesis", "report": "techreport", "webpage": "online",
             "article": "misc", "manuscript": "unpublished"}  # fmt: skip
"""CSL item types as BibTeX entry types (the rest are 'misc')."""


def looks_like_csl(data: Any) -> bool:
    """A JSON value that is a CSL-JSON list: objects with a CSL ``type`` and CSL's own keys."""
    if not isinstance(data, list) or not data or not all(isinstance(item, dict) for item in data[:20]):
        return False
    csl_keys = {"issued", "container-title", "author", "DOI", "citation-key", "URL"}
    return all("type" in item and "title" in item and csl_keys & item.keys() for item in data[:20])


def read_csl(path: Path, data: Any | None = None) -> Library:
    """Every item of a CSL-JSON file (``data``: its content already parsed)."""
    if data is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LibraryError(path, f"not a readable JSON file ({exc})") from exc
    if not looks_like_csl(data):
        raise LibraryError(path, "not CSL-JSON (a list of objects with 'type', 'title' and CSL fields)")
    library = Library(name=f"csl:{path.resolve()}")
    for number, item in enumerate(data, 1):
        where = f"{path}: item {number}" + (f" (id {item.get('id')!r})" if item.get("id") else "")
        if not isinstance(item, dict) or not str(item.get("title") or "").strip():
            library.skipped.append((where, "no title; left out"))
            continue
        raw_files = item.get("file") or []
        files, missing = resolve([raw_files] if isinstance(raw_files, str) else list(raw_files), path.resolve().parent)
        url = str(item.get("URL") or "") or None
        library.entries.append(
            LibraryEntry(
                title=str(item["title"]),
                where=where,
                authors=[_name(a) for a in item.get("author") or [] if isinstance(a, dict)],
                year=_year(item.get("issued")),
                venue=_first(item.get("container-title")) or _first(item.get("publisher")),
                abstract=str(item.get("abstract") or ""),
                doi=str(item.get("DOI") or "") or None,
                arxiv_id=next(
                    (
                        c
                        for c in (str(item.get("number") or ""), url or "", str(item.get("DOI") or ""))
                        if normalise_arxiv(c)
                    ),
                    None,
                ),  # fmt: skip
                citation_key=str(item.get("citation-key") or item.get("id") or "") or None,
                entry_type=CSL_TYPES.get(str(item.get("type")), "misc"),
                tags=split_keywords(str(item.get("keyword") or "")),
                url=url,
                files=files,
                missing_files=missing,
            )
        )
    return library


def _name(author: dict) -> str:
    if author.get("literal"):
        return str(author["literal"])
    return " ".join(str(author[k]) for k in ("given", "non-dropping-particle", "family") if author.get(k))


def _year(issued: Any) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return year_of(parts[0][0])
        return year_of(issued.get("raw") or issued.get("literal"))
    return year_of(issued)


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value) if value else None
