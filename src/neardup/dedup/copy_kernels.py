"""Compiled kernels for documents whose fingerprint sets are identical: a hash of each set,
and an exact comparison of two sets."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)


@njit(cache=True, inline="always")
def _scramble(x: np.uint64) -> np.uint64:
    """splitmix64's finalizer: every bit of ``x`` reaches every bit of the result."""
    x = (x ^ (x >> np.uint64(30))) * _MIX2
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def set_hashes(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each set ``values[offsets[d]:offsets[d + 1]]`` (its values in order
    and its size): equal sets hash alike; unequal ones almost never do. One thread: it runs
    beside the workers that fingerprint the next batches."""
    n = offsets.size - 1
    out = np.empty(n, dtype=np.uint64)
    for d in range(n):
        h = np.uint64(offsets[d + 1] - offsets[d]) * _MIX
        for k in range(offsets[d], offsets[d + 1]):
            h = _scramble(h ^ values[k]) + _MIX
        out[d] = h
    return out


@njit(cache=True, parallel=True)
def same_sets(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """Per pair: are the sets of documents ``left[i]`` and ``right[i]`` equal?"""
    out = np.zeros(left.size, dtype=np.bool_)
    for k in prange(left.size):
        p, q = left[k], right[k]
        size = offsets[p + 1] - offsets[p]
        if size != offsets[q + 1] - offsets[q]:
            continue
        i, j = offsets[p], offsets[q]
        equal = True
        for m in range(size):
            if values[i + m] != values[j + m]:
                equal = False
                break
        out[k] = equal
    return out
