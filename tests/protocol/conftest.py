"""Fixtures of the protocol tests: a demo home built once, with the real default encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.demo import build_demo_home


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_home(tmp_path_factory.mktemp("demo") / "home")
