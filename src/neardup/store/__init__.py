"""Persistent homes of a collection: one narrow :class:`Store` protocol.

``MemoryStore`` is the reference (dicts); ``SQLiteStore`` is the default (one file, WAL,
transactions); ``neardup.store.postgres.PostgresStore`` serves production (psycopg 3, a pool;
imported on use, it needs ``neardup[postgres]``). :func:`open_store` picks one from a ``--db``
URL. Every store passes the same conformance suite (tests/test_store_conformance.py).
"""

from __future__ import annotations

from neardup.store.base import CollectionMeta, DuplicateIdError, Store, StoredDoc
from neardup.store.memory import MemoryStore
from neardup.store.sqlite import SQLiteStore
from neardup.store.url import open_store

__all__ = [
    "CollectionMeta",
    "DuplicateIdError",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoredDoc",
    "open_store",
]
