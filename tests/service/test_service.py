"""The HTTP service as a client sees it: a real ``neardup serve`` subprocess, spoken to with httpx.

One server per module (startup compiles numba kernels); the multi-worker tests start their own.
Tests share the module server's collection, so each uses its own ids and counts differences.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import textgen
from neardup.collection import MemoryStore, SQLiteStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig
from neardup.errors import ConfigError, InputError, MissingDependencyError
from neardup.service.http_api import ServiceSettings, create_app
from neardup.util import extras
from textgen import edit, near_copies

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_BODY = 64 * 1024
MAX_BATCH = 20
CONFIG = DedupConfig(method="minhash", threshold=0.8)
text = functools.partial(textgen.text, n=200)  # long enough for MinHash at t = 0.8


def make_collection(path: Path) -> Path:
    store = SQLiteStore(path)
    Collection.create(store, CONFIG)
    store.close()
    return path


def neardup(*args: str, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """The CLI as a user runs it, in a subprocess."""
    command = [sys.executable, "-c", "from neardup.cli import main; main()", *args]
    return subprocess.Popen(command, env=env, **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serving(db: str, log: Path, *args: str, workers: int = 1, env: dict | None = None):
    """A running ``neardup serve`` (every worker started); stopped on exit."""
    port = free_port()
    with log.open("wb") as out:
        process = neardup(
            "serve", "--db", db, "--port", str(port), "--workers", str(workers), *args,
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_up(server, workers)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_up(server: Server, workers: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"neardup serve exited {server.process.returncode}:\n{server.output()}")
        started = server.output().count("Application startup complete")
        try:
            if started >= workers and httpx.get(f"{server.url}/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail(f"neardup serve did not come up:\n{server.output()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("service")
    db = make_collection(tmp / "c.db")
    limits = ("--max-body-bytes", str(MAX_BODY), "--max-batch", str(MAX_BATCH))
    with serving(str(db), tmp / "server.log", "--token", TOKEN, *limits) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=120) as http:
        yield http


def add(client: httpx.Client, *docs: dict, upsert: bool | None = None) -> httpx.Response:
    body: dict = {"documents": list(docs)}
    if upsert is not None:
        body["upsert"] = upsert
    return client.post("/documents", json=body)


def count(client: httpx.Client) -> int:
    return client.get("/stats").json()["documents"]


# ------------------------------------------------------------------------------ the API


def test_add_then_near_copy_reports_the_duplicate_with_its_score(client):
    original = text(1)
    first = add(client, {"id": "orig", "text": original, "meta": {"src": "feed"}})
    assert first.status_code == 200
    assert first.json() == {"results": [{"id": "orig", "duplicates": []}]}
    near_copy = {"id": "copy", "text": edit(original, 2, 2)}
    second = add(client, near_copy, {"id": "other", "text": text(3)})
    assert second.status_code == 200
    [copy, other] = second.json()["results"]
    assert copy["id"] == "copy"
    assert [d["id"] for d in copy["duplicates"]] == ["orig"]
    assert 0.8 <= copy["duplicates"][0]["score"] < 1.0
    assert other == {"id": "other", "duplicates": []}


def test_near_copies_within_one_batch_and_empty_text(client):
    body = text(4)
    response = add(
        client,
        {"id": "batch-a", "text": body},
        {"id": "batch-b", "text": edit(body, 5, 1)},
        {"id": "batch-empty", "text": ""},
    )
    assert response.status_code == 200
    [a, b, empty] = response.json()["results"]
    assert a["duplicates"] == []
    assert [d["id"] for d in b["duplicates"]] == ["batch-a"]
    assert empty == {"id": "batch-empty", "duplicates": []}


def test_query_finds_stored_near_copies_and_stores_nothing(client):
    body = text(6)
    assert add(client, {"id": "q-stored", "text": body}).status_code == 200
    before = count(client)
    response = client.post(
        "/query", json={"documents": [{"text": edit(body, 7, 2)}, {"text": text(8)}, {"text": ""}]}
    )
    assert response.status_code == 200
    [hit, miss, empty] = response.json()["results"]
    assert hit["id"] is None
    assert [d["id"] for d in hit["duplicates"]] == ["q-stored"]
    assert 0.8 <= hit["duplicates"][0]["score"] <= 1.0
    assert miss["duplicates"] == empty["duplicates"] == []
    assert count(client) == before


def test_query_ignores_the_id_and_meta_of_posted_documents(client):
    body = text(9)
    add(client, {"id": "q-doc", "text": body})
    doc = {"id": "whatever", "text": body, "meta": {"x": 1}}
    response = client.post("/query", json={"documents": [doc]})
    assert response.status_code == 200
    assert [d["id"] for d in response.json()["results"][0]["duplicates"]] == ["q-doc"]


def test_query_finds_lightly_edited_copies_at_threshold_0_8(client):
    # the case over HTTP: copies with 3 % of their words changed, ≥ 95 % found
    # (expected ~100 % with containment's 22 × 5 bands; the former 9 × 13 found 38 of 80)
    originals, copies = near_copies(80, seed=3000)
    for start in range(0, 80, MAX_BATCH):
        docs = [
            {"id": f"recall-{i}", "text": originals[i]} for i in range(start, start + MAX_BATCH)
        ]
        assert add(client, *docs).status_code == 200
    found = 0
    for start in range(0, 80, MAX_BATCH):
        batch = [{"text": body} for body in copies[start : start + MAX_BATCH]]
        response = client.post("/query", json={"documents": batch})
        assert response.status_code == 200
        for i, res in enumerate(response.json()["results"], start):
            found += f"recall-{i}" in [d["id"] for d in res["duplicates"]]
    assert found >= 76


def test_get_and_delete_a_document(client):
    add(client, {"id": "g/1 é", "text": text(10), "meta": {"tags": ["a", "b"], "n": 2}})
    got = client.get("/documents/g%2F1%20%C3%A9")
    assert got.status_code == 200
    assert got.json() == {"id": "g/1 é", "meta": {"tags": ["a", "b"], "n": 2}}
    assert client.get("/documents/g/1 é").json()["id"] == "g/1 é"
    add(client, {"id": "g-no-meta", "text": text(11)})
    assert client.get("/documents/g-no-meta").json() == {"id": "g-no-meta", "meta": None}
    before = count(client)
    deleted = client.delete("/documents/g-no-meta")
    assert deleted.status_code == 200
    assert deleted.json()["id"] == "g-no-meta"
    assert count(client) == before - 1
    assert client.get("/documents/g-no-meta").status_code == 404


def test_unknown_ids_are_404_with_a_detail(client):
    for response in (client.get("/documents/nope"), client.delete("/documents/nope")):
        assert response.status_code == 404
        assert "nope" in response.json()["detail"]


def test_stats_counts_documents_and_names_the_settings(client):
    before = client.get("/stats").json()
    add(client, {"id": "s1", "text": text(12)}, {"id": "s2", "text": text(13)})
    after = client.get("/stats").json()
    assert after["documents"] == before["documents"] + 2
    assert after["method"] == "minhash"
    assert after["threshold"] == 0.8


def test_health(server):
    response = httpx.get(f"{server.url}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


# ------------------------------------------------------------------------ ids and upsert


def test_known_id_is_409_naming_it_and_stores_nothing(client):
    add(client, {"id": "known", "text": text(14), "meta": {"v": 1}})
    before = count(client)
    response = add(client, {"id": "fresh", "text": text(15)}, {"id": "known", "text": text(16)})
    assert response.status_code == 409
    assert "'known'" in response.json()["detail"]
    assert response.json()["ids"] == ["known"]
    assert count(client) == before
    assert client.get("/documents/fresh").status_code == 404
    assert client.get("/documents/known").json()["meta"] == {"v": 1}


def test_id_repeated_in_a_batch_is_409(client):
    response = add(client, {"id": "twice", "text": "a"}, {"id": "twice", "text": "b"})
    assert response.status_code == 409
    assert "twice" in response.json()["detail"]
    assert client.get("/documents/twice").status_code == 404


def test_upsert_replaces_a_known_document(client):
    body = text(17)
    add(client, {"id": "up", "text": body, "meta": {"v": 1}})
    before = count(client)
    response = add(client, {"id": "up", "text": edit(body, 18, 1), "meta": {"v": 2}}, upsert=True)
    assert response.status_code == 200
    assert response.json()["results"] == [{"id": "up", "duplicates": []}]  # not itself
    assert client.get("/documents/up").json()["meta"] == {"v": 2}
    assert count(client) == before


# --------------------------------------------------------------------------------- auth


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/stats"),
        ("POST", "/documents"),
        ("POST", "/query"),
        ("GET", "/documents/known"),
        ("DELETE", "/documents/known"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
    ],
)
@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}]
)
def test_every_route_but_health_needs_the_token(server, method, path, headers):
    body = {"documents": [{"id": "intruder", "text": "x"}]}
    response = httpx.request(
        method, server.url + path, headers=headers, json=body if method == "POST" else None
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["detail"]


def test_nothing_is_stored_without_the_token(server, client):
    body = {"documents": [{"id": "intruder", "text": "x"}]}
    httpx.post(f"{server.url}/documents", json=body)
    assert client.get("/documents/intruder").status_code == 404


# ------------------------------------------------------------------------------- limits


def test_body_over_the_limit_is_413(client):
    big = json.dumps({"documents": [{"text": "w1 " * (MAX_BODY // 3)}]}).encode()
    assert len(big) > MAX_BODY
    response = client.post("/query", content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert str(MAX_BODY) in response.json()["detail"]


def test_chunked_body_over_the_limit_is_413(client):
    def chunks() -> Iterator[bytes]:
        yield b'{"documents": [{"text": "'
        for _ in range(MAX_BODY // 4096 + 1):
            yield b"w1 " * 1365
        yield b'"}]}'

    response = client.post("/query", content=chunks(), headers={"content-type": "application/json"})
    assert response.request.headers["transfer-encoding"] == "chunked"
    assert response.status_code == 413


def test_chunked_body_under_the_limit_is_read(client):
    def chunks() -> Iterator[bytes]:
        yield b'{"documents": [{"text": "'
        yield b"w1 w2 w3 " * 100
        yield b'"}]}'

    response = client.post("/query", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 200


def test_batch_over_the_limit_is_413_naming_it(client):
    docs = [{"id": f"many-{i}", "text": "x"} for i in range(MAX_BATCH + 1)]
    for path in ("/documents", "/query"):
        response = client.post(path, json={"documents": docs})
        assert response.status_code == 413
        assert f"limit is {MAX_BATCH}" in response.json()["detail"]
    assert client.get("/documents/many-0").status_code == 404
    at_limit = client.post("/documents", json={"documents": docs[:MAX_BATCH]})
    assert at_limit.status_code == 200


# ------------------------------------------------------------------------ malformed bodies


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("/documents", b'{"documents": [{"id": "m1", "text": "x"}'),  # truncated JSON
        ("/documents", b"not json"),
        ("/documents", b'{"documents": [{"id": "m1"}]}'),  # no text
        ("/documents", b'{"documents": [{"text": "x"}]}'),  # no id
        ("/documents", b"{}"),  # no documents
        ("/documents", b'{"documents": [{"id": 1, "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": 2}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": [1]}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x"}], "upsert": "yes"}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x"}], "upsrt": true}'),
        ("/documents", b'{"documents": {"id": "m1", "text": "x"}}'),
        ("/documents", b'{"documents": [{"id": "", "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "caf\xe9"}]}'),  # Latin-1, not UTF-8
        ("/query", b'{"documents": [{"text": null}]}'),
        ("/query", b'{"documents": ["just a string"]}'),
        ("/query", b"[]"),
        # lone surrogates (no UTF-8 can hold them) and numbers JSON has not: never stored
        ("/documents", b'{"documents": [{"id": "m1\\ud800", "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x\\udfff"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"a": "\\ud800"}}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"\\ud800": 1}}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"a": [NaN]}}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"a": Infinity}}]}'),
        ("/query", b'{"documents": [{"text": "\\ud800"}]}'),
        # NUL anywhere (no PostgreSQL text holds it) and ids that could not be read by URL
        ("/documents", b'{"documents": [{"id": "m1\\u0000", "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x\\u0000"}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"\\u0000": 1}}]}'),
        ("/documents", b'{"documents": [{"id": "m1", "text": "x", "meta": {"a": ["\\u0000"]}}]}'),
        ("/documents", b'{"documents": [{"id": "m1\\n", "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1\\u007f", "text": "x"}]}'),
        ("/documents", b'{"documents": [{"id": "m1' + b"x" * 1100 + b'", "text": "x"}]}'),
        ("/query", b'{"documents": [{"text": "\\u0000"}]}'),
    ],
)
def test_malformed_body_is_422_with_the_reason(client, path, content):
    response = client.post(path, content=content, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"]
    assert client.get("/documents/m1").status_code == 404


BAD_IDS = ["a%00b", "a%0Ab", "a%1Fb", "x" * 1100]


def refuses_bad_ids(client: httpx.Client) -> None:
    """Every route that takes records or ids answers 422 (never 500) for ids and records no
    store can hold, and stores nothing."""
    before = count(client)
    for doc_id in BAD_IDS:
        for method, route in (("GET", "/"), ("DELETE", "/"), ("GET", "/web/")):
            answer = client.request(method, f"{route}documents/{doc_id}")
            assert answer.status_code == 422, (method, route, doc_id, answer.text)
            assert answer.json()["detail"]
    for doc in (
        {"id": "n\x00", "text": "x"},
        {"id": "n", "text": "x\x00"},
        {"id": "n", "text": "x", "meta": {"k\x00": 1}},
        {"id": "n", "text": "x", "meta": {"k": "v\x00"}},
    ):
        assert client.post("/documents", json={"documents": [doc]}).status_code == 422
    assert client.post("/query", json={"documents": [{"text": "\x00"}]}).status_code == 422
    assert count(client) == before


def test_bad_ids_and_nul_are_422_on_every_route(client):
    refuses_bad_ids(client)


def test_bad_ids_and_nul_are_422_on_every_route_over_postgres(postgres_url, tmp_path):
    from neardup.collection.postgres_store import PostgresStore

    store = PostgresStore(postgres_url)
    Collection.create(store, CONFIG)
    store.close()
    with serving(postgres_url, tmp_path / "pg.log", "--token", TOKEN) as server:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as http:
            refuses_bad_ids(http)
            assert add(http, {"id": "fine", "text": text(seed=5)}).status_code == 200
        assert "Traceback" not in server.output()


def test_utf8_error_names_the_encoding(client):
    content = b'{"documents": [{"text": "\xff"}]}'
    response = client.post("/query", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "UTF-8" in response.json()["detail"]


# ---------------------------------------------------------------------------------- docs


def test_openapi_document_and_docs_page_are_served(client):
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "swagger" in docs.text.lower()
    # offline: every script and style comes from the service itself, none from a CDN
    assert "cdn" not in docs.text.lower()
    assert "https://" not in docs.text.replace("https://fastapi.tiangolo.com", "")
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/docs-assets/{asset}" in docs.text
        served = httpx.get(f"{client.base_url}/docs-assets/{asset}")  # public: no token
        assert served.status_code == 200
        assert len(served.content) > 10_000
    spec = client.get("/openapi.json").json()
    paths = {"/documents", "/query", "/documents/{doc_id}", "/stats", "/health"}
    assert paths <= set(spec["paths"])
    schemas = spec["components"]["schemas"]
    assert {"AddRequest", "QueryRequest", "ResultsOut", "DocumentOut", "StatsOut"} <= set(schemas)
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    add_op = spec["paths"]["/documents"]["post"]
    assert {"200", "401", "409", "413", "422"} <= set(add_op["responses"])


# ------------------------------------------------------------------------ refusing to start


def test_serve_refuses_a_store_without_a_collection(tmp_path):
    empty = tmp_path / "empty.db"
    SQLiteStore(empty).close()
    missing = tmp_path / "missing.db"
    for db, message in ((empty, "holds no collection"), (missing, "no such file")):
        process = neardup(
            "serve", "--db", str(db), "--port", str(free_port()),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _, err = process.communicate(timeout=120)
        assert process.returncode != 0
        assert message in err
        assert "Traceback" not in err
    assert not missing.exists()


def test_serve_without_a_token_warns_at_start_that_writes_are_open(tmp_path):
    db = make_collection(tmp_path / "open.db")
    with serving(str(db), tmp_path / "open.log") as server:
        assert httpx.get(f"{server.url}/stats").status_code == 200  # open, as warned
        warned = [line for line in server.output().splitlines() if "warning" in line]
    assert any("no --token" in line and "anyone" in line for line in warned), warned
    with serving(str(db), tmp_path / "closed.log", "--token", TOKEN) as server:
        assert "no --token" not in server.output()


def test_serve_refuses_an_empty_token(tmp_path):
    db = make_collection(tmp_path / "c.db")
    process = neardup(
        "serve", "--db", str(db), "--token", "", "--port", str(free_port()),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "token is empty" in err


# ------------------------------------------------------------------- several worker processes


def add_concurrently(url: str, threads: int = 8, batches: int = 5, size: int = 4) -> list[int]:
    """Each thread adds its own distinct documents; the status of every request."""

    def run(worker: int) -> list[int]:
        statuses = []
        with httpx.Client(base_url=url, headers=AUTH, timeout=120) as http:
            for batch in range(batches):
                ids = [f"t{worker}-{batch}-{i}" for i in range(size)]
                seed = 10_000 + worker * 1000 + batch * 10
                docs = [{"id": doc_id, "text": text(seed + i)} for i, doc_id in enumerate(ids)]
                statuses.append(http.post("/documents", json={"documents": docs}).status_code)
        return statuses

    with ThreadPoolExecutor(threads) as pool:
        return [status for statuses in pool.map(run, range(threads)) for status in statuses]


def check_workers_share_the_collection(db: str, tmp_path: Path) -> None:
    env = {**_environ(), "NEARDUP_TOKEN": TOKEN}  # the token from the environment this time
    with serving(db, tmp_path / "workers.log", workers=2, env=env) as running:
        statuses = add_concurrently(running.url)
        assert statuses == [200] * len(statuses)
        stats = httpx.get(f"{running.url}/stats", headers=AUTH).json()
        assert stats["documents"] == 8 * 5 * 4
        assert running.output().count("Application startup complete") == 2


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKEN"}


def test_two_workers_on_sqlite(tmp_path):
    db = make_collection(tmp_path / "w.db")
    check_workers_share_the_collection(str(db), tmp_path)


def test_two_workers_on_postgres(postgres_url, tmp_path):
    from neardup.collection.postgres_store import PostgresStore

    store = PostgresStore(postgres_url)
    Collection.create(store, CONFIG)
    store.close()
    check_workers_share_the_collection(postgres_url, tmp_path)


# ------------------------------------------------------------------ in-process unit checks


class _Refusing(Collection):
    """A collection whose query fails as neardup does on a user's mistake."""

    def query(self, texts: list[str]) -> list:
        raise InputError(f"text 0 of {len(texts)} cannot be used")

    def stats(self) -> dict:
        raise ConfigError("bad setting")


def test_neardup_errors_are_4xx_with_the_message_not_500():
    collection = _Refusing.create(MemoryStore(), CONFIG)
    app = create_app(ServiceSettings(db="unused"), lambda: collection)
    with TestClient(app, raise_server_exceptions=False) as http:
        refused = http.post("/query", json={"documents": [{"text": "x"}]})
        assert refused.status_code == 422
        assert refused.json() == {"detail": "text 0 of 1 cannot be used"}
        bad = http.get("/stats")
        assert bad.status_code == 400
        assert bad.json() == {"detail": "bad setting"}


def test_documents_stored_before_the_checks_can_still_be_read_back():
    # a surrogate and a NaN stored by an older neardup (the store takes them; the API no more)
    collection = Collection.create(MemoryStore(), CONFIG)
    collection.add([("old", text(seed=1), None)])
    (stored,) = collection.store.get(["old"])
    meta = {"name": "\ud800", "score": float("nan")}
    collection.store.add([dataclasses.replace(stored, meta=meta)], upsert=True)
    app = create_app(ServiceSettings(db="unused"), lambda: collection)
    with TestClient(app, raise_server_exceptions=False) as http:
        got = http.get("/documents/old")
        assert got.status_code == 200
        assert got.json() == {"id": "old", "meta": {"name": "\ud800", "score": None}}


def test_without_a_token_every_route_is_open():
    app = create_app(ServiceSettings(db="unused"), lambda: Collection.create(MemoryStore(), CONFIG))
    with TestClient(app) as http:
        assert http.get("/stats").status_code == 200
        assert "securitySchemes" not in http.get("/openapi.json").json().get("components", {})


def test_settings_travel_through_the_environment():
    settings = ServiceSettings(db="x.db", token="t", max_body_bytes=10, max_batch=3, threads=5)
    assert ServiceSettings.from_env(settings.to_env()) == settings
    no_token = ServiceSettings(db="x.db")
    assert ServiceSettings.from_env(no_token.to_env()) == no_token


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "NEARDUP_DB"),
        ({"NEARDUP_DB": "x.db", "NEARDUP_TOKEN": ""}, "token is empty"),
        ({"NEARDUP_DB": "x.db", "NEARDUP_MAX_BATCH": "many"}, "not an integer"),
        ({"NEARDUP_DB": "x.db", "NEARDUP_MAX_BODY_BYTES": "0"}, "at least 1"),
        ({"NEARDUP_DB": "x.db", "NEARDUP_THREADS": "0"}, "threads must be at least 1"),
    ],
)
def test_bad_settings_are_config_errors(env, message):
    with pytest.raises(ConfigError, match=message):
        ServiceSettings.from_env(env)


def test_a_missing_fastapi_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # makes the import fail
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    for helper in (extras.fastapi, extras.uvicorn):
        with pytest.raises(MissingDependencyError, match=r"pip install 'neardup\[serve\]'"):
            helper("neardup serve")


@pytest.mark.parametrize("method", ["simhash", "megashingle"])
def test_every_lsh_method_finds_lightly_edited_copies_over_http(tmp_path, method):
    # the floor over HTTP for the other LSH methods: a collection made at t = 0.8
    # (tuned keys), a real server, copies with 3 % of their words changed: ≥ 95 % found
    # (the paper's keys: simhash k = 3 found ~30 %, megashingle 6 × 14 ~2 %)
    store = SQLiteStore(tmp_path / "c.db")
    Collection.create(store, DedupConfig(method=method, threshold=0.8))
    store.close()
    originals, copies = near_copies(80, seed=3500)
    with (
        serving(str(tmp_path / "c.db"), tmp_path / "server.log") as running,
        httpx.Client(base_url=running.url, timeout=120) as http,
    ):
        docs = [{"id": f"o{i}", "text": body} for i, body in enumerate(originals)]
        assert http.post("/documents", json={"documents": docs}).status_code == 200
        response = http.post("/query", json={"documents": [{"text": c} for c in copies]})
        assert response.status_code == 200
        results = response.json()["results"]
    found = sum(f"o{i}" in [d["id"] for d in res["duplicates"]] for i, res in enumerate(results))
    assert found >= 76
