"""The Store protocol: what a collection keeps per document and about itself.

A store knows nothing of texts or methods: it keeps opaque signature bytes, the exact shingle
fingerprints (for exact verification) and the uint64 index keys of every document, and answers
"which stored documents share these keys". Everything else lives in :mod:`neardup.collection`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from neardup.errors import InputError


class DuplicateIdError(InputError):
    """Documents with these ids are already stored (or repeated within one batch)."""

    def __init__(self, ids: Sequence[str], where: str = "already stored") -> None:
        shown = ", ".join(repr(i) for i in list(ids)[:10])
        more = f" (and {len(ids) - 10} more)" if len(ids) > 10 else ""
        super().__init__(f"document id(s) {shown}{more} {where}; use upsert to replace")
        self.ids = list(ids)


@dataclass(frozen=True, slots=True)
class CollectionMeta:
    """What a collection was made with: refused on open when it differs from this library."""

    config: dict[str, Any]  # the DedupConfig as JSON values (configfile.config_to_dict)
    config_id: str  # fingerprint of the settings that decide the answers
    format_version: int  # signature FORMAT_VERSION (methods.base)


@dataclass(frozen=True, slots=True, eq=False)
class StoredDoc:
    """One stored document: id, metadata, signature bytes, sorted fingerprints, index keys."""

    id: str
    meta: dict[str, Any] | None
    signature: bytes
    prints: np.ndarray  # uint64, sorted, distinct
    keys: np.ndarray  # uint64


@runtime_checkable
class Store(Protocol):
    """Persistent documents and their index keys; every write is all-or-nothing."""

    def create(self, meta: CollectionMeta) -> None:
        """Initialise an empty store with its collection metadata (ConfigError if it has one)."""
        ...

    def meta(self) -> CollectionMeta | None:
        """The collection metadata, or None if the store was never created."""
        ...

    def add(self, docs: Sequence[StoredDoc], *, upsert: bool = False) -> None:
        """Store a batch in one transaction; DuplicateIdError (nothing stored) on a known id
        unless ``upsert``, and always on an id repeated within the batch."""
        ...

    def candidates(self, keys: np.ndarray) -> list[list[str]]:
        """Ids of the stored documents having each key, one list per key (in order)."""
        ...

    def get(self, ids: Sequence[str]) -> list[StoredDoc]:
        """The stored documents among ``ids``, in that order (unknown ids are skipped)."""
        ...

    def remove(self, ids: Sequence[str]) -> list[str]:
        """Remove documents in one transaction; the ids that were stored."""
        ...

    def count(self) -> int:
        """Number of stored documents."""
        ...

    def close(self) -> None:
        """Release the store's resources."""
        ...


def repeated_ids(docs: Sequence[StoredDoc]) -> list[str]:
    """Ids occurring more than once in a batch (each once, in order)."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for doc in docs:
        if doc.id in seen:
            repeated[doc.id] = None
        seen.add(doc.id)
    return list(repeated)


def check_batch(docs: Sequence[StoredDoc], stored: Sequence[str], upsert: bool) -> None:
    """Raise DuplicateIdError for ids repeated in ``docs`` or, unless upsert, ``stored``."""
    if repeated := repeated_ids(docs):
        raise DuplicateIdError(repeated, "repeated within one batch")
    if stored and not upsert:
        raise DuplicateIdError(stored)
