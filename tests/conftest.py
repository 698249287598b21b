"""Shared fixtures: the shared-data guard, the hashing encoder in place of model loads, settings, the test corpora.

Builders live in ``tests/fakes/`` (scripted models, servers, indexes, corpora); tests import them from there,
never from another test module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lit3r.settings import Settings, load_preset

from fakes.corpus import eight_papers
from fakes.demo import build_demo_home
from fakes.encoders import HashingEncoder
from fakes.index import MemoryIndex, built_index
from fakes.qasper import qasper_paper, write_qasper

__all__ = ["HashingEncoder", "qasper_paper", "shared", "write_qasper"]  # older tests import these from here

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

os.environ.setdefault("LIT3R_PRESET", "default")
"""The CLI's reading commands read with the local model when it is installed and no preset is given; the tests
(and the CLIs they start as subprocesses) keep the offline defaults on a machine that has it. The tests of that
choice remove this variable."""


def shared(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when the shared folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared data folder: {path}")
    return path


@pytest.fixture
def hashing_encoder(monkeypatch: pytest.MonkeyPatch) -> HashingEncoder:
    """Replace every model load in the index code with one shared HashingEncoder."""
    encoder = HashingEncoder()
    for module in ("lit3r.index.build", "lit3r.index.corpus_index"):
        monkeypatch.setattr(f"{module}.load_encoder", lambda *_a, **_k: encoder)
        monkeypatch.setattr(f"{module}.load_paper_encoder", lambda *_a, **_k: encoder)
    return encoder


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture(scope="module")
def memory_index(tmp_path_factory: pytest.TempPathFactory) -> MemoryIndex:
    """The eight test papers (fakes.corpus) in memory: no built index."""
    folder = tmp_path_factory.mktemp("memory")
    return MemoryIndex(eight_papers(folder / "papers.jsonl"), Settings(home=folder / "home"))


@pytest.fixture(scope="module")
def seed_memory_index(tmp_path_factory: pytest.TempPathFactory) -> MemoryIndex:
    """:func:`memory_index` with the seed's retrieval rules (``--preset seed``: PRF always, the pinned blend, 20 chunks
    per search), for flow tests whose expected pools are the seed's."""
    folder = tmp_path_factory.mktemp("memory-seed")
    settings = Settings(home=folder / "home", retriever=load_preset("seed")["retriever"])
    return MemoryIndex(eight_papers(folder / "papers.jsonl"), settings)


@pytest.fixture(scope="module")
def disk_index(tmp_path_factory: pytest.TempPathFactory):
    """The eight test papers ingested and indexed on disk (store, generations, manifest)."""
    folder = tmp_path_factory.mktemp("disk")
    return built_index(folder / "home", eight_papers(folder / "papers.jsonl"))


@pytest.fixture
def spy_calls(monkeypatch: pytest.MonkeyPatch) -> Callable[[object, str], list[tuple]]:
    """``spy_calls(obj, "method")`` wraps the method for this test; the list it returns fills with each call's
    (args, kwargs)."""

    def spy_on(obj: object, method: str) -> list[tuple]:
        calls: list[tuple] = []
        original = getattr(obj, method)

        def spy(*args: Any, **kwargs: Any) -> Any:
            calls.append((args, kwargs))
            return original(*args, **kwargs)

        monkeypatch.setattr(obj, method, spy)
        return calls

    return spy_on


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus ingested and indexed with the real default encoder, once per test session."""
    return build_demo_home(tmp_path_factory.mktemp("demo") / "home")
