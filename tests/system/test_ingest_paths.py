"""Paths that cannot be read: missing, unreadable, looping, not regular files. Each is named; the rest goes in.

Root reads every file whatever its mode, so the permission cases run ``lit3r`` in a child
process that gave up the capabilities which bypass file modes (CAP_DAC_OVERRIDE,
CAP_DAC_READ_SEARCH): chmod 000 then binds it as it binds any user.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lit3r.corpus.discover import discover
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore

from fakes.bad_inputs import run_lit3r, run_unprivileged


def _paper(path: Path, title: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\nBody of {title.lower()}.\n", encoding="utf-8")
    return path


def _problems(paths: list[Path]) -> dict[str, str]:
    return dict(discover(paths).problems)


def test_missing_path_is_reported_and_the_others_go_in(tmp_path: Path) -> None:
    good = _paper(tmp_path / "good.md", "Good")
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([tmp_path / "nope.pdf", good], store)
        assert store.count_papers() == 1
    assert report.failed == [(str(tmp_path / "nope.pdf"), "no such file or folder")]


def test_symlink_loops_are_reported_as_loops(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    _paper(folder / "a.md", "Alpha")
    (folder / "self.md").symlink_to("self.md")  # a link to itself
    (folder / "up").symlink_to("..")  # a link to a folder above: walking it would never end
    (tmp_path / "ping").symlink_to("pong")
    (tmp_path / "pong").symlink_to("ping")
    problems = _problems([folder, tmp_path / "ping"])
    assert problems == {
        str(folder / "self.md"): "a symbolic link loop (the link leads back to itself)",
        str(folder / "up" / "papers"): f"a symbolic link loop: this is the folder {folder} again, which holds it",
        str(folder / "up" / "ping"): "a symbolic link loop (the link leads back to itself)",
        str(folder / "up" / "pong"): "a symbolic link loop (the link leads back to itself)",
        str(tmp_path / "ping"): "a symbolic link loop (the link leads back to itself)",
    }
    assert discover([folder]).files == [folder / "a.md"]  # each file once, though 'up' reaches it again


def test_broken_link_fifo_and_a_folder_named_like_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    _paper(folder / "paper.pdf" / "inside.md", "Inside")  # a folder where a file is expected: walked
    (folder / "gone.md").symlink_to(tmp_path / "deleted.md")
    os.mkfifo(folder / "pipe.txt")  # opening it would block until a writer came
    os.mkfifo(tmp_path / "named.pipe")
    found = discover([folder, tmp_path / "named.pipe"])
    assert found.files == [folder / "paper.pdf" / "inside.md"]
    assert dict(found.problems) == {
        str(folder / "gone.md"): f"a broken symbolic link (its target {tmp_path / 'deleted.md'} does not exist)",
        str(folder / "pipe.txt"): "a FIFO (named pipe), not a regular file; not read",
        str(tmp_path / "named.pipe"): "a FIFO (named pipe), not a regular file; not read",
    }


def test_a_device_named_on_the_command_line_is_not_read(tmp_path: Path) -> None:
    assert _problems([Path("/dev/zero")]) == {"/dev/zero": "a device, not a regular file; not read"}


def test_deep_folders_are_walked_without_recursion(tmp_path: Path) -> None:
    folder = tmp_path / "deep"
    path = folder
    for level in range(120):
        path = path / f"d{level}"
    _paper(path / "bottom.md", "Bottom")
    assert [p.name for p in discover([folder]).files] == ["bottom.md"]


@pytest.fixture
def locked_tree(tmp_path: Path) -> Path:
    """Papers with one unreadable file and one unreadable folder (modes restored afterwards for clean-up)."""
    papers = tmp_path / "papers"
    _paper(papers / "a.md", "Alpha")
    _paper(papers / "locked" / "hidden.md", "Hidden")
    _paper(papers / "secret.md", "Secret")
    (papers / "locked").chmod(0o000)
    (papers / "secret.md").chmod(0o000)
    yield tmp_path
    (papers / "locked").chmod(0o755)
    (papers / "secret.md").chmod(0o644)


def test_an_unreadable_file_and_folder_are_reported_and_the_rest_goes_in(locked_tree: Path) -> None:
    papers = locked_tree / "papers"
    command = ["--home", "home", "ingest", str(papers), str(papers / "secret.md"), "--json"]
    result = run_unprivileged(command, locked_tree)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [Path(p).name for p in report["added"]] == ["a.md"]
    assert dict(map(tuple, report["failed"])) == {
        str(papers / "locked"): "cannot list this folder (Permission denied); its files were not read",
        str(papers / "secret.md"): "cannot read the file (Permission denied)",
    }


def test_an_unusable_home_is_one_clear_line(locked_tree: Path) -> None:
    paper = locked_tree / "papers" / "a.md"
    (locked_tree / "readonly").mkdir(mode=0o555)
    result = run_unprivileged(["--home", "readonly/home", "ingest", str(paper)], locked_tree)
    assert (result.returncode, result.stderr.strip()) == (
        1,
        "error: cannot create the lit3r home readonly/home: Permission denied",
    )
    (locked_tree / "home-file").write_text("not a folder")
    result = run_lit3r(["--home", "home-file", "ingest", str(paper)], locked_tree)
    assert (result.returncode, result.stderr.strip()) == (1, "error: --home home-file is a file, not a folder")
    assert "Traceback" not in result.stderr
