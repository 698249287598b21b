"""Shard actors and the pool that fans a query out to them.

Each shard of a generation is served by one Ray actor (:class:`ShardServer`)
holding the shard's chunk BM25 and dense index. The actors restart when their
process or node dies (``max_restarts``: Ray re-runs the constructor, which
reloads the shard from disk) and a query sent to a dead actor is retried on
its restarted self (``max_task_retries``), so a lost worker costs time, never
results. A shard that does not answer within ``timeout_s`` (or that cannot be
restarted) fails the query with an error naming it: there are no partial
results.
"""

from __future__ import annotations

from collections.abc import Collection
from types import ModuleType
from typing import Any

from lit3r.index.distributed.cluster import ClusterError
from lit3r.index.distributed.shard_worker import ShardServer
from lit3r.index.distributed.shards import ShardSet
from lit3r.settings import RaySettings


class ShardPool:
    """The actors serving a shard set, and calls that reach all of them or fail naming the one that did not."""

    def __init__(self, ray: ModuleType, shard_set: ShardSet, handles: dict[int, Any], settings: RaySettings) -> None:
        self.ray = ray
        self.shard_set = shard_set
        self.handles = handles
        self.settings = settings
        self.names = {s["number"]: s["name"] for s in shard_set.shards}

    @classmethod
    def start(cls, ray: ModuleType, shard_set: ShardSet, settings: RaySettings) -> ShardPool:
        """One actor per shard, spread over the nodes; returns once every shard is loaded."""
        actor = ray.remote(ShardServer).options(
            num_cpus=settings.shard_cpus,
            max_restarts=settings.max_restarts,
            max_task_retries=settings.max_task_retries,
            scheduling_strategy="SPREAD",
        )
        handles = {s["number"]: actor.remote(str(shard_set.shard_folder(s["number"]))) for s in shard_set.shards}
        pool = cls(ray, shard_set, handles, settings)
        pool.call("info", {number: () for number in handles})
        return pool

    def call(self, method: str, args: dict[int, tuple]) -> dict[int, Any]:
        """Call ``method`` on the shards named in ``args`` (shard number -> arguments) and wait for all."""
        ray = self.ray
        refs = {number: getattr(self.handles[number], method).remote(*a) for number, a in args.items()}
        results: dict[int, Any] = {}
        for number, ref in refs.items():
            name = self.names[number]
            try:
                results[number] = ray.get(ref, timeout=self.settings.timeout_s)
            except ray.exceptions.GetTimeoutError as exc:
                raise ClusterError(f"{name} did not answer {method} within {self.settings.timeout_s:.0f} s") from exc
            except ray.exceptions.RayActorError as exc:
                raise ClusterError(f"{name} is lost ({method}): {exc}") from exc
        return results

    def info(self) -> dict[int, dict[str, Any]]:
        return self.call("info", {number: () for number in self.handles})

    def close(self) -> None:
        """End the shard actors (they also end with the process that started them)."""
        for handle in self.handles.values():
            self.ray.kill(handle, no_restart=True)
        self.handles = {}


def split_by_shard(
    ids: Collection[str] | None, chunk_shard: dict[str, int], shards: Collection[int]
) -> dict[int, set[str] | None]:
    """Per shard, the ``ids`` it holds (``None``: every shard, unrestricted); unknown ids are dropped."""
    if ids is None:
        return {number: None for number in shards}
    parts: dict[int, set[str]] = {}
    for chunk_id in ids:
        number = chunk_shard.get(chunk_id)
        if number is not None:
            parts.setdefault(number, set()).add(chunk_id)
    return dict(parts)
