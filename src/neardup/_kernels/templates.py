"""Compiled kernels for template shingles: frequent fingerprints found without sorting all.

A fingerprint held by many documents is found in two passes over the flat fingerprint array:
a saturating counter per hashed slot (a one-row count sketch: a slot's count is at least the
count of every fingerprint in it), then the fingerprints of the slots that reached the limit
are collected for an exact count by the caller. Membership in the (small, sorted) template
set is a binary search.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# spreads crc32 and xxh3 alike; not the Han mark's multiplier (neardup.shingles.mark_han), under
# which every Han fingerprint's image starts with the same 12 bits: with it they all fell in
# 1/4096 of a table's slots (a hash table's probes went quadratic on a third of the corpus)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SATURATED = 65535


@njit(cache=True, inline="always")
def _slot(value: np.uint64, shift: np.uint64) -> int:
    return int((value * _MIX) >> shift)


@njit(cache=True, parallel=True)
def slot_counts(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, bits: int, chunks: int
) -> np.ndarray:
    """Saturating count of the fingerprints of ``docs`` in each of 2**bits slots (uint16;
    ``chunks`` parts of ``docs`` counted in parallel, then added)."""
    size = 1 << bits
    shift = np.uint64(64 - bits)
    partial = np.zeros((chunks, size), dtype=np.uint16)
    for c in prange(chunks):
        counts = partial[c]
        for i in range(c * docs.size // chunks, (c + 1) * docs.size // chunks):
            d = docs[i]
            for k in range(offsets[d], offsets[d + 1]):
                s = _slot(values[k], shift)
                if counts[s] < _SATURATED:
                    counts[s] += 1
    total = np.zeros(size, dtype=np.uint16)
    for s in prange(size):
        t = 0
        for c in range(chunks):
            t += partial[c, s]
        total[s] = min(t, _SATURATED)
    return total


@njit(cache=True, parallel=True)
def hot_values(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    counts: np.ndarray,
    bits: int,
    min_count: int,
) -> np.ndarray:
    """Every fingerprint of ``docs`` (with repeats) whose count reached ``min_count``: its
    slot's count in a sketch of ``2**bits`` slots, or with ``bits`` = 0 its entry's count
    (``counts`` aligned with ``values``, e.g. the candidate stage's estimates)."""
    per_doc = np.zeros(docs.size + 1, dtype=np.int64)
    for i in prange(docs.size):
        d = docs[i]
        n = 0
        for k in range(offsets[d], offsets[d + 1]):
            n += _hot(values, counts, bits, k, min_count)
        per_doc[i + 1] = n
    starts = np.cumsum(per_doc)
    out = np.empty(starts[-1], dtype=np.uint64)
    for i in prange(docs.size):
        d = docs[i]
        m = starts[i]
        for k in range(offsets[d], offsets[d + 1]):
            if _hot(values, counts, bits, k, min_count):
                out[m] = values[k]
                m += 1
    return out


@njit(cache=True, inline="always")
def _hot(values: np.ndarray, counts: np.ndarray, bits: int, k: int, min_count: int) -> bool:
    """Entry ``k``'s count (its slot's with ``bits`` > 0, its own with 0) reaches the bar."""
    if bits == 0:
        return counts[k] >= min_count
    return counts[_slot(values[k], np.uint64(64 - bits))] >= min_count


@njit(cache=True)
def hot_table(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    counts: np.ndarray,
    bits: int,
    min_count: int,
    table_bits: int,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(keys, table, complete)``: the distinct fingerprints of ``docs`` that
    :func:`hot_values` takes, in an open-addressing table of ``2**table_bits`` slots (as
    :func:`distinct_table`) built in one pass, without the repeats; ``complete`` is False
    when they were more than half the slots (call again with a larger table)."""
    table = np.full(1 << table_bits, -1, dtype=np.int32)
    keys = np.empty(1 << (table_bits - 1), dtype=np.uint64)
    shift = np.uint64(64 - table_bits)
    mask = np.int64((1 << table_bits) - 1)
    n = 0
    for d in docs:
        for k in range(offsets[d], offsets[d + 1]):
            if not _hot(values, counts, bits, k, min_count):
                continue
            v = values[k]
            s = np.int64(_slot(v, shift))
            while table[s] >= 0 and keys[table[s]] != v:
                s = (s + 1) & mask
            if table[s] < 0:
                if n == keys.size:
                    return keys[:n], table, False
                table[s] = n
                keys[n] = v
                n += 1
    return keys[:n], table, True


def member_counts(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, sorted_set: np.ndarray
) -> np.ndarray:
    """|S_d ∩ T| for every document ``d`` of ``docs``; ``T`` a sorted array of distinct
    values (looked up in a hash table behind a bit filter: most fingerprints miss both)."""
    return _member_counts(values, offsets, docs, _index(sorted_set))


def _index(sorted_set: np.ndarray) -> tuple:
    """``(keys, table, bits, filter)`` of a set of values, for :func:`_lookup`."""
    bits = max(int(sorted_set.size).bit_length() + 1, 4)
    keys, table = distinct_table(sorted_set, bits)
    return keys, table, bits, key_filter(keys)


@njit(cache=True, parallel=True)
def _member_counts(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, index: tuple
) -> np.ndarray:
    keys, table, bits, bitmap = index
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    out = np.zeros(docs.size, dtype=np.int64)
    for i in prange(docs.size):
        d = docs[i]
        n = 0
        for k in range(offsets[d], offsets[d + 1]):
            n += _lookup(values[k], keys, table, shift, mask, bitmap) >= 0
        out[i] = n
    return out


def shared_member_counts(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    sorted_set: np.ndarray,
) -> np.ndarray:
    """|S_left[i] ∩ S_right[i] ∩ T| for every pair (one merge walk each; shared values
    looked up as in :func:`member_counts`)."""
    return _shared_member_counts(values, offsets, left, right, _index(sorted_set))


@njit(cache=True, parallel=True)
def _shared_member_counts(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray, index: tuple
) -> np.ndarray:
    keys, table, bits, bitmap = index
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    out = np.zeros(left.size, dtype=np.int64)
    for k in prange(left.size):
        p, q = left[k], right[k]
        i, i_end = offsets[p], offsets[p + 1]
        j, j_end = offsets[q], offsets[q + 1]
        n = 0
        while i < i_end and j < j_end:
            x = values[i]
            y = values[j]
            if x == y:
                n += _lookup(x, keys, table, shift, mask, bitmap) >= 0
            i += x <= y
            j += y <= x
        out[k] = n
    return out


@njit(cache=True)
def gather(values: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """The fingerprints of ``docs``, one after the other."""
    total = 0
    for d in docs:
        total += offsets[d + 1] - offsets[d]
    out = np.empty(total, dtype=np.uint64)
    m = 0
    for d in docs:
        n = offsets[d + 1] - offsets[d]
        out[m : m + n] = values[offsets[d] : offsets[d + 1]]
        m += n
    return out


_FILTER_BITS = 26  # a 8 MiB bit filter in front of the table: most fingerprints miss it
_MIX2 = np.uint64(0xD6E8FEB86659FD93)


@njit(cache=True, inline="always")
def _filter_bit(value: np.uint64) -> int:
    return int((value * _MIX2) >> np.uint64(64 - _FILTER_BITS))


@njit(cache=True)
def key_filter(keys: np.ndarray) -> np.ndarray:
    """A bit filter of ``keys``: a fingerprint whose bit is clear is none of them."""
    bitmap = np.zeros(1 << (_FILTER_BITS - 3), dtype=np.uint8)
    for i in range(keys.size):
        b = _filter_bit(keys[i])
        bitmap[b >> 3] |= np.uint8(1 << (b & 7))
    return bitmap


@njit(cache=True, inline="always")
def _lookup(
    v: np.uint64,
    keys: np.ndarray,
    table: np.ndarray,
    shift: np.uint64,
    mask: np.int64,
    bitmap: np.ndarray,
) -> int:
    """The index of ``v`` among the table's keys, -1 if it is none of them."""
    b = _filter_bit(v)
    if not (bitmap[b >> 3] >> (b & 7)) & 1:
        return -1
    s = np.int64(_slot(v, shift))
    while table[s] >= 0:
        if keys[table[s]] == v:
            return table[s]
        s = (s + 1) & mask
    return -1


@njit(cache=True)
def distinct_table(values: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, table)``: the distinct ``values`` (in first-seen order) and an open-addressing
    table of 2**bits slots holding each key's index (-1: empty); 2**bits > 2·values.size."""
    table = np.full(1 << bits, -1, dtype=np.int32)
    keys = np.empty(values.size, dtype=np.uint64)
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    n = 0
    for i in range(values.size):
        v = values[i]
        s = np.int64(_slot(v, shift))
        while table[s] >= 0 and keys[table[s]] != v:
            s = (s + 1) & mask
        if table[s] < 0:
            table[s] = n
            keys[n] = v
            n += 1
    return keys[:n], table


@njit(cache=True, parallel=True)
def holder_counts(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    keys: np.ndarray,
    table: np.ndarray,
    bits: int,
    bitmap: np.ndarray,
    chunks: int,
    entry_count: np.ndarray,
    least: int,
) -> np.ndarray:
    """Exactly how many of ``docs`` hold each of ``keys`` (looked up in ``table`` behind the
    bit filter ``bitmap``). ``entry_count`` (aligned with ``values``, or empty): an entry
    counted below ``least`` there is none of the keys and is not looked up."""
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    filtered = entry_count.size > 0
    partial = np.zeros((chunks, keys.size), dtype=np.int32)
    for c in prange(chunks):
        counts = partial[c]
        for i in range(c * docs.size // chunks, (c + 1) * docs.size // chunks):
            d = docs[i]
            for k in range(offsets[d], offsets[d + 1]):
                if filtered and entry_count[k] < least:
                    continue
                at = _lookup(values[k], keys, table, shift, mask, bitmap)
                if at >= 0:
                    counts[at] += 1
    total = np.zeros(keys.size, dtype=np.int64)
    for i in prange(keys.size):
        for c in range(chunks):
            total[i] += partial[c, i]
    return total
