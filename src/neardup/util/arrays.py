"""Distinct values of 1-d arrays by one sort.

``np.unique`` of NumPy 2 takes a hash-based path that is 15–20× slower than a sort on large
integer arrays here (4 M uint64: 4.1 s against 0.24 s), and the flow calls it on millions of
fingerprints and pair codes; these helpers give the same results (sorted) by sorting.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable

import numpy as np


def run_starts(ordered: np.ndarray) -> np.ndarray:
    """Positions where a new value begins in a sorted array."""
    return np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else ordered


def unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``values`` (as ``np.unique``)."""
    ordered = np.sort(np.ravel(values))
    return ordered[run_starts(ordered)] if ordered.size else ordered


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and how often each occurs (as ``np.unique(…,
    return_counts=True)``)."""
    return sorted_counts(np.sort(np.ravel(values)))


def sorted_counts(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_counts` of an array already sorted (sorted in place by the caller: no
    copy of a large array)."""
    starts = run_starts(ordered)
    return ordered[starts], np.diff(np.r_[starts, ordered.size]).astype(np.int64)


def pair_codes(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Document pairs as one uint64 each (``left`` in the high 32 bits): sortable, comparable
    with ``np.isin``, and turned back by :func:`split_pair_codes`."""
    return (np.asarray(left).astype(np.uint64) << np.uint64(32)) | np.asarray(right).astype(
        np.uint64
    )


def unordered_pair_codes(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """:func:`pair_codes` of pairs taken either way round (the smaller index first)."""
    return pair_codes(np.minimum(left, right), np.maximum(left, right))


def split_pair_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(left, right)`` int64 arrays of :func:`pair_codes`."""
    return (codes >> np.uint64(32)).astype(np.int64), (codes & np.uint64(0xFFFFFFFF)).astype(
        np.int64
    )


def gather_segments(
    offsets: np.ndarray, rows: np.ndarray
) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]:
    """``(gather, gathered)``: segments ``rows`` of ``offsets`` (segment ``s`` is entries
    ``offsets[s]:offsets[s + 1]``) one after the other, segment ``rows[k]`` at
    ``gathered[k]:gathered[k + 1]``; ``gather(values)`` gives their entries. Runs of
    consecutive rows are copied as one slice each when they are few (a batch that repeats a
    few of its texts is a few slices), else the entries are taken one by one."""
    sizes = np.diff(offsets)[rows]
    gathered = np.zeros(rows.size + 1, dtype=offsets.dtype)
    np.cumsum(sizes, out=gathered[1:])
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    if rows.size and breaks.size < rows.size // 8:
        first, last = np.r_[0, breaks], np.r_[breaks, rows.size] - 1
        starts, ends = offsets[rows[first]].tolist(), offsets[rows[last] + 1].tolist()
        spans = list(zip(starts, ends, strict=True))

        def sliced(values: np.ndarray) -> np.ndarray:
            return np.concatenate([values[start:end] for start, end in spans])

        return sliced, gathered
    shift = np.repeat(offsets[rows] - gathered[:-1], sizes)
    take = np.arange(int(gathered[-1]), dtype=np.int64) + shift

    def taken(values: np.ndarray) -> np.ndarray:
        return values[take]

    return taken, gathered


def kept_segments(offsets: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, offsets)`` of the segments ``offsets[d]:offsets[d + 1]`` where ``keep`` (a
    mask of segments): which entries stay, and the offsets of the kept segments."""
    sizes = np.diff(offsets)
    kept = np.zeros(int(keep.sum()) + 1, dtype=offsets.dtype)
    np.cumsum(sizes[keep], out=kept[1:])
    return np.repeat(keep, sizes), kept


def regrown_spans(
    starts: np.ndarray, ends: np.ndarray, growth: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of spans laid out in order in a buffer (span ``d`` is
    ``starts[d]:ends[d]``, whatever lies between spans kept) once span ``d`` has grown by
    ``growth[d]`` bytes (shrunk where negative)."""
    before = np.cumsum(growth) - growth
    return starts + before, ends + before + growth


def release_mapped_pages(values: np.ndarray) -> None:
    """Drop the pages of a read-only memory-mapped file that ``values`` views from this
    process's resident memory (they stay in the page cache; a later read maps them again):
    a pass over the fingerprints of a million documents otherwise keeps gigabytes of them
    counted in the peak. Arrays not backed by a file are left alone."""
    base = values
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    if base is not None and hasattr(mmap, "MADV_DONTNEED"):
        base.madvise(mmap.MADV_DONTNEED)
