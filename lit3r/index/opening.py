"""Opening the index a question is answered from: this machine's files, or their shards on a Ray cluster.

:meth:`CorpusIndex.open <lit3r.index.corpus_index.CorpusIndex.open>` reads the current generation from local
files; :func:`open_index` is what the application opens: the same generation, searched through the shard
actors of a Ray cluster when the settings name one (``ray.address`` with ``ray.search``).
"""

from __future__ import annotations

from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import Settings


def open_index(settings: Settings) -> CorpusIndex:
    """The current index for ``settings`` (sharded on the named Ray cluster), or a clear error saying how to
    build it."""
    index = CorpusIndex.open(settings)
    if settings.ray.address and settings.ray.search:
        from lit3r.index.distributed.sharded_index import ShardedCorpusIndex  # the ray extra, only when asked

        return ShardedCorpusIndex.connect(index.folder, settings)
    return index
