"""Distinct values of 1-d arrays by one sort.

``np.unique`` of NumPy 2 takes a hash-based path that is 15–20× slower than a sort on large
integer arrays here (4 M uint64: 4.1 s against 0.24 s), and the flow calls it on millions of
fingerprints and pair codes; these helpers give the same results (sorted) by sorting.
"""

from __future__ import annotations

import numpy as np


def _starts(ordered: np.ndarray) -> np.ndarray:
    """Positions where a new value begins in a sorted array."""
    return np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else ordered


def unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``values`` (as ``np.unique``)."""
    ordered = np.sort(np.ravel(values))
    return ordered[_starts(ordered)] if ordered.size else ordered


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and how often each occurs (as ``np.unique(…,
    return_counts=True)``)."""
    ordered = np.sort(np.ravel(values))
    starts = _starts(ordered)
    return ordered[starts], np.diff(np.r_[starts, ordered.size]).astype(np.int64)


def pair_codes(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Document pairs as one uint64 each (``left`` in the high 32 bits): sortable, comparable
    with ``np.isin``, and turned back by :func:`split_pair_codes`."""
    return (np.asarray(left).astype(np.uint64) << np.uint64(32)) | np.asarray(right).astype(
        np.uint64
    )


def split_pair_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(left, right)`` int64 arrays of :func:`pair_codes`."""
    return (codes >> np.uint64(32)).astype(np.int64), (codes & np.uint64(0xFFFFFFFF)).astype(
        np.int64
    )
