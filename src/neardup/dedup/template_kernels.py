"""Compiled kernels for template shingles: frequent fingerprints found without sorting all.

A fingerprint held by many documents is found in two passes over the flat fingerprint array:
a saturating counter per hashed slot (a one-row count sketch: a slot's count is at least the
count of every fingerprint in it), then the fingerprints of the slots that reached the limit
are collected. Their exact holder counts (:func:`held_at_least`) look at every document once,
behind a cache-sized bit filter of the keys not yet settled, and count in hash tables small
enough for the core's cache (the keys cut by hash into partitions). Membership in the (small)
template set is a lookup behind the same kind of filter.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange

from neardup.fingerprints.intersect_kernels import GALLOP, first_at_least
from neardup.fingerprints.shingle_kernels import slide_left
from neardup.util.arrays import release_mapped_pages
from neardup.util.hashtable import SLOT_MIX, home_slot, table_bits

_SATURATED = 65535


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
                s = home_slot(values[k], shift)
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
    return counts[home_slot(values[k], np.uint64(64 - bits))] >= min_count


@njit(cache=True)
def hot_table(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    counts: np.ndarray,
    bits: int,
    min_count: int,
    table_bits: int,
) -> tuple[np.ndarray, bool]:
    """``(keys, complete)``: the distinct fingerprints of ``docs`` that :func:`hot_values`
    takes, found in one pass through an open-addressing table of ``2**table_bits`` slots,
    without the repeats; ``complete`` is False when they were more than half the slots
    (call again with a larger table)."""
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
            s = np.int64(home_slot(v, shift))
            while table[s] >= 0 and keys[table[s]] != v:
                s = (s + 1) & mask
            if table[s] < 0:
                if n == keys.size:
                    return keys[:n], False
                table[s] = n
                keys[n] = v
                n += 1
    return keys[:n], True


# ── a bit filter of a set of fingerprints, sized to the set ─────────────────────────────────
# Two bits of one 64-bit word per key ("blocked"): a probe is one load. Eight bits a key give
# ~5 % false positives; the filter of the ~4 M fingerprints of the pairs at 100 k documents is
# 4 MiB and stays in the last-level cache: a probe that misses it costs several times more.
_MIX2 = np.uint64(0xD6E8FEB86659FD93)
_FILTER_BITS_PER_KEY = 8
_MIN_FILTER_BITS, _MAX_FILTER_BITS = 12, 27  # 512 B … 16 MiB


def filter_bits(keys: int) -> int:
    """Bits (log2) of the filter of ``keys`` fingerprints (repeats counted)."""
    need = max(keys, 1) * _FILTER_BITS_PER_KEY
    return min(max(int(need - 1).bit_length(), _MIN_FILTER_BITS), _MAX_FILTER_BITS)


@njit(cache=True, inline="always")
def _filter_word(value: np.uint64, shift: np.uint64) -> tuple[int, np.uint64]:
    """The word of ``value`` in a filter (``shift`` = 64 - log2 of its words) and its two bits
    (taken from bits of the image that do not choose the word)."""
    h = value * _MIX2
    one = np.uint64(1)
    bits = (one << ((h >> np.uint64(20)) & np.uint64(63))) | (
        one << ((h >> np.uint64(26)) & np.uint64(63))
    )
    return int(h >> shift), bits


@njit(cache=True)
def key_filter(keys: np.ndarray, bits: int) -> np.ndarray:
    """A filter of ``2**bits`` bits (uint64 words) of ``keys``: a fingerprint that
    :func:`_may_be_key` rejects is none of them."""
    words = np.zeros(1 << (bits - 6), dtype=np.uint64)
    shift = np.uint64(64 - (bits - 6))
    for i in range(keys.size):
        w, b = _filter_word(keys[i], shift)
        words[w] |= b
    return words


@njit(cache=True, inline="always")
def _may_be_key(value: np.uint64, words: np.ndarray, shift: np.uint64) -> bool:
    w, b = _filter_word(value, shift)
    return (words[w] & b) == b


# ── membership in the template set ──────────────────────────────────────────────────────────


def member_counts(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, sorted_set: np.ndarray
) -> np.ndarray:
    """|S_d ∩ T| for every document ``d`` of ``docs``; ``T`` a sorted array of distinct
    values (looked up in a hash table behind a bit filter: most fingerprints miss both)."""
    return _member_counts(values, offsets, docs, _index(sorted_set))


def _index(sorted_set: np.ndarray) -> tuple:
    """``(keys, table, bits, filter, filter shift)`` of a set of distinct values, for
    :func:`_lookup`."""
    keys = np.ascontiguousarray(sorted_set, dtype=np.uint64)
    bits = max(int(keys.size).bit_length() + 1, 4)
    fbits = filter_bits(keys.size)
    return keys, _key_table(keys, bits), bits, key_filter(keys, fbits), np.uint64(70 - fbits)


@njit(cache=True)
def _key_table(keys: np.ndarray, bits: int) -> np.ndarray:
    """An open-addressing table of 2**bits slots (> 2·keys.size) holding each distinct key's
    index in ``keys`` (-1: empty)."""
    table = np.full(1 << bits, -1, dtype=np.int32)
    shift = np.uint64(64 - bits)
    mask = np.int64((1 << bits) - 1)
    for i in range(keys.size):
        s = np.int64(home_slot(keys[i], shift))
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = i
    return table


@njit(cache=True, inline="always")
def _lookup(v: np.uint64, index: tuple) -> bool:
    """Whether ``v`` is one of the keys of an :func:`_index`."""
    keys, table, bits, words, fshift = index
    if not _may_be_key(v, words, fshift):
        return False
    mask = np.int64((1 << bits) - 1)
    s = np.int64(home_slot(v, np.uint64(64 - bits)))
    while table[s] >= 0:
        if keys[table[s]] == v:
            return True
        s = (s + 1) & mask
    return False


@njit(cache=True, parallel=True)
def _member_counts(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, index: tuple
) -> np.ndarray:
    out = np.zeros(docs.size, dtype=np.int64)
    for i in prange(docs.size):
        d = docs[i]
        n = 0
        for k in range(offsets[d], offsets[d + 1]):
            n += _lookup(values[k], index)
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
    looked up as in :func:`member_counts`; the shorter side galloping through a far longer
    one, as :func:`neardup.fingerprints.intersect_kernels.count_shared` does)."""
    return _shared_member_counts(values, offsets, left, right, _index(sorted_set))


@njit(cache=True, parallel=True)
def _shared_member_counts(
    values: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray, index: tuple
) -> np.ndarray:
    out = np.zeros(left.size, dtype=np.int64)
    for k in prange(left.size):
        p, q = left[k], right[k]
        i, i_end = offsets[p], offsets[p + 1]
        j, j_end = offsets[q], offsets[q + 1]
        n = 0
        if max(i_end - i, j_end - j) > GALLOP * min(i_end - i, j_end - j):
            if i_end - i > j_end - j:  # the shorter side gallops through the longer
                i, i_end, j, j_end = j, j_end, i, i_end
            while i < i_end:
                j = first_at_least(values, j, j_end, values[i])
                if j == j_end:
                    break
                if values[j] == values[i]:
                    n += _lookup(values[i], index)
                    j += 1
                i += 1
            out[k] = n
            continue
        while i < i_end and j < j_end:
            x = values[i]
            y = values[j]
            if x == y:
                n += _lookup(x, index)
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


# ── exact holder counts ─────────────────────────────────────────────────────────────────────
_FIRST_BLOCK = 1 << 20  # entries of the scanned documents looked at in the first block …
_SCAN_BLOCK = 1 << 24  # … then twice as many each block, up to this many
_PART_ENTRIES = 8192  # keys (with repeats) per partition: its table is ~200 KiB, in L2


def held_at_least(
    values: np.ndarray,
    offsets: np.ndarray,
    mine: np.ndarray,
    own: np.ndarray,
    scan: np.ndarray,
    entry_count: np.ndarray,
    entry_least: int,
    bar: Callable[[np.ndarray], np.ndarray],
    chunks: int,
) -> np.ndarray:
    """The distinct fingerprints of ``mine`` held by at least their ``bar`` of documents
    (``bar``: a function of the keys, e.g. :func:`neardup.dedup.templates.template_bar`).

    An entry of ``mine`` whose ``own`` flag is set (uint8, or empty: none) counts for its own
    document, a holder not in ``scan``; the documents of ``scan`` are looked at once, block
    by block, each entry behind a bit filter of the keys still below their bar (and, with
    ``entry_count`` aligned with ``values``, only entries counted ``entry_least`` or more
    there). A key that reaches its bar is settled and leaves the filter: the common
    fingerprints, which pass it most, reach it in the first small blocks. The entries that
    pass are cut by hash into partitions counted in cache-sized tables in parallel.
    Memory-mapped ``values`` are dropped from the resident set after each block: the scan
    reads every document once, and would otherwise keep the whole file counted in the peak.
    """
    pbits = min(max((mine.size // _PART_ENTRIES).bit_length(), 1), 12)
    mine_p, own_p, mine_starts = _partition(mine, own, pbits, chunks)
    keys, held, key_starts = _distinct_keys(mine_p, own_p, mine_starts, pbits, chunks)
    del mine_p, own_p
    need = np.asarray(bar(keys), dtype=np.int64)
    ends = np.cumsum(offsets[scan + 1] - offsets[scan])
    seen = np.empty(0, dtype=np.uint64)  # a block's passing entries (grown when short)
    start, size = 0, _FIRST_BLOCK
    while start < scan.size:
        open_keys = keys[held < need]
        if not open_keys.size:
            break
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + size, side="right")), start + 1)
        if int(ends[stop - 1]) - before > seen.size:
            seen = np.empty(int(ends[stop - 1]) - before, dtype=np.uint64)
        fbits = filter_bits(open_keys.size)
        words = key_filter(open_keys, fbits)
        found = _passing(
            values, offsets, scan[start:stop], words, fbits, entry_count, entry_least, chunks,
            seen,
        )  # fmt: skip
        release_mapped_pages(values)  # read again from the page cache if needed
        seen_p, _, seen_starts = _partition(seen[:found], _NO_FLAGS, pbits, chunks)
        _add_held(keys, held, need, key_starts, seen_p, seen_starts, pbits, chunks)
        start, size = stop, min(2 * size, _SCAN_BLOCK)
    return keys[held >= need]


_NO_FLAGS = np.empty(0, dtype=np.uint8)


@njit(cache=True, parallel=True)
def _passing(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    words: np.ndarray,
    fbits: int,
    entry_count: np.ndarray,
    entry_least: int,
    chunks: int,
    out: np.ndarray,
) -> int:
    """Write the entries of ``docs`` that the filter (and ``entry_count``) let through to
    ``out`` (room for every entry of ``docs``); returns how many there are. Each
    chunk writes from its own base, then the chunks are moved left, in order, onto the
    previous one's end (never past entries not yet moved)."""
    shift = np.uint64(70 - fbits)
    counted = entry_count.size > 0
    bases = np.zeros(chunks + 1, dtype=np.int64)
    for c in range(chunks):
        for i in range(c * docs.size // chunks, (c + 1) * docs.size // chunks):
            bases[c + 1] += offsets[docs[i] + 1] - offsets[docs[i]]
    bases = np.cumsum(bases)
    ends = bases[:-1].copy()
    for c in prange(chunks):
        n = bases[c]
        for i in range(c * docs.size // chunks, (c + 1) * docs.size // chunks):
            d = docs[i]
            for k in range(offsets[d], offsets[d + 1]):
                if counted and entry_count[k] < entry_least:
                    continue
                v = values[k]
                if _may_be_key(v, words, shift):
                    out[n] = v
                    n += 1
        ends[c] = n
    m = 0
    for c in range(chunks):
        slide_left(out, bases[c], m, ends[c] - bases[c])
        m += ends[c] - bases[c]
    return m


@njit(cache=True, inline="always")
def _part(value: np.uint64, pbits: int) -> int:
    return int(home_slot(value, np.uint64(64 - pbits)))


@njit(cache=True, parallel=True)
def _partition(
    keys: np.ndarray, flags: np.ndarray, pbits: int, chunks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``keys`` (and their ``flags``, if any) ordered by partition (the top ``pbits`` bits
    of their image), and where each partition starts (a histogram, then a scatter, both a
    chunk of ``keys`` per thread)."""
    parts = 1 << pbits
    flagged = flags.size > 0
    counts = np.zeros((chunks, parts), dtype=np.int64)
    for c in prange(chunks):
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            counts[c, _part(keys[i], pbits)] += 1
    starts = np.zeros(parts + 1, dtype=np.int64)
    at = np.empty((chunks, parts), dtype=np.int64)
    n = 0
    for p in range(parts):
        starts[p] = n
        for c in range(chunks):
            at[c, p] = n
            n += counts[c, p]
    starts[parts] = n
    out = np.empty(keys.size, dtype=np.uint64)
    out_flags = np.empty(flags.size, dtype=np.uint8)
    for c in prange(chunks):
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            p = _part(keys[i], pbits)
            out[at[c, p]] = keys[i]
            if flagged:
                out_flags[at[c, p]] = flags[i]
            at[c, p] += 1
    return out, out_flags, starts


@njit(cache=True, parallel=True)
def _distinct_keys(
    mine: np.ndarray, own: np.ndarray, starts: np.ndarray, pbits: int, chunks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(keys, held, key_starts)``: the distinct keys of ``mine`` (ordered by partition,
    partition ``p`` from ``starts[p]``), how many of their entries are flagged ``own`` (none
    flagged when ``own`` is empty), and where each partition's keys start; each of ``chunks``
    threads takes every ``chunks``-th partition into a table of its own."""
    parts = starts.size - 1
    largest = np.max(np.diff(starts)) if parts else 0
    size = 1 << table_bits(largest)
    keys_out = np.empty(mine.size, dtype=np.uint64)
    held_out = np.zeros(mine.size, dtype=np.int64)
    found = np.zeros(parts, dtype=np.int64)
    flagged = own.size > 0
    for c in prange(chunks):
        table = np.zeros(size, dtype=np.int64)  # slot → index into keys_out + 1 (0: empty)
        for p in range(c, parts, chunks):
            lo, hi = starts[p], starts[p + 1]
            bits = table_bits(hi - lo)
            n = lo
            for i in range(lo, hi):
                s = _slot_in_part(table, keys_out, mine[i], pbits, bits)
                if table[s] == 0:
                    keys_out[n] = mine[i]
                    n += 1
                    table[s] = n
                if flagged:
                    held_out[table[s] - 1] += own[i]
            table[: 1 << bits] = 0
            found[p] = n - lo
    key_starts = np.zeros(parts + 1, dtype=np.int64)
    key_starts[1:] = np.cumsum(found)
    return (
        _compact(keys_out, starts, found),
        _compact(held_out, starts, found),
        key_starts,
    )


@njit(cache=True)
def _compact(values: np.ndarray, starts: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The first ``found[p]`` values from each ``starts[p]`` on, one after the other (not in
    a parallel function: there numba makes every slice copy a parallel loop of its own)."""
    out = np.empty(np.sum(found), dtype=values.dtype)
    m = 0
    for p in range(found.size):
        out[m : m + found[p]] = values[starts[p] : starts[p] + found[p]]
        m += found[p]
    return out


@njit(cache=True, parallel=True)
def _add_held(
    keys: np.ndarray,
    held: np.ndarray,
    need: np.ndarray,
    key_starts: np.ndarray,
    seen: np.ndarray,
    seen_starts: np.ndarray,
    pbits: int,
    chunks: int,
) -> None:
    """Count each entry of ``seen`` (ordered by partition) that is one of the ``keys`` still
    below their ``need`` into ``held``, partition by partition in tables of their own (each
    of ``chunks`` threads takes every ``chunks``-th partition)."""
    parts = key_starts.size - 1
    largest = np.max(np.diff(key_starts)) if parts else 0
    size = 1 << table_bits(largest)
    for c in prange(chunks):
        table = np.zeros(size, dtype=np.int64)  # slot → index into keys + 1 (0: empty)
        for p in range(c, parts, chunks):
            lo, hi = key_starts[p], key_starts[p + 1]
            if seen_starts[p] == seen_starts[p + 1]:
                continue
            bits = table_bits(hi - lo)
            for i in range(lo, hi):
                if held[i] < need[i]:
                    table[_slot_in_part(table, keys, keys[i], pbits, bits)] = i + 1
            for j in range(seen_starts[p], seen_starts[p + 1]):
                at = table[_slot_in_part(table, keys, seen[j], pbits, bits)]
                if at:
                    held[at - 1] += 1
            table[: 1 << bits] = 0


@njit(cache=True, inline="always")
def _slot_in_part(
    table: np.ndarray, keys: np.ndarray, value: np.uint64, pbits: int, bits: int
) -> np.int64:
    """Where ``value`` is in a partition's table of ``2**bits`` slots (slot → index into
    ``keys`` + 1; 0: empty), or the empty slot where it would go."""
    mask = np.int64((1 << bits) - 1)
    s = _in_part(value, pbits, bits)
    while table[s] != 0 and keys[table[s] - 1] != value:
        s = (s + 1) & mask
    return s


@njit(cache=True, inline="always")
def _in_part(value: np.uint64, pbits: int, bits: int) -> np.int64:
    """A key's slot in its partition's table of 2**bits slots: the bits of its image after
    the partition's."""
    return np.int64(((value * SLOT_MIX) << np.uint64(pbits)) >> np.uint64(64 - bits))
