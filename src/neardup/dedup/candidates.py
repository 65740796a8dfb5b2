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

**Templates.** When verification later discounts template shingles (held by many documents,
:mod:`neardup.dedup.templates`), a pair is kept on its *content* containment, and the discount
may raise it: plain containment alone would need the prefix for the lowest score the discount
can raise (``MIN_PLAIN``), half of every document. But template shingles are always among the
*frequent* keys (held by ≥ ``frequent`` documents; their counts are at least that), which
come last in the order. So when a
document's prefix for the score stays within its rarer keys, it is also the start of its
content in that order, whatever set of frequent keys turns out to be template — and it holds
the content prefix, which is never longer. Only a document whose prefix reaches its frequent
keys takes the longer prefix for ``fallback_score`` (the plain containment any kept pair has).

The same function serves a corpus (keys of all documents) and a shard of one (keys hashed
to shards first), which is how it maps onto Spark's group-by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from neardup._kernels import threads_for
from neardup.arrays import pair_codes, split_pair_codes, unique
from neardup.dedup.prefix import MAX_COUNT, key_counts, pairing_entries, prefix_flags, table_bits
from neardup.errors import ConfigError

DEFAULT_MAX_BUCKET = 50  # measured: the bench loses nothing at 30; real clusters chain via stars


@dataclass(frozen=True, slots=True, eq=False)
class Candidates:
    """Distinct candidate pairs ``left[i] < right[i]`` and how many buckets were capped."""

    left: np.ndarray
    right: np.ndarray
    capped_buckets: int

    def __len__(self) -> int:
        return self.left.size


def candidate_pairs(
    docs: np.ndarray,
    keys: np.ndarray,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    prefix_score: float = 0.0,
    frequent: int = 0,
    fallback_score: float | None = None,
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
    """
    if max_bucket < 2:
        raise ConfigError(f"max_bucket={max_bucket!r} must be at least 2")
    if not 0.0 <= prefix_score <= 1.0:
        raise ConfigError(f"prefix_score={prefix_score!r} must be in [0, 1]")
    fallback = prefix_score if fallback_score is None or frequent <= 0 else fallback_score
    if not 0.0 <= fallback <= prefix_score:
        raise ConfigError(f"fallback_score={fallback_score!r} must be in [0, prefix_score]")
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    docs = np.ascontiguousarray(docs)
    if prefix_score > 0.0 and docs.size:
        if docs.size > 1 and not bool(np.all(docs[1:] >= docs[:-1])):  # group by document
            by_doc = np.argsort(docs, kind="stable")
            docs, keys = docs[by_doc], keys[by_doc]
        starts = _run_starts(docs)
        runs, keys, in_prefix = _prefix_entries(starts, keys, prefix_score, frequent, fallback)
        docs = docs[starts[runs]]
    else:
        in_prefix = np.ones(docs.size, dtype=np.bool_)
    return _shared_key_pairs(docs, keys, in_prefix, max_bucket)


def prefix_candidates(
    offsets: np.ndarray,
    keys: np.ndarray,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    prefix_score: float = 0.0,
    frequent: int = 0,
    fallback_score: float | None = None,
) -> Candidates:
    """:func:`candidate_pairs` of keys laid out by document — document ``d``'s distinct keys
    are ``keys[offsets[d]:offsets[d+1]]`` (the fingerprints of a run) — with no array of
    document ids: the same pairs, less memory."""
    if prefix_score <= 0.0:
        docs = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
        return candidate_pairs(docs, keys, max_bucket)
    fallback = prefix_score if fallback_score is None or frequent <= 0 else fallback_score
    empty = (np.empty(0, np.int64), np.empty(0, np.uint64))
    candidate_pairs(*empty, max_bucket, prefix_score, frequent, fallback)  # parameter checks
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    docs, keys, in_prefix = _prefix_entries(offsets, keys, prefix_score, frequent, fallback)
    return _shared_key_pairs(docs, keys, in_prefix, max_bucket)


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


def _prefix_entries(
    starts: np.ndarray, keys: np.ndarray, score: float, frequent: int, fallback: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries that can make a pair — the index of their document (run ``d`` is
    ``keys[starts[d]:starts[d+1]]``), their key — and whether each is in its document's
    prefix (:mod:`neardup.dedup.prefix`)."""
    bits = table_bits(keys.size)
    counts = key_counts(keys, bits)
    limit = min(frequent, MAX_COUNT) if frequent > 0 else MAX_COUNT + 1
    with threads_for(keys.size):  # a parallel region is not worth it for a few keys
        flags = prefix_flags(starts, keys, counts, bits, score, limit, fallback)
    keep = np.flatnonzero(pairing_entries(keys, flags, counts, bits))
    del counts
    runs = np.searchsorted(starts, keep, side="right") - 1
    return runs, keys[keep], flags[keep]


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
    i = 0
    while i < n:
        j = _run_end(keys, docs, i)
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
    k = 0
    i = 0
    while i < n:
        j = _run_end(keys, docs, i)
        members, flags = _members(docs, in_prefix, i, j)
        m = members.size
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
    docs: np.ndarray, in_prefix: np.ndarray, i: int, j: int
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct documents of entries ``i:j`` (sorted) and whether each holds it in prefix."""
    members = np.empty(j - i, dtype=np.int64)
    flags = np.zeros(j - i, dtype=np.bool_)
    m = 0
    for t in range(i, j):
        if t == i or docs[t] != docs[t - 1]:
            members[m] = docs[t]
            m += 1
        flags[m - 1] |= in_prefix[t]
    return members[:m], flags[:m]


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
