"""Citation graph: edges from resolved references, persistence and extension."""

from __future__ import annotations

import pytest

from lit3r.index.citations import CitationGraph
from lit3r.models import Paper, Reference


def _paper(pid: str, *cited: str | None) -> Paper:
    refs = [Reference(raw=f"ref to {c}", resolved_id=c) for c in cited]
    return Paper(id=pid, title=f"Paper {pid}", references=refs)


PAPERS = [
    _paper("a", "b", "c", None, "b"),  # unresolved and duplicate references
    _paper("b", "c"),
    _paper("c"),
    _paper("d", "a", "d"),  # self-citation
]


def test_out_and_in_edges():
    graph = CitationGraph.build(PAPERS)
    assert graph.references("a") == {"b", "c"}
    assert graph.references_ordered("a") == ["b", "c"]
    assert graph.references("c") == set()
    assert graph.cited_by("c") == {"a", "b"}
    assert graph.cited_by("a") == {"d"}
    assert graph.cited_by("d") == set()  # the self-citation is dropped
    assert graph.references("unknown") == set() and graph.cited_by("unknown") == set()
    assert graph.edges == 4
    assert len(graph) == 4 and "d" in graph and "x" not in graph


def test_results_are_copies():
    graph = CitationGraph.build(PAPERS)
    graph.references("a").add("zzz")
    graph.cited_by("c").clear()
    assert graph.references("a") == {"b", "c"} and graph.cited_by("c") == {"a", "b"}


def test_save_load_round_trip(tmp_path):
    graph = CitationGraph.build(PAPERS)
    graph.save(tmp_path)
    loaded = CitationGraph.load(tmp_path)
    assert loaded.papers == graph.papers and loaded.edges == graph.edges
    for pid in ["a", "b", "c", "d"]:
        assert loaded.references_ordered(pid) == graph.references_ordered(pid)
        assert loaded.cited_by(pid) == graph.cited_by(pid)
    with pytest.raises(FileNotFoundError):
        CitationGraph.load(tmp_path / "missing")


def test_extend_adds_papers_and_replaces_known_ones():
    graph = CitationGraph.build(PAPERS[:2])
    assert graph.cited_by("a") == set()
    graph.extend([PAPERS[3], _paper("e", "a", "c")])
    assert graph.cited_by("a") == {"d", "e"} and graph.cited_by("c") == {"a", "b", "e"}
    graph.extend([_paper("b", "e")])  # re-ingested paper with a new reference list
    assert graph.references("b") == {"e"} and graph.cited_by("c") == {"a", "e"}
    assert graph.edges == CitationGraph.build([PAPERS[0], _paper("b", "e"), PAPERS[3], _paper("e", "a", "c")]).edges
