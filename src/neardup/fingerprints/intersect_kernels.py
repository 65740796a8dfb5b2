"""Compiled pair scoring of sorted fingerprint samples (full, mod-m, bottom-n).

Every signature here is a sorted array of distinct uint64 values, so two signatures are
compared by one merge walk: linear in their sizes, no allocation, no hashing. When one is
``GALLOP`` times the other or more (a short document beside one of megabytes), the walk
goes over the shorter one and finds each value in the longer by galloping (exponential,
then binary search) from where the last one was: O(s log(l/s)), never more than a walk.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

GALLOP = 32  # size ratio from which the shorter side gallops through the longer


@njit(cache=True)
def first_at_least(values: np.ndarray, lo: int, hi: int, x: np.uint64) -> int:
    """The first index in ``[lo, hi)`` of sorted ``values`` whose value is ``>= x`` (``hi``
    if none): steps of 1, 2, 4, … from ``lo``, then a binary search in the last step."""
    if lo >= hi or values[lo] >= x:
        return lo
    below = lo  # values[below] < x
    step = 1
    while below + step < hi and values[below + step] < x:
        below += step
        step *= 2
    top = min(below + step, hi)  # the answer lies in (below, top]
    low = below + 1
    while low < top:
        mid = (low + top) >> 1
        if values[mid] < x:
            low = mid + 1
        else:
            top = mid
    return low


@njit(cache=True)
def count_shared(a: np.ndarray, b: np.ndarray) -> int:
    """|A ∩ B| of two sorted arrays of distinct values (a branch-free merge walk, or the
    shorter galloping through the longer)."""
    if a.size > GALLOP * b.size:
        return _gallop_shared(b, a)
    if b.size > GALLOP * a.size:
        return _gallop_shared(a, b)
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
def _gallop_shared(short: np.ndarray, long: np.ndarray) -> int:
    """|S ∩ L|, each value of the short array found in the long one by galloping."""
    shared = 0
    j = 0
    for i in range(short.size):
        j = first_at_least(long, j, long.size, short[i])
        if j == long.size:
            break
        if long[j] == short[i]:
            shared += 1
            j += 1
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
        if max(i_end - i, j_end - j) > GALLOP * smaller:
            if i_end - i > j_end - j:
                i, i_end, j, j_end = j, j_end, i, i_end
            out[k] = _gallop_at_least(values, i, i_end, j, j_end, least)
            continue
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


@njit(cache=True)
def _gallop_at_least(
    values: np.ndarray, i: int, i_end: int, j: int, j_end: int, least: float
) -> bool:
    """:func:`share_at_least` of one pair whose ``[i, i_end)`` side is the shorter by far:
    its values found in ``[j, j_end)`` by galloping, stopping once the answer is certain."""
    smaller = i_end - i
    shared = 0
    while i < i_end:
        j = first_at_least(values, j, j_end, values[i])
        if j == j_end:
            break
        if values[j] == values[i]:
            shared += 1
            j += 1
        i += 1
        if shared > 0 and shared / smaller >= least:
            return True
        if (shared + min(i_end - i, j_end - j)) / smaller < least:
            return False
    return shared > 0 and shared / smaller >= least


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
