"""Citation graph between corpus papers, from the references each paper resolved to another corpus paper."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from lit3r.models import Paper

GRAPH_FILE = "citations.json"
FORMAT_VERSION = 1


class CitationGraph:
    """Directed graph: an edge ``a -> b`` means paper ``a`` cites corpus paper ``b``."""

    def __init__(self, references: dict[str, list[str]] | None = None) -> None:
        self._references: dict[str, list[str]] = {}
        self._cited_by: dict[str, set[str]] = {}
        for pid, cited in (references or {}).items():
            self._set(pid, cited)

    @classmethod
    def build(cls, papers: Iterable[Paper]) -> CitationGraph:
        """A graph over ``papers``, from each paper's :attr:`~lit3r.models.Paper.resolved_references`."""
        return cls().extend(papers)

    def _set(self, pid: str, cited: list[str]) -> None:
        """Record (or replace) the outgoing edges of ``pid``; self-citations are dropped."""
        for old in self._references.get(pid, []):
            self._cited_by.get(old, set()).discard(pid)
        targets = [c for c in dict.fromkeys(cited) if c != pid]
        self._references[pid] = targets
        for target in targets:
            self._cited_by.setdefault(target, set()).add(pid)

    def extend(self, papers: Iterable[Paper]) -> CitationGraph:
        """Add papers in place (a paper already present has its references replaced) and return this graph."""
        for paper in papers:
            self._set(paper.id, paper.resolved_references)
        return self

    def __contains__(self, pid: object) -> bool:
        return pid in self._references

    def __len__(self) -> int:
        """Number of papers whose references are recorded."""
        return len(self._references)

    @property
    def papers(self) -> list[str]:
        """Ids of the papers whose references are recorded, in insertion order."""
        return list(self._references)

    def references(self, pid: str) -> set[str]:
        """Corpus papers that ``pid`` cites (empty for an unknown id)."""
        return set(self._references.get(pid, []))

    def references_ordered(self, pid: str) -> list[str]:
        """Corpus papers that ``pid`` cites, in reference-list order."""
        return list(self._references.get(pid, []))

    def reference_count(self, pid: str) -> int:
        """How many corpus papers ``pid`` cites."""
        return len(self._references.get(pid, ()))

    def co_citing(self, pid: str) -> dict[str, int]:
        """Every paper that cites at least one of the papers ``pid`` cites -> how many of them it cites
        (``pid`` itself included), counted through the cited-by lists without copying them."""
        counts: dict[str, int] = {}
        for cited in self._references.get(pid, ()):
            for citer in self._cited_by.get(cited, ()):
                counts[citer] = counts.get(citer, 0) + 1
        return counts

    def cited_by(self, pid: str) -> set[str]:
        """Corpus papers that cite ``pid`` (empty for an unknown id)."""
        return set(self._cited_by.get(pid, set()))

    @property
    def edges(self) -> int:
        """Number of citation edges."""
        return sum(len(cited) for cited in self._references.values())

    def save(self, folder: Path) -> None:
        """Write the graph to ``folder/citations.json``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT_VERSION, "references": self._references}
        tmp = folder / f".{GRAPH_FILE}.tmp"
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(folder / GRAPH_FILE)

    @classmethod
    def load(cls, folder: Path) -> CitationGraph:
        """Read a graph written by :meth:`save`."""
        path = Path(folder) / GRAPH_FILE
        if not path.exists():
            raise FileNotFoundError(f"{folder}: no citation graph ({GRAPH_FILE} missing)")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"{path}: citation graph format {data.get('format')}, expected {FORMAT_VERSION}")
        return cls(data["references"])
