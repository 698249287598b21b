"""Clear errors for a cluster that is not there, an address that is wrong, and an index without shards."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
from lit3r.index.distributed.cluster import ClusterError, check_reachable, connect, head_endpoint
from lit3r.index.distributed.local import free_port
from lit3r.index.distributed.shard_build import build_shards
from lit3r.index.opening import open_index
from lit3r.settings import RaySettings, Settings, index_key, load_settings

from conftest import qasper_paper, write_qasper
from ray_support import InlineRay

runner = CliRunner()


def _closed_address() -> str:
    return f"127.0.0.1:{free_port()}"


def test_an_unreachable_cluster_is_named_at_once() -> None:
    address = _closed_address()
    started = time.monotonic()
    with pytest.raises(ClusterError, match=f"no Ray cluster reachable at {address}"):
        connect(RaySettings(address=address, connect_timeout_s=2))
    assert time.monotonic() - started < 5  # Ray itself would wait minutes


def test_addresses() -> None:
    assert head_endpoint("127.0.0.1:6379") == ("127.0.0.1", 6379)
    assert head_endpoint("ray://head.example:10001") == ("head.example", 10001)
    assert head_endpoint("auto") is None
    for bad in ("no-port", "127.0.0.1:notaport"):
        with pytest.raises(ClusterError, match="invalid Ray address"):
            check_reachable(bad, 1)
    with pytest.raises(ClusterError, match="no Ray cluster configured"):
        connect(RaySettings())


def test_index_with_an_unreachable_cluster_fails_naming_it(tmp_path: Path) -> None:
    address = _closed_address()
    corpus = write_qasper(tmp_path / "q.json", {"p1": qasper_paper("Sparse", [("Method", ["BM25 k1 and b."])])})
    assert runner.invoke(app, ["--home", str(tmp_path / "home"), "ingest", str(corpus)]).exit_code == 0
    result = runner.invoke(app, ["--home", str(tmp_path / "home"), "index", "--ray", address])
    assert result.exit_code == 1
    assert f"no Ray cluster reachable at {address}" in result.output
    assert "Traceback" not in result.output


def test_search_needs_shards_then_a_reachable_cluster(tmp_path: Path, hashing_encoder) -> None:
    address = _closed_address()
    settings = Settings(home=tmp_path / "home", ray={"address": address, "connect_timeout_s": 2})
    corpus = write_qasper(tmp_path / "q.json", {"p1": qasper_paper("Sparse", [("Method", ["BM25 k1 and b."])])})
    with CorpusStore(settings.home) as store:
        ingest([corpus], store)
        generation = build_index(settings, store).generation
    with pytest.raises(IndexNotBuiltError, match=f"no search shards: build them with `lit3r index --ray {address}`"):
        open_index(settings)
    build_shards(InlineRay(), settings, generation)
    with pytest.raises(ClusterError, match=f"no Ray cluster reachable at {address}"):
        open_index(settings)
    local = CorpusIndex.open(settings)
    assert local.bm25_chunks.search("bm25", 3)


def test_ray_settings_come_from_the_environment_and_leave_the_index_key(monkeypatch) -> None:
    monkeypatch.setenv("LIT3R_RAY__ADDRESS", "127.0.0.1:6379")
    monkeypatch.setenv("LIT3R_RAY__SHARDS", "8")
    settings = load_settings()
    assert settings.ray.address == "127.0.0.1:6379" and settings.ray.shards == 8
    assert index_key(settings) == index_key(Settings())
