"""The server keeps at most ``server.max_threads`` threads: past it a new thread is refused with 429."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.server.catalog import Catalog
from lit3r.server.errors import ApiError
from lit3r.settings import Settings


def test_a_new_thread_past_the_limit_is_a_429_and_known_threads_still_work(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path, max_threads=2)
    catalog.add_thread("chat-a", "first")
    catalog.add_thread("chat-b")
    with pytest.raises(ApiError) as refused:
        catalog.add_thread("chat-c")
    assert refused.value.status == 429 and refused.value.code == "too_many_threads"
    assert "server.max_threads" in str(refused.value.message)
    assert catalog.add_thread("chat-a")["title"] == "first"  # a known thread is no new thread
    assert [t["id"] for t in catalog.threads()] == ["chat-b", "chat-a"] and catalog.thread("chat-c") is None
    catalog.close()


def test_the_default_limit_is_a_thousand_threads() -> None:
    assert Settings().server.max_threads == 1000
