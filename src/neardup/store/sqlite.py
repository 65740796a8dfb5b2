"""The default store: one SQLite file (stdlib ``sqlite3``), WAL mode, one transaction per write.

Tables: ``meta(name, value)``; ``docs(n, id, meta, signature, prints)`` and
``keys(key, doc)`` indexed on ``key``. ``docs.n`` is an explicit INTEGER PRIMARY KEY (not the
implicit rowid, which VACUUM may renumber) referenced by ``keys.doc``; ``id`` is UNIQUE.
uint64 keys are stored as the int64 with the same bytes (SQLite integers are signed).
Writes take ``BEGIN IMMEDIATE`` so concurrent writers queue instead of failing mid-batch;
a process killed mid-batch leaves the file as it was before the batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from neardup.errors import ConfigError
from neardup.store.base import CollectionMeta, StoredDoc, check_batch

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, meta TEXT,
    signature BLOB NOT NULL, prints BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS keys (key INTEGER NOT NULL, doc INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS keys_key ON keys (key);
CREATE INDEX IF NOT EXISTS keys_doc ON keys (doc);
"""
_CHUNK = 500  # bound parameters per IN (...) query, well under SQLite's limit


def _signed(values: np.ndarray) -> list[int]:
    """uint64 values as the int64 values of the same bytes."""
    return np.ascontiguousarray(values, dtype=np.uint64).view(np.int64).tolist()


def _chunks(items: Sequence, size: int = _CHUNK) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SQLiteStore:
    """A :class:`~neardup.store.base.Store` in one SQLite file (created if missing)."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        with self._write() as db:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back otherwise."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def create(self, meta: CollectionMeta) -> None:
        with self._write() as db:
            if db.execute("SELECT 1 FROM meta LIMIT 1").fetchone():
                raise ConfigError(f"{self.path} already holds a collection")
            db.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)",
                [
                    ("config", json.dumps(meta.config, sort_keys=True)),
                    ("config_id", meta.config_id),
                    ("format_version", str(meta.format_version)),
                ],
            )

    def meta(self) -> CollectionMeta | None:
        rows = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
        if not rows:
            return None
        return CollectionMeta(
            json.loads(rows["config"]), rows["config_id"], int(rows["format_version"])
        )

    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        with self._write() as db:
            stored = self._existing(db, [d.id for d in docs])
            check_batch(docs, stored, upsert)
            self._delete(db, stored)
            (top,) = db.execute("SELECT COALESCE(MAX(n), 0) FROM docs").fetchone()
            numbers = range(top + 1, top + 1 + len(docs))
            db.executemany(
                "INSERT INTO docs (n, id, meta, signature, prints) VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        n,
                        d.id,
                        None if d.meta is None else json.dumps(d.meta),
                        d.signature,
                        np.ascontiguousarray(d.prints, dtype="<u8").tobytes(),
                    )
                    for n, d in zip(numbers, docs, strict=True)
                ],
            )
            db.executemany(
                "INSERT INTO keys (key, doc) VALUES (?, ?)",
                (
                    (key, n)
                    for n, d in zip(numbers, docs, strict=True)
                    for key in dict.fromkeys(_signed(d.keys))
                ),
            )

    def candidates(self, keys: np.ndarray) -> list[list[str]]:
        signed = _signed(np.asarray(keys))
        found: dict[int, list[str]] = {}
        for chunk in _chunks(list(dict.fromkeys(signed))):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT k.key, d.id FROM keys k JOIN docs d ON d.n = k.doc "
                f"WHERE k.key IN ({marks}) ORDER BY k.key, d.n",
                list(chunk),
            )
            for key, doc_id in rows:
                found.setdefault(key, []).append(doc_id)
        return [list(found.get(key, ())) for key in signed]

    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        by_id: dict[str, StoredDoc] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT n, id, meta, signature, prints FROM docs WHERE id IN ({marks})",
                list(chunk),
            ).fetchall()
            for n, doc_id, meta, signature, prints in rows:
                keys = [k for (k,) in self._db.execute("SELECT key FROM keys WHERE doc = ?", (n,))]
                by_id[doc_id] = StoredDoc(
                    doc_id,
                    None if meta is None else json.loads(meta),
                    bytes(signature),
                    np.frombuffer(prints, dtype="<u8").astype(np.uint64),
                    np.array(keys, dtype=np.int64).view(np.uint64),
                )
        return [by_id[i] for i in ids if i in by_id]

    def remove(self, ids: Sequence[str]) -> list[str]:
        with self._write() as db:
            stored = self._existing(db, ids)
            self._delete(db, stored)
        return stored

    def count(self) -> int:
        (n,) = self._db.execute("SELECT COUNT(*) FROM docs").fetchone()
        return int(n)

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _existing(db: sqlite3.Connection, ids: Sequence[str]) -> list[str]:
        """The stored ids among ``ids`` (each once, in the order given)."""
        unique = list(dict.fromkeys(ids))
        present: set[str] = set()
        for chunk in _chunks(unique):
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT id FROM docs WHERE id IN ({marks})", list(chunk))
            present.update(doc_id for (doc_id,) in rows)
        return [i for i in unique if i in present]

    @staticmethod
    def _delete(db: sqlite3.Connection, ids: Sequence[str]) -> None:
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            db.execute(
                f"DELETE FROM keys WHERE doc IN (SELECT n FROM docs WHERE id IN ({marks}))",
                list(chunk),
            )
            db.execute(f"DELETE FROM docs WHERE id IN ({marks})", list(chunk))
