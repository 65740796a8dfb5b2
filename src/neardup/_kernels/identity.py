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


_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _table(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """An open-addressing table of ``keys`` (distinct uint64 hashes): slot → index + 1."""
    bits = 4
    while (1 << bits) < 2 * keys.size + 1:
        bits += 1
    table = np.zeros(1 << bits, dtype=np.int64)
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    for i in range(keys.size):
        slot = np.int64((keys[i] * _FIBONACCI) >> shift)
        while table[slot] != 0:
            slot = (slot + 1) & mask
        table[slot] = i + 1
    return table, bits


@njit(cache=True)
def holder_counts(
    values: np.ndarray, offsets: np.ndarray, labels: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``keys`` (distinct hashes): how many documents hold it (a document's set
    is ``values[offsets[d]:offsets[d + 1]]``), and how many distinct ``labels`` (groups)
    among them, counted up to 3. One pass through a hash table of the keys."""
    table, bits = _table(keys)
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    documents = np.zeros(keys.size, dtype=np.int64)
    groups = np.zeros(keys.size, dtype=np.int8)
    first = np.full(keys.size, -1, dtype=np.int64)
    second = np.full(keys.size, -1, dtype=np.int64)
    for d in range(offsets.size - 1):
        label = labels[d]
        for j in range(offsets[d], offsets[d + 1]):
            v = values[j]
            slot = np.int64((v * _FIBONACCI) >> shift)
            i = -1
            while table[slot] != 0:
                if keys[table[slot] - 1] == v:
                    i = table[slot] - 1
                    break
                slot = (slot + 1) & mask
            if i < 0:
                continue
            documents[i] += 1
            if groups[i] == 0:
                first[i] = label
                groups[i] = 1
            elif groups[i] == 1 and label != first[i]:
                second[i] = label
                groups[i] = 2
            elif groups[i] == 2 and label != first[i] and label != second[i]:
                groups[i] = 3
    return documents, groups
