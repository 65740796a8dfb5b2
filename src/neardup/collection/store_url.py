"""Open a store from the ``--db`` URL a user gives: a SQLite file or a PostgreSQL database.

``sqlite:///path/to/file.db`` or a plain path →
:class:`~neardup.collection.sqlite_store.SQLiteStore`; ``postgresql://…`` (or ``postgres://…``)
→ :class:`~neardup.collection.postgres_store.PostgresStore`, which needs
``pip install neardup[postgres]``.
"""

from __future__ import annotations

from pathlib import Path

from neardup.collection.store import Store
from neardup.errors import ConfigError

_SQLITE = "sqlite://"
_POSTGRES = ("postgresql://", "postgres://")


def open_store(url: str, *, must_exist: bool = False) -> Store:
    """The store that ``url`` names; a SQLite file that does not exist is created empty,
    unless ``must_exist`` (then ConfigError: a mistyped path makes no stray file)."""
    if not url or not url.strip():
        raise ConfigError("--db: empty store URL; give a SQLite path or a postgresql:// URL")
    if url.startswith(_POSTGRES):
        from neardup.collection.postgres_store import PostgresStore

        return PostgresStore(url)
    if url.startswith(_SQLITE):
        path = url[len(_SQLITE) :]
        if path.startswith("/"):
            path = path[1:]  # sqlite:///rel.db → rel.db, sqlite:////abs.db → /abs.db
        if not path:
            raise ConfigError(f"--db {url!r}: no file path after sqlite:///")
    elif "://" in url:
        scheme = url.split("://", 1)[0]
        raise ConfigError(
            f"--db {url!r}: unknown scheme {scheme!r}; use a SQLite path, sqlite:///PATH "
            "or postgresql://…"
        )
    else:
        path = url
    if must_exist and not Path(path).is_file():
        raise ConfigError(f"--db {url}: no such file; create one with 'neardup index create'")
    from neardup.collection.sqlite_store import SQLiteStore

    return SQLiteStore(path)
