"""RIS files (EndNote, Zotero, Mendeley, publishers' exports), read with rispy.

Attachments come from ``L1`` (file attachments; Zotero writes one line per file, as a
path or ``file://`` URL), relative to the ``.ris``'s folder.
"""

from __future__ import annotations

from pathlib import Path

import rispy

from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError, display_name, year_of
from lit3r.corpus.library.files import resolve
from lit3r.corpus.library.identity import normalise_arxiv
from lit3r.corpus.sniff import UndecodableText, decode_text

RIS_TYPES = {"JOUR": "article", "CONF": "inproceedings", "CPAPER": "inproceedings", "BOOK": "book",
             "CHAP": "incollection", "THES": "phdthesis", "RPRT": "techreport", "ELEC": "online"}  # fmt: skip
"""RIS reference types as BibTeX entry types (the rest are 'misc')."""
_LIST_TAGS = [*rispy.LIST_TYPE_TAGS, "L1", "L2"]


def read_ris(path: Path) -> Library:
    """Every reference of a ``.ris`` file; :class:`LibraryError` when it cannot be read or holds none."""
    try:
        text, _ = decode_text(path.read_bytes())
        records = rispy.loads(text, list_tags=_LIST_TAGS)
    except OSError as exc:
        raise LibraryError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except UndecodableText as exc:
        raise LibraryError(path, str(exc)) from exc
    except (ValueError, KeyError, IndexError) as exc:  # rispy: a line outside a reference, a missing ER
        raise LibraryError(path, f"not a valid RIS file ({exc})") from exc
    if not records:
        raise LibraryError(path, "no RIS reference found (no 'TY  - ' line)")
    library = Library(name=f"ris:{path.resolve()}")
    for number, record in enumerate(records, 1):
        where = f"{path}: reference {number}" + (f" (ID {record['id']})" if record.get("id") else "")
        title = record.get("title") or record.get("primary_title") or ""
        if not title.strip():
            library.skipped.append((where, "no title (TI or T1); left out"))
            continue
        files, missing = resolve(record.get("file_attachments1", []) + record.get("file_attachments2", []),
                                 path.resolve().parent)  # fmt: skip
        urls = record.get("urls", [])
        library.entries.append(
            LibraryEntry(
                title=title,
                where=where,
                authors=[display_name(a) for a in record.get("authors") or record.get("first_authors") or []],
                year=year_of(record.get("year") or record.get("publication_year") or record.get("date")),
                venue=record.get("secondary_title") or record.get("journal_name") or record.get("alternate_title3"),
                abstract=record.get("abstract") or record.get("notes_abstract") or "",
                doi=record.get("doi"),
                arxiv_id=next((u for u in [*urls, record.get("doi") or ""] if normalise_arxiv(u)), None),
                citation_key=record.get("id") or None,
                entry_type=RIS_TYPES.get(record.get("type_of_reference", ""), "misc"),
                tags=record.get("keywords", []),
                url=urls[0] if urls else None,
                files=files,
                missing_files=missing,
            )
        )
    return library
