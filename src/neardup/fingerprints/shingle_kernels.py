"""Compiled shingling: canonical token buffers → shingle byte spans → per-document sets.

A word w-shingle is the byte span from the first byte of token i to the last byte of token
i + w - 1 of the canonical buffer (tokens there are joined by one space), so hashing the span
is hashing the shingle's text. A character k-shingle is a span of k code points.

numba's on-disk cache of these kernels is keyed on this file's text alone, yet holds the
code of the hashes they inline (``hashes._dispatch_valid``): a change there must come with
a change here (last: XXH3 of 17..64 bytes without a branch on the length), or an old cache
keeps the old code.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.fingerprints.hash_kernels import _dispatch_valid
from neardup.text.tokenize_kernels import BREAK, decode_utf8, is_han
from neardup.util.hashtable import GOLDEN


@njit(cache=True, inline="always")
def _count(n: int, size: int, step: int) -> int:
    """Shingles of a document with n units: none if empty, one if shorter than size."""
    if n == 0:
        return 0
    if n <= size:
        return 1
    return (n - size) // step + 1


@njit(cache=True)
def _char_starts(buf: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Byte offsets of the code points of buf[lo:hi], plus hi as a sentinel."""
    n = 0
    for i in range(lo, hi):
        if (buf[i] & 0xC0) != 0x80:
            n += 1
    out = np.empty(n + 1, dtype=np.int64)
    k = 0
    for i in range(lo, hi):
        if (buf[i] & 0xC0) != 0x80:
            out[k] = i
            k += 1
    out[n] = hi
    return out


# A canonical batch as the shingle kernels take it: (buf, doc_offsets, tok_starts, tok_ends,
# tok_offsets, by_char) — see neardup.text.canon.TokenBatch.shingle_input.


@njit(cache=True)
def _doc_count(tokens: tuple, d: int, shape: tuple[int, int, int]) -> int:
    """How many shingles document d has (see :func:`shingle_spans`)."""
    buf, doc_offsets, tok_starts, tok_ends, tok_offsets, by_char = tokens
    size, step, _ = shape
    if by_char[d]:
        units = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            if (buf[i] & 0xC0) != 0x80:
                units += 1
        return _count(units, size, step)
    t0, t1 = tok_offsets[d], tok_offsets[d + 1]
    counting = (_no_spans(), -1, _no_hashes())
    return _segment_shingles(buf, tok_starts, tok_ends, t0, t1, shape, *counting)


@njit(cache=True)
def _doc_spans(
    tokens: tuple,
    d: int,
    shape: tuple[int, int, int],
    spans: tuple[np.ndarray, np.ndarray, np.ndarray],
    out: int,
) -> int:
    """Write document d's shingle spans (starts, ends, Han flags) from ``out``; returns how
    many there are (:func:`_doc_count`)."""
    buf, doc_offsets, tok_starts, tok_ends, tok_offsets, by_char = tokens
    size, step, _ = shape
    starts, ends, han = spans
    if by_char[d]:
        cs = _char_starts(buf, doc_offsets[d], doc_offsets[d + 1])
        units = cs.size - 1
        count = _count(units, size, step)
        for k in range(count):
            i = k * step
            starts[out + k] = cs[i]
            ends[out + k] = cs[min(i + size, units)]
            han[out + k] = _all_han(buf, starts[out + k], ends[out + k])
        return count
    t0, t1 = tok_offsets[d], tok_offsets[d + 1]
    return _segment_shingles(buf, tok_starts, tok_ends, t0, t1, shape, spans, out, _no_hashes())


@njit(cache=True)
def doc_hashes(
    tokens: tuple,
    d: int,
    shape: tuple[int, int, int],
    hashing: tuple[int, np.uint64],
    spans: tuple[np.ndarray, np.ndarray, np.ndarray],
    out: np.ndarray,
) -> int:
    """Write document d's shingle fingerprints (hashed with ``hashing``: kind and seed of
    ``hash_span``, checked; Han-marked) from ``out[0]``; returns how many there are. Word
    shingles are hashed as they are found; character shingles pass through ``spans``
    (scratch, big enough)."""
    buf, _, tok_starts, tok_ends, tok_offsets, by_char = tokens
    kind, seed = hashing
    if by_char[d]:
        m = _doc_spans(tokens, d, shape, spans, 0)
        starts, ends, han = spans
        for k in range(m):
            out[k] = _han_marked(_dispatch_valid(kind, buf, starts[k], ends[k], seed), han[k])
        return m
    t0, t1 = tok_offsets[d], tok_offsets[d + 1]
    return _segment_shingles(buf, tok_starts, tok_ends, t0, t1, shape, spans, 0, (kind, seed, out))


@njit(cache=True, inline="always")
def _no_spans() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """No span arrays (:func:`_segment_shingles` only counting, or hashing)."""
    return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0, np.bool_)


@njit(cache=True, inline="always")
def _no_hashes() -> tuple[int, np.uint64, np.ndarray]:
    """No hashing (:func:`_segment_shingles` writing spans, or only counting)."""
    return -1, np.uint64(0), np.empty(0, dtype=np.uint64)


@njit(cache=True, parallel=True, nogil=True)
def shingle_offsets(tokens: tuple, size: int, step: int, han_size: int) -> np.ndarray:
    """Where each document's shingles start in the batch's: document d has
    ``offsets[d]:offsets[d+1]`` (see :func:`shingle_spans`)."""
    n = tokens[1].size - 1
    counts = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        counts[d] = _doc_count(tokens, d, (size, step, han_size))
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    return offsets


@njit(cache=True, parallel=True, nogil=True)
def shingle_spans(
    tokens: tuple, offsets: np.ndarray, size: int, step: int, han_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte spans of every shingle of a canonical batch, in document order, at
    :func:`shingle_offsets`; ``by_char[d]``: character shingles. Word shingles of a segment
    of Han characters alone (between breaks) are ``han_size`` tokens long.

    Returns ``(starts, ends, han)``; ``han``: the shingle is of Han characters alone.
    """
    n = offsets.size - 1
    starts = np.empty(offsets[n], dtype=np.int64)
    ends = np.empty(offsets[n], dtype=np.int64)
    han = np.zeros(offsets[n], dtype=np.bool_)
    spans = (starts, ends, han)
    for d in prange(n):
        _doc_spans(tokens, d, (size, step, han_size), spans, offsets[d])
    return starts, ends, han


@njit(cache=True, parallel=True, nogil=True)
def shingle_hashes(
    tokens: tuple,
    offsets: np.ndarray,
    size: int,
    step: int,
    han_size: int,
    kind: int,
    seed: np.uint64,
) -> np.ndarray:
    """:func:`shingle_spans` hashed (``kind``, ``seed``: of
    :func:`neardup.fingerprints.hash_kernels.hash_span`, already checked) and Han-marked
    (:func:`mark_han`) in one pass. A document's spans only pass through a small scratch
    buffer: the batch's spans (16 bytes a shingle, fresh memory) are never stored."""
    n = offsets.size - 1
    hashes = np.empty(offsets[n], dtype=np.uint64)
    by_char = tokens[5]
    for d in prange(n):
        m = offsets[d + 1] - offsets[d] if by_char[d] else 0  # word shingles need no spans
        spans = (np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64), np.zeros(m, np.bool_))
        doc_hashes(tokens, d, (size, step, han_size), (kind, seed), spans, hashes[offsets[d] :])
    return hashes


@njit(cache=True)
def _segment_shingles(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    t0: int,
    t1: int,
    shape: tuple[int, int, int],
    spans: tuple[np.ndarray, np.ndarray, np.ndarray],
    out: int,
    hashing: tuple[int, np.uint64, np.ndarray],
) -> int:
    """The word shingles of tokens t0:t1, none spanning a ``BREAK`` joiner (a clause end of
    Han text): each segment between breaks is shingled as a text of its own, ``han_size``
    tokens long where the segment is Han characters alone (``shape``: size, step,
    han_size). Writes from ``out`` (when ``out`` ≥ 0) the spans (``spans``: starts, ends,
    Han flags), or with ``hashing`` (kind ≥ 0, seed, out array) their Han-marked
    fingerprints, and returns how many there are."""
    size, step, han_size = shape
    starts, ends, han = spans
    kind, seed, hashes = hashing
    k = 0
    seg = t0
    all_han = True
    for i in range(t0, t1):
        all_han = all_han and _is_han_token(buf, tok_starts[i], tok_ends[i])
        last = i + 1 == t1 or (tok_ends[i] < tok_starts[i + 1] and buf[tok_ends[i]] == BREAK)
        if not last:
            continue
        w = han_size if all_han else size
        m = _count(i + 1 - seg, w, step)
        if out >= 0:
            for j in range(m):
                a = seg + j * step
                lo, hi = tok_starts[a], tok_ends[min(a + w, i + 1) - 1]
                if kind >= 0:
                    value = _dispatch_valid(kind, buf, lo, hi, seed)
                    hashes[out + k + j] = _han_marked(value, all_han)
                else:
                    starts[out + k + j], ends[out + k + j], han[out + k + j] = lo, hi, all_han
        k += m
        seg = i + 1
        all_han = True
    return k


@njit(cache=True)
def _all_han(buf: np.ndarray, start: int, end: int) -> bool:
    """Whether buf[start:end] is Han characters alone (a character shingle of Chinese)."""
    i = start
    while i < end:
        c, width = decode_utf8(buf, i)
        if not is_han(c):
            return False
        i += width
    return True


@njit(cache=True, inline="always")
def _is_han_token(buf: np.ndarray, start: int, end: int) -> bool:
    """Whether the token buf[start:end] is one Han character (3 or 4 UTF-8 bytes)."""
    if end - start < 3 or end - start > 4:
        return False
    c, width = decode_utf8(buf, start)
    return width == end - start and is_han(c)


# Segments this short are insertion sorted directly; longer ones are bucket sorted first.
_INSERTION_ONLY = 24
# Insertion sort after bucketing moves ~1 element per value for uniform hashes; past this many
# moves per value the values are not uniform (crc32, clustered input): sort them instead.
_MAX_MOVES_PER_VALUE = 8


@njit(cache=True, inline="always")
def _bit_length(x: np.uint64) -> int:
    n = 0
    while x != 0:
        x >>= np.uint64(1)
        n += 1
    return n


@njit(cache=True)
def _insertion_sort(work: np.ndarray, lo: int, hi: int, budget: int) -> bool:
    """Insertion sort of work[lo:hi] in place, giving up (False) after ``budget`` moves."""
    moves = 0
    for i in range(lo + 1, hi):
        x = work[i]
        j = i
        while j > lo and work[j - 1] > x:
            work[j] = work[j - 1]
            j -= 1
        moves += i - j
        work[j] = x
        if moves > budget:
            return False
    return True


@njit(cache=True)
def sort_into(src: np.ndarray, n: int, dst: np.ndarray, lo: int, buckets: np.ndarray) -> None:
    """The values src[:n], sorted, written to dst[lo:lo + n] (``src`` is left as it was
    unless it is ``dst``'s segment itself and short). ``buckets``: scratch of at least
    ``2 * n + 1`` int64 (reused from call to call: nothing is allocated here).

    Shingle fingerprints are uniform 64-bit hashes, so a counting sort by their top bits into
    about one bucket per value leaves only tiny buckets, finished by one insertion sort: O(n)
    where a comparison sort is O(n log n). Input that is not uniform falls back to quicksort.
    """
    if n <= _INSERTION_ONLY:
        for i in range(n):
            dst[lo + i] = src[i]
        if not _insertion_sort(dst, lo, lo + n, n * n):
            dst[lo : lo + n].sort()
        return
    smallest = src[0]
    largest = src[0]
    for i in range(1, n):
        v = src[i]
        smallest = min(smallest, v)
        largest = max(largest, v)
    bits = _bit_length(np.uint64(n - 1))  # 2**bits buckets: at least one per value
    shift = np.uint64(max(0, _bit_length(largest - smallest) - bits))
    nb = (1 << bits) + 1
    buckets[:nb] = 0
    for i in range(n):
        buckets[np.int64((src[i] - smallest) >> shift) + 1] += 1
    buckets[0] = lo
    for b in range(1, nb):  # bucket b's values go to dst[buckets[b]:buckets[b + 1]]
        buckets[b] += buckets[b - 1]
    for i in range(n):
        b = np.int64((src[i] - smallest) >> shift)
        dst[buckets[b]] = src[i]
        buckets[b] += 1
    if not _insertion_sort(dst, lo, lo + n, _MAX_MOVES_PER_VALUE * n):
        dst[lo : lo + n].sort()


@njit(cache=True, inline="always")
def distinct(work: np.ndarray, times: np.ndarray, lo: int, n: int) -> int:
    """The sorted values work[lo:lo + n] made distinct in place, how often each occurred in
    ``times`` beside them; returns how many there are."""
    k = lo
    times[k] = 1
    for i in range(lo + 1, lo + n):
        if work[i] != work[k]:
            k += 1
            work[k] = work[i]
            times[k] = 1
        else:
            times[k] += 1
    return k + 1 - lo


@njit(cache=True, inline="always")
def slide_left(values: np.ndarray, src: int, dst: int, n: int) -> None:
    """Move ``n`` values from ``src`` to ``dst`` ≤ ``src``, in order (the ranges may overlap:
    compaction in place)."""
    if src != dst:
        for i in range(n):
            values[dst + i] = values[src + i]


@njit(cache=True, inline="always")
def move_left(work: np.ndarray, times: np.ndarray, src: int, dst: int, n: int) -> None:
    """:func:`slide_left` of ``n`` values and their ``times``."""
    slide_left(work, src, dst, n)
    slide_left(times, src, dst, n)


@njit(cache=True, parallel=True, nogil=True)
def unique_per_doc(
    values: np.ndarray, offsets: np.ndarray, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct values of every document's segment (the shingle SET of each document),
    with how often each occurs (weights for SimHash).

    ``overwrite``: the result is built in ``values`` itself (views of it are returned), which
    saves a copy of a batch's worth of fresh memory when the caller has no further use for it.
    """
    n = offsets.size - 1
    work = values if overwrite else values.copy()
    times = np.empty(values.size, dtype=np.uint32)
    counts = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        lo, hi = offsets[d], offsets[d + 1]
        if hi == lo:
            continue
        sort_into(work[lo:hi].copy(), hi - lo, work, lo, np.empty(2 * (hi - lo) + 1, np.int64))
        counts[d] = distinct(work, times, lo, hi - lo)
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    new_offsets[1:] = np.cumsum(counts)
    for d in range(n):  # pack the documents to the left, in order (never past unread data)
        move_left(work, times, offsets[d], new_offsets[d], counts[d])
    total = new_offsets[n]
    return work[:total], new_offsets, times[:total]


# The Han region of the fingerprint space (:func:`neardup.fingerprints.shingles.mark_han`):
# the values whose
# image under multiplication by an odd constant (a bijection mod 2**64) has its top
# ``HAN_BITS`` bits set — 1 in 4096 of all values.
HAN_MIX = GOLDEN
HAN_UNMIX = np.uint64(pow(int(GOLDEN), -1, 1 << 64))
HAN_BITS = 12
HAN_SHIFT = np.uint64(64 - HAN_BITS)
HAN_TOP = np.uint64((1 << HAN_BITS) - 1)
_HAN_REGION = np.uint64(((1 << HAN_BITS) - 1) << (64 - HAN_BITS))
_OUT_OF_REGION = np.uint64(((1 << 64) - 1) ^ (1 << (64 - HAN_BITS)))  # clears one region bit


@njit(cache=True, parallel=True, nogil=True)
def mark_han(hashes: np.ndarray, han: np.ndarray) -> None:
    """Move ``hashes[i]`` into the Han region where ``han[i]``, out of it elsewhere (in place,
    one pass: most values are only read)."""
    for i in prange(hashes.size):
        hashes[i] = _han_marked(hashes[i], han[i])


@njit(cache=True, inline="always")
def _han_marked(value: np.uint64, han: bool) -> np.uint64:
    """``value`` moved into the Han region if ``han``, out of it if not (see mark_han)."""
    image = value * HAN_MIX
    inside = (image >> HAN_SHIFT) == HAN_TOP
    if han and not inside:
        return (image | _HAN_REGION) * HAN_UNMIX
    if inside and not han:
        return (image & _OUT_OF_REGION) * HAN_UNMIX
    return value
