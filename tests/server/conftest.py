"""Servers for the server tests: the real ``lit3r serve`` in subprocesses over the demo corpus and a PDF.

``server`` is open (loopback, no key) over one home; ``keyed_server`` needs a key and has small limits (uploads,
concurrent answers) over a copy of that home, so the tests that add papers there leave the first one alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fakes.lit3r_server import KEY, UPLOAD_LIMIT, ServeProcess, copy_home, served_home


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return served_home(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="session")
def server(demo_home: Path) -> Iterator[ServeProcess]:
    with ServeProcess(demo_home) as running:
        yield running


@pytest.fixture(scope="session")
def keyed_server(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    home = copy_home(demo_home, tmp_path_factory.mktemp("keyed") / "home")
    keys = home.parent / "keys.txt"
    keys.write_text(f"# keys for the tests\n{KEY}\n", encoding="utf-8")
    env = {
        "LIT3R_SERVER__API_KEY_FILE": str(keys),
        "LIT3R_SERVER__MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT),
        "LIT3R_SERVER__MAX_CONCURRENT_ANSWERS": "1",
        "LIT3R_SERVER__INDEX_POLL_S": "1",
    }
    with ServeProcess(home, env) as running:
        yield running


@pytest.fixture
def client(server: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as opened:
        yield opened


@pytest.fixture
def keyed(keyed_server: ServeProcess) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=keyed_server.base_url, timeout=60, headers=headers) as opened:
        yield opened
