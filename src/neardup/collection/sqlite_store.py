"""The default store: one SQLite file (stdlib ``sqlite3``), WAL mode, one transaction per write.

Tables: ``meta(name, value)``; ``docs(n, id, meta, signature, prints, keys, counted)``;
``keys(key, doc)``, a clustered ``WITHOUT ROWID`` index on ``(key, doc)`` that answers "which
documents have this key" with one range scan; ``idf(feature, df)`` for methods weighing
features by the collection (SimHash tf-idf, I-Match); ``shingles(feature, holders)``, a
``WITHOUT ROWID`` table of shared-template holder counts (upserted in sorted batches).
``docs.n`` is an explicit INTEGER PRIMARY KEY (VACUUM keeps it) referenced by ``keys.doc``; a
document's own keys are kept beside it, so removing it deletes exactly its ``(key, doc)`` rows.
uint64 values are stored as the int64 with the same bytes (SQLite integers are signed).

Each thread has its own connection (sqlite3 connections are not to be shared). Writes take
``BEGIN IMMEDIATE``, so writers — threads or processes — queue instead of failing mid-batch, and
a process killed mid-batch leaves the file as it was before the batch (WAL rollback).

A damaged file is reported, never written to: on opening, a file of up to 256 MiB is checked
whole (``PRAGMA quick_check``: tens of milliseconds), and any SQLite error met later — a
damaged page of a larger file — is an :class:`~neardup.errors.InputError` naming the file,
raised inside the batch's transaction, which is rolled back. :meth:`SQLiteStore.check` runs
the full ``PRAGMA integrity_check`` (``neardup index check``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

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
from neardup.errors import ConfigError, InputError, OutputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, meta TEXT,
    signature BLOB NOT NULL, prints BLOB NOT NULL, keys BLOB NOT NULL,
    counted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS keys (
    key INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (key, doc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idf (feature INTEGER PRIMARY KEY, df INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idf_df ON idf (df);
CREATE TABLE IF NOT EXISTS shingles (
    feature INTEGER PRIMARY KEY, holders INTEGER NOT NULL
) WITHOUT ROWID;
"""
_COUNT = (
    "INSERT INTO shingles (feature, holders) VALUES (?, ?) "
    "ON CONFLICT (feature) DO UPDATE SET holders = holders + excluded.holders"
)
_UNCOUNT = "DELETE FROM shingles WHERE feature = ? AND holders <= 0"
_COUNTS = "SELECT s.feature, s.holders FROM json_each(?) j JOIN shingles s ON s.feature = j.value"
# Per key asked (a JSON array), the numbers of its oldest `limit` documents (LIMIT -1: all),
# comma-separated: one index range scan per key, ids looked up once for all keys afterwards.
_CANDIDATES = """
SELECT (SELECT group_concat(doc) FROM (
          SELECT doc FROM keys WHERE key = j.value ORDER BY doc LIMIT ?))
FROM json_each(?) j ORDER BY j.key
"""
_CHUNK = 500  # bound parameters per IN (...) query, well under SQLite's limit
_CACHE_KIB = 64 * 1024  # page cache per connection: the key index of a large collection
_QUICK_CHECK_BYTES = 256 * 2**20  # files up to this size are checked whole when opened
_F = TypeVar("_F", bound=Callable[..., Any])


def _reported(method: _F) -> _F:
    """A store method whose SQLite errors (a damaged page, a locked file) become one clear
    InputError naming the file; a write inside it has been rolled back by then."""

    @functools.wraps(method)
    def wrapper(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise self.failure(exc) from None

    return wrapper  # type: ignore[return-value]


def _problems(rows: Iterable[tuple[str]]) -> list[str]:
    """The lines of a quick_check / integrity_check answer, one problem each ("ok": none)."""
    lines = [line for (text,) in rows for line in text.splitlines()]
    return [line for line in lines if line != "ok" and not line.startswith("*** in database")]


def _chunks(items: Sequence, size: int = _CHUNK) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SQLiteStore:
    """A :class:`~neardup.collection.store.Store` in one SQLite file (created if missing)."""

    def __init__(self, path: str | Path, *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self._timeout = timeout
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            self._quick_check()
            with self.transaction() as db:
                self._check_layout(db)
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    db.execute(statement)
                columns = {row[1] for row in db.execute("PRAGMA table_info(docs)")}
                if "counted" not in columns:  # tables of an older neardup, no collection yet
                    db.execute("ALTER TABLE docs ADD COLUMN counted INTEGER NOT NULL DEFAULT 0")
        except sqlite3.DatabaseError as exc:
            self.close()
            if "not a database" not in str(exc):
                raise self.failure(exc) from None
            raise ConfigError(f"{self.path}: not a usable SQLite collection ({exc})") from None
        except (ConfigError, InputError, OutputError):
            self.close()
            raise

    def _quick_check(self) -> None:
        """Refuse a damaged file before anything is written to it (small files: cheap)."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return  # a new file
        if 0 < size <= _QUICK_CHECK_BYTES:
            problems = _problems(self._db().execute("PRAGMA quick_check(5)"))
            if problems:
                more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
                raise self.failure(sqlite3.DatabaseError(problems[0] + more))

    def check(self) -> list[str]:
        """The problems ``PRAGMA integrity_check`` finds in the whole file (empty: none)."""
        try:
            return _problems(self._db().execute("PRAGMA integrity_check(20)"))
        except sqlite3.DatabaseError as exc:
            return [str(exc)]

    def failure(self, exc: sqlite3.DatabaseError) -> InputError | OutputError:
        """The error to report for an SQLite error met on this file."""
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL:
            return OutputError(
                f"{self.path}: cannot write: the disk is full ({exc}); the failing batch was "
                "rolled back, everything stored before is kept"
            )
        if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
            return InputError(f"{self.path}: {exc}")
        return InputError(
            f"{self.path}: the collection file is damaged ({exc}); nothing was written to it "
            "(see: neardup index check)"
        )

    def _check_layout(self, db: sqlite3.Connection) -> None:
        """Refuse (before touching it) a file holding a collection of another store layout."""
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            rows = dict(db.execute("SELECT name, value FROM meta"))
            check_schema(CollectionMeta.from_rows(rows), str(self.path))

    # -- connections and transactions ----------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        db = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(
                    self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
                )
            except sqlite3.OperationalError as exc:
                raise ConfigError(f"{self.path}: cannot open ({exc})") from None
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses no committed batch
            db.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            self._local.db = db
            self._local.depth = 0
            with self._lock:
                self._opened.append(db)
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction of this thread (nested calls join it)."""
        db = self._db()
        if self._local.depth:
            self._local.depth += 1
            try:
                yield db
            finally:
                self._local.depth -= 1
            return
        db.execute("BEGIN IMMEDIATE")
        self._local.depth = 1
        try:
            yield db
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:  # SQLite may have rolled back already (a full disk)
                with contextlib.suppress(sqlite3.DatabaseError):
                    db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise self.failure(exc) from None
            raise
        finally:
            self._local.depth = 0

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()
        self._local = threading.local()

    # -- collection metadata ----------------------------------------------------------------

    @_reported
    def create(self, meta: CollectionMeta) -> None:
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM meta WHERE name = 'config'").fetchone():
                raise ConfigError(f"{self.path} already holds a collection")
            db.executemany("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", meta.rows())

    @_reported
    def meta(self) -> CollectionMeta | None:
        return CollectionMeta.from_rows(dict(self._db().execute("SELECT name, value FROM meta")))

    # -- documents ----------------------------------------------------------------------------

    @_reported
    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        with self.transaction() as db:
            stored = self._existing(db, [d.id for d in docs])
            check_batch(docs, stored, upsert)
            self._delete(db, stored)
            (top,) = db.execute("SELECT COALESCE(MAX(n), 0) FROM docs").fetchone()
            numbers = np.arange(top + 1, top + 1 + len(docs), dtype=np.int64)
            db.executemany(
                "INSERT INTO docs (n, id, meta, signature, prints, keys, counted) "
                "VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        n,
                        d.id,
                        _json(d.meta),
                        d.signature,
                        to_blob(d.prints),
                        to_blob(d.keys),
                        int(d.counted),
                    )
                    for n, d in zip(numbers.tolist(), docs, strict=True)
                ],
            )
            if docs:
                keys = np.concatenate([as_signed(d.keys) for d in docs])
                owners = np.repeat(numbers, [d.keys.size for d in docs])
                db.executemany(
                    "INSERT OR IGNORE INTO keys (key, doc) VALUES (?, ?)",
                    zip(keys.tolist(), owners.tolist(), strict=True),
                )

    @_reported
    def candidates(self, keys: np.ndarray, limit: int | None = None) -> list[list[str]]:
        signed = as_signed(np.asarray(keys)).tolist()
        if not signed:
            return []
        distinct = list(dict.fromkeys(signed))
        cap = -1 if limit is None else limit
        db = self._db()
        rows = db.execute(_CANDIDATES, (cap, json.dumps(distinct))).fetchall()
        numbers = {
            key: [int(n) for n in docs.split(",")]
            for key, (docs,) in zip(distinct, rows, strict=True)
            if docs
        }
        ids = self._ids(db, list({n for found in numbers.values() for n in found}))
        # a document removed between the two reads is left out
        return [[ids[n] for n in numbers.get(key, ()) if n in ids] for key in signed]

    @_reported
    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        by_id: dict[str, StoredDoc] = {}
        db = self._db()
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = db.execute(
                f"SELECT id, meta, signature, prints, keys, counted FROM docs WHERE id IN "
                f"({_marks(len(chunk))})",
                list(chunk),
            )
            for doc_id, meta, signature, prints, keys, counted in rows:
                by_id[doc_id] = StoredDoc(
                    doc_id,
                    None if meta is None else json.loads(meta),
                    bytes(signature),
                    from_blob(prints),
                    from_blob(keys),
                    bool(counted),
                )
        return [by_id[i] for i in ids if i in by_id]

    @_reported
    def remove(self, ids: Sequence[str]) -> list[str]:
        with self.transaction() as db:
            stored = self._existing(db, ids)
            self._delete(db, stored)
        return stored

    @_reported
    def count(self) -> int:
        (n,) = self._db().execute("SELECT COUNT(*) FROM docs").fetchone()
        return int(n)

    @_reported
    def recent(self, limit: int) -> list[str]:
        # add() numbers a batch above every stored n (a replaced row is deleted first), so the
        # newest documents have the largest n: one backward scan of the primary key
        rows = self._db().execute("SELECT id FROM docs ORDER BY n DESC LIMIT ?", (max(limit, 0),))
        return [doc_id for (doc_id,) in rows]

    # -- the IDF model --------------------------------------------------------------------

    @_reported
    def update_doc_freqs(self, features: np.ndarray, deltas: np.ndarray, docs: int) -> None:
        signed = as_signed(np.asarray(features)).tolist()
        changes = np.asarray(deltas, dtype=np.int64).tolist()
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO idf (feature, df) VALUES (?, ?) "
                "ON CONFLICT (feature) DO UPDATE SET df = df + excluded.df",
                zip(signed, changes, strict=True),
            )
            db.execute("DELETE FROM idf WHERE df <= 0")
            db.execute(
                "INSERT INTO meta (name, value) VALUES ('idf_docs', ?) ON CONFLICT (name) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value",
                (docs,),
            )

    @_reported
    def doc_freqs(self, features: np.ndarray) -> DocFreqs:
        signed = as_signed(np.asarray(features))
        db = self._db()
        rows = db.execute(
            "SELECT i.feature, i.df FROM json_each(?) j JOIN idf i ON i.feature = j.value",
            (json.dumps(np.unique(signed).tolist()),),
        ).fetchall()
        df = _aligned_counts(signed, rows)
        (n_docs,) = db.execute(
            "SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE name='idf_docs'), 0)"
        ).fetchone()
        (min_df,) = db.execute("SELECT COALESCE(MIN(df), 0) FROM idf").fetchone()
        return DocFreqs(df, int(n_docs), int(min_df))

    # -- shared-template holder counts ------------------------------------------------------

    @_reported
    def update_shingle_counts(self, features: np.ndarray, deltas: np.ndarray) -> None:
        unique, sums = net_deltas(features, deltas)
        if not unique.size:
            return
        signed = as_signed(unique)
        order = np.argsort(signed, kind="stable")  # B-tree order: neighbouring pages
        signed, sums = signed[order], sums[order]
        with self.transaction() as db:
            db.executemany(_COUNT, zip(signed.tolist(), sums.tolist(), strict=True))
            if (sums < 0).any():  # only a decrease can reach 0
                db.executemany(_UNCOUNT, ((f,) for f in signed[sums < 0].tolist()))

    @_reported
    def shingle_counts(self, features: np.ndarray) -> np.ndarray:
        signed = as_signed(np.asarray(features))
        if not signed.size:
            return np.zeros(0, dtype=np.int64)
        rows = self._db().execute(_COUNTS, (json.dumps(np.unique(signed).tolist()),)).fetchall()
        return _aligned_counts(signed, rows)

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _ids(db: sqlite3.Connection, numbers: Sequence[int]) -> dict[int, str]:
        """Document number → id."""
        ids: dict[int, str] = {}
        for chunk in _chunks(numbers):
            rows = db.execute(f"SELECT n, id FROM docs WHERE n IN ({_marks(len(chunk))})", chunk)
            ids.update(rows)
        return ids

    @staticmethod
    def _existing(db: sqlite3.Connection, ids: Sequence[str]) -> list[str]:
        """The stored ids among ``ids`` (each once, in the order given)."""
        unique = list(dict.fromkeys(ids))
        present: set[str] = set()
        for chunk in _chunks(unique):
            rows = db.execute(f"SELECT id FROM docs WHERE id IN ({_marks(len(chunk))})", chunk)
            present.update(doc_id for (doc_id,) in rows)
        return [i for i in unique if i in present]

    @staticmethod
    def _delete(db: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Delete documents and exactly their own key rows."""
        for chunk in _chunks(list(ids)):
            marks = _marks(len(chunk))
            rows = db.execute(f"SELECT n, keys FROM docs WHERE id IN ({marks})", chunk)
            pairs = [(key, n) for n, keys in rows for key in as_signed(from_blob(keys)).tolist()]
            db.executemany("DELETE FROM keys WHERE key = ? AND doc = ?", pairs)
            db.execute(f"DELETE FROM docs WHERE id IN ({marks})", chunk)


def _json(meta: dict[str, Any] | None) -> str | None:
    return None if meta is None else json.dumps(meta)


def _aligned_counts(signed: np.ndarray, rows: Sequence[tuple[int, int]]) -> np.ndarray:
    """The count of each of ``signed`` from ``(feature, count)`` rows (0 where absent)."""
    out = np.zeros(signed.size, dtype=np.int64)
    if rows:
        known, counts = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
        order = np.argsort(known)
        known, counts = known[order], counts[order]
        pos = np.minimum(np.searchsorted(known, signed), known.size - 1)
        hit = known[pos] == signed
        out[hit] = counts[pos[hit]]
    return out
