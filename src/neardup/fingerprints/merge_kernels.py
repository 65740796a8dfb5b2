"""Compiled merge of two sorted sets of fingerprints with their counts."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def merge_counted(
    a: np.ndarray, a_counts: np.ndarray, b: np.ndarray, b_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The union of the sorted distinct values ``a`` and ``b``, sorted, each value's count
    the sum of its counts in both: one pass, no sort."""
    values = np.empty(a.size + b.size, dtype=a.dtype)
    counts = np.empty(a.size + b.size, dtype=a_counts.dtype)
    i = j = k = 0
    while i < a.size and j < b.size:
        if a[i] < b[j]:
            values[k], counts[k] = a[i], a_counts[i]
            i += 1
        elif b[j] < a[i]:
            values[k], counts[k] = b[j], b_counts[j]
            j += 1
        else:
            values[k], counts[k] = a[i], a_counts[i] + b_counts[j]
            i += 1
            j += 1
        k += 1
    while i < a.size:
        values[k], counts[k] = a[i], a_counts[i]
        i += 1
        k += 1
    while j < b.size:
        values[k], counts[k] = b[j], b_counts[j]
        j += 1
        k += 1
    return values[:k].copy(), counts[:k].copy()
