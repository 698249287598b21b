"""`lit3r watch FOLDER` while files are added, changed and deleted: the corpus and the index follow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lit3r.corpus.store import CorpusStore

ROOT = Path(__file__).parents[2]
CLI = ROOT / "tests" / "fakes" / "hashing_cli.py"


def _note(path: Path, title: str, body: str) -> None:
    path.write_text(f"# {title}\n\n## Results\n\n{body}\n", encoding="utf-8")


def _wait_for(lines: list[dict], stream, check, timeout: float = 90.0) -> dict:
    """Read JSON lines from ``stream`` until one satisfies ``check``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        raw = stream.readline()
        if not raw:
            break
        line = json.loads(raw)
        lines.append(line)
        if check(line):
            return line
    raise AssertionError(f"no change seen; lines so far: {lines}")


def test_watch_follows_a_growing_folder(tmp_path: Path) -> None:
    folder, home = tmp_path / "papers", tmp_path / "home"
    folder.mkdir()
    _note(folder / "glacier.md", "Glacier Flow", "The Aletsch tongue moved 182 metres per year.")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(CLI), "--home", str(home), "watch", str(folder)]
    command += ["--interval", "0.3", "--max-seconds", "120", "--json"]
    watcher = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    lines: list[dict] = []
    try:
        assert watcher.stdout is not None
        first = _wait_for(lines, watcher.stdout, lambda line: line["papers_in_corpus"] == 1)
        assert first["index_generation"] is not None
        _note(folder / "moraine.md", "Moraine Dating", "Boulders were dated with beryllium-10.")
        added = _wait_for(lines, watcher.stdout, lambda line: any(p.endswith("moraine.md") for p in line["added"]))
        assert added["papers_in_corpus"] == 2 and added["index_generation"] != first["index_generation"]
        _note(folder / "glacier.md", "Glacier Flow", "The Aletsch tongue moved 190 metres per year.")
        _wait_for(lines, watcher.stdout, lambda line: any(p.endswith("glacier.md") for p in line["added"]))
        (folder / "moraine.md").unlink()
        removed = _wait_for(lines, watcher.stdout, lambda line: line["removed"])
        assert removed["papers_removed"] == 1 and removed["papers_in_corpus"] == 1
        assert removed["index_chunks"] < added["index_chunks"], "the deleted file's chunks left the index"
    finally:
        watcher.kill()
        watcher.wait(timeout=10)
    with CorpusStore(home) as store:
        [paper] = list(store.iter_papers())
    assert "190 metres" in paper.canonical_text()
    assert [s.path for s in CorpusStore(home).sources()] == [str((folder / "glacier.md").resolve())]
