"""``neardup serve``: a collection over HTTP (:mod:`neardup.service.http_api`, run by uvicorn).

The store is checked here, once, before any worker starts: a store without a collection is
refused with a clear message instead of workers failing one by one. Settings reach the
workers as ``NEARDUP_*`` environment variables read by ``neardup.service.http_api:app_from_env``.
"""

from __future__ import annotations

import os

import click

from neardup.cli.app import cli
from neardup.cli.options import count, db_option
from neardup.collection.persistent import Collection
from neardup.collection.store_url import open_store
from neardup.errors import ConfigError
from neardup.util import extras

_TOKEN_ENV = "NEARDUP_TOKEN"
_CREATE_HINT = "create one first with 'neardup index create'"


@cli.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port."
)
@click.option(
    "--token",
    envvar=_TOKEN_ENV,
    show_envvar=True,
    default=None,
    help="Bearer token required on every route but /health; prefer the environment variable "
    "(a command line is visible to other users). Without one, anyone who reaches the port "
    "may read and write.",
)
@click.option(
    "--workers",
    type=count(1),
    default=1,
    show_default=True,
    help="Worker processes, each with the collection open.",
)
@click.option(
    "--max-body-bytes",
    type=count(1),
    default=None,
    help="Largest request body; a larger one is refused with 413 [default: 16 MiB].",
)
@click.option(
    "--max-batch",
    type=count(1),
    default=None,
    help="Most documents in one request; more are refused with 413 [default: 1000].",
)
@click.option(
    "--threads",
    type=count(1),
    default=None,
    envvar="NEARDUP_THREADS",
    show_envvar=True,
    help="Requests worked on at once per worker (more only contend for the GIL) [default: 2].",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    help="uvicorn's log level.",
)
def serve(
    db_url: str,
    host: str,
    port: int,
    token: str | None,
    workers: int,
    max_body_bytes: int | None,
    max_batch: int | None,
    threads: int | None,
    log_level: str,
) -> None:
    """Serve a collection over HTTP: add, query, get, delete, stats (API docs at /docs)."""
    uvicorn = extras.uvicorn("neardup serve")
    from neardup.service import http_api as service  # needs fastapi: imported only to serve

    limits = {"max_body_bytes": max_body_bytes, "max_batch": max_batch, "threads": threads}
    settings = service.ServiceSettings(
        db=db_url,
        token=_token(token),
        **{name: value for name, value in limits.items() if value is not None},
    )
    check_collection(db_url)
    if settings.token is None:
        click.echo(
            f"neardup: warning: no --token (NEARDUP_TOKEN): anyone who reaches {host}:{port} "
            "can add and remove documents",
            err=True,
        )
    os.environ.pop(service.TOKEN_ENV, None)
    os.environ.update(settings.to_env())
    uvicorn.run(
        f"{service.__name__}:{service.app_from_env.__name__}",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
    )


def _token(token: str | None) -> str | None:
    """The token; an empty NEARDUP_TOKEN (which click reads as unset) is refused rather than
    silently serving without authentication."""
    if token is None and os.environ.get(_TOKEN_ENV) == "":
        raise click.UsageError(f"{_TOKEN_ENV} is set but empty; unset it or give a secret")
    return token


def check_collection(db: str) -> None:
    """Refuse a store that holds no collection this neardup can open (ConfigError), without
    creating a SQLite file that is not there."""
    store = open_store(db, must_exist=True)
    try:
        if store.meta() is None:
            raise ConfigError(f"--db {db}: the store holds no collection; {_CREATE_HINT}")
        Collection.open(store)
    finally:
        store.close()
