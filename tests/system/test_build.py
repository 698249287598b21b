"""Index build: save/load, extend without re-embedding, a killed build leaves the old index usable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index import build as build_module
from lit3r.index.build import EmptyCorpusError, build_index
from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
from lit3r.index.layout import IndexLayout
from lit3r.retrieval.search import search_index
from lit3r.settings import Settings, index_key

from fakes.qasper import qasper_paper, write_qasper


def _paper(title: str, words: str) -> dict:
    paper = qasper_paper(title, [("Intro", [f"{words} introduction text."]), ("Results", [f"{words} results."])])
    paper["figures_and_tables"] = [{"caption": f"Table 1: {words} scores.", "file": "t1.png"}]
    return paper


def _ingest(settings: Settings, tmp_path: Path, papers: dict) -> None:
    path = write_qasper(tmp_path / f"batch{len(list(tmp_path.glob('batch*')))}.json", papers)
    with CorpusStore(settings.home) as store:
        ingest([path], store)


def test_build_then_search_and_reload(settings, tmp_path, hashing_encoder) -> None:
    _ingest(settings, tmp_path, {"a": _paper("Sparse", "bm25 lexical"), "b": _paper("Dense", "vector neural")})
    with CorpusStore(settings.home) as store:
        report = build_index(settings, store)
    index = CorpusIndex.open(settings)
    assert report.papers == 2 and report.chunks == len(index.chunks)
    assert report.chunks_embedded == len({c.text for c in index.chunks})  # identical texts are embedded once
    assert set(index.papers) == {"a", "b"}
    for mode in ("bm25", "dense", "hybrid"):
        hits = search_index(index, "lexical bm25", mode=mode, k=3)
        assert hits[0].paper_id == "a", mode
        assert hits[0].locator.section is not None
    in_paper = search_index(index, "lexical bm25", mode="bm25", k=10, paper_ids=["b"])
    assert all(h.paper_id == "b" for h in in_paper)


def test_unchanged_corpus_is_up_to_date(settings, tmp_path, hashing_encoder) -> None:
    _ingest(settings, tmp_path, {"a": _paper("Sparse", "bm25")})
    with CorpusStore(settings.home) as store:
        first = build_index(settings, store)
        second = build_index(settings, store)
    assert second.up_to_date and second.generation == first.generation


def test_adding_papers_embeds_only_new_chunks(settings, tmp_path, hashing_encoder) -> None:
    _ingest(settings, tmp_path, {"a": _paper("Sparse", "bm25"), "b": _paper("Dense", "vectors")})
    with CorpusStore(settings.home) as store:
        first = build_index(settings, store)
    old = CorpusIndex.open(settings)
    old_ids = [c.id for c in old.chunks]
    old_vectors = old.dense.vectors_for(old_ids)
    _ingest(settings, tmp_path, {"c": _paper("Graphs", "citation graph")})
    with CorpusStore(settings.home) as store:
        second = build_index(settings, store)
    new = CorpusIndex.open(settings)
    new_chunks = [c for c in new.chunks if c.paper_id == "c"]
    assert second.chunks_embedded == len(new_chunks)
    assert second.chunks_reused == first.chunks
    assert np.allclose(new.dense.vectors_for(old_ids), old_vectors, atol=1e-6)  # reused, only re-normalised
    assert not first.generation.exists()  # the old generation is removed after the swap
    assert search_index(new, "citation graph", mode="bm25", k=1)[0].paper_id == "c"


def test_killed_build_leaves_previous_index_and_resumes(settings, tmp_path, hashing_encoder, monkeypatch) -> None:
    _ingest(settings, tmp_path, {"a": _paper("Sparse", "bm25")})
    with CorpusStore(settings.home) as store:
        build_index(settings, store)
    _ingest(settings, tmp_path, {f"n{i}": _paper(f"New {i}", f"topic{i}") for i in range(3)})

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt("killed while writing indexes")

    monkeypatch.setattr(build_module, "_write_generation", killed)
    with CorpusStore(settings.home) as store, pytest.raises(KeyboardInterrupt):
        build_index(settings, store)
    survivor = CorpusIndex.open(settings)
    assert set(survivor.papers) == {"a"}  # the previous generation is still the current one
    assert search_index(survivor, "bm25", mode="hybrid", k=1)[0].paper_id == "a"
    monkeypatch.undo()
    for module in ("lit3r.index.build", "lit3r.index.corpus_index"):
        monkeypatch.setattr(f"{module}.load_encoder", lambda *_a, **_k: hashing_encoder)
        monkeypatch.setattr(f"{module}.load_paper_encoder", lambda *_a, **_k: hashing_encoder)
    with CorpusStore(settings.home) as store:
        resumed = build_index(settings, store)
    assert resumed.chunks_embedded == 0  # vectors computed before the kill were kept in the cache
    assert set(CorpusIndex.open(settings).papers) == {"a", "n0", "n1", "n2"}
    assert not list(IndexLayout(settings).root.glob("tmp-*"))


def test_settings_that_shape_the_index_get_their_own_folder(settings, tmp_path, hashing_encoder) -> None:
    _ingest(settings, tmp_path, {"a": _paper("Sparse", "bm25")})
    qasper = settings.model_copy(update={"chunker": settings.chunker.model_copy(update={"kind": "qasper"})})
    assert index_key(qasper) != index_key(settings)
    with CorpusStore(settings.home) as store:
        build_index(settings, store)
        with pytest.raises(IndexNotBuiltError, match="lit3r index"):
            CorpusIndex.open(qasper)
        build_index(qasper, store)
    assert IndexLayout(qasper).current() != IndexLayout(settings).current()
    assert CorpusIndex.open(qasper).chunks[1].text.startswith("Title: Sparse. Section:")


def test_empty_corpus_is_a_clear_error(settings) -> None:
    with CorpusStore(settings.home) as store, pytest.raises(EmptyCorpusError, match="lit3r ingest"):
        build_index(settings, store)
