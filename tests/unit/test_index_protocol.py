"""The Index protocol: every implementation has each member, and ``load_all`` leaves nothing to read from disk."""

from __future__ import annotations

import shutil
from pathlib import Path

from lit3r.index.corpus_index import RECORD_PARTS, SEARCH_PARTS, CorpusIndex
from lit3r.index.distributed.sharded_index import ShardedCorpusIndex
from lit3r.index.protocol import Index, missing_members, protocol_members
from lit3r.settings import Settings

from fakes.corpus import eight_papers
from fakes.index import MemoryIndex, built_index


def test_the_protocol_names_what_retrieval_and_the_tools_read() -> None:
    members = protocol_members()
    assert {"papers", "chunk_by_id", "bm25_chunks", "dense", "citations", "encoder", "paper_text"} <= set(members)
    assert "load_all" in members


def test_each_implementation_has_every_member(memory_index: MemoryIndex, tmp_path: Path) -> None:
    opened = CorpusIndex(tmp_path / "generation", Settings(home=tmp_path))  # nothing is read by the check
    sharded = ShardedCorpusIndex(tmp_path / "generation", Settings(home=tmp_path), pool=None)  # type: ignore[arg-type]
    for index in (memory_index, opened, sharded):
        assert missing_members(index) == [], type(index).__name__
    assert not (tmp_path / "generation").exists()


def test_the_check_fails_when_a_member_is_missing(memory_index: MemoryIndex) -> None:
    class NoLoadAll:
        def __init__(self) -> None:
            self.__dict__.update({k: v for k, v in vars(memory_index).items()})

        def paper_text(self, paper_id: str) -> str:
            return paper_id

    class LoadAllNotCallable(NoLoadAll):
        load_all = None

    broken = NoLoadAll()
    assert missing_members(broken) == ["load_all"]
    assert missing_members(LoadAllNotCallable()) == ["load_all"]
    del broken.__dict__["dense"]
    assert missing_members(broken) == ["dense", "load_all"]


def test_load_all_reads_every_part_so_the_folder_can_go(tmp_path: Path) -> None:
    index: Index = built_index(tmp_path / "home", eight_papers(tmp_path / "papers.jsonl"))
    assert isinstance(index, CorpusIndex)
    assert not any(part in vars(index) for part in RECORD_PARTS + SEARCH_PARTS)  # lazy until asked
    hits_before = index.bm25_chunks.search("retrieval", 5)
    index = CorpusIndex(index.folder, index.settings)
    index.load_all()
    assert all(part in vars(index) for part in RECORD_PARTS + SEARCH_PARTS)
    shutil.rmtree(index.folder)  # what a newer build does to the generation it replaces
    assert index.bm25_chunks.search("retrieval", 5) == hits_before
    assert len(index.papers) == 8 and index.citations is not None and len(index.paper_vectors) == 8
    assert index.dense.vectors_for([index.chunks[0].id]).shape[0] == 1
