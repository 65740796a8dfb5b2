"""A compiled hash of each fingerprint set, to find the documents whose sets are identical
(compared exactly by :func:`neardup.fingerprints.intersect_kernels.shared_counts`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup.util.hashtable import GOLDEN, SLOT_MIX


@njit(cache=True, inline="always")
def _scramble(x: np.uint64) -> np.uint64:
    """splitmix64's finalizer: every bit of ``x`` reaches every bit of the result."""
    x = (x ^ (x >> np.uint64(30))) * SLOT_MIX
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def set_hashes(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each set ``values[offsets[d]:offsets[d + 1]]`` (the sum of its
    values' scrambled images, and its size): equal sets hash alike; unequal ones almost
    never do. The images do not depend on one another, so the core computes several at
    once. One thread: it runs beside the workers that fingerprint the next batches."""
    n = offsets.size - 1
    out = np.empty(n, dtype=np.uint64)
    for d in range(n):
        total = np.uint64(0)
        for k in range(offsets[d], offsets[d + 1]):
            total += _scramble(values[k] + GOLDEN)
        out[d] = _scramble(total ^ (np.uint64(offsets[d + 1] - offsets[d]) * GOLDEN))
    return out
