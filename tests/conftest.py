"""Shared fixtures: a fast deterministic encoder double and small corpora written by the tests."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from lit3r.settings import Settings

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def shared(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when the shared folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared data folder: {path}")
    return path


class HashingEncoder:
    """Bag-of-words vectors by feature hashing: deterministic, instant, good enough to test plumbing."""

    paper_separator = ". "

    def __init__(self, dim: int = 64, name: str = "test-hashing") -> None:
        self.dim = dim
        self.name = name
        self.calls: list[int] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._encode(list(texts))

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._encode(list(texts))


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


def write_qasper(path: Path, papers: dict[str, dict]) -> Path:
    """Write a QASPER original-layout file."""
    path.write_text(json.dumps(papers), encoding="utf-8")
    return path


def qasper_paper(title: str, paragraphs: list[tuple[str, list[str]]], abstract: str = "An abstract.") -> dict:
    return {
        "title": title,
        "abstract": abstract,
        "full_text": [{"section_name": name, "paragraphs": paras} for name, paras in paragraphs],
        "qas": [],
        "figures_and_tables": [{"caption": "Table 1: Results on the test set.", "file": "t1.png"}],
    }
