"""``POST /v1/check`` on the real server: the check's document, and clear errors for bad requests."""

from __future__ import annotations

import httpx


def test_a_claim_gets_per_paper_verdicts_with_quotes_from_their_chunks(server) -> None:
    claim = "The median surface velocity of the Aletsch glacier tongue was 182 metres per year."
    response = httpx.post(f"{server.base_url}/v1/check", json={"claim": claim}, timeout=120)
    assert response.status_code == 200, response.text
    document = response.json()
    assert document["claim"] == claim and {"papers", "summary", "trace_path"} <= set(document)
    glacier = next(p for p in document["papers"] if p["paper_id"] == "glacier-radar")
    assert glacier["verdict"] == "supports" and glacier["quotes"]
    for quote in glacier["quotes"]:
        chunk = httpx.get(f"{server.base_url}/v1/chunks/{quote['chunk_id']}", timeout=30).json()
        assert quote["quote"] in chunk["text"] and quote["locator"] == chunk["locator"]
    assert document["summary"]["supports"] >= 1


def test_bad_requests_are_named(server) -> None:
    empty = httpx.post(f"{server.base_url}/v1/check", json={"claim": ""}, timeout=30)
    assert empty.status_code == 422
    unknown = httpx.post(f"{server.base_url}/v1/check", json={"claim": "x y z", "papers": ["nope"]}, timeout=60)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_paper" and "nope" in unknown.text


def test_a_keyed_server_refuses_a_check_without_the_key(keyed_server) -> None:
    response = httpx.post(f"{keyed_server.base_url}/v1/check", json={"claim": "BM25 is fast."}, timeout=30)
    assert response.status_code == 401
