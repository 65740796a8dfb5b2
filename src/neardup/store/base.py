"""The Store protocol: what a collection keeps per document and about itself.

A store knows nothing of texts or methods: it keeps opaque signature bytes, the exact shingle
fingerprints (for exact verification) and the uint64 index keys of every document, and answers
"which stored documents share these keys". Everything else lives in :mod:`neardup.collection`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from neardup.errors import InputError


class DuplicateIdError(InputError):
    """Documents with these ids are already stored (or repeated within one batch)."""

    def __init__(self, ids: Sequence[str], where: str = "already stored") -> None:
        shown = ", ".join(repr(i) for i in list(ids)[:10])
        more = f" (and {len(ids) - 10} more)" if len(ids) > 10 else ""
        super().__init__(f"document id(s) {shown}{more} {where}; upsert (--upsert) replaces them")
        self.ids = list(ids)


@dataclass(frozen=True, slots=True)
class CollectionMeta:
    """What a collection was made with: refused on open when it differs from this library."""

    config: dict[str, Any]  # the DedupConfig as JSON values (configfile.config_to_dict)
    config_id: str  # fingerprint of the settings that decide the answers
    format_version: int  # signature FORMAT_VERSION (methods.base)

    def rows(self) -> list[tuple[str, str]]:
        """The metadata as the (name, value) text rows a SQL store keeps."""
        return [
            ("config", json.dumps(self.config, sort_keys=True)),
            ("config_id", self.config_id),
            ("format_version", str(self.format_version)),
        ]

    @classmethod
    def from_rows(cls, rows: Mapping[str, str]) -> CollectionMeta | None:
        """The metadata of :meth:`rows` (other names are ignored); None if there is none."""
        if "config" not in rows:
            return None
        return cls(json.loads(rows["config"]), rows["config_id"], int(rows["format_version"]))


@dataclass(frozen=True, slots=True, eq=False)
class DocFreqs:
    """Document frequencies of some features in a collection's IDF model (METHODS §6.8–6.9)."""

    df: np.ndarray  # int64, one per feature asked for (0 = never seen)
    n_docs: int  # documents counted by the model
    min_df: int  # smallest document frequency of any feature in the model (0 if empty)


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
    """Persistent documents and their index keys; every write is all-or-nothing.

    Any method may be called from several threads. Inside :meth:`transaction`, the calls of
    the same thread form one atomic unit that no other writer (thread or process) interleaves
    with: a check-then-insert there sees every document committed before it.
    """

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction, serialised with every other writer; rolled back (nothing
        kept) when the block raises. Nested calls join the outer transaction."""
        ...

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

    def candidates(self, keys: np.ndarray, limit: int | None = None) -> list[list[str]]:
        """Ids of the stored documents having each key, one list per key (in order), oldest
        first; at most ``limit`` per key when given (the bucket cap of METHODS §7)."""
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

    def update_doc_freqs(self, features: np.ndarray, deltas: np.ndarray, docs: int) -> None:
        """Add ``deltas`` to the document frequencies of the distinct ``features`` and
        ``docs`` to the model's document count (negative on removal; a feature reaching 0
        leaves the model)."""
        ...

    def doc_freqs(self, features: np.ndarray) -> DocFreqs:
        """The model's document frequencies of ``features``."""
        ...

    def close(self) -> None:
        """Release the store's resources."""
        ...


def as_signed(values: np.ndarray) -> np.ndarray:
    """uint64 values as the int64 values of the same bytes (SQL integers are signed)."""
    return np.ascontiguousarray(values, dtype=np.uint64).view(np.int64)


def to_blob(values: np.ndarray) -> bytes:
    """uint64 values as a little-endian blob (the stored ``prints`` and ``keys``)."""
    return np.ascontiguousarray(values, dtype="<u8").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    """A :func:`to_blob` blob as a writable native uint64 array."""
    return np.frombuffer(blob, dtype="<u8").astype(np.uint64)


def repeated_ids(ids: Sequence[str]) -> list[str]:
    """Ids occurring more than once in a batch (each once, in order)."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for doc_id in ids:
        if doc_id in seen:
            repeated[doc_id] = None
        seen.add(doc_id)
    return list(repeated)


def check_batch(docs: Sequence[StoredDoc], stored: Sequence[str], upsert: bool) -> None:
    """Raise DuplicateIdError for ids repeated in ``docs`` or, unless upsert, ``stored``."""
    if repeated := repeated_ids([d.id for d in docs]):
        raise DuplicateIdError(repeated, "repeated within one batch")
    if stored and not upsert:
        raise DuplicateIdError(stored)
