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

_MIX_COUNT = np.uint64(0x94D049BB133111EB)  # odd multipliers: keys may be small integers;
# none is the Han mark's (HAN_MIX), whose region puts every Han fingerprint in 1 in 4096 slots
_MIX_COUNT2 = np.uint64(0xD6E8FEB86659FD93)
_MIX_MARK = np.uint64(0xC2B2AE3D27D4EB4F)
MAX_COUNT = 255  # counters saturate here; a larger `frequent` is taken as this (more keys)
_MIN_BITS, _MAX_BITS = 16, 27  # 2 × 64 KiB … 2 × 128 MiB of counters


def table_bits(entries: int) -> int:
    """Counter table size for ``entries`` keys: two to four slots a key, 16 … 27 bits."""
    return int(np.clip(np.ceil(np.log2(max(entries, 1))) + 1, _MIN_BITS, _MAX_BITS))


ENTRIES_PER_SLOT = 16  # beyond, the estimate stops ordering (measured below)


def tables_serve(entries: int) -> bool:
    """Whether count tables of :func:`table_bits` slots still order ``entries`` keys.

    Measured on 100 k English texts (44 M entries) with tables made smaller to crowd them:
    at 0.33 / 2.6 / 11 / 21 / 42 / 85 entries a slot the filter kept 1.00 / 1.04 / 1.13 /
    1.20 / 3.4 / 635 × the candidates of exact counts — past ~40 the counters saturate
    and the order falls to the key order. The capped tables (``2**27`` slots) serve up to
    2 G entries (~5 M long texts, ~13 M short ones); beyond, an engine counts exactly."""
    return entries <= ENTRIES_PER_SLOT << table_bits(entries)


def listed_counts(
    offsets: np.ndarray,
    keys: np.ndarray,
    listed_offsets: np.ndarray,
    listed_keys: np.ndarray,
    listed: np.ndarray,
) -> np.ndarray:
    """Each entry's count from exact counts of some of its document's keys: document
    ``d``'s keys ``keys[offsets[d]:offsets[d+1]]`` (sorted) get ``listed`` for the keys of
    ``listed_keys[listed_offsets[d]:listed_offsets[d+1]]`` (any order, a subset), 1 for the
    others — the keys held by one document, which an engine need not send back."""
    out = np.ones(keys.size, dtype=np.int64)
    _listed_counts(
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(keys, dtype=np.uint64),
        np.ascontiguousarray(listed_offsets, dtype=np.int64),
        np.ascontiguousarray(listed_keys, dtype=np.uint64),
        np.ascontiguousarray(listed, dtype=np.int64),
        out,
    )
    return out


@njit(cache=True, parallel=True)
def _listed_counts(
    offsets: np.ndarray,
    keys: np.ndarray,
    listed_offsets: np.ndarray,
    listed_keys: np.ndarray,
    listed: np.ndarray,
    out: np.ndarray,
) -> None:
    for d in prange(offsets.size - 1):
        mine = keys[offsets[d] : offsets[d + 1]]
        for t in range(listed_offsets[d], listed_offsets[d + 1]):
            at = np.searchsorted(mine, listed_keys[t])
            if at < mine.size and mine[at] == listed_keys[t]:  # always (a subset); no raise:
                out[offsets[d] + at] = listed[t]  # it would keep the loop from running parallel


@njit(cache=True, inline="always")
def _slot(key: np.uint64, mix: np.uint64, bits: int) -> int:
    return int((key * mix) >> np.uint64(64 - bits))


def key_counts(keys: np.ndarray, bits: int) -> np.ndarray:
    """Saturating counts of the keys per hashed slot, in two tables with different hashes
    (rows of the result): the smaller of a key's two counts is ≥ its true count. The two
    tables are filled in parallel (no shared slot); NumPy allocates them (large zeroed pages
    come cheaper from NumPy than from a compiled kernel's first touches)."""
    counts = np.zeros((2, 1 << bits), dtype=np.uint8)
    _fill_counts(np.ascontiguousarray(keys, dtype=np.uint64), bits, counts)
    return counts


@njit(cache=True, parallel=True)
def _fill_counts(keys: np.ndarray, bits: int, counts: np.ndarray) -> None:
    for row in prange(2):
        mix = _MIX_COUNT if row == 0 else _MIX_COUNT2
        table = counts[row]
        for k in keys:
            s = _slot(k, mix, bits)
            if table[s] < MAX_COUNT:
                table[s] += 1


@njit(cache=True, inline="always")
def _count(counts: np.ndarray, key: np.uint64, bits: int) -> int:
    a = counts[0, _slot(key, _MIX_COUNT, bits)]
    b = counts[1, _slot(key, _MIX_COUNT2, bits)]
    return min(a, b)


def entry_counts(keys: np.ndarray, counts: np.ndarray, bits: int) -> np.ndarray:
    """Each entry's estimated count (the smaller of its two table counts), one random pass."""
    out = np.empty(keys.size, dtype=np.uint8)
    _entry_counts(keys, counts, bits, out)
    return out


@njit(cache=True, parallel=True)
def _entry_counts(keys: np.ndarray, counts: np.ndarray, bits: int, out: np.ndarray) -> None:
    for t in prange(keys.size):
        out[t] = _count(counts, keys[t], bits)


def slots(keys: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each key's slot in the two count tables and in the mark table (as :func:`key_counts`
    and :func:`pairing_entries` index them), computed in NumPy: the tables as a group-by
    would count them (a slot's count is ``min(entries hashed there, MAX_COUNT)``), against
    which the kernels and the Spark engine's merged tables are checked."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    shift = np.uint64(64 - bits)
    return tuple(  # type: ignore[return-value]
        ((keys * mix) >> shift).astype(np.int64) for mix in (_MIX_COUNT, _MIX_COUNT2, _MIX_MARK)
    )


@njit(cache=True, parallel=True)
def entry_prefix_flags(
    starts: np.ndarray,
    keys: np.ndarray,
    count: np.ndarray,
    score: float,
    frequent: int,
    fallback: float,
) -> np.ndarray:
    """Per entry (document ``d``'s distinct keys are ``keys[starts[d]:starts[d+1]]``, each
    with its estimated ``count`` ≤ ``MAX_COUNT``): is it in the document's prefix for
    ``score`` — its ``m − ⌈score·m⌉ + 1`` first keys by (count, key) —, or for ``fallback``
    when that prefix reaches a key counted ≥ ``frequent``. A histogram of the counts finds
    the cut; only keys tied at the cut are sorted."""
    flags = np.zeros(keys.size, dtype=np.bool_)
    for d in prange(starts.size - 1):
        i, j = starts[d], starts[d + 1]
        m = j - i
        if m == 0:
            continue
        hist = _histogram(count[i:j])
        take = prefix_size(m, score)
        cut = _kth_count(hist, take)
        if cut >= frequent:
            take = prefix_size(m, fallback)
            cut = _kth_count(hist, take)
        _flag_first(count[i:j], keys[i:j], cut, take, flags[i:j])
    return flags


@njit(cache=True, parallel=True)
def hit_flags(
    starts: np.ndarray,
    keys: np.ndarray,
    count: np.ndarray,
    least: float,
    hits: int,
    cap: int,
    score: float = 0.0,
    frequent: int = MAX_COUNT + 1,
) -> tuple[np.ndarray, np.ndarray]:
    """``(flags, need)``: per entry, is it in its document's *hit prefix* — its
    ``m − ⌈least·m⌉ + k`` first keys by (count, key), ``k = min(hits, ⌈least·m⌉)``, which
    hold ≥ ``k`` of the keys it shares with any document holding ≥ ``least`` of it —; per
    document, how many of those shared keys must be counted ≤ ``cap`` (``k`` less the keys
    of its hit prefix counted above ``cap``; at least 1).

    With ``score`` > ``least``, a document whose hit prefix for ``score`` holds no key
    counted ``frequent`` or more takes that one: those keys are its content's first, so it
    holds ``k`` of the keys shared with any document that holds ≥ ``score`` of its content
    (:mod:`neardup.dedup.candidates`); the others take the one for ``least``."""
    flags = np.zeros(keys.size, dtype=np.bool_)
    need = np.ones(starts.size - 1, dtype=np.int32)
    for d in prange(starts.size - 1):
        i, j = starts[d], starts[d + 1]
        m = j - i
        if m == 0:
            continue
        hist = _histogram(count[i:j])
        take, k = _hit_prefix(m, max(score, least), hits)
        if score > least and _kth_count(hist, take) >= frequent:  # as entry_prefix_flags
            take, k = _hit_prefix(m, least, hits)
        _flag_first(count[i:j], keys[i:j], _kth_count(hist, take), take, flags[i:j])
        high = 0
        for t in range(i, j):
            high += flags[t] and count[t] > cap
        need[d] = max(k - high, 1)
    return flags, need


@njit(cache=True, inline="always")
def _hit_prefix(m: int, least: float, hits: int) -> tuple[int, int]:
    """``(size, k)`` of the hit prefix of a document of ``m`` keys for ``least``."""
    overlap = max(int(np.ceil(least * m - 1e-9)), 1)
    k = min(hits, overlap)
    return m - overlap + k, k


@njit(cache=True)
def _histogram(count: np.ndarray) -> np.ndarray:
    hist = np.zeros(MAX_COUNT + 1, dtype=np.int32)
    for c in count:
        hist[c] += 1
    return hist


@njit(cache=True)
def _kth_count(hist: np.ndarray, k: int) -> int:
    """The ``k``-th smallest count (1-based) of a histogram of counts."""
    seen = 0
    for c in range(hist.size):
        seen += hist[c]
        if seen >= k:
            return c
    return hist.size - 1


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


def pairing_entries(
    keys: np.ndarray, flags: np.ndarray, count: np.ndarray, bits: int
) -> np.ndarray:
    """Entries that can make a pair: their key is counted more than once (``count``: each
    entry's estimate) and is in the prefix of some document (a hashed mark; a key not marked
    is in no prefix). All entries of a key are kept or none, so buckets keep their sizes."""
    marks = mark_table(bits)
    mark_prefixes(keys, flags, bits, marks)
    return marked_entries(keys, count, bits, marks)


def mark_table(bits: int) -> np.ndarray:
    """An empty mark table: one bit a slot (little bit order), ``2**bits`` slots."""
    return np.zeros(1 << max(bits - 3, 0), dtype=np.uint8)


def mark_prefixes(keys: np.ndarray, flags: np.ndarray, bits: int, marks: np.ndarray) -> None:
    """Set in ``marks`` the mark bit of every flagged entry's key (an engine fills one table
    over batches of entries)."""
    _mark(np.ascontiguousarray(keys, dtype=np.uint64), flags, bits, marks)


def marked_entries(keys: np.ndarray, count: np.ndarray, bits: int, marks: np.ndarray) -> np.ndarray:
    """Per entry: counted more than once and its key marked in ``marks``."""
    keep = np.empty(keys.size, dtype=np.bool_)
    _marked(np.ascontiguousarray(keys, dtype=np.uint64), count, bits, marks, keep)
    return keep


@njit(cache=True)
def _mark(keys: np.ndarray, flags: np.ndarray, bits: int, marks: np.ndarray) -> None:
    """Set the mark bit of every flagged entry's key (one thread: bits of a byte)."""
    for t in range(keys.size):
        if flags[t]:
            s = _slot(keys[t], _MIX_MARK, bits)
            marks[s >> 3] |= np.uint8(1 << (s & 7))


@njit(cache=True, parallel=True)
def _marked(
    keys: np.ndarray, count: np.ndarray, bits: int, marks: np.ndarray, keep: np.ndarray
) -> None:
    """Per entry: counted more than once and its key marked (the mark looked up only then)."""
    for t in prange(keys.size):
        ok = False
        if count[t] > 1:
            s = _slot(keys[t], _MIX_MARK, bits)
            ok = (marks[s >> 3] >> (s & 7)) & 1 == 1
        keep[t] = ok
