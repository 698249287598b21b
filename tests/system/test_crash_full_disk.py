"""A disk that fills up during `lit3r index`: one clear error, the previous generation keeps serving.

The disk is real: a 4 MB tmpfs mounted for the test (root can mount here), nearly filled with a
file, so that each build runs out of space at a different write (embedding shards, chunk lists,
BM25, the FAISS file). Where mounting is not allowed the test is skipped and says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.layout import IndexLayout
from lit3r.settings import Settings

DEMO = Path(__file__).parents[2] / "lit3r" / "demo" / "papers"
runner = CliRunner()


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=False)


def _lit3r(home: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--home", str(home), *args])
    return result.exit_code, result.output


def _fill(disk: Path, leave_kb: int) -> None:
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    free = shutil.disk_usage(disk).free
    with filler.open("wb") as handle:
        handle.truncate(0)
        os.posix_fallocate(handle.fileno(), 0, max(0, free - leave_kb * 1024))


def _records(path: Path) -> Path:
    words = "retrieval ranking dense sparse encoder passage citation graph table recall precision model".split()
    lines = []
    for number in range(100):
        body = "\n\n".join(" ".join(words[(number + j + k) % len(words)] for k in range(50)) for j in range(3))
        lines.append(json.dumps({"id": f"x{number:03d}", "title": f"Extra {number}", "text": f"{body} n{number}."}))
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_a_full_disk_leaves_the_previous_generation_serving(small_disk: Path, tmp_path: Path, hashing_encoder) -> None:
    home = small_disk / "home"
    settings = Settings(home=home)
    assert _lit3r(home, "ingest", str(DEMO))[0] == 0
    assert _lit3r(home, "index")[0] == 0
    layout = IndexLayout(settings)
    serving = layout.current()
    assert _lit3r(home, "ingest", str(_records(tmp_path / "more.jsonl")))[0] == 0
    previous_chunks = len(CorpusIndex.open(settings).chunks)
    failures = []
    for leave_kb in (100, 300, 600, 900, 1000, 1100, 1300, 1600, 2000):
        _fill(small_disk, leave_kb)
        code, output = _lit3r(home, "index")
        if code == 0:
            break
        failures.append(output)
        assert code == 1 and output.startswith("error: the index build stopped: ") and "Traceback" not in output
        assert "MB free under" in output and output.rstrip().endswith("the index in use is unchanged")
        assert layout.current() == serving and list(layout.root.glob("tmp-*")) == []  # the scratch space is freed
        index = CorpusIndex.open(settings)
        assert len(index.chunks) == len(index.dense.ids) == index.manifest["chunks"] and len(index.papers) == 7
        code, hits = _lit3r(home, "search", "rank fusion", "--json")
        assert code == 0 and json.loads(hits)
    else:
        (small_disk / "filler").unlink()
        code, output = _lit3r(home, "index")
    assert len(failures) >= 3, failures  # the disk ran out at several different writes:
    stages = [" ".join(f.split()) for f in failures]
    assert any("generation failed" not in f and "No space left on device" in f for f in stages)  # a shard
    assert any("generation failed: [Errno 28] No space left on device" in f for f in stages)  # a list or BM25 file
    assert any("generation failed: Error in void faiss::write_index" in f for f in stages)  # FAISS: a RuntimeError
    built = re.search(r"indexed 107 papers, (\d+) chunks \((\d+) embedded, (\d+) reused\)", " ".join(output.split()))
    assert code == 0 and built, output
    assert int(built[3]) > previous_chunks  # vectors of shards written before the disk filled are reused
    assert len(CorpusIndex.open(settings).papers) == 107 and layout.current() != serving
