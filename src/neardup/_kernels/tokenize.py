"""Compiled tokenizer: code points of many documents → one UTF-8 buffer of canonical tokens.

Each document's tokens are written to the buffer joined by one space (or by nothing, for
character shingles of Chinese), stop words dropped on the way. Token boundaries come from a
per-code-point class table built once in Python (see ``neardup.text.chars``), so the kernel
knows nothing about Unicode categories itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

SEPARATOR = np.uint8(0)  # ends a token (space, punctuation...)
TOKEN_CHAR = np.uint8(1)  # part of a token
IGNORABLE = np.uint8(2)  # dropped without ending a token (soft hyphen, zero-width joiner...)

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_SPACE = np.uint8(0x20)


@njit(cache=True, inline="always")
def _utf8_len(cp: np.uint32) -> int:
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


@njit(cache=True, inline="always")
def _put_utf8(out: np.ndarray, pos: int, cp: np.uint32) -> int:
    c = np.uint32(cp)
    if c < 0x80:
        out[pos] = np.uint8(c)
        return pos + 1
    if c < 0x800:
        out[pos] = np.uint8(0xC0 | (c >> 6))
        out[pos + 1] = np.uint8(0x80 | (c & 0x3F))
        return pos + 2
    if c < 0x10000:
        out[pos] = np.uint8(0xE0 | (c >> 12))
        out[pos + 1] = np.uint8(0x80 | ((c >> 6) & 0x3F))
        out[pos + 2] = np.uint8(0x80 | (c & 0x3F))
        return pos + 3
    out[pos] = np.uint8(0xF0 | (c >> 18))
    out[pos + 1] = np.uint8(0x80 | ((c >> 12) & 0x3F))
    out[pos + 2] = np.uint8(0x80 | ((c >> 6) & 0x3F))
    out[pos + 3] = np.uint8(0x80 | (c & 0x3F))
    return pos + 4


@njit(cache=True)
def token_hash(cps: np.ndarray) -> np.uint64:
    """FNV-1a over a token's code points: the key of the stop-word table (internal only)."""
    h = _FNV_OFFSET
    for c in cps:
        h = (h ^ np.uint64(c)) * _FNV_PRIME
    return h


@njit(cache=True, inline="always")
def _is_stop(h: np.uint64, stops: np.ndarray) -> bool:
    if stops.size == 0:
        return False
    i = np.searchsorted(stops, h)
    return i < stops.size and stops[i] == h


@njit(cache=True)
def _scan(cps, lo, hi, table, stops, joiner, out, pos, tok_s, tok_e, tpos, write):  # noqa: ANN001, ANN202
    """Tokenize cps[lo:hi]; count (write=False) or emit (write=True) kept tokens.

    Returns (tokens kept, bytes written or needed).
    """
    ntok = 0
    start_pos = pos
    i = lo
    while i < hi:
        if table[cps[i]] != TOKEN_CHAR:
            i += 1
            continue
        # a token starts at i; find its end, hashing and sizing the kept code points
        j = i
        h = _FNV_OFFSET
        nbytes = 0
        while j < hi:
            cls = table[cps[j]]
            if cls == SEPARATOR:
                break
            if cls == TOKEN_CHAR:
                h = (h ^ np.uint64(cps[j])) * _FNV_PRIME
                nbytes += _utf8_len(cps[j])
            j += 1
        if not _is_stop(h, stops):
            if ntok > 0 and joiner:
                if write:
                    out[pos] = _SPACE
                pos += 1
            if write:
                tok_s[tpos + ntok] = pos
                p = pos
                for k in range(i, j):
                    if table[cps[k]] == TOKEN_CHAR:
                        p = _put_utf8(out, p, cps[k])
                tok_e[tpos + ntok] = p
            pos += nbytes
            ntok += 1
        i = j
    return ntok, pos - start_pos


@njit(cache=True, parallel=True)
def tokenize_batch(cps, starts, ends, table, stops, joiners):  # noqa: ANN001, ANN201
    """Tokenize documents cps[starts[d]:ends[d]] into one buffer.

    Returns ``(buf, doc_offsets, tok_starts, tok_ends, tok_offsets)``: document d's canonical
    text is ``buf[doc_offsets[d]:doc_offsets[d + 1]]`` and its tokens are the byte spans
    ``tok_starts[t]:tok_ends[t]`` for t in ``tok_offsets[d]:tok_offsets[d + 1]``.
    """
    n = starts.size
    counts = np.zeros(n, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    dummy_u8 = np.empty(0, dtype=np.uint8)
    dummy_i64 = np.empty(0, dtype=np.int64)
    for d in prange(n):
        c, s = _scan(
            cps, starts[d], ends[d], table, stops, joiners[d],
            dummy_u8, 0, dummy_i64, dummy_i64, 0, False,
        )
        counts[d] = c
        sizes[d] = s
    doc_offsets = np.zeros(n + 1, dtype=np.int64)
    tok_offsets = np.zeros(n + 1, dtype=np.int64)
    doc_offsets[1:] = np.cumsum(sizes)
    tok_offsets[1:] = np.cumsum(counts)
    buf = np.empty(doc_offsets[n], dtype=np.uint8)
    tok_starts = np.empty(tok_offsets[n], dtype=np.int64)
    tok_ends = np.empty(tok_offsets[n], dtype=np.int64)
    for d in prange(n):
        _scan(
            cps, starts[d], ends[d], table, stops, joiners[d],
            buf, doc_offsets[d], tok_starts, tok_ends, tok_offsets[d], True,
        )
    return buf, doc_offsets, tok_starts, tok_ends, tok_offsets
