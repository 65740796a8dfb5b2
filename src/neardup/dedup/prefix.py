"""Which keys of each document take part in the prefix filter of the full index.

The filter (:mod:`neardup.dedup.candidates`) is exact for *any* order of the keys that is
the same for every document; rarest first makes prefixes short and buckets small. The order
here is by an estimate of how many documents hold a key — the smaller of two counts in two
tables of ``2**bits`` saturating 8-bit counters indexed by two hashes of the key, filled in
one pass (a count-min sketch) — then by the key. A count
is never below the true number of holders, so "held by fewer than ``frequent``" is never
wrong for a key the count puts below it (the template argument needs only that), and a key
counted once is held by one document only: it can pair nothing and is not sorted at all.
A second table marks the keys in some document's prefix: a key in none pairs nothing either.

So candidate generation sorts only the entries that can make a pair (on English prose about
a third of them), and needs no exact frequencies — no sort of every key.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_MIX_COUNT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: keys may be small integers
_MIX_COUNT2 = np.uint64(0xD6E8FEB86659FD93)
_MIX_MARK = np.uint64(0xC2B2AE3D27D4EB4F)
MAX_COUNT = 255  # counters saturate here; a larger `frequent` is taken as this (more keys)
_MIN_BITS, _MAX_BITS = 16, 27  # 2 × 64 KiB … 2 × 128 MiB of counters


def table_bits(entries: int) -> int:
    """Counter table size for ``entries`` keys: two to four slots a key, 16 … 27 bits."""
    return int(np.clip(np.ceil(np.log2(max(entries, 1))) + 1, _MIN_BITS, _MAX_BITS))


@njit(cache=True, inline="always")
def _slot(key: np.uint64, mix: np.uint64, bits: int) -> int:
    return int((key * mix) >> np.uint64(64 - bits))


@njit(cache=True)
def key_counts(keys: np.ndarray, bits: int) -> np.ndarray:
    """Saturating counts of the keys per hashed slot, in two tables with different hashes
    (rows of the result): the smaller of a key's two counts is ≥ its true count."""
    counts = np.zeros((2, 1 << bits), dtype=np.uint8)
    for k in keys:
        s = _slot(k, _MIX_COUNT, bits)
        if counts[0, s] < MAX_COUNT:
            counts[0, s] += 1
        s = _slot(k, _MIX_COUNT2, bits)
        if counts[1, s] < MAX_COUNT:
            counts[1, s] += 1
    return counts


@njit(cache=True, inline="always")
def _count(counts: np.ndarray, key: np.uint64, bits: int) -> int:
    a = counts[0, _slot(key, _MIX_COUNT, bits)]
    b = counts[1, _slot(key, _MIX_COUNT2, bits)]
    return min(a, b)


@njit(cache=True, parallel=True)
def prefix_flags(
    starts: np.ndarray,
    keys: np.ndarray,
    counts: np.ndarray,
    bits: int,
    score: float,
    frequent: int,
    fallback: float,
) -> np.ndarray:
    """Per entry (document ``d``'s distinct keys are ``keys[starts[d]:starts[d+1]]``): is it
    in the document's prefix for ``score`` — its ``m − ⌈score·m⌉ + 1`` first keys by (count,
    key) —, or for ``fallback`` when that prefix reaches a key counted ≥ ``frequent``."""
    flags = np.zeros(keys.size, dtype=np.bool_)
    for d in prange(starts.size - 1):
        i, j = starts[d], starts[d + 1]
        m = j - i
        if m == 0:
            continue
        f = np.empty(m, dtype=np.int64)
        for t in range(m):
            f[t] = _count(counts, keys[i + t], bits)
        by_count = np.sort(f)
        take = prefix_size(m, score)
        if by_count[take - 1] >= frequent:
            take = prefix_size(m, fallback)
        _flag_first(f, keys[i:j], by_count[take - 1], take, flags[i:j])
    return flags


def slots(keys: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each key's slot in the two count tables and in the mark table (as :func:`key_counts`
    and :func:`pairing_entries` index them), for an engine that counts by a group-by: a
    table's count of a slot is ``min(entries hashed there, MAX_COUNT)``."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    shift = np.uint64(64 - bits)
    return tuple(  # type: ignore[return-value]
        ((keys * mix) >> shift).astype(np.int64) for mix in (_MIX_COUNT, _MIX_COUNT2, _MIX_MARK)
    )


@njit(cache=True)
def entry_prefix_flags(
    starts: np.ndarray,
    keys: np.ndarray,
    count: np.ndarray,
    score: float,
    frequent: int,
    fallback: float,
) -> np.ndarray:
    """:func:`prefix_flags` with each entry's count given (the smaller of its two table
    counts, e.g. from group-bys) instead of the tables."""
    flags = np.zeros(keys.size, dtype=np.bool_)
    for d in range(starts.size - 1):
        i, j = starts[d], starts[d + 1]
        m = j - i
        if m == 0:
            continue
        f = count[i:j].copy()
        by_count = np.sort(f)
        take = prefix_size(m, score)
        if by_count[take - 1] >= frequent:
            take = prefix_size(m, fallback)
        _flag_first(f, keys[i:j], by_count[take - 1], take, flags[i:j])
    return flags


@njit(cache=True, inline="always")
def prefix_size(m: int, score: float) -> int:
    """How many of a document's ``m`` keys its prefix for ``score`` holds (1 … m)."""
    return min(max(m - int(np.ceil(score * m - 1e-9)) + 1, 1), m)


@njit(cache=True)
def _flag_first(
    count: np.ndarray, keys: np.ndarray, cut: int, take: int, flags: np.ndarray
) -> None:
    """Flag the ``take`` entries first by (count, key); ``cut``: the take-th count."""
    below = 0
    for t in range(count.size):
        if count[t] < cut:
            flags[t] = True
            below += 1
    ties = np.flatnonzero(count == cut)
    need = take - below
    if need >= ties.size:
        flags[ties] = True
        return
    last = np.sort(keys[ties])[need - 1]
    for t in ties:
        if keys[t] <= last:
            flags[t] = True


@njit(cache=True)
def pairing_entries(
    keys: np.ndarray, flags: np.ndarray, counts: np.ndarray, bits: int
) -> np.ndarray:
    """Entries that can make a pair: their key is counted more than once and is in the
    prefix of some document (a hashed mark; a key not marked is in no prefix). All entries
    of a key are kept or none, so buckets keep their sizes."""
    marks = np.zeros(1 << max(bits - 3, 0), dtype=np.uint8)  # one bit a slot
    for t in range(keys.size):
        if flags[t]:
            s = _slot(keys[t], _MIX_MARK, bits)
            marks[s >> 3] |= np.uint8(1 << (s & 7))
    keep = np.zeros(keys.size, dtype=np.bool_)
    for t in range(keys.size):
        k = keys[t]
        s = _slot(k, _MIX_MARK, bits)
        keep[t] = (marks[s >> 3] >> (s & 7)) & 1 and _count(counts, k, bits) > 1
    return keep
