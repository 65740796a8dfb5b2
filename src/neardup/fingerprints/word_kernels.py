"""Compiled canonical tokens → the hashes of each document's words, as lists and as sets.

A *word* here is a token of two or more code points with no ASCII digit: names, terms and
ordinary words, not numbers, years or versions (those differ between copies of one text),
and not a lone Han character (about half a Chinese word, shared by unrelated texts).

A word's hash (:func:`word_hash`) has its two lowest bits cleared. The lowest marks the
words a document uses more than once (:data:`REPEATED`): a name is repeated in the text it
names, a typo is made once. The next marks a word with a letter beyond ASCII
(:data:`LETTERED`), the same in every document. Compare words by ``hash & WORD``; the marked
and unmarked hash of one word are neighbours in a sorted set.

A document's *word list* (:func:`doc_words`) holds each of its words at least once, in the
order met, without sorting: a word met again while a small table of recent words still
holds it is not written again but marks its first entry :data:`REPEATED`; a word met again
after that is written again. Counting the documents that hold a word needs no more than
that. Its *word set* (:func:`word_sets_of`) is the list sorted and made distinct, a word
marked when an entry of it was or when it was written twice.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from neardup.fingerprints.hash_kernels import _r64, _xxh3_64_inline
from neardup.fingerprints.shingle_kernels import slide_left, sort_into

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


# bump when word_hash changes: the hashed word tables kept on disk are made again
WORD_HASH_VERSION = 2
# the table of recent words of doc_words: slots, and the shift to a slot from a hash
RECENT_BITS = 11
_RECENT_SHIFT = np.uint64(64 - RECENT_BITS)
# the word hash of a token of up to 8 bytes: murmur3's 64-bit finalizer (a bijection) of its
# bytes, its length and the seed
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_LENGTH = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)

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
    x = _short_bytes(buf, lo, n)
    if x & _HIGH:
        return 1
    # a byte is a digit when it is 0x30..0x39: XOR 0x30 puts those (and only those) under 10,
    # and a byte's high bit, set first, survives subtracting 10 unless it was under 10; the
    # bytes past the token are 0 (XOR 0x30: 0x30, not under 10)
    digits = ~(((x ^ _ZEROS) | _HIGH) - _TENS) & _HIGH
    return -1 if digits or n < 2 else 0


@njit(cache=True, inline="always")
def _short_bytes(buf: np.ndarray, lo: int, n: int) -> np.uint64:
    """The ``n`` ≤ 8 bytes at ``buf[lo]`` (8 bytes readable there) as one 64-bit word, the
    bytes past them zero."""
    x = _r64(buf, lo)
    return x & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)) if n < 8 else x


@njit(cache=True, inline="always")
def _last_bytes(buf: np.ndarray, lo: int, n: int) -> np.uint64:
    """:func:`_short_bytes` of bytes too near the buffer's end to load 8 at once."""
    x = np.uint64(0)
    for i in range(n):
        x |= np.uint64(buf[lo + i]) << np.uint64(8 * i)
    return x


@njit(cache=True, inline="always")
def word_hash(buf: np.ndarray, lo: int, hi: int, seed: np.uint64) -> np.uint64:
    """The 64-bit hash of the token ``buf[lo:hi]`` as a word (``seed``: the run's). A token
    of up to 8 bytes — most words — is mixed from one 64-bit load without a branch on its
    length (a bijection of its bytes: no two such tokens of one length collide); a longer
    one is hashed by xxh3. The same token has the same hash wherever it lies."""
    n = hi - lo
    if n <= 8:
        x = _short_bytes(buf, lo, n) if lo + 8 <= buf.size else _last_bytes(buf, lo, n)
        x ^= seed ^ (np.uint64(n) * _LENGTH)
        x = (x ^ (x >> _S33)) * _MIX1
        x = (x ^ (x >> _S33)) * _MIX2
        return x ^ (x >> _S33)
    return _xxh3_64_inline(buf, lo, hi, seed)


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


@njit(cache=True, inline="always")
def recent_words() -> tuple[np.ndarray, np.ndarray]:
    """An empty table of recent words for :func:`doc_words` (one per thread): each slot's
    word and the position of its entry."""
    return np.zeros(1 << RECENT_BITS, dtype=np.uint64), np.full(1 << RECENT_BITS, -1, np.int64)


@njit(cache=True, inline="always")
def doc_words(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    t0: int,
    t1: int,
    seed: np.uint64,
    out: np.ndarray,
    at: int,
    recent: tuple[np.ndarray, np.ndarray],
) -> int:
    """Write the word list (see the module docstring) of tokens ``t0:t1`` from ``out[at]``
    (hashed with ``seed``, marked :data:`LETTERED` where they are), and :data:`CHARACTERS`
    for a text of characters; returns how many entries there are. ``recent``: a table of
    :func:`recent_words`, reused from document to document (an entry before ``at`` is of
    another document); ``out`` has room for one entry a token, and one more."""
    words, where = recent
    k, lone = at, 0
    for t in range(t0, t1):
        lo, hi = tok_starts[t], tok_ends[t]
        mark = word_mark(buf, lo, hi)
        if mark >= 0:
            h = (word_hash(buf, lo, hi, seed) & WORD) | np.uint64(mark)
            slot = np.int64(h >> _RECENT_SHIFT)
            p = where[slot]
            # without a branch: whether the word is met again is not predictable
            again = (p >= at) & (words[slot] == h)
            out[k] = h
            entry = p if again else k
            out[entry] |= REPEATED if again else np.uint64(0)
            words[slot] = h
            where[slot] = entry
            k += 1 - np.int64(again)
        elif is_character(buf, lo, hi):
            lone += 1
    if lone >= LONE_CHARACTERS:
        out[k] = CHARACTERS
        k += 1
    return k - at


def word_lists(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    tok_offsets: np.ndarray,
    seed: np.uint64,
    parts: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)``: every document's word list (:func:`doc_words`, hashed with
    ``seed``), ``values[offsets[d]:offsets[d + 1]]``; made in ``parts`` runs of documents,
    each through its own table of recent words (0: four a thread)."""
    parts = max(1, min(tok_offsets.size - 1, parts or 4 * numba.get_num_threads()))
    return _word_lists(buf, tok_starts, tok_ends, tok_offsets, seed, parts)


@njit(cache=True, parallel=True, nogil=True)
def _word_lists(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    tok_offsets: np.ndarray,
    seed: np.uint64,
    parts: int,
) -> tuple[np.ndarray, np.ndarray]:
    n = tok_offsets.size - 1
    room = np.zeros(n + 1, dtype=np.int64)  # a document's tokens, and one more
    room[1:] = np.cumsum(tok_offsets[1:] - tok_offsets[:-1] + 1)
    out = np.empty(room[n], dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    for p in prange(parts):
        recent = recent_words()
        for d in range(p * n // parts, (p + 1) * n // parts):
            counts[d] = doc_words(
                buf, tok_starts, tok_ends, tok_offsets[d], tok_offsets[d + 1], seed, out,
                room[d], recent,
            )  # fmt: skip
    return _packed(out, room, counts)


@njit(cache=True)
def _packed(
    values: np.ndarray, room: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``counts[d]`` values of each segment ``values[room[d]:room[d + 1]]``, packed
    to the left in place, and their offsets."""
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    for d in range(counts.size):
        slide_left(values, room[d], offsets[d], counts[d])
    return values[: offsets[counts.size]], offsets


@njit(cache=True, parallel=True, nogil=True)
def word_sets_of(values: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sets, set_offsets)``: the word set of each document's word list (or set)
    ``values[offsets[d]:offsets[d + 1]]``: sorted, distinct, a word :data:`REPEATED` when an
    entry of it was or when the list holds it twice. ``values`` is left as it was."""
    n = offsets.size - 1
    work = np.empty(values.size, dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        lo, hi = offsets[d], offsets[d + 1]
        if hi > lo:
            sort_into(values[lo:hi], hi - lo, work, lo, np.empty(2 * (hi - lo) + 1, np.int64))
            counts[d] = distinct_words(work, lo, hi - lo)
    return _packed(work, offsets, counts)


@njit(cache=True)
def token_word_hashes(
    buf: np.ndarray, tok_starts: np.ndarray, tok_ends: np.ndarray, seed: np.uint64
) -> np.ndarray:
    """Every token's :func:`word_hash` (``& WORD``), word or not: to spell a word set out."""
    out = np.empty(tok_starts.size, dtype=np.uint64)
    for t in range(tok_starts.size):
        out[t] = word_hash(buf, tok_starts[t], tok_ends[t], seed) & WORD
    return out


def word_sets(
    buf: np.ndarray,
    tok_starts: np.ndarray,
    tok_ends: np.ndarray,
    tok_offsets: np.ndarray,
    seed: np.uint64,
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)``: every document's word set (hashed with ``seed``),
    ``values[offsets[d]:offsets[d + 1]]``, sorted and distinct, those it uses more than once
    marked :data:`REPEATED`."""
    return word_sets_of(*word_lists(buf, tok_starts, tok_ends, tok_offsets, seed))


@njit(cache=True, inline="always")
def distinct_words(values: np.ndarray, lo: int, n: int) -> int:
    """The sorted word hashes ``values[lo:lo + n]`` made distinct in place, a word met more
    than once or marked in any entry marked :data:`REPEATED`; returns how many there are."""
    k = lo
    for i in range(lo + 1, lo + n):
        if values[i] & UNREPEATED != values[k] & UNREPEATED:
            k += 1
            values[k] = values[i]
        else:
            values[k] |= REPEATED
    return k + 1 - lo
