"""Document frequencies of fingerprints over a collection, for TF-IDF SimHash and I-Match.

An :class:`IdfModel` is three things: a sorted ``uint64`` array of the features (shingle
fingerprints) seen so far, a ``uint32`` array of how many documents contain each, and the
number of documents. It is fitted in one streaming pass over
:class:`~neardup.fingerprints.shingles.FingerprintBatch` batches and grows as documents arrive
later.

The model is immutable: :meth:`IdfModel.update` and :meth:`IdfModel.merge` return a NEW model
and leave the old one untouched, so a model being read (by a sketching thread, say) never
changes under its reader. Merging is vectorized: ``np.unique(return_counts=True)`` of the
batch, then one sorted merge into the model (``searchsorted`` + ``np.insert``).

IDF is the smooth form ``idf(f) = ln((1 + N) / (1 + df(f))) + 1``: finite for unseen features
(df = 0), never below 1 (a feature in every document still weighs 1, it is not erased), and
the same rule as scikit-learn's ``smooth_idf=True``.

The model's content changes as the collection grows, so it is deliberately NOT part of any
method's config id; :attr:`IdfModel.fingerprint` identifies one state of it, for logs and
for stores that want to record which state made a signature.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from neardup.errors import InputError
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.util.arrays import unique_counts

FORMAT_VERSION = 1
_MAGIC = b"NDIF"
# magic, format version, reserved (0), number of documents, number of features
_HEADER = struct.Struct("<4sHHQQ")
_MAX_DF = np.iinfo(np.uint32).max
# fit() merges pending batch counts into the model once they hold this many distinct features
# (or as many as the model itself), keeping the total cost O(total features · log).
_PENDING_MERGE = 1 << 20


def _batch_counts(batch: FingerprintBatch) -> tuple[np.ndarray, np.ndarray]:
    """Distinct features of a batch and in how many of its documents each occurs.

    A batch's values are distinct within each document, so occurrences = documents.
    """
    values = np.asarray(batch.values, dtype=np.uint64)
    features, counts = unique_counts(values)
    return features, counts.astype(np.int64)


def _combine(pending: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Sum several ``(features, counts)`` pairs into one, sorted and distinct."""
    if len(pending) == 1:
        return pending[0]
    features = np.concatenate([f for f, _ in pending])
    counts = np.concatenate([c for _, c in pending])
    distinct, inverse = np.unique(features, return_inverse=True)
    return distinct, np.bincount(inverse, weights=counts, minlength=distinct.size).astype(np.int64)


def _merge_sorted(
    features: np.ndarray, df: np.ndarray, new: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Add ``counts`` of sorted distinct ``new`` features into sorted ``(features, df)``."""
    pos = np.searchsorted(features, new)
    inside = pos < features.size
    found = np.zeros(new.size, dtype=bool)
    found[inside] = features[pos[inside]] == new[inside]
    merged = df.astype(np.int64)  # a copy: the old model stays as it was
    merged[pos[found]] += counts[found]  # positions are distinct: new features are distinct
    if np.any(merged > _MAX_DF):
        raise InputError(f"document frequency over {_MAX_DF}: too many documents for IdfModel")
    fresh = ~found
    return (
        np.insert(features, pos[fresh], new[fresh]),
        np.insert(merged, pos[fresh], counts[fresh]).astype(np.uint32),
    )


@dataclass(frozen=True, slots=True, eq=False)
class IdfModel:
    """Document frequencies of features over a collection (immutable; see module docstring).

    ``features`` is sorted and distinct (``uint64``), ``df[i]`` counts the documents holding
    ``features[i]`` (``uint32``, 1 ≤ df ≤ n_docs), and ``n_docs`` counts every document seen,
    including documents without features.
    """

    features: np.ndarray
    df: np.ndarray
    n_docs: int

    def __post_init__(self) -> None:
        features = np.ascontiguousarray(self.features, dtype=np.uint64)
        df = np.ascontiguousarray(self.df, dtype=np.uint32)
        _validate(features, df, self.n_docs)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "df", df)
        object.__setattr__(self, "n_docs", int(self.n_docs))

    # -- building -----------------------------------------------------------------------

    @classmethod
    def empty(cls) -> IdfModel:
        """A model of an empty collection."""
        return cls(np.empty(0, np.uint64), np.empty(0, np.uint32), 0)

    @classmethod
    def fit(cls, batches: Iterable[FingerprintBatch]) -> IdfModel:
        """A model of every document of ``batches``, in one streaming pass.

        Equal to ``update``-ing an empty model with each batch in turn, but batch counts are
        pooled and merged in large steps, so a big model is not copied once per batch.
        """
        model = cls.empty()
        pending: list[tuple[np.ndarray, np.ndarray]] = []
        pending_size = 0
        pending_docs = 0
        for batch in batches:
            features, counts = _batch_counts(batch)
            pending.append((features, counts))
            pending_size += features.size
            pending_docs += len(batch)
            if pending_size >= max(_PENDING_MERGE, model.features.size):
                model = model._add(*_combine(pending), pending_docs)
                pending, pending_size, pending_docs = [], 0, 0
        if pending:
            model = model._add(*_combine(pending), pending_docs)
        return model

    def update(self, batch: FingerprintBatch) -> IdfModel:
        """A new model that also counts the documents of ``batch`` (this one is unchanged)."""
        return self._add(*_batch_counts(batch), len(batch))

    def merge(self, other: IdfModel) -> IdfModel:
        """A model of both collections (e.g. fitted separately on two shards)."""
        return self._add(other.features, other.df.astype(np.int64), other.n_docs)

    def _add(self, features: np.ndarray, counts: np.ndarray, n_docs: int) -> IdfModel:
        merged_features, merged_df = _merge_sorted(self.features, self.df, features, counts)
        return IdfModel(merged_features, merged_df, self.n_docs + n_docs)

    # -- reading ------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of distinct features seen."""
        return self.features.size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IdfModel):
            return NotImplemented
        return (
            self.n_docs == other.n_docs
            and np.array_equal(self.features, other.features)
            and np.array_equal(self.df, other.df)
        )

    __hash__ = None  # type: ignore[assignment]  # holds arrays: not hashable

    def doc_freq(self, features: np.ndarray) -> np.ndarray:
        """Document frequency (``int64``) of each feature; 0 for features never seen."""
        features = np.asarray(features, dtype=np.uint64)
        out = np.zeros(features.shape, dtype=np.int64)
        if self.features.size == 0:
            return out
        pos = np.searchsorted(self.features, features)
        pos_clipped = np.minimum(pos, self.features.size - 1)
        found = self.features[pos_clipped] == features
        out[found] = self.df[pos_clipped[found]]
        return out

    def idf(self, features: np.ndarray) -> np.ndarray:
        """Smooth IDF ``ln((1 + N) / (1 + df)) + 1`` of each feature (``float64``)."""
        df = self.doc_freq(features)
        return np.log((1.0 + self.n_docs) / (1.0 + df)) + 1.0

    def max_idf(self) -> float:
        """The largest IDF of a feature in the model (that of its rarest features).

        An unseen feature's IDF is larger still; an empty model gives 1.0.
        """
        if self.features.size == 0:
            return 1.0
        return float(np.log((1.0 + self.n_docs) / (1.0 + int(self.df.min()))) + 1.0)

    @property
    def fingerprint(self) -> str:
        """A 16-hex-digit digest of the model's content (changes whenever the model does)."""
        digest = hashlib.blake2b(digest_size=8)
        digest.update(_HEADER.pack(_MAGIC, FORMAT_VERSION, 0, self.n_docs, self.features.size))
        digest.update(self.features.astype("<u8", copy=False).tobytes())
        digest.update(self.df.astype("<u4", copy=False).tobytes())
        return digest.hexdigest()

    # -- storage ------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Versioned little-endian bytes: a 24-byte header, the features, then the df values.

        Header: ``b"NDIF"``, format version (u16), reserved (u16), n_docs (u64),
        n_features (u64); then n_features ``u64`` features and n_features ``u32`` counts.
        """
        header = _HEADER.pack(_MAGIC, FORMAT_VERSION, 0, self.n_docs, self.features.size)
        return (
            header
            + self.features.astype("<u8", copy=False).tobytes()
            + self.df.astype("<u4", copy=False).tobytes()
        )

    @classmethod
    def from_bytes(cls, blob: bytes) -> IdfModel:
        """The model stored by :meth:`to_bytes` (raises InputError on anything else)."""
        if len(blob) < _HEADER.size:
            raise InputError(f"not a neardup IDF model: {len(blob)} bytes")
        magic, version, _, n_docs, n_features = _HEADER.unpack_from(blob)
        if magic != _MAGIC:
            raise InputError("not a neardup IDF model: bad magic bytes")
        if version != FORMAT_VERSION:
            raise InputError(
                f"IDF model format version {version} is not supported (this is {FORMAT_VERSION})"
            )
        expected = _HEADER.size + 12 * n_features
        if len(blob) != expected:
            raise InputError(
                f"IDF model is truncated or padded: {len(blob)} bytes, expected {expected}"
            )
        features = np.frombuffer(blob, "<u8", n_features, _HEADER.size).astype(np.uint64)
        df = np.frombuffer(blob, "<u4", n_features, _HEADER.size + 8 * n_features)
        return cls(features, df.astype(np.uint32), n_docs)


@dataclass(frozen=True, slots=True, eq=False)
class IdfExcerpt(IdfModel):
    """The features of one batch, cut out of a larger model (a stored collection's): their
    document frequencies, the model's ``n_docs`` and its smallest df ``min_df``. ``idf`` and
    ``max_idf`` of those features are exactly the large model's, which is all sketching the
    batch needs, without loading the whole model."""

    min_df: int = 1

    def max_idf(self) -> float:
        """The whole model's largest IDF (that of its rarest features)."""
        if self.min_df <= 0:
            return 1.0
        return float(np.log((1.0 + self.n_docs) / (1.0 + self.min_df)) + 1.0)


def _validate(features: np.ndarray, df: np.ndarray, n_docs: object) -> None:
    """Raise InputError unless the arrays form a consistent model."""
    if isinstance(n_docs, bool) or not isinstance(n_docs, int | np.integer) or n_docs < 0:
        raise InputError(f"n_docs={n_docs!r} must be a non-negative integer")
    if features.ndim != 1 or features.shape != df.shape:
        raise InputError(
            f"features and df must be 1-d arrays of one length: {features.shape} vs {df.shape}"
        )
    if features.size and not np.all(features[1:] > features[:-1]):
        raise InputError("IDF model features must be sorted and distinct")
    if df.size and (int(df.min()) < 1 or int(df.max()) > n_docs):
        raise InputError(f"document frequencies must lie in [1, n_docs={n_docs}]")


__all__ = ["FORMAT_VERSION", "IdfExcerpt", "IdfModel"]
