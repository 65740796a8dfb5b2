"""Candidate pairs from shared index keys: a group-by on keys, never a loop over all pairs.

Documents that share a key (an LSH band, a SimHash block table, a megashingle, a sampled
fingerprint) become candidate pairs. A key shared by very many documents says little (a
boilerplate shingle, a template line): pairing all of them would be quadratic, so in a bucket
larger than ``max_bucket`` each document is paired only with the bucket's first document —
enough to chain exact copies together, and counted in the result so the user sees it.

With keys that are the shingles themselves (the full index) a **prefix filter** keeps recall
exact at a known score ``s`` and drops most pairs of common phrases: when document A holds
≥ s of its shingles in B, one of them is among A's ``|A| − ⌈s·|A|⌉ + 1`` first shingles in
any order that is the same for every document (its *prefix*; rarest first, by an estimated
count: :mod:`neardup.dedup.prefix`), so a bucket need only pair the documents holding its
key in their prefix with the others.

**Frequent keys.** A caller whose pairs may be kept on a score above their plain containment
(their content, frequent shingles discounted) would need the prefix for the lowest plain bound
(``fallback_score``), half of every document. But discounted shingles are always among the
*frequent* keys (held by ≥ ``frequent`` documents; their counts are at least that), which
come last in the order. So when a document's prefix for the score stays within its rarer
keys, it is also the start of its content in that order, whatever set of frequent keys turns
out to be discounted — and it holds the content prefix, which is never longer. Only a
document whose prefix reaches its frequent keys takes the longer prefix for
``fallback_score``. dedup's scores never exceed the plain containment
(:mod:`neardup.dedup.templates`), so it passes ``frequent`` 0.

**Counted hits.** A pair in which A holds ≥ ``least`` of its ``m`` keys plainly (every pair
that can be kept does: :mod:`neardup.dedup.core`) shares ≥ ``o = ⌈least·m⌉`` keys, so A's
``m − o + k`` first keys in the order hold ≥ ``k = min(hits, o)`` of them (its *hit
prefix*). Keys counted ≤ ``max_bucket`` are never in a capped bucket; for them the buckets
count, per pair, the shared keys in either side's hit prefix, and keep the pair only if the
count reaches the smaller of the two documents' *need* (``k`` less the keys of its hit
prefix counted higher, at least one). With frequent keys, ``least`` is the low plain bound
that a discount may raise; but, as for the prefix, when a document's hit prefix
for the score holds no frequent key its content starts there, and a pair holding ≥ the
score of its content shares ``k`` keys within it (the content is no larger, and ``x −
⌈s·x⌉`` never shrinks as ``x`` grows): such a document takes the hit prefix for the score,
the others the one for ``least``. On English prose this keeps ~1 in 40 of the pairs the
prefix alone keeps (1.43 M → 38 k on 100 k documents for 17.6 k verified). A key counted
higher goes the old way (prefix, cap); a pair found only through such keys with a plain
prefix of A is found as before: every key of A's prefix is in its hit prefix, which then
holds no key counted lower, and its need is 1.

The same function serves a corpus (keys of all documents) and a shard of one (keys hashed
to shards first), which is how it maps onto Spark's group-by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from neardup.dedup.copies import spread_pairs, standing_for
from neardup.dedup.defaults import DEFAULT_MAX_BUCKET
from neardup.dedup.prefix import (
    MAX_COUNT,
    entry_counts,
    entry_prefix_flags,
    hit_flags,
    key_counts,
    pairing_entries,
    table_bits,
)
from neardup.errors import ConfigError
from neardup.util.arrays import (
    pair_codes,
    release_mapped_pages,
    sorted_counts,
    split_pair_codes,
    unique,
)
from neardup.util.hashtable import SLOT_MIX
from neardup.util.kernels import threads_for
from neardup.util.sorting import parallel_sort

DEFAULT_HITS = 4  # measured on 100 k English documents: 2 → 250 k pairs, 3 → 54 k, 4 → 38 k


@dataclass(frozen=True, slots=True, eq=False)
class Candidates:
    """Distinct candidate pairs ``left[i] < right[i]`` and how many buckets were capped;
    with the prefix filter of keys laid out by document, each key entry's estimated count of
    holders (never below the true count: the template stage reuses it)."""

    left: np.ndarray
    right: np.ndarray
    capped_buckets: int
    counts: np.ndarray | None = None

    def __len__(self) -> int:
        return self.left.size


def candidate_pairs(
    docs: np.ndarray,
    keys: np.ndarray,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    prefix_score: float = 0.0,
    frequent: int = 0,
    fallback_score: float | None = None,
    least: float = 0.0,
    hits: int = DEFAULT_HITS,
) -> Candidates:
    """Distinct pairs of documents sharing at least one key.

    ``prefix_score`` > 0 (keys = each document's distinct shingles): only pairs where one
    side holds the shared key in its prefix for that score (module docstring) — every pair
    in which some document holds ≥ ``prefix_score`` of its keys in the other is kept. A
    capped bucket pairs the first document holding the key in its prefix with the others
    that do.

    ``frequent`` > 0 (templates discounted later, a subset of the keys held by ≥ ``frequent``
    documents): a document whose prefix reaches those keys takes its prefix for
    ``fallback_score`` (≤ ``prefix_score``) instead; then every pair is kept in which some
    document holds ≥ ``fallback_score`` of its keys, and ≥ ``prefix_score`` of its content,
    in the other, whichever frequent keys are discounted (module docstring).

    ``least`` > 0 (≤ the fallback score): of those, only pairs where some document holds
    ≥ ``least`` of its keys plainly are needed, and the others are mostly dropped by
    counting ``hits`` shared keys (module docstring).
    """
    fallback = _check(max_bucket, prefix_score, frequent, fallback_score, least, hits)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    docs = np.ascontiguousarray(docs)
    if prefix_score <= 0.0 or docs.size == 0:
        return _shared_key_pairs(docs, keys, np.ones(docs.size, dtype=np.bool_), max_bucket)
    if docs.size > 1 and not bool(np.all(docs[1:] >= docs[:-1])):  # group by document
        by_doc = np.argsort(docs, kind="stable")
        docs, keys = docs[by_doc], keys[by_doc]
    starts = _run_starts(docs)
    found = _prefix_pairs(starts, keys, prefix_score, frequent, fallback, least, hits, max_bucket)
    found = Candidates(found.left, found.right, found.capped_buckets)  # counts: of sorted keys
    run_doc = docs[starts[:-1]]  # runs → document ids (increasing)
    return Candidates(run_doc[found.left], run_doc[found.right], found.capped_buckets)


def prefix_candidates(
    offsets: np.ndarray,
    keys: np.ndarray,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    prefix_score: float = 0.0,
    frequent: int = 0,
    fallback_score: float | None = None,
    least: float = 0.0,
    hits: int = DEFAULT_HITS,
    first: np.ndarray | None = None,
) -> Candidates:
    """:func:`candidate_pairs` of keys laid out by document — document ``d``'s distinct keys
    are ``keys[offsets[d]:offsets[d+1]]`` (the fingerprints of a run) — with no array of
    document ids: the same pairs, less memory. ``first``: per document, the first document
    with the same keys (:class:`~neardup.dedup.copies.Copies`), whose copies are counted
    once (the same pairs)."""
    if prefix_score <= 0.0:
        docs = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
        return candidate_pairs(docs, keys, max_bucket)
    fallback = _check(max_bucket, prefix_score, frequent, fallback_score, least, hits)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    rule = (prefix_score, frequent, fallback, least, hits, max_bucket)
    return _prefix_pairs(offsets, keys, *rule, first)


def _check(
    max_bucket: int,
    prefix_score: float,
    frequent: int,
    fallback_score: float | None,
    least: float,
    hits: int,
) -> float:
    """The fallback score in use, after checking the parameters."""
    if max_bucket < 2:
        raise ConfigError(f"max_bucket={max_bucket!r} must be at least 2")
    if not 0.0 <= prefix_score <= 1.0:
        raise ConfigError(f"prefix_score={prefix_score!r} must be in [0, 1]")
    fallback = prefix_score if fallback_score is None or frequent <= 0 else fallback_score
    if not 0.0 <= fallback <= prefix_score:
        raise ConfigError(f"fallback_score={fallback_score!r} must be in [0, prefix_score]")
    if not 0.0 <= least <= fallback:
        raise ConfigError(f"least={least!r} must be in [0, the fallback score]")
    if hits < 1:
        raise ConfigError(f"hits={hits!r} must be positive")
    return fallback


def _shared_key_pairs(
    docs: np.ndarray, keys: np.ndarray, in_prefix: np.ndarray, max_bucket: int
) -> Candidates:
    """Distinct pairs of the entries' documents sharing a key (one side in its prefix)."""
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    order = np.lexsort((docs, keys))
    sorted_keys = np.ascontiguousarray(keys[order])
    sorted_docs = np.ascontiguousarray(docs[order])
    in_prefix = in_prefix[order]
    left, right, capped = _bucket_pairs(sorted_keys, sorted_docs, max_bucket, in_prefix)
    if left.size == 0:
        return Candidates(left, right, int(capped))
    return Candidates(*split_pair_codes(unique(pair_codes(left, right))), int(capped))


def _prefix_pairs(
    starts: np.ndarray,
    keys: np.ndarray,
    score: float,
    frequent: int,
    fallback: float,
    least: float,
    hits: int,
    max_bucket: int,
    first: np.ndarray | None = None,
) -> Candidates:
    """Candidate pairs of runs (run ``d`` is ``keys[starts[d]:starts[d+1]]``, distinct keys):
    keys counted ≤ ``max_bucket`` by counted hits (or by the prefix when ``least`` is 0),
    the others by the prefix with capped buckets (module docstring). ``first``: per run,
    the first run of the same keys; the counted hits count two runs of such a set, then
    spread their pairs to the others (:mod:`neardup.dedup.copies`)."""
    bits = table_bits(keys.size)
    limit = min(frequent, MAX_COUNT) if frequent > 0 else MAX_COUNT + 1
    cap = min(max_bucket, MAX_COUNT - 1)  # a saturated count may hide any number
    with threads_for(keys.size):  # a parallel region is not worth it for a few keys
        count = entry_counts(keys, key_counts(keys, bits), bits)
        flags = entry_prefix_flags(starts, keys, count, score, limit, fallback)
        if least > 0.0:
            hit, need = hit_flags(starts, keys, count, least, hits, cap, score, limit)
            np.copyto(flags, hit, where=count <= cap)
            del hit
        else:
            need = np.ones(starts.size - 1, dtype=np.int32)
        keep = pairing_entries(keys, flags, count, bits)
    high = np.flatnonzero(keep & (count > cap))
    runs = np.searchsorted(starts, high, side="right") - 1
    capped = _shared_key_pairs(runs, keys[high], flags[high], max_bucket)
    del high, runs
    keep &= count <= cap  # never in a capped bucket: counted hits
    if first is not None:
        keep &= np.repeat(standing_for(first), np.diff(starts))
    words = entry_words(starts, keys, flags, keep)
    del keep, flags
    release_mapped_pages(keys)  # read again from the page cache when verifying
    counted = _counted_pairs(words, need)
    if first is not None:
        counted = spread_pairs(counted, first)
    codes = np.concatenate((counted, pair_codes(capped.left, capped.right)))
    return Candidates(*split_pair_codes(unique(codes)), capped.capped_buckets, count)


def entry_words(
    starts: np.ndarray, keys: np.ndarray, flags: np.ndarray, low: np.ndarray
) -> np.ndarray:
    """One word per ``low`` entry (:func:`_counted_pairs`): the high bits of its mixed key,
    its run, its flag."""
    words = np.empty(int(np.count_nonzero(low)), dtype=np.uint64)
    _entry_words(starts, keys, flags, low, _run_bits(starts.size - 1), words)
    return words


def _run_bits(runs: int) -> int:
    return max(int(runs).bit_length(), 1)


def _counted_pairs(words: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Pair codes of the runs sharing, among the entries of ``words`` (:func:`entry_words`,
    sorted here in place), at least the smaller of their two ``need`` of keys in either
    one's hit prefix.

    The entries are sorted as one word each (a plain sort on every core, several times faster
    than an argsort) — the high bits of the key mixed, the run, the flag —: keys that agree in
    those bits only make a larger count, never a smaller one (a few more candidates at
    most, which verification drops). Pairs are counted first in a table of saturating
    counters (never below the true count), so only the few that can reach their need are
    written out and counted exactly. Both passes run on key-aligned parts of the words in
    parallel (a table each, added before the second pass)."""
    run_bits = _run_bits(need.size)
    parallel_sort(words)
    bits = int(np.clip(words.size.bit_length() + 1, 16, 26))
    parts = _key_parts(words, run_bits, numba.get_num_threads() if words.size > 1 << 16 else 1)
    counters = np.zeros((parts.size - 1, 1 << bits), dtype=np.uint8)  # NumPy: no fault storm
    _count_hits(words, run_bits, parts, counters)
    table = _saturating_sum(counters)
    del counters
    chunks = _hit_codes(words, run_bits, need, table, parts)
    del table
    codes = np.concatenate(chunks) if chunks else np.empty(0, np.uint64)
    del chunks
    parallel_sort(codes)  # in place: the largest array here
    codes, shared = sorted_counts(codes)
    left, right = split_pair_codes(codes)
    return codes[shared >= np.minimum(need[left], need[right])]


@njit(cache=True)
def _entry_words(
    starts: np.ndarray,
    keys: np.ndarray,
    flags: np.ndarray,
    low: np.ndarray,
    run_bits: int,
    words: np.ndarray,
) -> None:
    """One word per ``low`` entry, into ``words``: the high bits of its mixed key, its run,
    its flag (:func:`_counted_pairs`)."""
    shift = np.uint64(run_bits + 1)
    k = 0
    for d in range(starts.size - 1):
        for t in range(starts[d], starts[d + 1]):
            if low[t]:
                word = ((keys[t] * SLOT_MIX) >> shift) << shift
                words[k] = word | (np.uint64(d) << np.uint64(1)) | np.uint64(flags[t])
                k += 1


@njit(cache=True)
def _key_parts(words: np.ndarray, run_bits: int, parts: int) -> np.ndarray:
    """``parts + 1`` bounds splitting the sorted words into parts of about equal size that
    never split a key."""
    key_mask = ~np.uint64((1 << (run_bits + 1)) - 1)
    bounds = np.empty(parts + 1, dtype=np.int64)
    bounds[0] = 0
    for p in range(1, parts + 1):
        b = max(words.size * p // parts, bounds[p - 1])
        while 0 < b < words.size and (words[b] & key_mask) == (words[b - 1] & key_mask):
            b += 1
        bounds[p] = b
    return bounds


@njit(cache=True, inline="always")
def _key_end(words: np.ndarray, key_mask: np.uint64, i: int, n: int) -> int:
    j = i + 1
    while j < n and (words[j] & key_mask) == (words[i] & key_mask):
        j += 1
    return j


@njit(cache=True, inline="always")
def _pair_code(wa: np.uint64, wb: np.uint64, run_mask: np.uint64) -> np.uint64:
    """The pair code (smaller run first) of two entries' words; 0 when they cannot pair
    (same run, or neither in its hit prefix): never the code of a pair, whose runs differ."""
    ra = (wa >> np.uint64(1)) & run_mask
    rb = (wb >> np.uint64(1)) & run_mask
    if ra == rb or not ((wa | wb) & np.uint64(1)):
        return np.uint64(0)
    return (min(ra, rb) << np.uint64(32)) | max(ra, rb)


@njit(cache=True, parallel=True)
def _count_hits(words: np.ndarray, run_bits: int, parts: np.ndarray, counters: np.ndarray) -> None:
    """Count every pair of entries of a key (:func:`_pair_code`) in part ``p``'s table of
    saturating counters ``counters[p]``."""
    key_mask = ~np.uint64((1 << (run_bits + 1)) - 1)
    run_mask = np.uint64((1 << run_bits) - 1)
    shift = np.uint64(64 - int(np.log2(counters.shape[1])))
    for p in prange(parts.size - 1):
        table = counters[p]
        i, n = parts[p], parts[p + 1]
        while i < n:
            j = _key_end(words, key_mask, i, n)
            for a in range(i, j):
                for b in range(a + 1, j):
                    code = _pair_code(words[a], words[b], run_mask)
                    if code:
                        slot = (code * SLOT_MIX) >> shift
                        if table[slot] < 255:
                            table[slot] += 1
            i = j


@njit(cache=True, parallel=True)
def _saturating_sum(counters: np.ndarray) -> np.ndarray:
    """The parts' counter tables added, saturating at 255."""
    if counters.shape[0] == 1:
        return counters[0]
    total = np.empty(counters.shape[1], dtype=np.uint8)
    for s in prange(counters.shape[1]):
        t = 0
        for p in range(counters.shape[0]):
            t += counters[p, s]
        total[s] = min(t, 255)
    return total


@njit(cache=True, parallel=True)
def _hit_codes(
    words: np.ndarray, run_bits: int, need: np.ndarray, table: np.ndarray, parts: np.ndarray
) -> list:
    """Per part, the pair codes (with repeats) that the counter ``table`` counts at least
    the smaller of the two runs' ``need``."""
    out = [np.empty(0, dtype=np.uint64) for _ in range(parts.size - 1)]
    for p in prange(parts.size - 1):
        out[p] = _part_codes(words, run_bits, need, table, parts[p], parts[p + 1])
    return out


@njit(cache=True)
def _part_codes(
    words: np.ndarray, run_bits: int, need: np.ndarray, table: np.ndarray, i: int, n: int
) -> np.ndarray:
    """:func:`_hit_codes` of the words ``i:n`` (into a buffer grown by doubling)."""
    key_mask = ~np.uint64((1 << (run_bits + 1)) - 1)
    run_mask = np.uint64((1 << run_bits) - 1)
    shift = np.uint64(64 - int(np.log2(table.size)))
    codes = np.empty(1024, dtype=np.uint64)
    k = 0
    while i < n:
        j = _key_end(words, key_mask, i, n)
        for a in range(i, j):
            for b in range(a + 1, j):
                code = _pair_code(words[a], words[b], run_mask)
                if not code:
                    continue
                slot = (code * SLOT_MIX) >> shift
                ra, rb = code >> np.uint64(32), code & np.uint64(0xFFFFFFFF)
                if table[slot] >= min(need[ra], need[rb]):
                    if k == codes.size:
                        codes = _grown(codes)
                    codes[k] = code
                    k += 1
        i = j
    return codes[:k]


@njit(cache=True)
def _grown(codes: np.ndarray) -> np.ndarray:
    grown = np.empty(2 * codes.size, dtype=codes.dtype)
    grown[: codes.size] = codes
    return grown


def bucket_pairs(
    keys: np.ndarray, docs: np.ndarray, max_bucket: int, in_prefix: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(left, right, capped)``: the pairs of every run of equal keys (entries sorted by key,
    then document), capped and prefix-filtered as in :func:`candidate_pairs` (not distinct
    across keys)."""
    return _bucket_pairs(
        np.ascontiguousarray(keys),
        np.ascontiguousarray(docs, np.int64),
        int(max_bucket),
        np.ascontiguousarray(in_prefix, np.bool_),
    )


@njit(cache=True)
def _run_starts(docs: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``docs`` starts, and its length at the end."""
    runs = 1
    for t in range(1, docs.size):
        runs += docs[t] != docs[t - 1]
    starts = np.empty(runs + 1, dtype=np.int64)
    starts[0], starts[runs] = 0, docs.size
    r = 1
    for t in range(1, docs.size):
        if docs[t] != docs[t - 1]:
            starts[r] = t
            r += 1
    return starts


@njit(cache=True)
def _bucket_pairs(
    keys: np.ndarray, docs: np.ndarray, max_bucket: int, in_prefix: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Pairs within every run of equal keys (sorted by key, then document) with at least one
    side holding the key in its prefix; a capped run pairs its first prefix holder with the
    other prefix holders."""
    n = keys.size
    total = 0
    capped = 0
    longest = 0
    i = 0
    while i < n:
        j = _run_end(keys, docs, i)
        longest = max(longest, j - i)
        m = _distinct_docs(docs, i, j)
        p = _prefix_docs(docs, in_prefix, i, j)
        if m <= max_bucket:
            total += p * (p - 1) // 2 + p * (m - p)
        else:
            total += max(p - 1, 0)
            capped += 1
        i = j
    left = np.empty(total, dtype=np.int64)
    right = np.empty(total, dtype=np.int64)
    members = np.empty(longest, dtype=np.int64)  # one run's documents, reused run by run
    flags = np.empty(longest, dtype=np.bool_)
    k = 0
    i = 0
    while i < n:
        j = _run_end(keys, docs, i)
        if j - i == 1:  # a key held once (most keys of an LSH) pairs nothing
            i = j
            continue
        m = _members(docs, in_prefix, i, j, members, flags)
        if m <= max_bucket:
            for a in range(m):
                for b in range(a + 1, m):
                    if flags[a] or flags[b]:
                        left[k] = members[a]
                        right[k] = members[b]
                        k += 1
        else:
            first = -1
            for b in range(m):
                if not flags[b]:
                    continue
                if first < 0:
                    first = members[b]
                else:
                    left[k] = first
                    right[k] = members[b]
                    k += 1
        i = j
    return left[:k], right[:k], capped


@njit(cache=True)
def _prefix_docs(docs: np.ndarray, in_prefix: np.ndarray, i: int, j: int) -> int:
    """Distinct documents of entries ``i:j`` holding the key in their prefix."""
    p = 0
    for t in range(i, j):
        if (t == i or docs[t] != docs[t - 1]) and in_prefix[t]:
            p += 1
    return p


@njit(cache=True)
def _members(
    docs: np.ndarray, in_prefix: np.ndarray, i: int, j: int, members: np.ndarray, flags: np.ndarray
) -> int:
    """How many distinct documents entries ``i:j`` (sorted) hold, written to ``members``
    with whether each holds the key in its prefix to ``flags`` (scratch of ≥ j − i)."""
    m = 0
    for t in range(i, j):
        if t == i or docs[t] != docs[t - 1]:
            members[m] = docs[t]
            flags[m] = False
            m += 1
        flags[m - 1] |= in_prefix[t]
    return m


@njit(cache=True, inline="always")
def _run_end(keys: np.ndarray, docs: np.ndarray, i: int) -> int:
    j = i + 1
    while j < keys.size and keys[j] == keys[i]:
        j += 1
    return j


@njit(cache=True, inline="always")
def _distinct_docs(docs: np.ndarray, i: int, j: int) -> int:
    m = 1
    for t in range(i + 1, j):
        m += docs[t] != docs[t - 1]
    return m
