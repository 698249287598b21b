"""A Zotero data folder (``zotero.sqlite`` and ``storage/``), read without touching it.

Zotero keeps its database open and locked while it runs, so the database (with
its ``-journal`` or ``-wal`` file, when present) is first copied to a temporary
folder and the copy is read; the folder itself is never written. Every regular
item with a PDF or HTML snapshot attachment is taken, with its title, creators,
year, venue, DOI, arXiv id, item key, collections (as paths, 'Thesis/Chapter 2')
and tags. Items in the trash (``deletedItems``) are left out and named, and so
are items whose attachment file is missing. Tables and columns are Zotero's own
(schema of Zotero 5 to 7): ``items``, ``itemTypes``, ``fields``, ``itemData``,
``itemDataValues``, ``creators``, ``itemCreators``, ``creatorTypes``,
``itemAttachments``, ``collections``, ``collectionItems``, ``tags``, ``itemTags``,
``deletedItems``.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path

from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError, in_collection, year_of
from lit3r.corpus.library.identity import normalise_arxiv

ZOTERO_TYPES = {"journalArticle": "article", "conferencePaper": "inproceedings", "book": "book",
                "bookSection": "incollection", "thesis": "phdthesis", "report": "techreport",
                "preprint": "misc", "manuscript": "unpublished", "webpage": "online"}  # fmt: skip
"""Zotero item types as BibTeX entry types (the rest are 'misc')."""
VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "conferenceName", "bookTitle", "repository",
                "university", "institution", "publisher", "websiteTitle")  # fmt: skip
SKIPPED_TYPES = ("attachment", "note", "annotation")
READABLE_TYPES = {"application/pdf": 0, "text/html": 1, "application/xhtml+xml": 1}
"""Attachment content types lit3r reads, PDFs first."""
LINKED_URL = 3
"""``itemAttachments.linkMode`` of a link to a web page (no file)."""
_CITATION_KEY = re.compile(r"^\s*Citation Key:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_ARXIV_EXTRA = re.compile(r"arXiv:\s*(\S+)", re.IGNORECASE)


def read_zotero(folder: Path, collection: str | None = None) -> Library:
    """The papers of the Zotero data folder ``folder`` (only those in ``collection`` and its subcollections)."""
    database = folder / "zotero.sqlite"
    if not database.is_file():
        raise LibraryError(folder, "not a Zotero data folder (no zotero.sqlite in it)")
    with tempfile.TemporaryDirectory(prefix="lit3r-zotero-") as tmp:
        copy = Path(tmp) / "zotero.sqlite"
        try:
            shutil.copyfile(database, copy)
            for suffix in ("-journal", "-wal"):  # a transaction in progress: its copy lets SQLite roll it back
                if Path(f"{database}{suffix}").is_file():
                    shutil.copyfile(f"{database}{suffix}", f"{copy}{suffix}")
        except OSError as exc:
            raise LibraryError(database, f"cannot copy the database to read it ({exc.strerror or exc})") from exc
        db = sqlite3.connect(copy)
        try:
            return _read(db, folder, collection)
        except sqlite3.DatabaseError as exc:
            raise LibraryError(database, f"not a Zotero database this lit3r can read ({exc})") from exc
        finally:
            db.close()


def _read(db: sqlite3.Connection, folder: Path, collection: str | None) -> Library:
    library = Library(name=f"zotero:{folder.resolve()}")
    paths = _collection_paths(db)
    members: dict[int, list[str]] = defaultdict(list)
    for item_id, collection_id in db.execute("SELECT itemID, collectionID FROM collectionItems"):
        members[item_id].append(paths[collection_id])
    if collection is not None and not in_collection(list(paths.values()), collection):
        names = ", ".join(sorted(paths.values())[:10]) or "none"
        raise LibraryError(folder, f"no collection named {collection!r} (collections: {names})")
    trashed = {row[0] for row in db.execute("SELECT itemID FROM deletedItems")}
    attachments = _attachments(db, folder, trashed)
    items = db.execute(
        "SELECT items.itemID, items.key, itemTypes.typeName FROM items JOIN itemTypes USING (itemTypeID)"
        " WHERE itemTypes.typeName NOT IN (?, ?, ?) ORDER BY items.itemID",
        SKIPPED_TYPES,
    ).fetchall()
    fields = _fields(db)
    creators = _creators(db)
    tags = _tags(db)
    for item_id, key, type_name in items:
        if collection is not None and not in_collection(members[item_id], collection):
            continue
        data = fields.get(item_id, {})
        where = f"Zotero item {key} {data.get('title', '(untitled)')!r}"
        found = attachments.get(item_id, [])
        if not found:
            continue  # no PDF or snapshot: nothing to read
        if item_id in trashed:
            library.skipped.append((where, "in the Zotero trash; not ingested"))
            continue
        files = [path for path, _ in found if path is not None and path.is_file()]
        if not files:
            named = "; ".join(str(path) if path else why for path, why in found)
            library.skipped.append((where, f"its attachment is missing ({named}); not ingested"))
            continue
        if not data.get("title"):
            library.skipped.append((where, "no title; not ingested"))
            continue
        extra = data.get("extra", "")
        key_match = _CITATION_KEY.search(extra)
        arxiv_extra = _ARXIV_EXTRA.search(extra)
        candidates = [data.get("archiveID", ""), data.get("url", ""), data.get("DOI", ""),
                      arxiv_extra.group(1) if arxiv_extra else ""]  # fmt: skip
        library.entries.append(
            LibraryEntry(
                title=data["title"],
                where=where,
                authors=creators.get(item_id, []),
                year=year_of(data.get("date")),
                venue=next((data[f] for f in VENUE_FIELDS if data.get(f)), None),
                abstract=data.get("abstractNote", ""),
                doi=data.get("DOI"),
                arxiv_id=next((c for c in candidates if normalise_arxiv(c)), None),
                citation_key=data.get("citationKey") or (key_match.group(1) if key_match else None),
                library_key=key,
                entry_type=ZOTERO_TYPES.get(type_name, "misc"),
                collections=members.get(item_id, []),
                tags=tags.get(item_id, []),
                url=data.get("url"),
                files=files,
            )
        )
    return library


def _collection_paths(db: sqlite3.Connection) -> dict[int, str]:
    rows = {cid: (name, parent) for cid, name, parent in
            db.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections")}  # fmt: skip
    paths: dict[int, str] = {}
    for cid in rows:
        names, seen, current = [], set(), cid
        while current in rows and current not in seen:  # a parent loop in a damaged database ends the walk
            seen.add(current)
            names.append(rows[current][0])
            current = rows[current][1]
        paths[cid] = "/".join(reversed(names))
    return paths


def _fields(db: sqlite3.Connection) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = defaultdict(dict)
    rows = db.execute(
        "SELECT itemData.itemID, fields.fieldName, itemDataValues.value FROM itemData"
        " JOIN fields USING (fieldID) JOIN itemDataValues USING (valueID)"
    )
    for item_id, name, value in rows:
        out[item_id][name] = str(value)
    return out


def _creators(db: sqlite3.Connection) -> dict[int, list[str]]:
    """Authors in order (editors and others only when an item has no author); fieldMode 1 is a one-field name."""
    rows = db.execute(
        "SELECT itemCreators.itemID, creators.firstName, creators.lastName, creators.fieldMode,"
        " creatorTypes.creatorType FROM itemCreators JOIN creators USING (creatorID)"
        " LEFT JOIN creatorTypes USING (creatorTypeID) ORDER BY itemCreators.itemID, itemCreators.orderIndex"
    )
    authors: dict[int, list[str]] = defaultdict(list)
    others: dict[int, list[str]] = defaultdict(list)
    for item_id, first, last, mode, kind in rows:
        name = (last or "") if mode == 1 else f"{first or ''} {last or ''}"
        (authors if kind in (None, "author") else others)[item_id].append(" ".join(name.split()))
    return {item: authors.get(item) or others[item] for item in {*authors, *others}}


def _tags(db: sqlite3.Connection) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for item_id, name in db.execute("SELECT itemTags.itemID, tags.name FROM itemTags JOIN tags USING (tagID)"):
        out[item_id].append(name)
    return out


def _attachments(db: sqlite3.Connection, folder: Path, trashed: set[int]) -> dict[int, list[tuple[Path | None, str]]]:
    """Per parent item, its readable attachments, best first: ``(path, "")`` or ``(None, why it has no path)``."""
    rows = db.execute(
        "SELECT itemAttachments.itemID, itemAttachments.parentItemID, itemAttachments.linkMode,"
        " itemAttachments.contentType, itemAttachments.path, items.key FROM itemAttachments"
        " JOIN items USING (itemID) WHERE itemAttachments.parentItemID IS NOT NULL"
    )
    found: dict[int, list[tuple[int, Path | None, str]]] = defaultdict(list)
    for item_id, parent, mode, content_type, path, key in rows:
        rank = READABLE_TYPES.get(content_type or "")
        if rank is None or mode == LINKED_URL or item_id in trashed:
            continue
        found[parent].append((rank, *_attachment_path(folder, key, path)))
    return {parent: [(p, why) for _, p, why in sorted(items, key=lambda x: x[0])] for parent, items in found.items()}


def _attachment_path(folder: Path, key: str, path: str | None) -> tuple[Path | None, str]:
    """``storage:name.pdf`` lives in ``storage/<attachment key>/``; a linked file has its own path."""
    if not path:
        return None, "the attachment has no file"
    if path.startswith("storage:"):
        return folder / "storage" / key / path.removeprefix("storage:"), ""
    if path.startswith("attachments:"):  # relative to the 'Linked Attachment Base Directory' preference
        return None, f"{path} is relative to Zotero's linked-attachment base folder, which lit3r cannot see"
    return Path(path), ""
