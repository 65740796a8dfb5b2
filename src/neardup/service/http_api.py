"""The HTTP service: a collection behind a small JSON API (FastAPI), run by ``neardup serve``.

    POST /documents     add a batch, answer each document's stored near-duplicates
    POST /query         the stored near-duplicates of texts, storing nothing
    GET|DELETE /documents/{id}, GET /stats, GET /health (open), /docs and /openapi.json
    GET /               the pages a person reads (neardup.service.web.pages)

Every string of a request (ids, texts, ``meta`` keys and values) must be valid Unicode (no
lone surrogate such as ``"\ud800"``) without NUL (``"\\u0000"``), ``meta`` must hold no NaN
or Infinity, and an id no control character and at most 1024 bytes of UTF-8: such a request
(also a GET or DELETE of such an id) is a 422 before any store is touched, so every stored
document can be read back.

Each process (uvicorn worker) opens the collection once at startup and closes it at shutdown;
the routes that work (fingerprints, store) are plain ``def``, run in FastAPI's threadpool, so
the store is used from several threads at once. Before FastAPI sees a request, :class:`Guard`
checks the bearer token (when one is set) and reads the body, refusing one over the size limit
or not UTF-8: nothing is parsed for an unauthenticated client or an oversized body.
Settings reach worker processes through ``NEARDUP_*`` environment variables
(:meth:`ServiceSettings.to_env`, :func:`app_from_env`).
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from neardup import __version__
from neardup.collection.persistent import Collection, Result
from neardup.collection.store import DuplicateIdError
from neardup.collection.store_url import open_store
from neardup.errors import ConfigError, InputError, NearDupError, OutputError
from neardup.io.jsonvalues import MAX_ID_BYTES, id_problem, json_problem
from neardup.service import apidocs
from neardup.util import extras

extras.fastapi("the HTTP service (neardup serve)")  # "pip install 'neardup[serve]'" if missing

import anyio.to_thread  # noqa: E402  # installed with fastapi (starlette's event loop layer)
from fastapi import Depends, FastAPI, HTTPException, Request, Security  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import JSONResponse, Response  # noqa: E402
from fastapi.security import HTTPBearer  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator  # noqa: E402
from starlette.convertors import Convertor, register_url_convertor  # noqa: E402
from starlette.types import ASGIApp, Message, Receive, Scope, Send  # noqa: E402

from neardup.service.web import pages  # noqa: E402  # the pages a person reads, at /

DB_ENV = "NEARDUP_DB"
TOKEN_ENV = "NEARDUP_TOKEN"
MAX_BODY_ENV = "NEARDUP_MAX_BODY_BYTES"
MAX_BATCH_ENV = "NEARDUP_MAX_BATCH"
THREADS_ENV = "NEARDUP_THREADS"
DEFAULT_MAX_BODY_BYTES = 16 * 2**20
DEFAULT_MAX_BATCH = 1000
# Requests worked on at once per process. More threads only contend for the GIL: eight
# threads querying one collection cost 2-3x the CPU per query of one (measured at 1M docs).
DEFAULT_THREADS = 2
OPEN_PATHS = frozenset({"/health"}) | pages.PUBLIC_PATHS  # answered without a token


# ---------------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """What one service process needs: the store URL, the token (None: no auth), the limits."""

    db: str
    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_batch: int = DEFAULT_MAX_BATCH
    threads: int = DEFAULT_THREADS

    def __post_init__(self) -> None:
        if self.token is not None and not self.token:
            raise ConfigError("the token is empty; give a secret or none at all")
        for name in ("max_body_bytes", "max_batch", "threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, not {getattr(self, name)}")

    def to_env(self) -> dict[str, str]:
        """The environment variables :meth:`from_env` reads back (no token variable if None)."""
        env = {
            DB_ENV: self.db,
            MAX_BODY_ENV: str(self.max_body_bytes),
            MAX_BATCH_ENV: str(self.max_batch),
            THREADS_ENV: str(self.threads),
        }
        if self.token is not None:
            env[TOKEN_ENV] = self.token
        return env

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceSettings:
        """Settings from ``NEARDUP_*`` variables (those of the process by default)."""
        env = os.environ if environ is None else environ
        if not env.get(DB_ENV):
            raise ConfigError(f"{DB_ENV} is not set: the service needs a store URL")
        return cls(
            db=env[DB_ENV],
            token=env.get(TOKEN_ENV),
            max_body_bytes=_env_int(env, MAX_BODY_ENV, DEFAULT_MAX_BODY_BYTES),
            max_batch=_env_int(env, MAX_BATCH_ENV, DEFAULT_MAX_BATCH),
            threads=_env_int(env, THREADS_ENV, DEFAULT_THREADS),
        )


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    """An integer environment variable, ``default`` when unset."""
    value = env.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not an integer") from None


# ------------------------------------------------------------------------------------ models


class _Body(BaseModel):
    """A request body: strict types (no "1" for 1), unknown fields refused (typos show)."""

    model_config = ConfigDict(strict=True, extra="forbid")


def _valid_json(value: Any, where: str) -> Any:
    """``value`` if it can be stored and given back (:func:`json_problem`), else ValueError
    naming where (FastAPI answers 422 before anything is stored)."""
    if problem := json_problem(value, where):
        raise ValueError(problem)
    return value


class DocumentIn(_Body):
    """A document to add."""

    id: str = Field(
        min_length=1,
        description=(
            f"Unique within the collection; no control characters, at most {MAX_ID_BYTES} "
            "bytes of UTF-8."
        ),
    )
    text: str = Field(description="The text; may be empty (it then matches nothing).")
    meta: dict[str, Any] | None = Field(default=None, description="Kept and returned as given.")

    @field_validator("id", "text", "meta")
    @classmethod
    def _valid(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name == "id" and (problem := id_problem(value)):
            raise ValueError(problem)
        return _valid_json(value, str(info.field_name))


class AddRequest(_Body):
    """A batch to add, stored all or nothing."""

    documents: list[DocumentIn]
    upsert: bool = Field(default=False, description="Replace documents whose id is known.")


class QueryText(_Body):
    """A text to look up. Other fields (a document's id, meta) are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore")

    text: str

    @field_validator("text")
    @classmethod
    def _valid(cls, value: str) -> str:
        return _valid_json(value, "text")


class QueryRequest(_Body):
    """Texts to look up; nothing is stored."""

    documents: list[QueryText]


class DuplicateOut(BaseModel):
    """A stored near-duplicate and its exact score (the collection's measure), both ways:
    dropping the new text loses nothing only when ``new_in_stored`` reaches the threshold."""

    id: str
    score: float
    new_in_stored: float
    stored_in_new: float
    contained: Literal["new_in_stored", "stored_in_new"] | None


class ResultOut(BaseModel):
    """The stored near-duplicates of one input, best first (id is null for a query text)."""

    id: str | None
    duplicates: list[DuplicateOut]


class ResultsOut(BaseModel):
    """One result per input document, in input order."""

    results: list[ResultOut]


class DocumentOut(BaseModel):
    """A stored document (its text is not kept, only its fingerprints)."""

    id: str
    meta: dict[str, Any] | None


class RemovedOut(BaseModel):
    """The document that was removed."""

    id: str
    removed: bool = True


class StatsOut(BaseModel):
    """Size of the collection and the settings that decide its answers."""

    model_config = ConfigDict(extra="allow")

    documents: int
    method: str
    threshold: float
    measure: str
    config_id: str


class HealthOut(BaseModel):
    """The process is up."""

    status: str = "ok"


class ErrorOut(BaseModel):
    """Why a request was refused."""

    detail: str


class ConflictOut(ErrorOut):
    """Ids already stored (or repeated in the batch); nothing of the batch was stored."""

    ids: list[str]


# ------------------------------------------------------------------------------- ASGI guard


class _RefusedError(Exception):
    """A request refused before FastAPI sees it."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.response = JSONResponse({"detail": detail}, status, headers)


class Guard:
    """ASGI middleware: bearer token, then the whole body read (within the size limit) and
    checked to be UTF-8, then handed on: FastAPI parses only accepted bodies."""

    def __init__(self, app: ASGIApp, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = None if token is None else token.encode()
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_token(scope)
            self._check_length(scope)
            body = await self._read_body(receive)
        except _RefusedError as refused:
            await refused.response(scope, receive, send)
            return
        if body is not None:  # None: the client went away
            await self.app(scope, _replay(body, receive), send)

    def _check_token(self, scope: Scope) -> None:
        """401 unless no token is set, the path is open, or the bearer token matches."""
        path = scope["path"]
        if self.token is None or path in OPEN_PATHS or path.startswith(apidocs.ASSETS_PATH + "/"):
            return
        header = _header(scope, b"authorization")
        scheme, _, given = header.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
            detail = "wrong bearer token" if header else "missing 'Authorization: Bearer' header"
            raise _RefusedError(401, detail, {"WWW-Authenticate": "Bearer"})

    def _check_length(self, scope: Scope) -> None:
        """413 at once when the declared Content-Length is over the limit."""
        length = _header(scope, b"content-length")
        if length and length.isdigit() and int(length) > self.max_body_bytes:
            raise self._too_large()

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, counted as it streams in (chunked bodies declare no length)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        _check_utf8(body)
        return body

    def _too_large(self) -> _RefusedError:
        return _RefusedError(
            413, f"request body over the limit of {self.max_body_bytes} bytes (--max-body-bytes)"
        )


def _header(scope: Scope, name: bytes) -> bytes:
    """The first value of a request header ("" when absent)."""
    return next((value for key, value in scope["headers"] if key.lower() == name), b"")


def _check_utf8(body: bytes) -> None:
    """422 for a body that is not UTF-8 (JSON's only encoding): FastAPI would answer 400."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _RefusedError(
            422, f"request body is not valid UTF-8 (byte {exc.start}: {exc.reason})"
        ) from None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive channel giving ``body`` once, then the client's further messages."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


# ---------------------------------------------------------------------------------- the app


async def _collection(request: Request) -> Collection:
    """The collection this process opened at startup (async: no work, no threadpool hop)."""
    return request.app.state.collection


async def _settings(request: Request) -> ServiceSettings:
    return request.app.state.settings


CollectionDep = Annotated[Collection, Depends(_collection)]
SettingsDep = Annotated[ServiceSettings, Depends(_settings)]


def _check_batch(n: int, settings: ServiceSettings) -> None:
    """413 for a batch of more documents than the limit."""
    if n > settings.max_batch:
        raise HTTPException(
            413, f"{n} documents in one request; the limit is {settings.max_batch} (--max-batch)"
        )


def _results(results: list[Result]) -> ResultsOut:
    return ResultsOut.model_validate({"results": [r.as_dict() for r in results]})


def add_documents(body: AddRequest, collection: CollectionDep, settings: SettingsDep) -> ResultsOut:
    """Add a batch (all or nothing); per document, the near-duplicates already stored or
    earlier in the batch. A known id without ``upsert`` is a 409 and stores nothing."""
    _check_batch(len(body.documents), settings)
    docs = [(d.id, d.text, d.meta) for d in body.documents]
    return _results(collection.add(docs, upsert=body.upsert))


def query(body: QueryRequest, collection: CollectionDep, settings: SettingsDep) -> ResultsOut:
    """The stored near-duplicates of each text; nothing is stored."""
    _check_batch(len(body.documents), settings)
    return _results(collection.query([d.text for d in body.documents]))


class _AnyId(Convertor[str]):
    """A path parameter that takes any id, slashes and line breaks too (Starlette's ``path``
    stops at a line break: such an id would be a bare 404, not the 422 that says why)."""

    regex = "[\\s\\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("any_id", _AnyId())


def _check_id(doc_id: str) -> None:
    """422 for an id no document can have (control characters, too long): never stored, and
    refused before a store is asked."""
    if problem := id_problem(doc_id):
        raise HTTPException(422, problem)


def get_document(doc_id: str, collection: CollectionDep) -> DocumentOut:
    """A stored document's id and meta."""
    _check_id(doc_id)
    doc = collection.get(doc_id)
    if doc is None:
        raise HTTPException(404, f"no document with id {doc_id!r}")
    return DocumentOut(id=doc.id, meta=doc.meta)


def remove_document(doc_id: str, collection: CollectionDep) -> RemovedOut:
    """Remove a stored document."""
    _check_id(doc_id)
    if not collection.remove([doc_id]):
        raise HTTPException(404, f"no document with id {doc_id!r}")
    return RemovedOut(id=doc_id)


def stats(collection: CollectionDep) -> StatsOut:
    """Number of documents and the collection's settings."""
    return StatsOut.model_validate(collection.stats())


async def health() -> HealthOut:
    """Whether the process is up (open: no token needed)."""
    return HealthOut()


async def _conflict(_: Request, exc: DuplicateIdError) -> JSONResponse:
    return JSONResponse({"detail": str(exc), "ids": exc.ids}, 409)


async def _unprocessable(_: Request, exc: InputError) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, 422)


class _JSON(JSONResponse):
    """JSON answers that can always be written: a value stored before the service refused them
    (a lone surrogate, a NaN in meta) is sent escaped / as null instead of failing with a 500,
    so every stored document can be read back."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except (UnicodeEncodeError, ValueError):
            text = json.dumps(_finite(content), ensure_ascii=True, separators=(",", ":"))
            return text.encode("ascii")


def _finite(value: Any) -> Any:
    """``value`` with NaN and ±Infinity replaced by None (JSON has no such numbers)."""
    if isinstance(value, float) and value - value != 0:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


async def _invalid_request(request: Request, exc: RequestValidationError) -> Response:
    """422 naming each problem (where, what) without echoing the input: a value with a lone
    surrogate or a NaN cannot be written back as JSON (FastAPI's own answer was a 500).
    A body sent without a JSON content type (curl's ``-d`` sends a form's) is never read as
    JSON: the first problem named is then the header to send."""
    detail = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
    if request.method in ("POST", "PUT", "PATCH") and not _json_content(request):
        sent = request.headers.get("content-type") or "none"
        detail.insert(
            0,
            {
                "loc": ["header", "content-type"],
                "msg": f"the body must be JSON: send Content-Type: application/json (got {sent})",
                "type": "content_type",
            },
        )
    body = json.dumps({"detail": detail}, ensure_ascii=True)  # a key may hold a surrogate
    return Response(body, 422, media_type="application/json")


def _json_content(request: Request) -> bool:
    """Whether the request says its body is JSON (``application/json`` or ``…+json``)."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def _no_space(_: Request, exc: OutputError) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, 507)


async def _bad_request(_: Request, exc: NearDupError) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, 400)


def _register(app: FastAPI, secured: bool) -> None:
    """Add the routes; ``secured`` declares the bearer scheme in the OpenAPI document (the
    Guard enforces it) so that /docs offers to send a token."""
    deps = [Security(HTTPBearer(auto_error=False))] if secured else []
    errors: dict[int | str, dict[str, Any]] = {
        401: {"model": ErrorOut, "description": "Missing or wrong bearer token."},
        413: {"model": ErrorOut, "description": "Body or batch over the limit."},
    }
    conflict = errors | {409: {"model": ConflictOut, "description": "Known or repeated ids."}}
    unknown = errors | {404: {"model": ErrorOut, "description": "No document with this id."}}
    by_id = "/documents/{doc_id:any_id}"  # ids may hold slashes
    app.post("/documents", dependencies=deps, responses=conflict)(add_documents)
    app.post("/query", dependencies=deps, responses=errors)(query)
    app.get(by_id, dependencies=deps, responses=unknown)(get_document)
    app.delete(by_id, dependencies=deps, responses=unknown)(remove_document)
    app.get("/stats", dependencies=deps, responses=errors)(stats)
    app.get("/health")(health)


def create_app(
    settings: ServiceSettings, open_collection: Callable[[], Collection] | None = None
) -> FastAPI:
    """The service. The collection comes from ``open_collection`` (default: open
    ``settings.db``) at startup; its store is closed at shutdown."""
    opener = open_collection or (lambda: Collection.open(open_store(settings.db)))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # the threadpool running the plain-def routes: its size caps the requests in work
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.threads
        app.state.collection = opener()
        try:
            yield
        finally:
            app.state.collection.store.close()

    app = FastAPI(
        title="neardup",
        version=__version__,
        description="Near-duplicate texts: add documents to a collection, query texts.",
        lifespan=lifespan,
        default_response_class=_JSON,
        docs_url=None,  # FastAPI's page loads Swagger UI from a CDN: ours serves it
        redoc_url=None,
    )
    apidocs.add_docs(app)
    app.state.settings = settings
    app.add_exception_handler(DuplicateIdError, _conflict)
    app.add_exception_handler(InputError, _unprocessable)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(OutputError, _no_space)
    app.add_exception_handler(NearDupError, _bad_request)
    _register(app, secured=settings.token is not None)
    pages.mount(app)
    app.add_middleware(Guard, token=settings.token, max_body_bytes=settings.max_body_bytes)
    return app


def app_from_env() -> ASGIApp:
    """The app of one uvicorn worker, from the ``NEARDUP_*`` variables ``neardup serve`` set."""
    return create_app(ServiceSettings.from_env())
