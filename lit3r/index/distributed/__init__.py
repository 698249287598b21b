"""Distributed ingest and sharded search on a Ray cluster (the optional ``ray`` extra).

* :mod:`.cluster`: joining the cluster, or a clear error that names it.
* :mod:`.pipeline`, :mod:`.ingest`: ``lit3r index --ray``, a Ray Data pipeline whose embedding actors
  parse, chunk and embed the papers, then the ordinary build over the vectors it returns.
* :mod:`.term_stats`: BM25 statistics summed over shards, and a shard's BM25 scored with them.
* :mod:`.shards`, :mod:`.shard_build`, :mod:`.shard_worker`: the shards of a generation, by paper id,
  built by one Ray task per shard, served by one actor per shard.
* :mod:`.serve`, :mod:`.sharded_index`: the actors' pool and the :class:`~lit3r.index.corpus_index.CorpusIndex`
  that fans chunk searches out to them.
* :mod:`.local`: a head and worker nodes as separate processes on 127.0.0.1 (tests, benchmarks, trials).

Importing this package imports nothing: Ray is loaded only by the modules that use it.
"""
