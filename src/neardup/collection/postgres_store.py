"""A store in a PostgreSQL database (psycopg 3 and a connection pool), shared by processes.

Tables, created when missing in the database's current ``search_path`` (one transaction):
``neardup_meta(name, value)`` holds the config, the document count and the IDF model's
document count; ``neardup_docs(n, id, meta, signature, prints, keys, counted)`` with ``n`` an
identity (so ``n`` orders documents oldest first) and ``prints``/``keys`` little-endian uint64
blobs; ``neardup_keys(key, doc)`` is the inverted index, primary key ``(key, doc)``, so one
index scan answers "documents having this key, oldest first"; ``neardup_idf(feature, df)`` the
IDF model, indexed on ``df`` for its minimum; ``neardup_shingles(feature, holders)`` the
shared-template holder counts (binary COPY into a temporary table, then one upsert).
uint64 values are stored as the int64 with the same bytes.

Writers are serialised by a transaction-level advisory lock (threads and processes alike);
readers never wait for it. Numbers travel in PostgreSQL's binary formats built by numpy
(``COPY ... FORMAT BINARY`` for the index, binary ``bigint[]`` parameters), not Python lists.
"""

from __future__ import annotations

import functools
import json
import re
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import numpy as np

from neardup.collection.store import (
    CollectionMeta,
    DocFreqs,
    StoredDoc,
    as_signed,
    check_batch,
    check_schema,
    from_blob,
    net_deltas,
    to_blob,
)
from neardup.errors import ConfigError, OutputError
from neardup.util import extras

if TYPE_CHECKING:
    from psycopg import Connection

_WRITER_LOCK = 0x6E65617264757021  # "neardup!": the pg_advisory_xact_lock every writer takes
_CONNECT_TIMEOUT = 10  # seconds, unless the URL sets connect_timeout
_DOC_COUNT = "doc_count"  # neardup_meta rows kept by the writers
_IDF_DOCS = "idf_docs"
_CONFIG_NAMES = ("config", "config_id", "format_version", "schema")
_DSN_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS neardup_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS neardup_docs (
    n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text NOT NULL UNIQUE, meta jsonb,
    signature bytea NOT NULL, prints bytea NOT NULL, keys bytea NOT NULL,
    counted boolean NOT NULL DEFAULT false
);
ALTER TABLE neardup_docs ADD COLUMN IF NOT EXISTS counted boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS neardup_keys (
    key bigint NOT NULL, doc bigint NOT NULL, PRIMARY KEY (key, doc)
);
CREATE TABLE IF NOT EXISTS neardup_idf (feature bigint PRIMARY KEY, df bigint NOT NULL);
CREATE INDEX IF NOT EXISTS neardup_idf_df ON neardup_idf (df);
CREATE TABLE IF NOT EXISTS neardup_shingles (feature bigint PRIMARY KEY, holders bigint NOT NULL);
INSERT INTO neardup_meta (name, value) VALUES ('doc_count', '0'), ('idf_docs', '0')
    ON CONFLICT (name) DO NOTHING
"""
_SCHEMA_DONE = "SELECT to_regclass('neardup_shingles') IS NOT NULL"  # the last object made
_HAS_META = "SELECT to_regclass('neardup_meta') IS NOT NULL"
_LOCK = "SELECT pg_advisory_xact_lock(%s)"
_BUMP = "UPDATE neardup_meta SET value = (value::bigint + %s::bigint)::text WHERE name = %s"
_INSERT_DOCS = """
INSERT INTO neardup_docs (id, meta, signature, prints, keys, counted)
SELECT id, meta::jsonb, signature, prints, keys, counted
FROM unnest(%s::text[], %s::text[], %s::bytea[], %s::bytea[], %s::bytea[], %s::boolean[])
    WITH ORDINALITY AS batch (id, meta, signature, prints, keys, counted, ord)
ORDER BY ord
RETURNING n, id
"""
_COPY_KEYS = "COPY neardup_keys (key, doc) FROM STDIN (FORMAT BINARY)"
_UNINDEX = """
DELETE FROM neardup_keys k USING unnest(%s::bigint[], %s::bigint[]) AS gone (key, doc)
WHERE k.key = gone.key AND k.doc = gone.doc
"""
# the id is a per-row subquery, not a join: a join may be planned as a merge over every document
_CANDIDATES = """
SELECT ARRAY(
    SELECT (SELECT d.id FROM neardup_docs d WHERE d.n = x.doc) FROM neardup_keys x
    WHERE x.key = asked.key ORDER BY x.doc LIMIT %s::bigint
)
FROM unnest(%s::bigint[]) WITH ORDINALITY AS asked (key, ord)
ORDER BY asked.ord
"""
_UPSERT_DF = """
INSERT INTO neardup_idf AS i (feature, df) SELECT * FROM unnest(%s::bigint[], %s::bigint[])
ON CONFLICT (feature) DO UPDATE SET df = i.df + EXCLUDED.df
"""
# int8send gives each df's 8 big-endian bytes: one bytea instead of a million-element array
_DOC_FREQS = """
SELECT
    (SELECT string_agg(int8send(coalesce(i.df, 0)), ''::bytea ORDER BY asked.ord)
     FROM unnest(%s::bigint[]) WITH ORDINALITY AS asked (feature, ord)
     LEFT JOIN neardup_idf i ON i.feature = asked.feature),
    (SELECT value::bigint FROM neardup_meta WHERE name = 'idf_docs'),
    (SELECT min(df) FROM neardup_idf)
"""
_COUNT_BATCH = """
CREATE TEMP TABLE IF NOT EXISTS neardup_count_batch (feature bigint NOT NULL, delta bigint NOT NULL)
    ON COMMIT DELETE ROWS
"""
_COPY_COUNTS = "COPY neardup_count_batch (feature, delta) FROM STDIN (FORMAT BINARY)"
_COUNT = """
INSERT INTO neardup_shingles AS s (feature, holders)
SELECT feature, delta FROM neardup_count_batch ORDER BY feature
ON CONFLICT (feature) DO UPDATE SET holders = s.holders + EXCLUDED.holders
"""
_UNCOUNT = """
DELETE FROM neardup_shingles s USING neardup_count_batch b
WHERE b.delta < 0 AND s.feature = b.feature AND s.holders <= 0
"""
_COUNTS = """
SELECT string_agg(int8send(coalesce(s.holders, 0)), ''::bytea ORDER BY asked.ord)
FROM unnest(%s::bigint[]) WITH ORDINALITY AS asked (feature, ord)
LEFT JOIN neardup_shingles s ON s.feature = asked.feature
"""

# PostgreSQL binary formats (COPY "PGCOPY" file and array_recv), filled by numpy
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, header extension size
_COPY_TRAILER = b"\xff\xff"
_KEY_ROW = np.dtype(
    [("fields", ">i2"), ("key_size", ">i4"), ("key", ">i8"), ("doc_size", ">i4"), ("doc", ">i8")]
)
_ARRAY_CELL = np.dtype([("size", ">i4"), ("value", ">i8")])
_INT8_OID, _INT8_ARRAY_OID = 20, 1016


class _Int8Array:
    """int64 values passed as a binary ``bigint[]`` parameter (a Python list is ~100x slower)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def binary(self) -> bytes:
        """The array in PostgreSQL's binary array format (one dimension, no NULLs)."""
        if not len(self.values):
            return struct.pack(">3i", 0, 0, _INT8_OID)
        cells = np.empty(len(self.values), _ARRAY_CELL)
        cells["size"] = 8
        cells["value"] = self.values
        return struct.pack(">5i", 1, 0, _INT8_OID, len(self.values), 1) + cells.tobytes()


@functools.cache
def _int8_array_dumper() -> type:
    """The psycopg dumper of :class:`_Int8Array` (made on first use: psycopg is optional)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class Int8ArrayDumper(Dumper):
        format = Format.BINARY
        oid = _INT8_ARRAY_OID

        def dump(self, obj: _Int8Array) -> bytes:
            return obj.binary()

    return Int8ArrayDumper


def _configure(conn: Connection) -> None:
    """Teach a new connection to send :class:`_Int8Array` parameters."""
    conn.adapters.register_dumper(_Int8Array, _int8_array_dumper())


def _key_copy(keys: np.ndarray, docs: np.ndarray) -> bytes:
    """A binary COPY stream of ``(key, doc)`` rows (any two bigint columns)."""
    rows = np.empty(len(keys), _KEY_ROW)
    rows["fields"] = 2
    rows["key_size"] = rows["doc_size"] = 8
    rows["key"] = keys
    rows["doc"] = docs
    return _COPY_HEADER + rows.tobytes() + _COPY_TRAILER


def _redacted(url: str) -> str:
    """``url`` without its password (in the user part or a ``password=`` parameter; a
    ``key=value`` connection string's ``password=`` too)."""
    if "://" not in url:
        return _DSN_PASSWORD.sub(r"\1***", url)
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed "[" host: mask whatever sits between ":" and "@"
        return re.sub(r"(://[^:/@]*):[^/]*@", r"\1:***@", _DSN_PASSWORD.sub(r"\1***", url))
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hosts = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:***@{hosts}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(f"{k}={'***' if k == 'password' else v}" for k, v in pairs)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _secrets(url: str) -> list[str]:
    """The passwords in ``url`` as written and decoded (to scrub them from messages)."""
    if "://" not in url:
        found = [m.group(2).strip("'") for m in _DSN_PASSWORD.finditer(url)]
    else:
        try:
            parts = urlsplit(url)
        except ValueError:
            return re.findall(r"://[^:/@]*:([^/]*)@", url)
        found = [parts.password or ""]
        found += [v for k, v in parse_qsl(parts.query) if k == "password"]
    return [s for p in found if p for s in {p, unquote(p)}]


class PostgresStore:
    """A :class:`~neardup.collection.store.Store` in the PostgreSQL database at ``url``.

    Holds a pool of ``min_size``..``max_size`` connections; any thread may call any method.
    Inside :meth:`transaction` a thread's calls all use the connection that holds the lock.
    The object is not fork-safe: make one per process.
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        psycopg = extras.psycopg("the PostgreSQL store")
        from psycopg_pool import ConnectionPool

        self.url = _redacted(url)
        self._local = threading.local()
        self._connect_and_create_schema(psycopg, url)
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=_configure,
            open=True,
            name="neardup",
        )

    def _connect_and_create_schema(self, psycopg: Any, url: str) -> None:
        """Check ``url`` with one connection (ConfigError if unusable); make missing tables."""
        timeout = {} if "connect_timeout" in url else {"connect_timeout": _CONNECT_TIMEOUT}
        try:
            conn = psycopg.connect(url, autocommit=True, **timeout)
        except psycopg.Error as err:
            raise ConfigError(f"cannot connect to {self.url}: {self._scrub(err, url)}") from None
        with conn:
            try:
                if not conn.execute(_SCHEMA_DONE).fetchone()[0]:
                    with conn.transaction():
                        conn.execute(_LOCK, (_WRITER_LOCK,))
                        if conn.execute(_HAS_META).fetchone()[0]:  # made by an older neardup
                            rows = conn.execute("SELECT name, value FROM neardup_meta")
                            check_schema(CollectionMeta.from_rows(dict(rows.fetchall())), self.url)
                        conn.execute(_SCHEMA)
            except psycopg.Error as err:
                raise ConfigError(f"cannot create the neardup tables in {self.url}: {err}") from err

    @staticmethod
    def _scrub(err: Exception, url: str) -> str:
        """The error's message with any password of ``url`` masked."""
        message = str(err).strip().replace(url, _redacted(url))
        for secret in _secrets(url):
            message = message.replace(secret, "***")
        return message

    # ---------------------------------------------------------------- transactions

    def _bound(self) -> Connection | None:
        """The connection of this thread's open transaction, if any."""
        return getattr(self._local, "conn", None)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._bound() is not None:
            yield  # nested: join the outer transaction
            return
        with self._storage_errors(), self._pool.connection() as conn, conn.transaction():
            conn.execute(_LOCK, (_WRITER_LOCK,))
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    @contextmanager
    def _storage_errors(self) -> Iterator[None]:
        """The server's disk full (SQLSTATE 53100) or failing (58030) as an OutputError
        naming the store, raised once the transaction is rolled back."""
        from psycopg import errors

        try:
            yield
        except (errors.DiskFull, errors.IoError) as err:
            what = "its disk is full" if isinstance(err, errors.DiskFull) else "an I/O error"
            detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise OutputError(
                f"{self.url}: the PostgreSQL server cannot write: {what} ({detail}); the "
                "failing batch was rolled back, everything stored before is kept"
            ) from None

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """A connection in a locked transaction: this thread's (under a savepoint, so a
        failing write keeps nothing of itself) or a new one for this write alone."""
        bound = self._bound()
        if bound is None:
            with self.transaction():
                yield self._local.conn
        else:
            with bound.transaction():
                yield bound

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """This thread's transaction connection (to see its writes), else a pooled one."""
        bound = self._bound()
        if bound is not None:
            yield bound
        else:
            with self._storage_errors(), self._pool.connection() as conn:
                yield conn

    # ---------------------------------------------------------------- collection metadata

    def create(self, meta: CollectionMeta) -> None:
        with self._writing() as conn:
            if conn.execute("SELECT 1 FROM neardup_meta WHERE name = 'config'").fetchone():
                raise ConfigError(f"{self.url} already holds a collection")
            with conn.cursor() as cur:
                insert = "INSERT INTO neardup_meta (name, value) VALUES (%s, %s)"
                cur.executemany(insert, meta.rows())

    def meta(self) -> CollectionMeta | None:
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT name, value FROM neardup_meta WHERE name = ANY(%s)", (list(_CONFIG_NAMES),)
            ).fetchall()
        return CollectionMeta.from_rows(dict(rows))

    # ---------------------------------------------------------------- documents

    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        if not docs:
            return
        with self._writing() as conn:
            stored = self._stored_ids(conn, [d.id for d in docs])
            check_batch(docs, stored, upsert)
            self._delete(conn, stored)
            self._index(conn, docs, self._insert(conn, docs))
            conn.execute(_BUMP, (len(docs) - len(stored), _DOC_COUNT))

    def candidates(self, keys: np.ndarray, limit: int | None = None) -> list[list[str]]:
        signed = as_signed(np.asarray(keys))
        if not signed.size:
            return []
        unique, where = np.unique(signed, return_inverse=True)
        with self._reading() as conn:
            cap = None if limit is None else int(limit)  # NULL: LIMIT ALL
            rows = conn.execute(_CANDIDATES, (cap, _Int8Array(unique))).fetchall()
        return [list(rows[i][0]) for i in where.ravel().tolist()]

    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        if not ids:
            return []
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id, meta, signature, prints, keys, counted FROM neardup_docs "
                "WHERE id = ANY(%s)",
                (list(dict.fromkeys(ids)),),
            ).fetchall()
        by_id = {
            doc_id: StoredDoc(doc_id, meta, bytes(sig), from_blob(prints), from_blob(keys), counted)
            for doc_id, meta, sig, prints, keys, counted in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def remove(self, ids: Sequence[str]) -> list[str]:
        if not ids:
            return []
        with self._writing() as conn:
            gone = self._delete(conn, list(dict.fromkeys(ids)))
            conn.execute(_BUMP, (-len(gone), _DOC_COUNT))
        return gone

    def count(self) -> int:
        with self._reading() as conn:
            row = conn.execute(
                "SELECT value::bigint FROM neardup_meta WHERE name = %s", (_DOC_COUNT,)
            ).fetchone()
        return int(row[0])

    def recent(self, limit: int) -> list[str]:
        # n is an identity: an inserted row (a replaced one is deleted and inserted again)
        # gets a larger n than every earlier one; a backward scan of the primary key
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id FROM neardup_docs ORDER BY n DESC LIMIT %s", (max(int(limit), 0),)
            ).fetchall()
        return [doc_id for (doc_id,) in rows]

    @staticmethod
    def _stored_ids(conn: Connection, ids: list[str]) -> list[str]:
        """The stored ids among ``ids`` (each once, in the order given)."""
        rows = conn.execute("SELECT id FROM neardup_docs WHERE id = ANY(%s)", (ids,)).fetchall()
        present = {doc_id for (doc_id,) in rows}
        return [i for i in dict.fromkeys(ids) if i in present]

    @staticmethod
    def _insert(conn: Connection, docs: Sequence[StoredDoc]) -> list[int]:
        """Insert the documents' rows, numbered in batch order; their numbers ``n``."""
        rows = conn.execute(
            _INSERT_DOCS,
            (
                [d.id for d in docs],
                [None if d.meta is None else json.dumps(d.meta) for d in docs],
                [d.signature for d in docs],
                [to_blob(d.prints) for d in docs],
                [to_blob(d.keys) for d in docs],
                [bool(d.counted) for d in docs],
            ),
        ).fetchall()
        number = {doc_id: n for n, doc_id in rows}
        return [number[d.id] for d in docs]

    @staticmethod
    def _index(conn: Connection, docs: Sequence[StoredDoc], numbers: list[int]) -> None:
        """COPY every document's distinct keys into the index."""
        keys = [np.unique(as_signed(d.keys)) for d in docs]
        sizes = [k.size for k in keys]
        if not sum(sizes):
            return
        stream = _key_copy(np.concatenate(keys), np.repeat(np.array(numbers, np.int64), sizes))
        with conn.cursor() as cur, cur.copy(_COPY_KEYS) as copy:
            copy.write(stream)

    @staticmethod
    def _delete(conn: Connection, ids: list[str]) -> list[str]:
        """Delete documents and their index rows; the ids that were stored, in order."""
        if not ids:
            return []
        rows = conn.execute(
            "DELETE FROM neardup_docs WHERE id = ANY(%s) RETURNING id, n, keys", (ids,)
        ).fetchall()
        keys = [np.frombuffer(blob, dtype="<i8") for _, _, blob in rows]
        if sum(k.size for k in keys):
            numbers = np.repeat(np.array([n for _, n, _ in rows], np.int64), [k.size for k in keys])
            conn.execute(_UNINDEX, (_Int8Array(np.concatenate(keys)), _Int8Array(numbers)))
        present = {doc_id for doc_id, _, _ in rows}
        return [i for i in ids if i in present]

    # ---------------------------------------------------------------- IDF model

    def update_doc_freqs(self, features: np.ndarray, deltas: np.ndarray, docs: int) -> None:
        unique, where = np.unique(as_signed(np.asarray(features)), return_inverse=True)
        sums = np.zeros(unique.size, np.int64)
        np.add.at(sums, where.ravel(), np.asarray(deltas, np.int64))
        if not unique.size and not docs:
            return
        with self._writing() as conn:
            if unique.size:
                conn.execute(_UPSERT_DF, (_Int8Array(unique), _Int8Array(sums)))
            if (sums <= 0).any():  # only a feature given no increase can reach 0
                conn.execute(
                    "DELETE FROM neardup_idf WHERE feature = ANY(%s) AND df <= 0",
                    (_Int8Array(unique[sums <= 0]),),
                )
            if docs:
                conn.execute(_BUMP, (int(docs), _IDF_DOCS))

    def doc_freqs(self, features: np.ndarray) -> DocFreqs:
        signed = as_signed(np.asarray(features))
        with self._reading() as conn:
            dfs, n_docs, min_df = conn.execute(_DOC_FREQS, (_Int8Array(signed),)).fetchone()
        df = np.frombuffer(dfs or b"", dtype=">i8").astype(np.int64)
        return DocFreqs(df, int(n_docs), int(min_df or 0))

    # ---------------------------------------------------------------- template counts

    def update_shingle_counts(self, features: np.ndarray, deltas: np.ndarray) -> None:
        unique, sums = net_deltas(features, deltas)
        if not unique.size:
            return
        signed = as_signed(unique)
        with self._writing() as conn:
            conn.execute(_COUNT_BATCH)
            conn.execute("TRUNCATE neardup_count_batch")  # an earlier call of this transaction
            with conn.cursor() as cur, cur.copy(_COPY_COUNTS) as copy:
                copy.write(_key_copy(signed, sums))
            conn.execute(_COUNT)
            if (sums < 0).any():  # only a decrease can reach 0
                conn.execute(_UNCOUNT)

    def shingle_counts(self, features: np.ndarray) -> np.ndarray:
        signed = as_signed(np.asarray(features))
        if not signed.size:
            return np.zeros(0, dtype=np.int64)
        unique, where = np.unique(signed, return_inverse=True)
        with self._reading() as conn:
            (packed,) = conn.execute(_COUNTS, (_Int8Array(unique),)).fetchone()
        return np.frombuffer(packed, dtype=">i8").astype(np.int64)[where.ravel()]

    def close(self) -> None:
        self._pool.close()
