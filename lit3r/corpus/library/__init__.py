"""The researcher's own library: Zotero data folders, BibTeX/BibLaTeX, RIS and CSL-JSON files.

Each reader turns its library into :class:`~lit3r.corpus.library.entry.Library`: one
:class:`~lit3r.corpus.library.entry.LibraryEntry` per paper (its metadata and the files
attached to it) and every item it left out with the reason. :mod:`.run` ingests them.
"""

from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError

LIBRARY_SUFFIXES = (".bib", ".bibtex", ".biblatex", ".ris")
"""Files read as libraries by their name; a CSL-JSON file (``.json``) is recognised by its content."""

__all__ = ["LIBRARY_SUFFIXES", "Library", "LibraryEntry", "LibraryError"]
