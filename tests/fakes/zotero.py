"""A Zotero data folder built for the tests: ``zotero.sqlite`` in Zotero's own schema, and ``storage/``.

The tables and columns are those of Zotero's ``userdata.sql`` (schema 107, Zotero 5 to 7) and, for the
type and field lists, ``system.sql`` (``itemTypes``, ``fields``, ``creatorTypes``); only the tables lit3r
reads, plus ``libraries``, are created. Items are written the way Zotero writes them: an item's fields
through ``itemData`` -> ``itemDataValues``, creators through ``itemCreators``, an attachment as a child
item of type 'attachment' with an ``itemAttachments`` row whose ``path`` is ``storage:<file name>`` and
whose file lives in ``storage/<attachment key>/``.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE libraries (libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT NOT NULL,
    filesEditable INT NOT NULL, version INT NOT NULL DEFAULT 0, storageVersion INT NOT NULL DEFAULT 0,
    lastSync INT NOT NULL DEFAULT 0, archived INT NOT NULL DEFAULT 0);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE itemNotes (itemID INTEGER PRIMARY KEY, parentItemID INT, note TEXT, title TEXT);
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT,
    charsetID INT, path TEXT, syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT);
CREATE TABLE tags (tagID INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE itemTags (itemID INT NOT NULL, tagID INT NOT NULL, type INT NOT NULL, PRIMARY KEY (itemID, tagID));
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex));
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL, clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key));
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID));
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
"""
ITEM_TYPES = ["annotation", "attachment", "note", "book", "bookSection", "journalArticle", "conferencePaper",
              "preprint", "report", "thesis", "webpage"]  # fmt: skip
FIELDS = ["title", "abstractNote", "date", "publicationTitle", "proceedingsTitle", "conferenceName", "DOI", "url",
          "extra", "archiveID", "repository", "volume", "pages"]  # fmt: skip
CREATOR_TYPES = ["author", "contributor", "editor"]
LINK_IMPORTED_FILE, LINK_IMPORTED_URL, LINK_LINKED_FILE, LINK_LINKED_URL = 0, 1, 2, 3


class ZoteroFolder:
    """Write items, attachments, collections, tags and trash into a new Zotero data folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(folder / "zotero.sqlite")
        self.db.executescript(SCHEMA)
        self.db.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)")
        self.db.executemany("INSERT INTO itemTypes (typeName) VALUES (?)", [(t,) for t in ITEM_TYPES])
        self.db.executemany("INSERT INTO fields (fieldName) VALUES (?)", [(f,) for f in FIELDS])
        self.db.executemany("INSERT INTO creatorTypes (creatorType) VALUES (?)", [(c,) for c in CREATOR_TYPES])
        self._keys = 0

    def _key(self) -> str:
        self._keys += 1
        return f"K{self._keys:07d}"

    def item(self, type_name: str, fields: dict[str, str], creators: list[tuple[str, str]] = (),
             key: str | None = None) -> int:  # fmt: skip
        """A regular item (creators as (first, last) authors); returns its itemID."""
        type_id = self.db.execute("SELECT itemTypeID FROM itemTypes WHERE typeName = ?", (type_name,)).fetchone()[0]
        cursor = self.db.execute("INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)",
                                 (type_id, key or self._key()))  # fmt: skip
        item_id = cursor.lastrowid
        for name, value in fields.items():
            field_id = self.db.execute("SELECT fieldID FROM fields WHERE fieldName = ?", (name,)).fetchone()[0]
            self.db.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
            value_id = self.db.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()[0]
            self.db.execute("INSERT INTO itemData VALUES (?, ?, ?)", (item_id, field_id, value_id))
        for order, (first, last) in enumerate(creators):
            self.db.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                            (first, last, 1 if not first else 0))  # fmt: skip
            creator_id = self.db.execute("SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ?",
                                         (first, last)).fetchone()[0]  # fmt: skip
            self.db.execute("INSERT INTO itemCreators VALUES (?, ?, 1, ?)", (item_id, creator_id, order))
        return item_id

    def attach(self, parent: int, source: Path | None, name: str, content_type: str = "application/pdf",
               link_mode: int = LINK_IMPORTED_FILE) -> str:  # fmt: skip
        """An imported attachment: ``source`` copied to ``storage/<key>/<name>`` (None: the file is missing)."""
        key = self._key()
        type_id = self.db.execute("SELECT itemTypeID FROM itemTypes WHERE typeName = 'attachment'").fetchone()[0]
        cursor = self.db.execute("INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)", (type_id, key))
        self.db.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, ?, ?, ?)",
            (cursor.lastrowid, parent, link_mode, content_type, f"storage:{name}"),
        )
        if source is not None:
            (self.folder / "storage" / key).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, self.folder / "storage" / key / name)
        return key

    def collection(self, name: str, parent: int | None = None) -> int:
        cursor = self.db.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) VALUES (?, ?, 1, ?)",
            (name, parent, self._key()),
        )
        return cursor.lastrowid

    def file_in(self, collection: int, item: int) -> None:
        self.db.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", (collection, item))

    def tag(self, item: int, name: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (name,))
        tag_id = self.db.execute("SELECT tagID FROM tags WHERE name = ?", (name,)).fetchone()[0]
        self.db.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item, tag_id))

    def trash(self, item: int) -> None:
        self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item,))

    def close(self) -> None:
        self.db.commit()
        self.db.close()
