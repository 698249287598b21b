"""Thread storage after N turns: checkpoints and bytes of ``threads.sqlite`` (docs/RELIABILITY.md).

Usage: PYTHONPATH=. python scripts/thread_storage.py TURNS
A thread of TURNS offline turns over the test corpus (an in-memory index with a hashing encoder, as the tests
build), then the rows and the size of the thread store.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lit3r.app.session import THREADS_FILE, Session  # noqa: E402
from lit3r.settings import Settings  # noqa: E402

from fakes.corpus import PAPERS, paper_record, write_records  # noqa: E402
from fakes.index import MemoryIndex  # noqa: E402


def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        papers = write_records(Path(home) / "papers.jsonl", [paper_record(p) for p in PAPERS])
        index = MemoryIndex(papers, Settings(home=Path(home) / "home"))
        with Session(index.settings, index=index) as session:
            thread = session.thread()
            for i in range(turns):
                thread.ask(f"What does okapi lexical saturation study, part {i}?")
            store = index.settings.home / THREADS_FILE
            with sqlite3.connect(store) as db:
                rows = db.execute("select count(*) from checkpoints").fetchone()[0]
                writes = db.execute("select count(*) from writes").fetchone()[0]
            size = sum(p.stat().st_size for p in index.settings.home.glob(f"{THREADS_FILE}*"))
            print(f"turns {turns}: {rows} checkpoints, {writes} writes, {size / 1e6:.2f} MB (with -wal)")


if __name__ == "__main__":
    main(int(sys.argv[1]))
