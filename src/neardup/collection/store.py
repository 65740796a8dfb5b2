"""The Store protocol: what a collection keeps per document and about itself.

A store knows nothing of texts or methods: it keeps opaque signature bytes, the exact shingle
fingerprints (for exact verification) and the uint64 index keys of every document, and answers
"which stored documents share these keys". It also keeps two sets of per-feature counts that
the collection maintains inside its transactions: the IDF model's document frequencies, and the
holder counts of shared-template detection (:mod:`neardup.dedup.templates`). Everything else
lives in :mod:`neardup.collection.persistent`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from neardup.errors import ConfigError, InputError

# The stores' layout: 2 added per-shingle holder counts and each document's ``counted`` flag.
# A collection written with another layout is refused on open (rebuild it).
STORE_SCHEMA = 2


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
    schema: int = STORE_SCHEMA  # the store layout it was written with

    def rows(self) -> list[tuple[str, str]]:
        """The metadata as the (name, value) text rows a SQL store keeps."""
        return [
            ("config", json.dumps(self.config, sort_keys=True)),
            ("config_id", self.config_id),
            ("format_version", str(self.format_version)),
            ("schema", str(self.schema)),
        ]

    @classmethod
    def from_rows(cls, rows: Mapping[str, str]) -> CollectionMeta | None:
        """The metadata of :meth:`rows` (other names are ignored); None if there is none.
        A collection from before the ``schema`` row has layout 1."""
        if "config" not in rows:
            return None
        return cls(
            json.loads(rows["config"]),
            rows["config_id"],
            int(rows["format_version"]),
            int(rows.get("schema", 1)),
        )


def check_schema(meta: CollectionMeta | None, where: str) -> None:
    """ConfigError (one line) when ``meta`` was written with another store layout."""
    if meta is not None and meta.schema != STORE_SCHEMA:
        raise ConfigError(
            f"{where} holds a collection of store layout {meta.schema}; this neardup reads "
            f"layout {STORE_SCHEMA} (shared-template counts): rebuild the collection"
        )


@dataclass(frozen=True, slots=True, eq=False)
class DocFreqs:
    """Document frequencies of some features in a collection's IDF model (docs/methods.md)."""

    df: np.ndarray  # int64, one per feature asked for (0 = never seen)
    n_docs: int  # documents counted by the model
    min_df: int  # smallest document frequency of any feature in the model (0 if empty)


@dataclass(frozen=True, slots=True, eq=False)
class StoredDoc:
    """One stored document: id, metadata, signature bytes, sorted fingerprints, index keys,
    and whether its fingerprints were counted into the shingle holder counts (so removing or
    replacing it subtracts exactly what adding it added)."""

    id: str
    meta: dict[str, Any] | None
    signature: bytes
    prints: np.ndarray  # uint64, sorted, distinct
    keys: np.ndarray  # uint64
    counted: bool = False


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
        first; at most ``limit`` per key when given (the bucket cap of dedup)."""
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

    def recent(self, limit: int) -> list[str]:
        """The ids of the ``limit`` most recently added documents, newest first (an upserted
        document counts as added when it was replaced; within a batch, later is newer)."""
        ...

    def update_doc_freqs(self, features: np.ndarray, deltas: np.ndarray, docs: int) -> None:
        """Add ``deltas`` to the document frequencies of the distinct ``features`` and
        ``docs`` to the model's document count (negative on removal; a feature reaching 0
        leaves the model)."""
        ...

    def doc_freqs(self, features: np.ndarray) -> DocFreqs:
        """The model's document frequencies of ``features``."""
        ...

    def update_shingle_counts(self, features: np.ndarray, deltas: np.ndarray) -> None:
        """Add ``deltas`` (int64) to the holder counts of ``features`` (uint64; a feature
        given twice gets both); a count reaching 0 is deleted. Joins the caller's transaction.
        Kept apart from the IDF model: these count each group of near copies once."""
        ...

    def shingle_counts(self, features: np.ndarray) -> np.ndarray:
        """The holder counts of ``features`` (int64, in order; 0 for an unknown feature)."""
        ...

    def close(self) -> None:
        """Release the store's resources."""
        ...


def as_signed(values: np.ndarray) -> np.ndarray:
    """uint64 values as the int64 values of the same bytes (SQL integers are signed)."""
    return np.ascontiguousarray(values, dtype=np.uint64).view(np.int64)


def net_deltas(features: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted distinct features, summed delta of each)`` with zero sums left out."""
    unique, where = np.unique(np.asarray(features, np.uint64), return_inverse=True)
    sums = np.zeros(unique.size, np.int64)
    np.add.at(sums, where.ravel(), np.asarray(deltas, np.int64))
    keep = sums != 0
    return unique[keep], sums[keep]


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
