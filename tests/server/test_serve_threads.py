"""Thread housekeeping on the real server: each thread's origin (web UI, API, chat completions) and the
listing by origin, title search, rename, and delete (catalogue and thread store), plus the catalogue's
migration of a file written before threads had an origin."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from lit3r.server.catalog import Catalog

QUESTION = "How much did evidence verification reduce unsupported claims?"


def test_threads_by_origin_search_rename_and_delete(client: httpx.Client) -> None:
    ui = client.post("/v1/threads", json={"title": "Glacier radar notes", "origin": "ui"}).json()
    api = client.post("/v1/threads", json={"title": "Glacier radar batch"}).json()
    assert ui["origin"] == "ui" and api["origin"] == "api"
    reply = client.post(
        "/v1/chat/completions", json={"model": "lit3r", "messages": [{"role": "user", "content": QUESTION}]}
    )
    assert reply.status_code == 200
    ui_ids = {t["thread_id"] for t in client.get("/v1/threads", params={"origin": "ui"}).json()["threads"]}
    assert ui["thread_id"] in ui_ids and api["thread_id"] not in ui_ids
    everything = client.get("/v1/threads").json()["threads"]
    origins = {t["thread_id"]: t["origin"] for t in everything}
    assert origins[ui["thread_id"]] == "ui" and origins[api["thread_id"]] == "api" and "openai" in origins.values()
    openai_only = client.get("/v1/threads", params={"origin": "openai"}).json()["threads"]
    assert openai_only and {t["origin"] for t in openai_only} == {"openai"}

    found = client.get("/v1/threads", params={"q": "radar NOTES"}).json()["threads"]
    assert [t["thread_id"] for t in found] == [ui["thread_id"]]
    assert client.get("/v1/threads", params={"q": "100%_"}).json()["threads"] == []

    renamed = client.patch(f"/v1/threads/{ui['thread_id']}", json={"title": "  Ice   velocity  "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Ice velocity"
    assert client.get(f"/v1/threads/{ui['thread_id']}").json()["title"] == "Ice velocity"
    blank = client.patch(f"/v1/threads/{ui['thread_id']}", json={"title": "   "})
    assert blank.status_code == 400 and "title" in blank.json()["error"]["message"]
    missing = client.patch("/v1/threads/no-such-thread", json={"title": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_thread"
    assert client.get("/v1/threads", params={"origin": "elsewhere"}).status_code == 422


def test_delete_removes_the_thread_and_its_checkpoints(client: httpx.Client) -> None:
    thread_id = client.post("/v1/threads", json={"origin": "ui"}).json()["thread_id"]
    first = client.post(f"/v1/threads/{thread_id}/messages", json={"message": QUESTION}).json()
    assert first["thread_id"] == thread_id
    assert client.get(f"/v1/threads/{thread_id}").json()["turns"] == 1
    deleted = client.delete(f"/v1/threads/{thread_id}")
    assert deleted.status_code == 204
    assert thread_id not in {t["thread_id"] for t in client.get("/v1/threads").json()["threads"]}
    # gone from the thread store too: it is unknown now, not an empty thread of the catalogue
    gone = client.get(f"/v1/threads/{thread_id}")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_thread"
    again = client.delete(f"/v1/threads/{thread_id}")
    assert again.status_code == 404 and again.json()["error"]["code"] == "unknown_thread"
    refused = client.post(f"/v1/threads/{thread_id}/messages", json={"message": QUESTION})
    assert refused.status_code == 404


def test_catalog_migration_gives_old_threads_an_origin(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / "server.sqlite")
    old.executescript(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL);"
        "CREATE TABLE conversations (fingerprint TEXT PRIMARY KEY, thread_id TEXT NOT NULL);"
        "INSERT INTO threads VALUES ('chat-a', 'asked in the UI', '2026-01-01', '2026-01-01');"
        "INSERT INTO threads VALUES ('chat-b', 'from chat completions', '2026-01-02', '2026-01-02');"
        "INSERT INTO conversations VALUES ('f', 'chat-b');"
    )
    old.commit()
    old.close()
    catalog = Catalog(tmp_path)
    try:
        assert catalog.thread("chat-a")["origin"] == "ui" and catalog.thread("chat-b")["origin"] == "openai"
        assert [t["id"] for t in catalog.threads(origin="ui")] == ["chat-a"]
        catalog.add_turn("chat-c", 0, "a turn of a thread made elsewhere", "trace-1")
        assert catalog.thread("chat-c")["origin"] == "api"
    finally:
        catalog.close()
    reopened = Catalog(tmp_path)  # the migration runs once: a second open keeps the origins
    try:
        assert {t["id"]: t["origin"] for t in reopened.threads()} == {
            "chat-a": "ui",
            "chat-b": "openai",
            "chat-c": "api",
        }
    finally:
        reopened.close()
