"""A real Ray cluster on this machine: a head and two worker nodes, each a separate process.

These tests run inside a loopback-only network namespace (Ray advertises the
machine's address to its peers; there, only 127.0.0.1 exists), started by
tests/cluster/test_ray_namespace.py, which runs this file as its own pytest process
(its name keeps it out of the ordinary collection; run alone, outside a
namespace, it skips). They build the demo corpus and a QASPER subset on the
cluster and on one machine, check that the distributed build and the sharded
search answer as the one-machine index does, kill a shard actor and a worker
node in the middle of queries, and stop the cluster by process id.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.opening import open_index
from lit3r.retrieval.search import rank_chunks
from lit3r.settings import Settings

from ray_support import NAMESPACE_ENV, assert_same_search, qasper_subset

pytestmark = pytest.mark.skipif(
    os.environ.get(NAMESPACE_ENV) != "1",
    reason="needs a loopback-only network namespace: tests/cluster/test_ray_namespace.py runs these tests inside one",
)

QUERIES = [
    "How much did evidence verification reduce unsupported claims?",
    "BM25 parameters k1 and b",
    "which reranker budget is recommended",
    "question answering over scientific papers dataset",
    "attention layers of the neural model",
]
FAST_FAILURE_DETECTION = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3"}
LIT3R = str(Path(sys.executable).with_name("lit3r"))


@dataclass
class Homes:
    local: Settings
    ray: Settings
    address: str


@pytest.fixture(scope="module")
def cluster():
    from lit3r.index.distributed.cluster import connect
    from lit3r.index.distributed.local import LocalCluster
    from lit3r.settings import RaySettings

    assert [name for _, name in socket.if_nameindex()] == ["lo"], "not in a loopback-only namespace"
    local_cluster = LocalCluster(workers=2, worker_cpus=1, head_cpus=0, env=FAST_FAILURE_DETECTION).start()
    os.environ.update(local_cluster.env)  # this process and the CLI runs share the cluster's token
    try:
        ray = connect(RaySettings(address=local_cluster.address))
        local_cluster.wait_for_nodes(ray, 3)
        yield local_cluster
    finally:
        import ray

        ray.shutdown()
        local_cluster.stop(grace_s=5)
    assert not local_cluster.live_nodes()


@pytest.fixture(scope="module", autouse=True)
def refused_client(cluster):
    """A client without the cluster's token tries to join, from the start: Ray takes about 30 s to give up."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    code = "from lit3r.index.distributed.cluster import connect; from lit3r.settings import RaySettings; "
    code += f"connect(RaySettings(address={cluster.address!r}))"
    attempt = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True)
    yield cluster.address, attempt
    if attempt.poll() is None:
        attempt.kill()
        attempt.wait()


def _ingest(settings: Settings, *paths: Path) -> None:
    with CorpusStore(settings.home) as store:
        ingest(list(paths), store)


@pytest.fixture(scope="module")
def homes(cluster, tmp_path_factory) -> Homes:
    """The demo corpus and two QASPER papers, indexed on one machine and on the cluster."""
    from lit3r.cli.corpus import demo_papers_dir

    folder = tmp_path_factory.mktemp("ray-homes")
    qasper = qasper_subset(folder / "qasper-a.json", 2)
    ray_options = {"address": cluster.address, "shards": 3, "shard_cpus": 0.1, "timeout_s": 90}
    result = Homes(Settings(home=folder / "local"), Settings(home=folder / "ray", ray=ray_options), cluster.address)
    for settings in (result.local, result.ray):
        _ingest(settings, demo_papers_dir(), qasper)
    with CorpusStore(result.local.home) as store:
        build_index(result.local, store)
    return result


@pytest.fixture(scope="module")
def ray_build(homes: Homes):
    from lit3r.index.distributed.ingest import build_index_on_ray

    with CorpusStore(homes.ray.home) as store:
        return build_index_on_ray(homes.ray, store)


def _generation(settings: Settings) -> CorpusIndex:
    return CorpusIndex.open(settings)


def test_cluster_build_equals_one_machine_build(homes: Homes, ray_build) -> None:
    local, remote = _generation(homes.local), _generation(homes.ray)
    assert ray_build.nodes == 3 and ray_build.embed_actors == 2 and ray_build.embedded_here == 0
    assert ray_build.cluster_embedded["chunk"] == len({c.text for c in local.chunks})
    assert [c.model_dump() for c in remote.chunks] == [c.model_dump() for c in local.chunks]
    assert remote.papers == local.papers
    ids = [c.id for c in local.chunks]
    assert np.abs(remote.dense.vectors_for(ids) - local.dense.vectors_for(ids)).max() < 1e-5
    pids = sorted(local.papers)
    assert np.abs(remote.paper_vectors.vectors_for(pids) - local.paper_vectors.vectors_for(pids)).max() < 1e-5
    for query in QUERIES:
        assert remote.bm25_chunks.search(query, 100) == local.bm25_chunks.search(query, 100)
    assert ray_build.shards.count == 3 and sum(ray_build.shards.chunks.values()) == len(ids)


def test_sharded_search_equals_one_machine_search(homes: Homes, ray_build) -> None:
    from lit3r.index.distributed.sharded_index import ShardedCorpusIndex

    sharded = open_index(homes.ray)
    assert isinstance(sharded, ShardedCorpusIndex)
    same_files, local = _generation(homes.ray), _generation(homes.local)
    papers = sorted(local.papers)
    try:
        for query in QUERIES:
            for restrict in (None, papers[:2]):
                assert_same_search(sharded, same_files, query, restrict)  # the shards of a generation vs its files
                assert_same_search(sharded, local, query, restrict)  # vs an index built on one machine
    finally:
        sharded.close()


def _run_cli(settings: Settings, *args: str, sharded: bool) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}  # no wrapping
    env.pop("LIT3R_RAY__ADDRESS", None)
    if sharded:
        env.update(LIT3R_RAY__ADDRESS=str(settings.ray.address), LIT3R_RAY__SHARD_CPUS="0.1", LIT3R_RAY__SHARDS="3")
    run = subprocess.run(
        [LIT3R, "--home", str(settings.home), *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _cli(settings: Settings, *args: str, sharded: bool) -> dict | list:
    return json.loads(_run_cli(settings, *args, sharded=sharded))


def test_cli_search_and_ask_through_the_shards(homes: Homes, ray_build) -> None:
    """What a user compares: `lit3r search --json` and `lit3r ask --json` on the cluster and on one machine."""
    from lit3r.app.session import Session
    from lit3r.retrieval.search import search_index as search_chunks

    query = QUERIES[0]
    sharded = _cli(homes.ray, "search", query, "--mode", "bm25", "-k", "10", "--json", sharded=True)
    hits = search_chunks(_generation(homes.local), query, mode="bm25", k=10)
    assert sharded == [h.model_dump(mode="json", exclude={"rank"}) for h in hits]
    answer = _cli(homes.ray, "ask", query, "--json", sharded=True)
    with Session(homes.local) as session:
        here = session.reply(query).document.model_dump(mode="json")
    for key in ("trace_path", "trace_id"):
        answer.pop(key), here.pop(key)
    assert answer["citations"] and answer == here


def test_adding_papers_updates_their_shards(homes: Homes, ray_build, tmp_path: Path) -> None:
    """`lit3r index --ray` after one more paper: only its texts go to the cluster, only its shard is rebuilt."""
    more = qasper_subset(tmp_path / "qasper-b.json", 1, skip=2)
    for settings in (homes.local, homes.ray):
        _ingest(settings, more)
    before = {c.text for c in _generation(homes.local).chunks}
    with CorpusStore(homes.local.home) as store:
        build_index(homes.local, store)
    printed = " ".join(_run_cli(homes.ray, "index", "--ray", homes.address, sharded=True).split())
    local = _generation(homes.local)
    embedded = re.search(r"(\d+) chunks and (\d+) papers embedded on the cluster, 0 texts here", printed)
    assert embedded, printed
    assert int(embedded.group(1)) == len({c.text for c in local.chunks} - before) and embedded.group(2) == "1"
    assert re.search(r"3 shards in \S+ \(rebuilt 1, reused 2\)", printed), printed  # one new paper, one shard
    sharded = open_index(homes.ray)
    try:
        for query in QUERIES:
            assert rank_chunks(sharded, query, "bm25", 100) == rank_chunks(local, query, "bm25", 100)
    finally:
        sharded.close()


def _query_while(index: CorpusIndex, expected: dict, action, recovered, timeout_s: float = 150.0) -> list[bool]:
    """Run the queries in a loop on a thread, do ``action`` mid-way, go on until ``recovered()`` and 3 rounds more.

    Returns, per round, whether every query gave the expected ranking.
    """
    rounds: list[bool] = []
    stop = threading.Event()
    failures: list[BaseException] = []

    def loop() -> None:
        try:
            while not stop.is_set():
                rounds.append(all(rank_chunks(index, q, "hybrid", 30) == expected[q] for q in QUERIES))
        except BaseException as exc:  # noqa: BLE001 (reported to the test below)
            failures.append(exc)

    worker = threading.Thread(target=loop)
    worker.start()
    deadline = time.monotonic() + timeout_s
    try:
        while len(rounds) < 2 and not failures:
            assert time.monotonic() < deadline, "no query answered"
            time.sleep(0.05)
        action()
        while not failures and not recovered():
            assert time.monotonic() < deadline, "the shard was not restarted"
            time.sleep(0.5)
        settled = len(rounds)
        while len(rounds) < settled + 3 and not failures:
            assert time.monotonic() < deadline, "queries stopped answering"
            time.sleep(0.1)
    finally:
        stop.set()
        worker.join()
    assert not failures, failures
    return rounds


def test_a_killed_shard_actor_is_restarted_and_the_query_retried(homes: Homes, ray_build) -> None:
    index = open_index(homes.ray)
    try:
        expected = {q: rank_chunks(index, q, "hybrid", 30) for q in QUERIES}
        victim = index.pool.info()[0]["pid"]
        rounds = _query_while(
            index, expected, lambda: os.kill(victim, signal.SIGKILL), lambda: index.pool.info()[0]["pid"] != victim
        )
        assert len(rounds) >= 5 and all(rounds)
    finally:
        index.close()


def _node_of(cluster, pid: int):
    """The cluster node (``ray start`` process) that ``pid`` descends from."""
    nodes = {node.pid: node for node in cluster.live_nodes()}
    while pid > 1 and pid not in nodes:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return nodes[pid]


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (an exited one not yet reaped, a zombie, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_killed_worker_node_loses_no_answer(cluster, homes: Homes, ray_build) -> None:
    import ray

    index = open_index(homes.ray)
    try:
        expected = {q: rank_chunks(index, q, "hybrid", 30) for q in QUERIES}
        before = index.pool.info()[0]
        node = _node_of(cluster, before["pid"])
        assert node.name.startswith("worker")
        rounds = _query_while(
            index, expected, lambda: cluster.kill(node), lambda: index.pool.info()[0]["node_id"] != before["node_id"]
        )
        assert len(rounds) >= 5 and all(rounds)
        gone = time.monotonic() + 30  # the shard's old process dies with its node (its exit may lag on busy cores)
        while _running(before["pid"]) and time.monotonic() < gone:
            time.sleep(0.2)
        assert not _running(before["pid"])
    finally:
        index.close()
    cluster.add_worker()
    cluster.wait_for_nodes(ray, 3)


def test_a_client_without_the_token_is_refused(refused_client) -> None:
    address, attempt = refused_client
    _, stderr = attempt.communicate(timeout=300)
    assert attempt.returncode == 1, stderr[-2000:]
    assert f"cannot join the Ray cluster at {address}" in stderr and "RAY_AUTH_MODE=token" in stderr
