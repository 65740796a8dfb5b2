"""Compiled canonical tokens → the sorted distinct hashes of each document's words.

A *word* here is a token of two or more code points with no ASCII digit: names, terms and
ordinary words, not numbers, years or versions (those differ between copies of one text),
and not a lone Han character (about half a Chinese word, shared by unrelated texts).

A word's hash has its two lowest bits cleared. The lowest marks, in a word set, the words a
document uses more than once (:data:`REPEATED`): a name is repeated in the text it names, a
typo is made once. The next marks a word with a letter beyond ASCII (:data:`LETTERED`), the
same in every document. Compare words by ``hash & WORD``; the marked and unmarked hash of
one word are neighbours in a sorted set.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.fingerprints.hash_kernels import _dispatch_valid, _r64
from neardup.fingerprints.shingle_kernels import unique_per_doc
from neardup.util.arrays import run_starts

_ZERO, _NINE = np.uint8(0x30), np.uint8(0x39)
_CONTINUATION = np.uint8(0xC0)  # the top two bits of a UTF-8 continuation byte are 10
REPEATED = np.uint64(1)  # the mark of a word its document uses more than once
LETTERED = np.uint64(2)  # the mark of a word with a letter beyond ASCII
WORD = ~(REPEATED | LETTERED)  # the bits of a word's hash
_LETTERED = int(LETTERED)
UNREPEATED = ~REPEATED
# One more word stands for text in a script written without spaces (Han, kana): the set of a
# document holding LONE_CHARACTERS or more tokens of one such character (none is a word) has
# it. Never rare; it tells a translation into Chinese or Japanese (neardup.dedup.translation).
CHARACTERS = np.uint64(0x43484152_53435249) & WORD
LONE_CHARACTERS = 6


# eight bytes side by side in a 64-bit word: each byte's high bit, its digit 0, and 10
_HIGH = np.uint64(0x8080808080808080)
_ZEROS = np.uint64(0x3030303030303030)
_TENS = np.uint64(0x0A0A0A0A0A0A0A0A)


@njit(cache=True, inline="always")
def _short_ascii_mark(buf: np.ndarray, lo: int, n: int) -> int:
    """:func:`word_mark` of a token of ``n`` ≤ 8 bytes at ``buf[lo]`` (8 bytes readable
    there) when they are all ASCII: -1 (one code point, or a digit) or 0; 1 when a byte is
    not ASCII. The bytes are tested together in one 64-bit word: a loop ending where the
    token ends costs a mispredicted branch a token, more than the test itself."""
    x = _r64(buf, lo)
    x &= (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1) if n < 8 else ~np.uint64(0)
    if x & _HIGH:
        return 1
    # a byte is a digit when it is 0x30..0x39: XOR 0x30 puts those (and only those) under 10,
    # and a byte's high bit, set first, survives subtracting 10 unless it was under 10; the
    # bytes past the token are 0 (XOR 0x30: 0x30, not under 10)
    digits = ~(((x ^ _ZEROS) | _HIGH) - _TENS) & _HIGH
    return -1 if digits or n < 2 else 0


@njit(cache=True, inline="always")
def word_mark(buf: np.ndarray, lo: int, hi: int) -> int:
    """-1 unless the UTF-8 token ``buf[lo:hi]`` is a word: two or more code points, no
    ASCII digit. Else :data:`LETTERED` when it has a letter beyond ASCII (a character from
    U+00C0 to U+1FFF: accented Latin, Greek, Cyrillic, Hebrew, Arabic, Indic...) other than
    × and ÷ (not punctuation such as a curly apostrophe), 0 when not."""
    if hi - lo <= 8 and lo + 8 <= buf.size:
        short = _short_ascii_mark(buf, lo, hi - lo)
        if short <= 0:
            return short
    points, mark = 0, 0
    for i in range(lo, hi):
        b = buf[i]
        if b < 0x80:
            if _ZERO <= b <= _NINE:
                return -1
            points += 1
        elif b >= 0xC0:
            points += 1
            if 0xC3 <= b <= 0xE1 and not (
                b == 0xC3 and i + 1 < hi and (buf[i + 1] == 0x97 or buf[i + 1] == 0xB7)
            ):
                mark = _LETTERED
    return mark if points >= 2 else -1


@njit(cache=True, inline="always")
def is_character(buf: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the UTF-8 token ``buf[lo:hi]`` is one character of a script written without
    spaces: kana, Han, Hangul (U+3040 to U+D7FF, U+F900 to U+FAFF, U+20000 to U+2FFFF);
    not a punctuation mark, a symbol or an emoji."""
    size, b = hi - lo, buf[lo]
    if size == 3:
        return (0xE3 <= b <= 0xED and not (b == 0xE3 and buf[lo + 1] == 0x80)) or (
            b == 0xEF and 0xA4 <= buf[lo + 1] <= 0xAB
        )
    return size == 4 and b == 0xF0 and 0xA0 <= buf[lo + 1] <= 0xAF


@njit(cache=True, parallel=True, nogil=True)
def _word_counts(
    tok_starts: np.ndarray, tok_ends: np.ndarray, tok_offsets: np.ndarray, buf: np.ndarray
) -> np.ndarray:
    n = tok_offsets.size - 1
    counts = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        k, lone = 0, 0
        for t in range(tok_offsets[d], tok_offsets[d + 1]):
            if word_mark(buf, tok_starts[t], tok_ends[t]) >= 0:
                k += 1
            elif is_character(buf, tok_starts[t], tok_ends[t]):
                lone += 1
        counts[d] = k + (lone >= LONE_CHARACTERS)
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
    among tokens ``t0:t1`` from ``out[at]`` (marked :data:`LETTERED` where they are), and
    :data:`CHARACTERS` for a text of characters; returns how many there are."""
    kind, seed = hashing
    k, lone = at, 0
    for t in range(t0, t1):
        lo, hi = tok_starts[t], tok_ends[t]
        mark = word_mark(buf, lo, hi)
        if mark >= 0:
            out[k] = (_dispatch_valid(kind, buf, lo, hi, seed) & WORD) | np.uint64(mark)
            k += 1
        elif is_character(buf, lo, hi):
            lone += 1
    if lone >= LONE_CHARACTERS:
        out[k] = CHARACTERS
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
        if values[i] != values[k] & UNREPEATED:
            k += 1
            values[k] = values[i]
        else:
            values[k] |= REPEATED
    return k + 1 - lo


def merge_word_sets(values: np.ndarray) -> np.ndarray:
    """One word set of the concatenated word sets of a text's parts: a word is repeated when
    a part repeats it or two parts use it."""
    if not values.size:
        return values
    values = np.sort(values)
    word = values & UNREPEATED
    first = run_starts(word)
    runs = np.diff(np.r_[first, word.size])
    marked = np.bitwise_or.reduceat(values, first) & REPEATED
    return word[first] | marked | (runs > 1).astype(np.uint64)
