"""A persistent collection (:mod:`neardup.collection.persistent`) and its homes: one narrow
:class:`Store` protocol.

``MemoryStore`` is the reference (dicts); ``SQLiteStore`` is the default (one file, WAL,
transactions); ``neardup.collection.postgres_store.PostgresStore`` serves production
(psycopg 3, a pool; imported on use, it needs ``neardup[postgres]``). :func:`open_store` picks
one from a ``--db`` URL. Every store passes the same conformance suite
(tests/collection/test_store_conformance.py).
"""

from __future__ import annotations

from neardup.collection.memory_store import MemoryStore
from neardup.collection.sqlite_store import SQLiteStore
from neardup.collection.store import CollectionMeta, DuplicateIdError, Store, StoredDoc
from neardup.collection.store_url import open_store

__all__ = [
    "CollectionMeta",
    "DuplicateIdError",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoredDoc",
    "open_store",
]
