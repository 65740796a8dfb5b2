"""The exact method and Broder's two samples of a shingle set (docs/methods.md).

- ``full``: the whole fingerprint set; the score is the exact resemblance.
- ``modm``: fingerprints divisible by m (Broder's first sample). The sample grows with the
  text and estimates both resemblance and containment, since it is the same hash-defined
  subset of every document: S_m(A) ∩ S_m(B) = S_m(A ∩ B).
- ``bottomn``: the n smallest fingerprints (Broder's second sample). Fixed size; estimates
  resemblance only.

Every signature is a sorted array of distinct fingerprints, a sub-array of the document's
fingerprints, so sketching a batch is index arithmetic over the flat arrays and scoring a
pair is one merge walk (compiled in :mod:`neardup.fingerprints.intersect_kernels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from neardup.errors import ConfigError, warn_weak
from neardup.fingerprints.intersect_kernels import (
    bottom_n_estimate,
    bottom_n_estimates,
    count_shared,
    shared_counts,
)
from neardup.fingerprints.measures import Overlap
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.base import Estimate, Keys, MethodBase, Signatures

_UINT64_LIMIT = 2**64
_INT64_LIMIT = 2**63


def _require_int_in(name: str, value: object, upper: int) -> None:
    """Raise ConfigError unless value is an integer in [1, upper)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value < upper:
        raise ConfigError(f"{name}={value!r} must be an integer in [1, {upper})")


@dataclass(frozen=True, slots=True)
class FullConfig:
    """The full index has no parameters."""


@dataclass(frozen=True, slots=True)
class ModMConfig:
    """Keep fingerprints f with f % m == 0: about 1/m of the shingles (**default m = 25**)."""

    m: int = 25

    def __post_init__(self) -> None:
        _require_int_in("m", self.m, _UINT64_LIMIT)


@dataclass(frozen=True, slots=True)
class BottomNConfig:
    """Keep the n smallest fingerprints of every document (**default n = 160**)."""

    n: int = 160

    def __post_init__(self) -> None:
        _require_int_in("n", self.n, _INT64_LIMIT)


# ---------------------------------------------------------------- shared machinery


def _pair_indices(
    sigs: Signatures, left: np.ndarray, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``left`` and ``right`` as int64 arrays of valid document indices of ``sigs``."""
    left = np.ascontiguousarray(left, dtype=np.int64)
    right = np.ascontiguousarray(right, dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError(f"left and right must be 1-d of one length: {left.shape} vs {right.shape}")
    n = len(sigs)
    for side in (left, right):
        if side.size and (side.min() < 0 or side.max() >= n):
            raise IndexError(f"pair index out of range for a batch of {n} documents")
    return left, right


def _doc_ids(offsets: np.ndarray) -> np.ndarray:
    """The document index of every value of a ragged batch."""
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, 0.0 where den is 0 (the measures' empty-set convention)."""
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


class _SampleMethod(MethodBase):
    """What the three methods share: keys = the sample's values."""

    __slots__ = ()

    def _signatures(self, values: np.ndarray, offsets: np.ndarray) -> Signatures:
        return Signatures(values, offsets, self._config_id)

    def keys(self, signatures: Signatures) -> Keys:
        """Every sampled fingerprint is a key (an inverted index over the samples)."""
        self._require_own(signatures)
        return Keys(_doc_ids(signatures.offsets), signatures.values)


class _ExactOnSample(_SampleMethod):
    """Full and mod-m: exact set measures of the (sampled) sets estimate the whole sets'."""

    __slots__ = ()

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Resemblance |S_A∩S_B| / |S_A∪S_B| of two signatures (0.0 if both are empty)."""
        return self._overlap(a, b).resemblance

    def containment(self, a: np.ndarray, b: np.ndarray) -> float:
        """Containment of A in B, |S_A∩S_B| / |S_A| (0.0 if A's signature is empty)."""
        return self._overlap(a, b).containment_a_in_b

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Resemblance of every pair ``(left[i], right[i])`` of one batch."""
        shared, size_a, size_b = self._pair_overlaps(signatures, left, right)
        return _ratio(shared, size_a + size_b - shared)

    def containment_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Containment of ``left[i]`` in ``right[i]`` for every pair of one batch."""
        shared, size_a, _ = self._pair_overlaps(signatures, left, right)
        return _ratio(shared, size_a)

    @staticmethod
    def _overlap(a: np.ndarray, b: np.ndarray) -> Overlap:
        a = np.ascontiguousarray(a, dtype=np.uint64)
        b = np.ascontiguousarray(b, dtype=np.uint64)
        return Overlap(int(a.size), int(b.size), int(count_shared(a, b)))

    def _pair_overlaps(
        self, sigs: Signatures, left: np.ndarray, right: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(|S_l ∩ S_r|, |S_l|, |S_r|)`` for every pair."""
        self._require_own(sigs)
        left, right = _pair_indices(sigs, left, right)
        sizes = sigs.sizes()
        shared = shared_counts(sigs.values, sigs.offsets, left, right)
        return shared, sizes[left], sizes[right]


# ---------------------------------------------------------------- the three methods


class Full(_ExactOnSample):
    """The whole fingerprint set ("полное сравнение"): exact, cost grows with the text."""

    __slots__ = ()

    name: ClassVar[str] = "full"
    code: ClassVar[int] = 1
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "exact resemblance and containment over all shingles; the reference, slowest to index"
    )
    config_type: ClassVar[type] = FullConfig

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """The fingerprint sets themselves (the arrays are shared, not copied)."""
        values = np.asarray(prints.values, dtype=np.uint64)
        return self._signatures(values, np.asarray(prints.offsets, dtype=np.int64))


class ModM(_ExactOnSample):
    """Broder's first sample: the fingerprints divisible by m.

    Whether a shingle is kept depends on its fingerprint only, so the sample of A ∩ B is the
    intersection of the samples and the kept part of A ∪ B is a uniform random subset of it:
    the samples' resemblance |S_A∩S_B| / |S_A∪S_B| and containment |S_A∩S_B| / |S_A| are
    unbiased estimates of the sets' (given a non-empty denominator). A document keeps about
    |S|/m values, so long texts cost more and short ones may keep nothing: such a signature
    is empty, every score against it is 0.0, and :meth:`sketch` warns once per batch.
    """

    __slots__ = ()

    name: ClassVar[str] = "modm"
    code: ClassVar[int] = 2
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "mod-m sample (1/m of shingles): resemblance and containment, e.g. quotes in long texts"
    )
    config_type: ClassVar[type] = ModMConfig

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """One boolean mask over the flat array; offsets from its running count."""
        values = np.asarray(prints.values, dtype=np.uint64)
        offsets = np.asarray(prints.offsets, dtype=np.int64)
        keep = values % np.uint64(self.config.m) == 0
        kept_before = np.zeros(values.size + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        new_offsets = kept_before[offsets]
        self._warn_empty(np.diff(offsets), np.diff(new_offsets))
        return self._signatures(values[keep], new_offsets)

    def _warn_empty(self, sizes: np.ndarray, kept: np.ndarray) -> None:
        """One warning for the documents that had shingles but kept none of them."""
        lost = int(np.count_nonzero((kept == 0) & (sizes > 0)))
        if lost:
            warn_weak(
                f"mod-m sample (m={self.config.m}) kept no fingerprint of {lost} of "
                f"{sizes.size} document(s) (texts too short); they score 0.0 against "
                f"everything: use a smaller m, or the full or bottomn method"
            )


class BottomN(_SampleMethod):
    """Broder's second sample: the n smallest fingerprints of every document.

    The estimate is NOT the Jaccard of the two samples. The n smallest values of A ∪ B are a
    uniform random sample of the union (the fingerprints act as a random permutation), and
    they can be computed from the two samples alone: bottom_n(A ∪ B) = bottom_n(S_A ∪ S_B).
    A value of that sample is in A ∩ B exactly when it is in both S_A and S_B, so

        r̂(A, B) = |bottom_n(S_A ∪ S_B) ∩ S_A ∩ S_B| / |bottom_n(S_A ∪ S_B)|

    is an unbiased estimate of the resemblance (the samples' plain Jaccard is biased low:
    their union holds values above the n-th smallest of A ∪ B). A document with fewer than n
    shingles keeps them all; when both documents do, the whole union is used and the score is
    the exact resemblance. Containment cannot be estimated from fixed-size samples.
    """

    __slots__ = ()

    name: ClassVar[str] = "bottomn"
    code: ClassVar[int] = 3
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "bottom-n sample (n smallest shingles): fixed-size resemblance estimate, no containment"
    )
    config_type: ClassVar[type] = BottomNConfig

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """The first min(n, size) values of every (sorted) document, by index arithmetic."""
        values = np.asarray(prints.values, dtype=np.uint64)
        offsets = np.asarray(prints.offsets, dtype=np.int64)
        kept = np.minimum(np.diff(offsets), self.config.n)
        new_offsets = np.zeros(offsets.size, dtype=np.int64)
        np.cumsum(kept, out=new_offsets[1:])
        shift = np.repeat(offsets[:-1] - new_offsets[:-1], kept)
        index = np.arange(new_offsets[-1], dtype=np.int64) + shift
        return self._signatures(values[index], new_offsets)

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Broder's resemblance estimate from two bottom-n samples (0.0 if both are empty)."""
        a = np.ascontiguousarray(a, dtype=np.uint64)
        b = np.ascontiguousarray(b, dtype=np.uint64)
        return float(bottom_n_estimate(a, b, self.config.n))

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Resemblance estimate of every pair ``(left[i], right[i])`` of one batch."""
        self._require_own(signatures)
        left, right = _pair_indices(signatures, left, right)
        return bottom_n_estimates(signatures.values, signatures.offsets, left, right, self.config.n)


__all__ = ["BottomN", "BottomNConfig", "Full", "FullConfig", "ModM", "ModMConfig"]
