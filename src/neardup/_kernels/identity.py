"""Kernel of the identity check: how many of a document's rare words its keeper holds."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def missing_and_held(
    rare: np.ndarray,
    rare_offsets: np.ndarray,
    words: np.ndarray,
    word_offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair ``i``: how many rare words of document ``held[i]`` document ``holder[i]``
    lacks and how many it has (one merge walk of two sorted sets)."""
    n = held.size
    missing = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        a, b = held[i], holder[i]
        p, p_end = rare_offsets[a], rare_offsets[a + 1]
        q, q_end = word_offsets[b], word_offsets[b + 1]
        k = 0
        while p < p_end and q < q_end:
            if rare[p] == words[q]:
                k += 1
                p += 1
                q += 1
            elif rare[p] < words[q]:
                p += 1
            else:
                q += 1
        found[i] = k
        missing[i] = rare_offsets[a + 1] - rare_offsets[a] - k
    return missing, found


@njit(cache=True)
def _key_index(keys: np.ndarray, value: np.uint64) -> int:
    """The index of ``value`` in the sorted ``keys``, or -1."""
    i = np.searchsorted(keys, value)
    return i if i < keys.size and keys[i] == value else -1


@njit(cache=True)
def holder_labels(
    values: np.ndarray, offsets: np.ndarray, labels: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(key index, label)`` of every document holding one of the sorted ``keys`` (a
    document's set is ``values[offsets[d]:offsets[d + 1]]``, its group ``labels[d]``)."""
    n = offsets.size - 1
    total = 0
    for d in range(n):
        for j in range(offsets[d], offsets[d + 1]):
            if _key_index(keys, values[j]) >= 0:
                total += 1
    key = np.empty(total, dtype=np.int64)
    label = np.empty(total, dtype=np.int64)
    k = 0
    for d in range(n):
        for j in range(offsets[d], offsets[d + 1]):
            i = _key_index(keys, values[j])
            if i >= 0:
                key[k] = i
                label[k] = labels[d]
                k += 1
    return key, label
