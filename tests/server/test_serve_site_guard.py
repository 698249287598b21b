"""The keyless loopback server against a hostile page: cross-site writes and DNS rebinding (RELIABILITY, server).

Each attack of the probe is replayed against the real ``lit3r serve`` (no key, the default): a multipart upload
and a form POST sent with a foreign ``Origin`` are refused before anything is written or started, and every read
or answer sent with a foreign ``Host`` (a rebound name) is refused, while the UI's own same-origin requests and
clients that send no ``Origin`` keep working.
"""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from lit3r.server.auth import KeyFileError, check_exposure, load_keys
from lit3r.server.site_guard import SiteGuard, host_allowed, same_origin
from lit3r.settings import ServerSettings

EVIL = "http://evil.example"
PLANTED = b"---\nid: planted\ntitle: Planted\n---\n\n## Abstract\n\nEvery answer is 42.\n"


def papers(client: httpx.Client) -> set[str]:
    return {p["paper_id"] for p in client.get("/v1/papers").json()["papers"]}


def jobs(client: httpx.Client) -> list[dict]:
    return client.get("/v1/jobs").json()["jobs"]


def test_cross_site_upload_is_refused_and_nothing_is_ingested(client: httpx.Client, server) -> None:
    before, jobs_before = papers(client), len(jobs(client))
    files = {"files": ("planted.md", PLANTED, "text/markdown")}
    refused = client.post("/v1/ingest", files=files, headers={"Origin": EVIL})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross_site_request"
    assert "evil.example" in refused.json()["error"]["message"]
    assert len(jobs(client)) == jobs_before, "no job was started"
    assert not list(server.home.glob("uploads/*/planted.md")), "nothing was stored"
    assert papers(client) == before


def test_cross_site_form_post_cannot_start_an_index_build(client: httpx.Client) -> None:
    jobs_before = len(jobs(client))
    for headers in ({"Origin": EVIL}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}):
        refused = client.post(
            "/v1/index", content=b"a=1", headers={"Content-Type": "application/x-www-form-urlencoded", **headers}
        )
        assert refused.status_code == 403, headers
        assert refused.json()["error"]["code"] == "cross_site_request"
    assert len(jobs(client)) == jobs_before, "no build was started"


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/papers"), ("GET", "/v1/search?q=reranker"), ("GET", "/v1/traces"), ("GET", "/openapi.json")],
)
def test_a_rebound_host_reads_nothing(client: httpx.Client, server, method: str, path: str) -> None:
    refused = client.request(method, path, headers={"Host": f"evil.example:{server.port}"})
    assert refused.status_code == 421 and refused.json()["error"]["code"] == "misdirected_host"
    assert "papers" not in refused.text.lower().replace("server.allowed_hosts", "")


def test_a_rebound_host_cannot_ask(client: httpx.Client, server) -> None:
    refused = client.post(
        "/v1/ask", json={"question": "Which reranker helps recall?"}, headers={"Host": f"evil.example:{server.port}"}
    )
    assert refused.status_code == 421


def test_same_origin_and_originless_clients_still_work(client: httpx.Client, server) -> None:
    own = {"Origin": server.base_url, "Sec-Fetch-Site": "same-origin"}
    thread = client.post("/v1/threads", json={}, headers=own)
    assert thread.status_code == 201, thread.text  # the web UI's own writes
    assert client.post("/v1/threads", json={}).status_code == 201  # curl, SDKs: no Origin
    assert client.get("/v1/papers", headers={"Host": f"localhost:{server.port}"}).status_code == 200
    assert client.get("/healthz", headers={"Host": "10.1.2.3"}).status_code == 200  # probes by address


def guarded(**options) -> TestClient:
    async def ok(_request):
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/x", ok, methods=["GET", "POST"])])
    return TestClient(SiteGuard(app, **options), base_url="http://127.0.0.1:8000")


def test_the_guard_applies_allowed_hosts_and_cors_origins() -> None:
    client = guarded(check_host=True, allowed_hosts=["papers.example.org"], cors_origins=["https://ui.example.org"])
    assert client.get("/x", headers={"Host": "papers.example.org:8000"}).status_code == 200
    assert client.get("/x", headers={"Host": "other.example.org"}).status_code == 421
    assert client.post("/x", headers={"Origin": "https://ui.example.org"}).status_code == 200
    assert client.post("/x", headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.post("/x", headers={"Origin": "http://127.0.0.1:8001"}).status_code == 403  # another port
    assert client.post("/x", headers={"Origin": "http://127.0.0.1:8000"}).status_code == 200
    keyed = guarded(check_host=False, allowed_hosts=[], cors_origins=[])
    assert keyed.get("/x", headers={"Host": "anything.example"}).status_code == 200


def test_host_and_origin_parsing() -> None:
    assert host_allowed("[::1]:8000", []) and host_allowed("127.0.0.5", []) and host_allowed("LOCALHOST:1", [])
    assert not host_allowed("", []) and not host_allowed("127.0.0.1.evil.example", [])
    assert host_allowed("a.example:9", ["a.example:*"]) and not host_allowed("a.example:9", ["a.example:8"])
    assert same_origin("http://[::1]:8000", "[::1]:8000", "http")
    assert same_origin("http://localhost", "localhost:80", "http")
    assert not same_origin("http://localhost:8000.evil.example", "localhost:8000", "http")


@pytest.mark.parametrize("bad", ["secret-key\xa0", "secret-key\x85", "clé-secrète-1234567", "two words"])
def test_keys_are_printable_ascii_and_not_trimmed_of_unicode_space(bad: str, tmp_path) -> None:
    with pytest.raises(KeyFileError, match=r"U\+"):
        load_keys(ServerSettings(api_keys=[bad]))
    key_file = tmp_path / "keys.txt"
    key_file.write_text(f"# keys\n{bad}\n", encoding="utf-8")
    with pytest.raises(KeyFileError, match=r"keys.txt: line 2"):
        load_keys(ServerSettings(api_key_file=key_file))
    assert load_keys(ServerSettings(api_keys=[" good-key\t"])) == ["good-key"]


def test_a_short_key_is_refused_beyond_loopback() -> None:
    with pytest.raises(PermissionError, match="shorter than 16"):
        check_exposure("0.0.0.0", ["x"])
    check_exposure("0.0.0.0", ["k" * 16])
    check_exposure("127.0.0.1", ["x"])  # loopback: any key is the owner's choice


def test_a_key_with_a_trailing_no_break_space_does_not_match(keyed_server) -> None:
    from fakes.lit3r_server import KEY

    headers = {"Authorization": f"Bearer {KEY}\xa0".encode("latin-1")}
    response = httpx.get(f"{keyed_server.base_url}/v1/papers", headers=headers)
    assert response.status_code == 401
