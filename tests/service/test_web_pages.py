"""The page's routes in the service app (neardup.service.web.pages), through FastAPI's test client;
the real browser against a real server is tests/service/test_web_browser.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from neardup.collection import MemoryStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig
from neardup.service.http_api import ServiceSettings, create_app

TOKEN = "page-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PASSAGE = "the keeper counted the herons in the willows and wrote both figures in the ledger"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = ServiceSettings(db="memory", token=TOKEN)
    app = create_app(settings, lambda: Collection.create(MemoryStore(), DedupConfig()))
    with TestClient(app) as http:
        yield http


def test_the_page_and_its_files_need_no_token_but_hold_no_data(client):
    page = client.get("/")
    assert page.status_code == 200
    assert 'label for="text-a"' in page.text
    assert '<script src="/static/app.js"' in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from elsewhere
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/app.css").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/web/collection", None),
        ("POST", "/web/compare", {"a": PASSAGE, "b": PASSAGE}),
        ("POST", "/web/search", {"text": PASSAGE}),
        ("POST", "/web/add", {"id": "x", "text": PASSAGE}),
        ("GET", "/web/documents/x", None),
    ],
)
def test_every_fragment_needs_the_token(client, method, path, body):
    missing = client.request(method, path, json=body)
    wrong = client.request(method, path, json=body, headers={"Authorization": "Bearer nope"})
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert wrong.json()["detail"] == "wrong bearer token"


def test_texts_are_escaped_not_run(client):
    evil = f"<script>alert(1)</script> {PASSAGE} <img src=x onerror=alert(2)>"
    page = client.post("/web/compare", json={"a": evil, "b": PASSAGE}, headers=AUTH)
    assert page.status_code == 200
    assert "<script>" not in page.text
    assert "<img" not in page.text
    assert "&lt;script&gt;" in page.text
    assert "app;dur=" in page.headers["server-timing"]


def test_add_then_open_then_refuse_a_known_id(client):
    added = client.post("/web/add", json={"id": "a/b", "text": PASSAGE}, headers=AUTH)
    assert added.status_code == 200
    assert "Added" in added.text
    doc = client.get("/web/documents/a/b", headers=AUTH)
    assert doc.status_code == 200
    assert PASSAGE in doc.text
    again = client.post("/web/add", json={"id": "a/b", "text": PASSAGE}, headers=AUTH)
    assert again.status_code == 409
    assert "a/b" in again.json()["detail"]
    found = client.post("/web/search", json={"text": PASSAGE + " more"}, headers=AUTH)
    assert 'data-id="a/b"' in found.text
    assert "<mark>" in found.text


def test_bad_input_gets_a_clear_message(client):
    empty = client.post("/web/compare", json={"a": "", "b": PASSAGE}, headers=AUTH)
    assert (empty.status_code, empty.json()["detail"]) == (422, "A: the text is empty")
    unknown = client.get("/web/documents/nobody", headers=AUTH)
    assert (unknown.status_code, unknown.json()["detail"]) == (404, "no document with id 'nobody'")


def test_the_pages_stay_out_of_the_api_document(client):
    paths = client.get("/openapi.json", headers=AUTH).json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/web")]


def test_without_a_token_the_fragments_answer_everyone():
    app = create_app(
        ServiceSettings(db="memory"), lambda: Collection.create(MemoryStore(), DedupConfig())
    )
    with TestClient(app) as http:
        page = http.get("/web/collection")
        assert page.status_code == 200
        assert "<dt>Documents</dt><dd>0</dd>" in page.text


def test_collection_lists_the_documents_added_last_newest_first_as_links():
    collection = Collection.create(MemoryStore(), DedupConfig())
    app = create_app(ServiceSettings(db="memory"), lambda: collection)
    words = PASSAGE.split()
    with TestClient(app) as http:
        assert "No documents yet." in http.get("/web/collection").text
        for n in range(12):  # different texts, so each is added as a new document
            text = " ".join(words[n:] + words[:n]) + f" number {n} of twelve"
            added = http.post("/web/add", json={"id": f"doc {n}/x", "text": text})
            assert added.status_code == 200
        collection.remove(["doc 11/x"])
        page = http.get("/web/collection").text
    shown = [part.split('"')[0] for part in page.split('<li data-id="')[1:]]
    assert shown == [f"doc {n}/x" for n in range(10, 0, -1)]  # the last ten, newest first
    assert '<a href="#document/doc%2010/x">doc 10/x</a>' in page
    assert "No documents yet." not in page
