"""The reference store: plain dicts in memory (the conformance suite's yardstick)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neardup.errors import ConfigError
from neardup.store.base import CollectionMeta, StoredDoc, check_batch


class MemoryStore:
    """A :class:`~neardup.store.base.Store` in dicts; validated before any change, so
    every write is all-or-nothing."""

    def __init__(self) -> None:
        self._meta: CollectionMeta | None = None
        self._docs: dict[str, StoredDoc] = {}
        self._index: dict[int, dict[str, None]] = {}  # key -> ids (insertion-ordered set)

    def create(self, meta: CollectionMeta) -> None:
        if self._meta is not None:
            raise ConfigError("this store already holds a collection")
        self._meta = meta

    def meta(self) -> CollectionMeta | None:
        return self._meta

    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        check_batch(docs, [d.id for d in docs if d.id in self._docs], upsert)
        self.remove([d.id for d in docs])
        for doc in docs:
            self._docs[doc.id] = doc
            for key in doc.keys.tolist():
                self._index.setdefault(key, {})[doc.id] = None

    def candidates(self, keys: np.ndarray) -> list[list[str]]:
        return [list(self._index.get(key, ())) for key in np.asarray(keys, np.uint64).tolist()]

    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        return [self._docs[i] for i in ids if i in self._docs]

    def remove(self, ids: Sequence[str]) -> list[str]:
        removed = []
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

    def close(self) -> None:
        """Nothing to release."""
