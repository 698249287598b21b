"""The real ``lit3r`` command line in a child process, with the hashing test encoder instead of a model.

Usage: ``python tests/fakes/hashing_cli.py [lit3r arguments]``. For the crash tests, environment
variables slow the build down so that a kill can land in every stage:

* ``LIT3R_TEST_SHARD_SIZE``: texts per embedding shard (default: the library's);
* ``LIT3R_TEST_ENCODE_DELAY``: seconds every encoder call sleeps;
* ``LIT3R_TEST_READY``: when set, ``ready`` is written to stderr once imports are done.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lit3r.index.build  # noqa: E402
import lit3r.index.corpus_index  # noqa: E402
import lit3r.index.embed_cache  # noqa: E402
from lit3r.cli import app  # noqa: E402

from fakes.encoders import HashingEncoder  # noqa: E402


class SlowHashingEncoder(HashingEncoder):
    """The hashing encoder, sleeping ``delay`` seconds per call."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def _encode(self, texts: list[str]):
        time.sleep(self.delay)
        return super()._encode(texts)


def main() -> None:
    encoder = SlowHashingEncoder(float(os.environ.get("LIT3R_TEST_ENCODE_DELAY", "0")))
    for module in (lit3r.index.build, lit3r.index.corpus_index):
        module.load_encoder = lambda *_a, **_k: encoder
        module.load_paper_encoder = lambda *_a, **_k: encoder
    if "LIT3R_TEST_SHARD_SIZE" in os.environ:
        lit3r.index.embed_cache.SHARD_SIZE = int(os.environ["LIT3R_TEST_SHARD_SIZE"])
    if os.environ.get("LIT3R_TEST_READY"):
        print("ready", file=sys.stderr, flush=True)
    app(prog_name="lit3r")


if __name__ == "__main__":
    main()
