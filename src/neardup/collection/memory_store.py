"""The reference store: plain dicts in memory (the conformance suite's yardstick)."""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from neardup.collection.store import CollectionMeta, DocFreqs, StoredDoc, check_batch, net_deltas
from neardup.errors import ConfigError


class MemoryStore:
    """A :class:`~neardup.collection.store.Store` in dicts. One re-entrant lock serialises every
    call; a transaction holds it and restores a snapshot when its block raises."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._meta: CollectionMeta | None = None
        self._docs: dict[str, StoredDoc] = {}
        self._index: dict[int, dict[str, None]] = {}  # key -> ids (insertion-ordered set)
        self._df: dict[int, int] = {}
        self._df_docs = 0
        self._counts: dict[int, int] = {}  # shingle holder counts (templates)
        self._depth = 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            saved = self._snapshot()
            self._depth = 1
            try:
                yield
            except BaseException:
                self._restore(saved)
                raise
            finally:
                self._depth = 0

    def _snapshot(self) -> tuple:
        index = copy.deepcopy(self._index)
        counts = dict(self._counts)
        return (self._meta, dict(self._docs), index, dict(self._df), self._df_docs, counts)

    def _restore(self, saved: tuple) -> None:
        self._meta, self._docs, self._index, self._df, self._df_docs, self._counts = saved

    def create(self, meta: CollectionMeta) -> None:
        with self._lock:
            if self._meta is not None:
                raise ConfigError("this store already holds a collection")
            self._meta = meta

    def meta(self) -> CollectionMeta | None:
        return self._meta

    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        with self._lock:
            check_batch(docs, [d.id for d in docs if d.id in self._docs], upsert)
            self.remove([d.id for d in docs])
            for doc in docs:
                self._docs[doc.id] = doc
                for key in doc.keys.tolist():
                    self._index.setdefault(key, {})[doc.id] = None

    def candidates(self, keys: np.ndarray, limit: int | None = None) -> list[list[str]]:
        with self._lock:
            found = [list(self._index.get(k, ())) for k in np.asarray(keys, np.uint64).tolist()]
        return found if limit is None else [ids[:limit] for ids in found]

    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        with self._lock:
            return [self._docs[i] for i in ids if i in self._docs]

    def remove(self, ids: Sequence[str]) -> list[str]:
        removed = []
        with self._lock:
            for doc_id in dict.fromkeys(ids):
                doc = self._docs.pop(doc_id, None)
                if doc is None:
                    continue
                removed.append(doc_id)
                for key in doc.keys.tolist():
                    bucket = self._index.get(key)
                    if bucket is not None:
                        bucket.pop(doc_id, None)
                        if not bucket:
                            del self._index[key]
        return removed

    def count(self) -> int:
        return len(self._docs)

    def recent(self, limit: int) -> list[str]:
        with self._lock:  # dicts keep insertion order; add() pops a replaced id first
            return list(itertools.islice(reversed(self._docs), max(limit, 0)))

    def update_doc_freqs(self, features: np.ndarray, deltas: np.ndarray, docs: int) -> None:
        with self._lock:
            keys = np.asarray(features, np.uint64).tolist()
            for feature, delta in zip(keys, np.asarray(deltas).tolist(), strict=True):
                df = self._df.get(feature, 0) + int(delta)
                if df > 0:
                    self._df[feature] = df
                else:
                    self._df.pop(feature, None)
            self._df_docs += docs

    def doc_freqs(self, features: np.ndarray) -> DocFreqs:
        with self._lock:
            df = [self._df.get(f, 0) for f in np.asarray(features, np.uint64).tolist()]
            return DocFreqs(
                np.array(df, dtype=np.int64), self._df_docs, min(self._df.values(), default=0)
            )

    def update_shingle_counts(self, features: np.ndarray, deltas: np.ndarray) -> None:
        unique, sums = net_deltas(features, deltas)
        with self._lock:
            for feature, delta in zip(unique.tolist(), sums.tolist(), strict=True):
                count = self._counts.get(feature, 0) + delta
                if count > 0:
                    self._counts[feature] = count
                else:
                    self._counts.pop(feature, None)

    def shingle_counts(self, features: np.ndarray) -> np.ndarray:
        with self._lock:
            found = [self._counts.get(f, 0) for f in np.asarray(features, np.uint64).tolist()]
        return np.array(found, dtype=np.int64)

    def close(self) -> None:
        """Nothing to release."""
