"""Progress of long steps: what the index build reports, and when the command line shows it."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import WRITE_STEPS, build_index
from lit3r.index.embed_cache import EmbeddingCache
from lit3r.settings import Settings

from fakes.encoders import HashingEncoder
from fakes.qasper import qasper_paper, write_qasper

cli_app = importlib.import_module("lit3r.cli.app")  # the module (``lit3r.cli.app`` the attribute is the Typer app)


def _add(settings: Settings, tmp_path: Path, papers: dict) -> None:
    path = write_qasper(tmp_path / f"batch{len(list(tmp_path.glob('batch*')))}.json", papers)
    with CorpusStore(settings.home) as store:
        ingest([path], store)


def _paper(title: str) -> dict:
    return qasper_paper(title, [("Intro", [f"{title} introduction."]), ("Results", [f"{title} results."])])


def _build(settings: Settings) -> dict[str, list[tuple[int, int]]]:
    events: dict[str, list[tuple[int, int]]] = {}
    with CorpusStore(settings.home) as store:
        build_index(
            settings, store, progress=lambda stage, done, total: events.setdefault(stage, []).append((done, total))
        )
    return events


def _done(events: dict[str, list[tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    """Per stage: (items reported done, the total announced)."""
    return {stage: (sum(d for d, _ in steps), steps[0][1]) for stage, steps in events.items()}


def test_every_stage_reports_progress_to_its_total(settings, tmp_path, hashing_encoder) -> None:
    _add(settings, tmp_path, {"a": _paper("Sparse"), "b": _paper("Dense")})
    first = _done(_build(settings))
    chunks = first["embed chunks"][1]
    assert list(first) == ["chunk papers", "embed chunks", "embed papers", "write indexes"]
    assert first["chunk papers"] == (2, 2) and first["embed papers"] == (2, 2)
    assert first["embed chunks"] == (chunks, chunks) and chunks > 2
    assert first["write indexes"] == (WRITE_STEPS, WRITE_STEPS)
    _add(settings, tmp_path, {"c": _paper("Graph")})
    second = _done(_build(settings))
    assert second["chunk papers"] == (3, 3) and second["embed papers"] == (1, 1)  # only the new paper's text
    assert 0 < second["embed chunks"][1] < chunks  # the total counts only what is embedded now


def test_embedding_goes_longest_first_so_batches_are_alike(tmp_path) -> None:
    calls: list[list[str]] = []

    class Recording(HashingEncoder):
        def encode_documents(self, texts, show_progress=False):
            calls.append(list(texts))
            return super().encode_documents(texts)

    cache = EmbeddingCache(tmp_path / "cache")
    texts = ["b", "ccc", "a" * 10, "dd", "ccc"]
    vectors, embedded = cache.embed(Recording(), texts)
    assert embedded == 4 and calls == [["a" * 10, "ccc", "dd", "b"]]
    np.testing.assert_allclose(vectors[1], vectors[4])  # results in the callers' order
    assert cache.missing(texts) == 0 and cache.missing(["new", "new", "b"]) == 1


def test_progress_is_off_for_json_and_when_stderr_is_no_terminal(monkeypatch) -> None:
    monkeypatch.setattr(cli_app.err, "_force_terminal", True)
    assert not cli_app.progress_bar().disable
    assert cli_app.progress_bar(quiet=True).disable  # --json
    monkeypatch.setattr(cli_app.err, "_force_terminal", False)
    assert cli_app.progress_bar().disable  # CI, a pipe, a log file
