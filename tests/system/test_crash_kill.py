"""kill -9 of `lit3r index` and `lit3r ingest` at random moments: the store and the served index stay whole,
and the next run completes and reuses what the killed one finished.

The commands run in a child process (the real command line, with the hashing test encoder, small
embedding shards and a short sleep per encoder call, so that a kill lands in every stage: chunking,
embedding, writing the generation, publishing). The default run kills each command a few times;
``LIT3R_CRASH_RUNS=20`` (``make crash-test``) kills `index` 20 times and `ingest` 10 times.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.embed_cache import text_hash
from lit3r.index.layout import IndexLayout
from lit3r.retrieval.search import search_index
from lit3r.settings import Settings

from fakes.encoders import HashingEncoder

INDEX_RUNS = int(os.environ.get("LIT3R_CRASH_RUNS", "2"))
INGEST_RUNS = max(1, INDEX_RUNS // 2)
HASHING_CLI = Path(__file__).parents[1] / "fakes" / "hashing_cli.py"
DEMO = Path(__file__).parents[2] / "lit3r" / "demo" / "papers"
SLOW = {"LIT3R_TEST_SHARD_SIZE": "16", "LIT3R_TEST_ENCODE_DELAY": "0.02", "LIT3R_TEST_READY": "1"}
OUTCOMES: Counter[str] = Counter()


def _extra_papers(path: Path, count: int) -> Path:
    rng = random.Random(11)
    words = "retrieval ranking dense sparse encoder passage citation graph table recall precision model".split()
    with path.open("w", encoding="utf-8") as handle:
        for number in range(count):
            body = "\n\n".join(
                " ".join(rng.choice(words) for _ in range(50)) + f" topic{number}x{j}." for j in range(3)
            )
            handle.write(json.dumps({"id": f"x{number:03d}", "title": f"Extra {number}", "text": body}) + "\n")
    return path


def _patch_encoder(monkeypatch: pytest.MonkeyPatch) -> HashingEncoder:
    encoder = HashingEncoder()
    for module in ("lit3r.index.build", "lit3r.index.corpus_index"):
        monkeypatch.setattr(f"{module}.load_encoder", lambda *_a, **_k: encoder)
        monkeypatch.setattr(f"{module}.load_paper_encoder", lambda *_a, **_k: encoder)
    return encoder


@pytest.fixture(scope="module")
def index_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A home whose demo papers are indexed (gen-0001) and 100 more papers await `lit3r index`; and how long
    an unkilled `lit3r index` of it takes after start-up."""
    root = tmp_path_factory.mktemp("crash-index")
    home = root / "base"
    with pytest.MonkeyPatch.context() as monkeypatch:
        _patch_encoder(monkeypatch)
        with CorpusStore(home) as store:
            ingest([DEMO], store)
            build_index(Settings(home=home), store)
            ingest([_extra_papers(root / "extra.jsonl", 100)], store)
    timing = root / "timing"
    shutil.copytree(home, timing)
    started = time.monotonic()
    child = _start(["--home", str(timing), "index"])
    _wait_ready(child)
    ready = time.monotonic()
    assert child.wait(timeout=300) == 0, child.stderr.read()
    assert started < ready
    return home, time.monotonic() - ready


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, **SLOW, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, str(HASHING_CLI), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_ready(child: subprocess.Popen[str]) -> None:
    readable, _, _ = select.select([child.stderr], [], [], 120)
    assert readable and child.stderr.readline().strip() == "ready"


def _kill_after(child: subprocess.Popen[str], delay: float) -> bool:
    """SIGKILL the child ``delay`` seconds after it is ready; False when it finished first."""
    _wait_ready(child)
    time.sleep(delay)
    finished = child.poll() is not None
    if not finished:
        os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    return not finished


def _assert_served_index_whole(settings: Settings) -> CorpusIndex:
    """The CURRENT generation loads and its parts agree: chunks, chunk vectors, BM25 ids, papers, paper vectors."""
    index = CorpusIndex.open(settings)
    chunk_ids = [c.id for c in index.chunks]
    assert index.manifest["chunks"] == len(chunk_ids) == len(set(chunk_ids))
    assert index.dense.ids == chunk_ids and index.dense.vectors_for(chunk_ids).shape == (len(chunk_ids), 64)
    assert index.bm25_chunks.ids == chunk_ids
    assert sorted(index.paper_vectors.ids) == sorted(index.papers) == sorted(index.manifest["papers"])
    assert search_index(index, "dense retrieval of passages", mode="hybrid", k=3)
    return index


def _assert_store_whole(home: Path) -> dict[str, list[str]]:
    """SQLite is intact and every recorded source holds exactly its papers; returns {source: paper ids}."""
    with sqlite3.connect(home / "corpus.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        sources = {path: json.loads(ids) for path, ids in db.execute("SELECT path, paper_ids FROM sources")}
        papers = Counter(source for (source,) in db.execute("SELECT source FROM papers"))
    assert papers == Counter({s: len(ids) for s, ids in sources.items() if ids})
    return sources


def _shard_hashes(folder: Path) -> set[str]:
    hashes: set[str] = set()
    for shard in folder.glob("shard-*.npz"):
        try:
            with np.load(shard) as data:
                hashes.update(data["hashes"].tolist())
        except (OSError, ValueError, KeyError):
            continue  # cut short by the kill: the next run ignores it too
    return hashes


def _outcome(layout: IndexLayout, before: Path) -> str:
    current = layout.current()
    if current is not None and current != before:
        return "killed after the new generation was published"
    if any(layout.root.glob("tmp-*")) or len(list(layout.root.glob("gen-*"))) > 1:
        return "killed while writing the new generation"
    if any((layout.cache / "chunks").glob("shard-*.npz")):
        return "killed while embedding (shards written)"
    return "killed before any shard was written"


def test_kill_index_at_random_moments(index_base, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, duration = index_base
    rng = random.Random(20261201)
    encoder = _patch_encoder(monkeypatch)
    killed = 0
    for run in range(INDEX_RUNS):
        home = tmp_path / f"run-{run:02d}"
        shutil.copytree(base, home)
        settings = Settings(home=home)
        layout = IndexLayout(settings)
        before = layout.current()
        previous_texts = {text_hash(c.text) for c in CorpusIndex(before, settings).chunks}
        if _kill_after(_start(["--home", str(home), "index"]), rng.uniform(0, 0.7 * duration)):
            killed += 1
            OUTCOMES[_outcome(layout, before)] += 1
        else:
            OUTCOMES["finished before the kill"] += 1
        served = _assert_served_index_whole(settings)
        store_sources = _assert_store_whole(home)
        assert store_sources
        finished = _shard_hashes(layout.cache / "chunks")
        encoder.calls.clear()
        with CorpusStore(home) as store:
            wanted = {text_hash(c.text) for p in store.iter_papers() for c in chunk_paper(p, settings.chunker)}
            report = build_index(settings, store)  # the next run completes
        if served.folder != before:
            assert report.up_to_date  # the killed run had already published
        else:
            assert report.chunks_embedded == len(wanted - previous_texts - finished)  # finished work is reused
            assert sum(encoder.calls) == report.chunks_embedded + report.papers_embedded
        assert report.chunks == len(_assert_served_index_whole(settings).chunks)
        assert list(layout.root.glob("tmp-*")) == [] and len(list(layout.root.glob("gen-*"))) == 1
        shutil.rmtree(home)
    print(f"\nindex kills: {dict(OUTCOMES)}")
    assert killed >= 0.6 * INDEX_RUNS, "most kills should land while the build runs"
    if INDEX_RUNS >= 10:
        assert len(OUTCOMES) >= 3, OUTCOMES  # the kills landed in different stages


@pytest.fixture(scope="module")
def ingest_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """400 files to ingest (Markdown papers and one JSON-lines file of 100 records), and the time it takes."""
    root = tmp_path_factory.mktemp("crash-ingest")
    papers = root / "papers"
    for number in range(300):
        folder = papers / f"group-{number % 9}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"paper-{number:03d}.md").write_text(f"# Paper {number}\n\nBody of paper {number} on retrieval.\n")
    _extra_papers(papers / "records.jsonl", 100)
    shutil.copytree(DEMO, papers / "demo")
    child = _start(["--home", str(root / "timing"), "ingest", str(papers)])
    _wait_ready(child)
    ready = time.monotonic()
    assert child.wait(timeout=300) == 0, child.stderr.read()
    return papers, time.monotonic() - ready


def test_kill_ingest_at_random_moments(ingest_base, tmp_path: Path) -> None:
    papers, duration = ingest_base
    rng = random.Random(777)
    stored_at_kill = []
    for run in range(INGEST_RUNS):
        home = tmp_path / f"run-{run:02d}"
        _kill_after(_start(["--home", str(home), "ingest", str(papers)]), rng.uniform(0, duration))
        recorded = _assert_store_whole(home) if (home / "corpus.sqlite").exists() else {}
        stored_at_kill.append(len(recorded))
        with CorpusStore(home) as store:
            report = ingest([papers], store)  # the next run completes
            assert sorted(report.unchanged) == sorted(recorded)  # what the killed run stored is not parsed again
            assert len(report.added) + len(report.unchanged) == 308 and report.failed == []
            assert store.count_papers() == 300 + 100 + 7
            assert not store.references_stale()
            demo = store.get("demo-benchmark")
            assert demo is not None and any(r.resolved_id for r in demo.paper.references)
        _assert_store_whole(home)
    print(f"\ningest kills: files stored when killed (of 308): {stored_at_kill}")


def test_references_resolve_after_an_ingest_stopped_before_resolving(tmp_path: Path, monkeypatch) -> None:
    """A kill after the last file but before reference resolution must not leave references unresolved forever."""
    import lit3r.corpus.ingest as module

    def killed(_store: CorpusStore) -> int:
        raise KeyboardInterrupt  # the process dies here

    monkeypatch.setattr(module, "resolve_corpus_references", killed)
    with CorpusStore(tmp_path / "home") as store, pytest.raises(KeyboardInterrupt):
        ingest([DEMO], store)
    monkeypatch.undo()
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([DEMO], store)
        assert report.added == [] and len(report.unchanged) == 7
        assert report.references_resolved >= 14
        assert not store.references_stale()
