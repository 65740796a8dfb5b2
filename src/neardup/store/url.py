"""Open a store from the ``--db`` URL a user gives: a SQLite file or a PostgreSQL database.

``sqlite:///path/to/file.db`` or a plain path → :class:`~neardup.store.sqlite.SQLiteStore`;
``postgresql://…`` (or ``postgres://…``) → :class:`~neardup.store.postgres.PostgresStore`,
which needs ``pip install neardup[postgres]``.
"""

from __future__ import annotations

from neardup.errors import ConfigError
from neardup.store.base import Store

_SQLITE = "sqlite://"
_POSTGRES = ("postgresql://", "postgres://")


def open_store(url: str) -> Store:
    """The store that ``url`` names (created empty if it does not exist yet)."""
    if not url or not url.strip():
        raise ConfigError("--db: empty store URL; give a SQLite path or a postgresql:// URL")
    if url.startswith(_POSTGRES):
        from neardup.store.postgres import PostgresStore

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
    from neardup.store.sqlite import SQLiteStore

    return SQLiteStore(path)
