"""Compiled clustering of verified pairs: union-find and star (representative) clusters.

Indices are trusted here: the public wrappers in :mod:`neardup.dedup.cluster` check that every
index lies in ``[0, n)`` before calling, because these loops run without bounds checks.
Labels give each cluster its smallest member index, so they are deterministic.
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
def smallest_member_labels(root: np.ndarray) -> np.ndarray:
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
    return smallest_member_labels(root)


@njit(cache=True)
def _directed_adjacency(
    n: int, left: np.ndarray, right: np.ndarray, s_lr: np.ndarray, s_rl: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CSR adjacency of the pairs, both ways: ``(offsets, neighbour, out, into)`` where for
    document ``d`` and slot ``j`` in ``offsets[d]:offsets[d+1]``, ``out[j]`` is the score of
    ``d`` in ``neighbour[j]`` and ``into[j]`` the score of ``neighbour[j]`` in ``d``.
    Self-pairs are dropped."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    for k in range(left.size):
        if left[k] != right[k]:
            offsets[left[k] + 1] += 1
            offsets[right[k] + 1] += 1
    for i in range(n):
        offsets[i + 1] += offsets[i]
    fill = offsets[:-1].copy()
    neighbour = np.empty(offsets[n], dtype=np.int64)
    out = np.empty(offsets[n], dtype=np.float64)
    into = np.empty(offsets[n], dtype=np.float64)
    for k in range(left.size):
        a = left[k]
        b = right[k]
        if a == b:
            continue
        neighbour[fill[a]] = b
        out[fill[a]] = s_lr[k]
        into[fill[a]] = s_rl[k]
        fill[a] += 1
        neighbour[fill[b]] = a
        out[fill[b]] = s_rl[k]
        into[fill[b]] = s_lr[k]
        fill[b] += 1
    return offsets, neighbour, out, into


@njit(cache=True, inline="always")
def _make_keeper(
    r: int,
    offsets: np.ndarray,
    neighbour: np.ndarray,
    into: np.ndarray,
    keep_of: np.ndarray,
    guard: float,
) -> None:
    """``r`` is kept and takes every unplaced document it holds at ≥ ``guard``."""
    keep_of[r] = r
    for j in range(offsets[r], offsets[r + 1]):
        m = neighbour[j]
        if keep_of[m] < 0 and into[j] >= guard:
            keep_of[m] = r


@njit(cache=True)
def lossless_stars(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    s_lr: np.ndarray,
    s_rl: np.ndarray,
    h_lr: np.ndarray,
    h_rl: np.ndarray,
    preference: np.ndarray,
    guard: float,
    tie: float,
) -> np.ndarray:
    """``keep_of[d]``: the document kept in place of ``d`` (``d`` itself when kept).

    ``s_lr[k]`` is how much of ``left[k]`` is in ``right[k]`` (``s_rl[k]`` the other way).
    A document may go only into a keeper that holds it: score(member in keeper) ≥ ``guard``.
    Passes over the unplaced documents in ``preference`` order (best first): a document
    becomes a keeper unless an unplaced document contains it (holds it at ≥ ``guard``, and
    holds more of it — ``h_lr`` / ``h_rl``, the same pairs' containment as written — by
    more than ``tie`` than it holds of the other): the container is decided first, so it is
    never removed into a document it contains. A keeper takes every unplaced document it
    holds. When a pass places nothing (a cycle, possible only where the two measures
    disagree) its first document is made a keeper. O(passes · (n + pairs)); one pass under
    a symmetric measure.
    """
    offsets, neighbour, out, into = _directed_adjacency(n, left, right, s_lr, s_rl)
    _, _, held_out, held_into = _directed_adjacency(n, left, right, h_lr, h_rl)
    keep_of = np.full(n, -1, dtype=np.int64)
    pending = preference.copy()
    while pending.size:
        placed_any = False
        for p in range(pending.size):
            r = pending[p]
            if keep_of[r] >= 0:
                continue
            blocked = False
            for j in range(offsets[r], offsets[r + 1]):
                m = neighbour[j]
                if keep_of[m] < 0 and out[j] >= guard and held_into[j] < held_out[j] - tie:
                    blocked = True
                    break
            if blocked:
                continue
            placed_any = True
            _make_keeper(r, offsets, neighbour, into, keep_of, guard)
        if not placed_any:  # a cycle: its first document keeps
            for p in range(pending.size):
                if keep_of[pending[p]] < 0:
                    _make_keeper(pending[p], offsets, neighbour, into, keep_of, guard)
                    break
        remaining = 0
        for p in range(pending.size):
            remaining += keep_of[pending[p]] < 0
        rest = np.empty(remaining, dtype=np.int64)
        q = 0
        for p in range(pending.size):
            if keep_of[pending[p]] < 0:
                rest[q] = pending[p]
                q += 1
        pending = rest
    return keep_of
