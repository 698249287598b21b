"""BibTeX and BibLaTeX files (as Zotero, JabRef, Better BibTeX write them), read with bibtexparser 2.

Each entry gives its metadata (LaTeX decoded: ``P\\"apers`` -> ``Päpers``, ``@string`` macros
resolved) and its ``file`` field, read raw (see :mod:`.files`), relative to the ``.bib``'s folder.
A block that cannot be parsed is named with its line; the other entries still come in.
"""

from __future__ import annotations

import logging
from pathlib import Path

import bibtexparser
from bibtexparser import middlewares
from bibtexparser.model import Entry

from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError, split_keywords, year_of
from lit3r.corpus.library.files import resolve, split_file_field
from lit3r.corpus.library.identity import normalise_arxiv
from lit3r.corpus.sniff import UndecodableText, decode_text

VENUE_FIELDS = (
    "journal",
    "journaltitle",
    "booktitle",
    "eventtitle",
    "publisher",
    "institution",
    "school",
    "howpublished",
)


def read_bibtex(path: Path) -> Library:
    """Every entry of a ``.bib`` file; :class:`LibraryError` when the file cannot be read at all."""
    try:
        text, _ = decode_text(path.read_bytes())
    except OSError as exc:
        raise LibraryError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except UndecodableText as exc:
        raise LibraryError(path, str(exc)) from exc
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # failed blocks are reported below, by line
    raw = bibtexparser.parse_string(text)
    decoded = bibtexparser.parse_string(
        text,
        append_middleware=[
            middlewares.LatexDecodingMiddleware(),
            middlewares.SeparateCoAuthors(),
            middlewares.SplitNameParts(),
        ],
    )
    library = Library(name=f"bibtex:{path.resolve()}")
    for block in decoded.failed_blocks:
        reason = getattr(getattr(block, "error", None), "abort_reason", None) or type(block).__name__
        library.skipped.append(
            (f"{path}: block at line {block.start_line + 1}", f"not valid BibTeX ({reason}); left out")
        )
    raw_files = {e.key: str(e.fields_dict["file"].value) for e in raw.entries if "file" in e.fields_dict}
    for entry in decoded.entries:  # the file field raw: LaTeX decoding would eat its '\:' escapes
        _add(library, entry, raw_files.get(entry.key), path)
    if not decoded.entries and not decoded.failed_blocks and text.strip():
        raise LibraryError(path, "no BibTeX entry found (is this a .bib file?)")
    return library


def _add(library: Library, entry: Entry, file_field: str | None, path: Path) -> None:
    fields = {f.key.lower(): f.value for f in entry.fields}
    where = f"{path}: entry {entry.key!r} (line {entry.start_line + 1})"
    title = _text(fields.get("title"))
    if not title:
        library.skipped.append((where, "no title; left out"))
        return
    files, missing = resolve(split_file_field(file_field), path.resolve().parent) if file_field else ([], [])
    arxiv = (_text(fields.get(f)) for f in ("eprint", "arxivid", "url", "doi"))
    library.entries.append(
        LibraryEntry(
            title=title,
            where=where,
            authors=_names(fields.get("author")),
            year=year_of(fields.get("year") or fields.get("date")),
            venue=next((_text(fields[f]) for f in VENUE_FIELDS if _text(fields.get(f))), None),
            abstract=_text(fields.get("abstract")),
            doi=_text(fields.get("doi")) or None,
            arxiv_id=next((candidate for candidate in arxiv if normalise_arxiv(candidate)), None),
            citation_key=entry.key,
            entry_type=entry.entry_type.lower(),
            tags=split_keywords(_text(fields.get("keywords"))),
            collections=split_keywords(_text(fields.get("groups"))),
            url=_text(fields.get("url")) or None,
            files=files,
            missing_files=missing,
        )
    )


def _text(value: object) -> str:
    return " ".join(str(value).split()) if value else ""


def _names(value: object) -> list[str]:
    """'First von Last, Jr' for each author (bibtexparser's NameParts); a braced corporate name as it is."""
    if not value:
        return []
    names = []
    for name in value if isinstance(value, list) else [value]:
        if isinstance(name, middlewares.NameParts):
            names.append(" ".join(name.first + name.von + name.last + ([", " + " ".join(name.jr)] if name.jr else [])))
        else:
            names.append(str(name))
    return [n.replace(" , ", ", ").strip() for n in names if n.strip()]
