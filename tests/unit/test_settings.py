"""Settings: presets, LIT3R_ environment variables, explicit overrides, and the index key."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.settings import Settings, available_presets, index_key, load_settings


def test_defaults_follow_the_seeds() -> None:
    s = Settings()
    assert (s.chunker.kind, s.chunker.max_chars, s.chunker.tokens, s.chunker.overlap) == ("structural", 2000, 500, 0.1)
    assert (s.bm25.k1, s.bm25.b) == (1.5, 0.75)
    assert s.embedder.model == "all-MiniLM-L6-v2"
    assert s.home == Path(".lit3r")


def test_presets_environment_and_overrides_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert {"default", "qasper"} <= set(available_presets())
    assert load_settings("qasper").chunker.kind == "qasper"
    monkeypatch.setenv("LIT3R_CHUNKER__MAX_CHARS", "1000")
    monkeypatch.setenv("LIT3R_CHUNKER__KIND", "structural")
    s = load_settings("qasper", home=tmp_path)
    assert s.chunker.kind == "structural"  # the environment beats the preset
    assert s.chunker.max_chars == 1000
    assert s.home == tmp_path  # explicit arguments beat everything


def test_settings_file_and_unknown_preset(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text('{"bm25": {"k1": 1.2}}')
    assert load_settings(str(path)).bm25.k1 == 1.2
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        load_settings("nope")


def test_index_key_changes_with_what_shapes_the_index_only() -> None:
    base = Settings()
    assert index_key(base) == index_key(Settings(home=Path("/elsewhere")))
    assert index_key(base) != index_key(Settings(chunker={"kind": "qasper"}))
    assert index_key(base) != index_key(Settings(embedder={"model": "/models/bge-small"}))
