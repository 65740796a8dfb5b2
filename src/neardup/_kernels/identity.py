"""Kernels of the identity check: rarity-weighted containment of document pairs."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def weighted_containment(
    values: np.ndarray,
    offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
    apart: np.ndarray,
    start: np.ndarray,
    groups: np.ndarray,
) -> np.ndarray:
    """Per pair: how much of ``held[i]`` ``holder[i]`` holds, each shingle weighed ``1/g²``.

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
                w = 1.0 / max(g - less, 1.0) ** 2
                shared += w
                total += w
                j += 1
            else:
                total += 1.0 / (g * g)
            i += 1
        if total > 0.0:
            out[k] = shared / total
    return out
