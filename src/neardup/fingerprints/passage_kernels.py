"""Compiled passages: the ranges of a text's chosen shingles, merged, and which shingles of
one text another lacks."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.util.hashtable import absent


@njit(cache=True, inline="always")
def merge_ranges(
    starts: np.ndarray,
    ends: np.ndarray,
    keep: np.ndarray,
    out_starts: np.ndarray,
    out_ends: np.ndarray,
    at: int,
) -> int:
    """The union of the ranges ``[starts[j], ends[j])`` where ``keep[j]``, as sorted disjoint
    ranges written from ``out_*[at]`` (ranges that touch merge); returns how many."""
    chosen = np.flatnonzero(keep)
    if chosen.size == 0:
        return 0
    s, e = starts[chosen], ends[chosen]
    for j in range(1, s.size):  # shingles come in text order: sorted but for odd cases
        if s[j] < s[j - 1]:
            order = np.argsort(s, kind="mergesort")
            s, e = s[order], e[order]
            break
    k = at
    out_starts[k], out_ends[k] = s[0], e[0]
    for j in range(1, s.size):
        if s[j] > out_ends[k]:
            k += 1
            out_starts[k], out_ends[k] = s[j], e[j]
        else:
            out_ends[k] = max(out_ends[k], e[j])
    return k + 1 - at


@njit(cache=True)
def merged_ranges(
    starts: np.ndarray, ends: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`merge_ranges` as two arrays (starts, ends)."""
    out_starts, out_ends = np.empty(starts.size, np.int64), np.empty(starts.size, np.int64)
    k = merge_ranges(starts, ends, keep, out_starts, out_ends, 0)
    return out_starts[:k], out_ends[:k]


@njit(cache=True, parallel=True)
def lacking_ranges(
    hashes: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair ``i``: the ranges of the shingles of document ``held[i]`` (``hashes``,
    ``starts``, ``ends`` at ``offsets[d]:offsets[d + 1]``, in text order) that document
    ``holder[i]`` does not have, merged. Returns ``(at, count, starts, ends)``: pair ``i``'s
    ranges are ``[at[i], at[i] + count[i])`` of the last two."""
    n = held.size
    at = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        at[i + 1] = at[i] + offsets[held[i] + 1] - offsets[held[i]]
    out_starts, out_ends = np.empty(at[n], np.int64), np.empty(at[n], np.int64)
    count = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        a, b = held[i], holder[i]
        lo, hi = offsets[a], offsets[a + 1]
        keep = absent(hashes[lo:hi], hashes[offsets[b] : offsets[b + 1]])
        count[i] = merge_ranges(starts[lo:hi], ends[lo:hi], keep, out_starts, out_ends, at[i])
    return at, count, out_starts, out_ends
