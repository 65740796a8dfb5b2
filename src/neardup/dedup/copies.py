"""Documents with identical fingerprint sets, and pair measures worked out once per distinct
pair of sets.

Corpora repeat documents (a licence in every package, a page mirrored): every candidate pair
of a copy repeats the merge walk of the same pair of sets. Each set's hash is taken while the
fingerprints are in memory; sets of equal hashes are compared exactly, and each copy names the
first document of its set. A per-pair kernel then runs once per distinct pair of sets (the
pairs of documents without copies as they are), and its answers are spread back: the same
answers, without the repeated walks.

The candidates' counted pairs (:mod:`neardup.dedup.candidates`) count each pair's shared
keys among its two documents' entries alone, and a copy's entries are its set's first's: a
copy pairs with any other document as the first does, and any two copies of a set as the
first and one copy do. So only those two stand for a set there (:func:`standing_for`), and
the pairs they make are spread to every document of their sets (:func:`spread_pairs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neardup.dedup import copy_kernels as _k
from neardup.fingerprints.intersect_kernels import shared_counts
from neardup.util.arrays import run_starts, split_pair_codes, unique, unordered_pair_codes

__all__ = [
    "Copies",
    "find_copies",
    "per_distinct_pair",
    "set_hashes",
    "spread_pairs",
    "standing_for",
]

set_hashes = _k.set_hashes


@dataclass(frozen=True, slots=True, eq=False)
class Copies:
    """Per document: the first document with the same set (itself if none earlier), and
    whether any other document has its set."""

    first: np.ndarray
    copied: np.ndarray


def find_copies(values: np.ndarray, offsets: np.ndarray, hashes: np.ndarray) -> Copies | None:
    """The documents of ``values[offsets[d]:offsets[d + 1]]`` whose sets are identical, from
    each set's hash (:func:`set_hashes`), compared exactly; None when no two are alike."""
    n = offsets.size - 1
    order = np.argsort(hashes, kind="stable")  # equal hashes by document, the first first
    ordered = hashes[order]
    starts = run_starts(ordered)
    if starts.size == n:
        return None
    runs = np.repeat(starts, np.diff(np.r_[starts, n]))  # each position's run start
    later = np.flatnonzero(runs != np.arange(n))
    docs, heads = order[later], order[runs[later]]
    sizes = np.diff(offsets)
    same = (sizes[heads] == sizes[docs]) & (
        shared_counts(values, offsets, heads, docs) == sizes[docs]
    )  # equal sizes, every value shared: the same set
    if not same.any():
        return None
    first = np.arange(n, dtype=np.int64)
    first[docs[same]] = heads[same]
    copied = np.zeros(n, dtype=np.bool_)
    copied[docs[same]] = True
    copied[heads[same]] = True
    return Copies(first, copied)


def per_distinct_pair(
    kernel: Callable[[np.ndarray, np.ndarray], np.ndarray],
    left: np.ndarray,
    right: np.ndarray,
    copies: Copies | None,
) -> np.ndarray:
    """``kernel(left, right)`` — a per-pair answer that depends only on the two sets and not
    on their order — worked out once per distinct pair of sets."""
    if copies is None or left.size == 0:
        return kernel(left, right)
    involved = copies.copied[left] | copies.copied[right]
    some = np.flatnonzero(involved)
    if some.size < 2:
        return kernel(left, right)
    codes = unordered_pair_codes(copies.first[left[some]], copies.first[right[some]])
    order = np.argsort(codes)
    ordered = codes[order]
    starts = run_starts(ordered)
    if starts.size == some.size:
        return kernel(left, right)
    rest = np.flatnonzero(~involved)
    distinct_l, distinct_r = split_pair_codes(ordered[starts])
    answers = kernel(
        np.concatenate((left[rest], distinct_l)), np.concatenate((right[rest], distinct_r))
    )
    group = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]])
    out = np.empty(left.size, dtype=answers.dtype)
    out[rest] = answers[: rest.size]
    out[some[order]] = answers[rest.size + group]
    return out


def standing_for(first: np.ndarray) -> np.ndarray:
    """Per document (``first``: :attr:`Copies.first`), whether it stands for its set among
    the counted pairs: the set's first document and its earliest copy."""
    standing = first == np.arange(first.size)
    copies = np.flatnonzero(~standing)  # increasing: a set's earliest copy comes first
    sets = first[copies]
    order = np.argsort(sets, kind="stable")
    standing[copies[order[run_starts(sets[order])]]] = True
    return standing


def spread_pairs(codes: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The sorted distinct pair codes of every two documents of the sets of each pair of
    ``codes`` (documents standing for their sets, :func:`standing_for`): a pair of two
    sets' documents gives every document of one with every document of the other; a set's
    first with its copy gives every two documents of the set."""
    left, right = split_pair_codes(codes)
    set_l, set_r = first[left], first[right]
    members = np.argsort(first, kind="stable")  # documents grouped by set, sets in order
    size = np.bincount(first, minlength=first.size)  # documents of the set of a first
    start = np.cumsum(size) - size  # where a set's documents begin in ``members``
    ways = size[set_l] * size[set_r]
    pair = np.repeat(np.arange(codes.size), ways)
    k = np.arange(int(ways.sum())) - np.repeat(np.cumsum(ways) - ways, ways)
    across = size[set_r][pair]
    a = members[start[set_l][pair] + k // across]
    b = members[start[set_r][pair] + k % across]
    apart = a != b
    return unique(unordered_pair_codes(a[apart], b[apart]))
