"""Compiled clustering of verified pairs: union-find and star (representative) clusters.

Indices are trusted here: the public wrappers in :mod:`neardup.dedup.cluster` check that every
index lies in ``[0, n)`` before calling, because these loops run without bounds checks.
Both kernels label each cluster by its smallest member index, so labels are deterministic.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _find(parent: np.ndarray, x: int) -> int:
    """Root of ``x``, halving the path on the way (every node points to its grandparent)."""
    while parent[x] != x:
        grand = parent[parent[x]]
        parent[x] = grand
        x = grand
    return x


@njit(cache=True)
def _smallest_member_labels(root: np.ndarray) -> np.ndarray:
    """Relabel clusters given by any member ``root[i]`` with their smallest member index."""
    n = root.size
    first = np.full(n, -1, dtype=np.int64)
    labels = np.empty(n, dtype=np.int64)
    for i in range(n):  # ascending: the first member met is the smallest
        r = root[i]
        if first[r] < 0:
            first[r] = i
        labels[i] = first[r]
    return labels


@njit(cache=True)
def union_find(parent: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Connected components of the pairs ``(left[k], right[k])`` over ``parent.size`` nodes.

    ``parent`` must be ``arange(n)`` (int32 or int64: the caller picks the narrowest type, the
    array is the working memory and is overwritten). Union by rank (a uint8 rank never
    exceeds 63) with path halving: near-constant amortized time per pair.
    """
    n = parent.size
    rank = np.zeros(n, dtype=np.uint8)
    for k in range(left.size):
        a = _find(parent, left[k])
        b = _find(parent, right[k])
        if a == b:
            continue
        if rank[a] < rank[b]:
            a, b = b, a
        parent[b] = a
        if rank[a] == rank[b]:
            rank[a] += 1
    root = np.empty(n, dtype=np.int64)
    for i in range(n):
        root[i] = _find(parent, i)
    return _smallest_member_labels(root)


@njit(cache=True)
def _strong_adjacency(
    n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, min_score: float
) -> tuple[np.ndarray, np.ndarray]:
    """CSR adjacency (offsets, neighbours) of the pairs scoring ≥ ``min_score``, both ways.

    Self-pairs are dropped; duplicate pairs stay (harmless for the star rule).
    """
    offsets = np.zeros(n + 1, dtype=np.int64)
    for k in range(left.size):
        if scores[k] >= min_score and left[k] != right[k]:
            offsets[left[k] + 1] += 1
            offsets[right[k] + 1] += 1
    for i in range(n):
        offsets[i + 1] += offsets[i]
    fill = offsets[:-1].copy()
    neighbours = np.empty(offsets[n], dtype=np.int64)
    for k in range(left.size):
        if scores[k] >= min_score and left[k] != right[k]:
            a = left[k]
            b = right[k]
            neighbours[fill[a]] = b
            fill[a] += 1
            neighbours[fill[b]] = a
            fill[b] += 1
    return offsets, neighbours


@njit(cache=True)
def star_clusters(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    scores: np.ndarray,
    preference: np.ndarray,
    min_score: float,
) -> np.ndarray:
    """Star clusters: in ``preference`` order (document indices, best first), every document
    not yet placed becomes a representative and takes every unplaced document it shares a
    pair scoring ≥ ``min_score`` with. O(n + pairs) after the caller's sort.
    """
    offsets, neighbours = _strong_adjacency(n, left, right, scores, min_score)
    rep = np.full(n, -1, dtype=np.int64)
    for p in range(n):
        r = preference[p]
        if rep[r] >= 0:
            continue
        rep[r] = r
        for j in range(offsets[r], offsets[r + 1]):
            m = neighbours[j]
            if rep[m] < 0:
                rep[m] = r
    return _smallest_member_labels(rep)
