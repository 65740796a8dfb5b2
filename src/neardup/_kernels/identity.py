"""Kernels of the identity check: how many groups hold each shingle of a document, and the
rarity-weighted containment of document pairs."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def neighbour_groups(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    start: np.ndarray,
    first: np.ndarray,
    neighbours: np.ndarray,
) -> np.ndarray:
    """For every shingle of ``docs``, 1 (its own group) plus how many of the document's
    ``neighbours[first[i]:first[i + 1]]`` (one of each other group) hold it; document
    ``docs[i]``'s counts at ``start[docs[i]]`` on (one merge walk per neighbour)."""
    total = 0
    for i in range(docs.size):
        total += offsets[docs[i] + 1] - offsets[docs[i]]
    counts = np.ones(total, dtype=np.int32)
    for i in prange(docs.size):
        d = docs[i]
        base = start[d] - offsets[d]
        for t in range(first[i], first[i + 1]):
            m = neighbours[t]
            a, a_end = offsets[d], offsets[d + 1]
            b, b_end = offsets[m], offsets[m + 1]
            while a < a_end and b < b_end:
                x = values[a]
                y = values[b]
                if x == y:
                    counts[base + a] += 1
                    a += 1
                    b += 1
                elif x < y:
                    a += 1
                else:
                    b += 1
    return counts


@njit(cache=True, parallel=True)
def weighted_containment(
    power: float,
    values: np.ndarray,
    offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
    apart: np.ndarray,
    start: np.ndarray,
    groups: np.ndarray,
) -> np.ndarray:
    """Per pair: how much of ``held[i]`` ``holder[i]`` holds, each shingle weighed ``1/g**power``.

    Each document is a sorted set ``values[offsets[d]:offsets[d + 1]]``; its ``j``-th
    shingle is held by ``g = groups[start[d] + j]`` groups. A shingle both hold counts one
    group fewer when they are ``apart`` (of two groups): the holder's own copy of it says
    nothing of how common it is elsewhere. One merge walk a pair."""
    out = np.ones(held.size, dtype=np.float64)
    for k in prange(held.size):
        p, q = held[k], holder[k]
        i, i_end = offsets[p], offsets[p + 1]
        j, j_end = offsets[q], offsets[q + 1]
        base = start[p] - offsets[p]
        less = 1.0 if apart[k] else 0.0
        shared = 0.0
        total = 0.0
        while i < i_end:
            g = float(groups[base + i])
            x = values[i]
            while j < j_end and values[j] < x:
                j += 1
            if j < j_end and values[j] == x:
                w = 1.0 / max(g - less, 1.0) ** power
                shared += w
                total += w
                j += 1
            else:
                total += 1.0 / g**power
            i += 1
        if total > 0.0:
            out[k] = shared / total
    return out
