"""Compiled pair scoring of sorted fingerprint samples (full, mod-m, bottom-n).

Every signature here is a sorted array of distinct uint64 values, so two signatures are
compared by one merge walk: linear in their sizes, no allocation, no hashing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def count_shared(a: np.ndarray, b: np.ndarray) -> int:
    """|A ∩ B| of two sorted arrays of distinct values (a branch-free merge walk)."""
    i = 0
    j = 0
    shared = 0
    while i < a.size and j < b.size:
        x = a[i]
        y = b[j]
        shared += x == y
        i += x <= y
        j += y <= x
    return shared


@njit(cache=True)
def bottom_n_estimate(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """Broder's estimate |bottom_n(A∪B) ∩ A ∩ B| / |bottom_n(A∪B)| from two bottom-n samples.

    Walks the union of the two sorted samples in increasing order and stops after n values
    (after all of them when both samples are shorter than n, i.e. are whole sets: exact).
    """
    limit = a.size + b.size if a.size < n and b.size < n else n
    i = 0
    j = 0
    taken = 0
    shared = 0
    while i < a.size and j < b.size and taken < limit:
        x = a[i]
        y = b[j]
        shared += x == y
        i += x <= y
        j += y <= x
        taken += 1
    # one sample is used up: the rest of the other holds no shared value
    taken = min(limit, taken + (a.size - i) + (b.size - j))
    return shared / taken if taken else 0.0


@njit(cache=True, parallel=True)
def shared_counts(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """|S_left[i] ∩ S_right[i]| for every pair of documents of one ragged batch."""
    out = np.empty(left.size, dtype=np.int64)
    for k in prange(left.size):
        p, q = left[k], right[k]
        out[k] = count_shared(
            values[offsets[p] : offsets[p + 1]], values[offsets[q] : offsets[q + 1]]
        )
    return out


_STRIDE = 16  # merge steps between two checks of whether the answer is already certain


@njit(cache=True, parallel=True)
def share_at_least(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray, least: float
) -> np.ndarray:
    """Per pair of documents of one ragged batch: do they share a value, and at least
    ``least`` of the smaller one's (``shared / smaller >= least``, as computed once all is
    counted)? Each merge walk stops as soon as the answer is certain: the count so far
    reaches it, or even every value left on the shorter side could not (most candidate
    pairs share little, and are dropped about half way)."""
    out = np.zeros(left.size, dtype=np.bool_)
    for k in prange(left.size):
        p, q = left[k], right[k]
        i, i_end = offsets[p], offsets[p + 1]
        j, j_end = offsets[q], offsets[q + 1]
        smaller = min(i_end - i, j_end - j)
        shared = 0
        while smaller > 0:
            for _ in range(_STRIDE):
                if i >= i_end or j >= j_end:
                    break
                x = values[i]
                y = values[j]
                shared += x == y
                i += x <= y
                j += y <= x
            if shared > 0 and shared / smaller >= least:
                out[k] = True
                break
            left_over = min(i_end - i, j_end - j)  # no more can be shared
            if left_over == 0 or (shared + left_over) / smaller < least:
                break
    return out


@njit(cache=True, parallel=True)
def bottom_n_estimates(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray, n: int
) -> np.ndarray:
    """:func:`bottom_n_estimate` for every pair of documents of one ragged batch."""
    out = np.empty(left.size, dtype=np.float64)
    for k in prange(left.size):
        p, q = left[k], right[k]
        out[k] = bottom_n_estimate(
            values[offsets[p] : offsets[p + 1]], values[offsets[q] : offsets[q + 1]], n
        )
    return out
