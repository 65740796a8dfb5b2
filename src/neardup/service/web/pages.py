"""The web pages' routes: one page at ``/`` and the HTML fragments its script fetches.

    GET  /                      the page (open: it holds no data, only the form for a token)
    GET  /static/app.js|.css    its script and style (open)
    GET  /web/collection        size, settings and the documents added last
    POST /web/compare           {"a", "b"}: measures and both texts highlighted
    POST /web/search            {"text"}: the stored near-duplicates, highlighted
    POST /web/add               {"id", "text"}: store the text (kept in its meta) and show its
                                near-duplicates
    GET  /web/documents/{id}    a stored document and its near-duplicates

The fragments sit behind the service's token check like every API route: the script sends
the token the reader typed once, kept in the tab's ``sessionStorage`` (gone when the tab
closes; never a cookie, so no other tab or site request carries it). Errors are the API's
JSON (``{"detail": ...}``), shown by the script.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from neardup import __version__
from neardup.collection.persistent import Collection
from neardup.io.jsonvalues import id_problem
from neardup.service.web import views
from neardup.util import extras

extras.fastapi("the web pages (neardup serve)")  # "pip install 'neardup[serve]'" if missing
extras.jinja2("the web pages (neardup serve)")

from fastapi import APIRouter, FastAPI, HTTPException, Request  # noqa: E402
from fastapi.responses import HTMLResponse  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from jinja2 import Environment, PackageLoader, select_autoescape  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field  # noqa: E402

STATIC = Path(__file__).parent / "static"
PUBLIC_PATHS = frozenset({"/", "/static/app.js", "/static/app.css"})  # served without a token

_templates = Environment(
    loader=PackageLoader("neardup.service.web", "templates"),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class CompareIn(_Body):
    a: str
    b: str


class SearchIn(_Body):
    text: str


class AddIn(_Body):
    id: str = Field(min_length=1)
    text: str


def _render(name: str, started: float | None = None, **context: Any) -> HTMLResponse:
    """A template as an HTML response; ``Server-Timing`` says how long the work took."""
    headers = {}
    if started is not None:
        headers["Server-Timing"] = f"app;dur={1000 * (time.perf_counter() - started):.1f}"
    return HTMLResponse(_templates.get_template(name).render(**context), headers=headers)


def _collection(request: Request) -> Collection:
    return request.app.state.collection


def page() -> HTMLResponse:
    """The page: its script fetches every fragment (with the token, when one is needed)."""
    return _render("index.html", version=__version__)


def collection_fragment(request: Request) -> HTMLResponse:
    """Size and settings of the collection, and the ids of the documents added last."""
    started = time.perf_counter()
    collection = _collection(request)
    figures = views.collection_figures(collection)
    recent = collection.recent(views.RECENT)
    return _render("collection.html", started, figures=figures, recent=recent)


def compare_fragment(body: CompareIn, request: Request) -> HTMLResponse:
    """Two texts compared with the collection's settings."""
    started = time.perf_counter()
    view = views.compare_view(body.a, body.b, _collection(request).config)
    return _render("compare.html", started, view=view)


def search_fragment(body: SearchIn, request: Request) -> HTMLResponse:
    """The stored near-duplicates of a text; nothing is stored."""
    started = time.perf_counter()
    matches = views.search_view(body.text, _collection(request))
    return _render("matches.html", started, matches=matches, added=None)


def add_fragment(body: AddIn, request: Request) -> HTMLResponse:
    """Store a text (its text kept in its meta) and show the near-duplicates it had."""
    started = time.perf_counter()
    collection = _collection(request)
    collection.add([(body.id, body.text, {views.TEXT_META: body.text})])
    matches = views.search_view(body.text, collection, exclude=body.id)
    return _render("matches.html", started, matches=matches, added=body.id)


def document_fragment(doc_id: str, request: Request) -> HTMLResponse:
    """A stored document, its text when kept, and its near-duplicates."""
    started = time.perf_counter()
    if problem := id_problem(doc_id):  # no document has it; a store may not even take it
        raise HTTPException(422, problem)
    view = views.document_view(doc_id, _collection(request))
    if view is None:
        raise HTTPException(404, f"no document with id {doc_id!r}")
    return _render("document.html", started, doc=view)


def mount(app: FastAPI) -> None:
    """Add the page, its static files and its fragments to the service's app (not to its
    OpenAPI document: that describes the JSON API)."""
    router = APIRouter(include_in_schema=False)
    router.get("/")(page)
    router.get("/web/collection")(collection_fragment)
    router.post("/web/compare")(compare_fragment)
    router.post("/web/search")(search_fragment)
    router.post("/web/add")(add_fragment)
    router.get("/web/documents/{doc_id:any_id}")(document_fragment)  # neardup.service.http_api's
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
