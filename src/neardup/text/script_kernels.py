"""Compiled letter counts per script (Han, Cyrillic, Latin) and character counts for every
document of a batch.

The ranges are those of :mod:`neardup.text.script`; counting over the batch's UTF-8
in one compiled pass is what lets language detection cost nothing per document.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.text.tokenize_kernels import decode_utf8

HAN, CYRILLIC, LATIN = 0, 1, 2


@njit(cache=True, inline="always")
def _within(c: np.uint32, lo: int, size: int) -> np.uint32:
    """1 if lo <= c < lo + size (one unsigned comparison, no branch)."""
    return np.uint32((c - np.uint32(lo)) < np.uint32(size))


_U64 = np.uint64
_HIGH_BITS = _U64(0x8080808080808080)
_ONES = _U64(0x0101010101010101)


@njit(cache=True, inline="always")
def _load8(text: np.ndarray, i: int) -> np.uint64:
    """text[i:i + 8] as a little-endian word (LLVM fuses the byte loads into one)."""
    p = _U64(i)  # unsigned: no negative-index wraparound code
    word = _U64(0)
    for k in range(8):
        word |= _U64(text[p + _U64(k)]) << _U64(8 * k)
    return word


@njit(cache=True, inline="always")
def _ascii_letters(word: np.uint64) -> int:
    """ASCII letters among 8 ASCII bytes (high bits clear), without a branch per byte: a
    byte x (case bit set) is a letter iff 0x61 <= x <= 0x7A; x + 0x1F and x + 0x05 carry
    into bit 7 exactly at those bounds, and never out of the byte."""
    x = word | _U64(0x2020202020202020)
    at_least_a = x + _U64(0x1F1F1F1F1F1F1F1F)
    past_z = x + _U64(0x0505050505050505)
    letters = (at_least_a & ~past_z & _HIGH_BITS) >> _U64(7)
    return np.int64((letters * _ONES) >> _U64(56))  # the sum of the 8 bytes (each 0 or 1)


@njit(cache=True)
def _count(text: np.ndarray, lo: int, hi: int) -> tuple[int, int, int]:
    """Han, Cyrillic and Latin letters of the UTF-8 bytes text[lo:hi]."""
    han = cyrillic = latin = 0
    i = lo
    while i < hi:
        if i + 8 <= hi:
            word = _load8(text, i)
            if word & _HIGH_BITS == 0:  # 8 ASCII bytes: their letters at once
                latin += _ascii_letters(word)
                i += 8
                continue
        b0 = text[i]
        if b0 < 0x80:  # ASCII: a letter or nothing
            latin += _within(np.uint32(b0) | np.uint32(0x20), 0x61, 26)
            i += 1
            continue
        code, width = decode_utf8(text, i)
        i += width
        c = np.uint32(code)
        latin += (
            _within(c | np.uint32(0x20), 0x61, 26)
            + _within(c, 0xC0, 0x190)
            - _within(c, 0xD7, 1)
            - _within(c, 0xF7, 1)
            + _within(c, 0x1E00, 0x100)
        )
        cyrillic += (
            _within(c, 0x400, 0x130)
            + _within(c, 0x1C80, 0x10)
            + _within(c, 0x2DE0, 0x20)
            + _within(c, 0xA640, 0x60)
        )
        han += (
            _within(c, 0x3400, 0x19C0)
            + _within(c, 0x4E00, 0x5200)
            + _within(c, 0xF900, 0x200)
            + _within(c, 0x20000, 0xA6E0)
            + _within(c, 0x2A700, 0x4760)
            + _within(c, 0x2F800, 0x220)
            + _within(c, 0x30000, 0x23B0)
        )
    return han, cyrillic, latin


@njit(cache=True, parallel=True, nogil=True)
def script_counts(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(n_docs, 3) letter counts: Han, Cyrillic, Latin, of the UTF-8 text[starts[d]:ends[d]]."""
    n = starts.size
    out = np.zeros((n, 3), dtype=np.int64)
    for d in prange(n):
        out[d, HAN], out[d, CYRILLIC], out[d, LATIN] = _count(text, starts[d], ends[d])
    return out


@njit(cache=True, parallel=True, nogil=True)
def char_counts(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Characters (code points) of each UTF-8 text ``text[starts[d]:ends[d]]``: its bytes
    that do not continue a character — what ``len`` of the decoded string gives."""
    n = starts.size
    out = np.zeros(n, dtype=np.int64)
    for d in prange(n):
        chunk = text[starts[d] : ends[d]]  # indexed from 0: vector loads, not byte inserts
        count = 0
        for i in range(chunk.size):
            count += (chunk[i] & 0xC0) != 0x80
        out[d] = count
    return out
