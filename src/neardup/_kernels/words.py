"""Compiled canonical tokens → the sorted distinct hashes of each document's words.

A *word* here is a token of two or more code points with no ASCII digit: names, terms and
ordinary words, not numbers, years or versions (those differ between copies of one text),
and not a lone Han character (about half a Chinese word, shared by unrelated texts).

A word's hash has its lowest bit cleared, and a word set marks there the words a document
uses more than once (:data:`REPEATED`): a name is repeated in the text it names, a typo is
made once. Compare words by ``hash & WORD``; the marked and unmarked hash of one word are
neighbours in a sorted set.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup._kernels.hashes import _dispatch_valid
from neardup._kernels.shingle import unique_per_doc

_ZERO, _NINE = np.uint8(0x30), np.uint8(0x39)
_CONTINUATION = np.uint8(0xC0)  # the top two bits of a UTF-8 continuation byte are 10
REPEATED = np.uint64(1)  # the mark of a word its document uses more than once
WORD = ~REPEATED  # the bits of a word's hash


@njit(cache=True, inline="always")
def is_word(buf: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the UTF-8 token ``buf[lo:hi]`` has two or more code points and no digit."""
    points = 0
    for i in range(lo, hi):
        b = buf[i]
        if _ZERO <= b <= _NINE:
            return False
        if b & _CONTINUATION != 0x80:
            points += 1
    return points >= 2


@njit(cache=True, parallel=True, nogil=True)
def _word_counts(
    tok_starts: np.ndarray, tok_ends: np.ndarray, tok_offsets: np.ndarray, buf: np.ndarray
) -> np.ndarray:
    n = tok_offsets.size - 1
    counts = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        k = 0
        for t in range(tok_offsets[d], tok_offsets[d + 1]):
            if is_word(buf, tok_starts[t], tok_ends[t]):
                k += 1
        counts[d] = k
    return counts


@njit(cache=True, inline="always")
def doc_words(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    t0: int,
    t1: int,
    hashing: tuple[int, np.uint64],
    out: np.ndarray,
    at: int,
) -> int:
    """Write the hashes (``hashing``: kind and seed of ``hash_span``, checked) of the words
    among tokens ``t0:t1`` from ``out[at]``; returns how many there are."""
    kind, seed = hashing
    k = at
    for t in range(t0, t1):
        lo, hi = tok_starts[t], tok_ends[t]
        if is_word(buf, lo, hi):
            out[k] = _dispatch_valid(kind, buf, lo, hi, seed) & WORD
            k += 1
    return k - at


@njit(cache=True, parallel=True, nogil=True)
def _word_hashes(
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    tok_offsets: np.ndarray,
    buf: np.ndarray,
    offsets: np.ndarray,
    hashing: tuple[int, np.uint64],
) -> np.ndarray:
    n = tok_offsets.size - 1
    out = np.empty(offsets[n], dtype=np.uint64)
    for d in prange(n):
        doc_words(
            buf, tok_starts, tok_ends, tok_offsets[d], tok_offsets[d + 1], hashing, out, offsets[d]
        )
    return out


def word_sets(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    tok_offsets: np.ndarray,
    kind: int,
    seed: np.uint64,
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)``: every document's word hashes (``kind``, ``seed``: of
    ``hash_span``, checked), sorted and distinct, ``values[offsets[d]:offsets[d + 1]]``,
    those it uses more than once marked :data:`REPEATED`."""
    offsets = np.zeros(tok_offsets.size, dtype=np.int64)
    np.cumsum(_word_counts(tok_starts, tok_ends, tok_offsets, buf), out=offsets[1:])
    hashes = _word_hashes(tok_starts, tok_ends, tok_offsets, buf, offsets, (kind, seed))
    values, offsets, times = unique_per_doc(hashes, offsets, overwrite=True)
    values |= (times > 1).astype(np.uint64)
    return values, offsets


@njit(cache=True, inline="always")
def distinct_words(values: np.ndarray, lo: int, n: int) -> int:
    """The sorted word hashes ``values[lo:lo + n]`` made distinct in place, a word met more
    than once marked :data:`REPEATED`; returns how many there are."""
    k = lo
    for i in range(lo + 1, lo + n):
        if values[i] != values[k] & WORD:
            k += 1
            values[k] = values[i]
        else:
            values[k] |= REPEATED
    return k + 1 - lo


def merge_word_sets(values: np.ndarray) -> np.ndarray:
    """One word set of the concatenated word sets of a text's parts: a word is repeated when
    a part repeats it or two parts use it."""
    values = np.sort(values)
    word = values & WORD
    first = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
    runs = np.diff(np.r_[first, word.size])
    marked = np.bitwise_or.reduceat(values, first) & REPEATED if values.size else word
    return word[first] | marked | (runs > 1).astype(np.uint64)
