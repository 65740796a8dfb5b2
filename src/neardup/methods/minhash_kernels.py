"""Compiled kernels of MinHash, LSH banding and super/megashingles (docs/methods.md).

Permutation family (multiply-shift, Dietzfelbinger): ``h_i(x) = ((a_i·x + b_i) mod 2**64) >> 32``
with odd ``a_i``, applied to 64-bit shingle fingerprints; a signature keeps, per function, the
minimum over a document's fingerprints. Minima are below 2**32, so ``EMPTY`` (all ones) marks a
document without shingles unambiguously.

Loop order: a document's fingerprints are few kilobytes, so for every block of eight functions
the kernel runs once over a tile of the fingerprints keeping eight running minima in
registers; LLVM vectorizes that loop across fingerprints (a min-reduction, no stores, no
gathers: the tile is a view indexed from 0). The minima are of the 64-bit images, shifted
once at the end (see ``_doc_minima``). On this project's machine (AVX-512, 1 thread, 20k docs ×
445 fingerprints, 91 functions) it runs ~140 M fingerprints/s, against 52 M with four
functions a pass, a shift per image and a gather of the fingerprints (session 7), and 8 M for
a loop over the functions per fingerprint with a running-min array.

Keys (LSH bands, supershingles, megashingles) hash a run of 64-bit words with a tag saying
which band/group/pair they come from — a definition frozen here (stored keys depend on it)::

    mix64(x)  = splitmix64's finalizer (x ^= x>>30; x *= 0xBF58476D1CE4E5B9; x ^= x>>27;
                x *= 0x94D049BB133111EB; x ^= x>>31)
    h = mix64(tag + 0x9E3779B97F4A7C15)
    for v in words: h = mix64(rotl(h, 23) ^ v)

For fixed words every step is a bijection of ``h``: runs that differ only in their tag, or
only in one word, never collide; other collisions have probability ~2**-64.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "EMPTY",
    "TAG_BAND",
    "TAG_MEGA",
    "TAG_SUPER",
    "count_equal",
    "equal_fraction",
    "hash_words",
    "minhash_matrix",
    "pair_hashes",
    "run_hashes",
]

_U64 = np.uint64
EMPTY = _U64(0xFFFFFFFFFFFFFFFF)  # every value of an empty document's signature
_S32 = _U64(32)
_S30 = _U64(30)
_S27 = _U64(27)
_S31 = _U64(31)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_ROT = _U64(23)
_ROT_BACK = _U64(41)
_TILE = 2048  # fingerprints per pass (16 KiB: stays in L1 while 4 functions run over it)

# Tag namespaces: the high 32 bits of a tag say what kind of key it is.
TAG_BAND = 0  # MinHash LSH band j: tag = j
TAG_SUPER = 1 << 32  # supershingle of group g: tag = TAG_SUPER + g
TAG_MEGA = 2 << 32  # megashingle of supershingle pair p (lexicographic i < j): TAG_MEGA + p


@njit(cache=True, inline="always")
def _min_image(m: np.uint64, a: np.uint64, x: np.uint64, b: np.uint64) -> np.uint64:
    return min(m, a * x + b)


@njit(cache=True)
def _doc_minima(
    values: np.ndarray, start: int, end: int, a: np.ndarray, b: np.ndarray, out: np.ndarray
) -> None:
    """Write the k minima of ``values[start:end]`` into ``out`` (EMPTY if the span is empty).

    The running minima are of the full 64-bit images ``a·x + b``, shifted once at the end:
    ``x ↦ x >> 32`` is monotone, so the minimum of the shifted images is the shifted minimum
    (bit for bit), and the loop does a multiply, an add and a min per value and function.
    """
    k = a.size
    k8 = k - k % 8
    for i in range(k):
        out[i] = EMPTY
    if end <= start:
        return
    for t in range(start, end, _TILE):
        tile = values[t : min(t + _TILE, end)]  # a view indexed from 0: contiguous loads
        for i in range(0, k8, 8):
            a0, a1, a2, a3, a4, a5, a6, a7 = a[i : i + 8]
            b0, b1, b2, b3, b4, b5, b6, b7 = b[i : i + 8]
            m0, m1, m2, m3, m4, m5, m6, m7 = out[i : i + 8]
            for j in range(tile.size):
                x = tile[j]
                m0, m1 = _min_image(m0, a0, x, b0), _min_image(m1, a1, x, b1)
                m2, m3 = _min_image(m2, a2, x, b2), _min_image(m3, a3, x, b3)
                m4, m5 = _min_image(m4, a4, x, b4), _min_image(m5, a5, x, b5)
                m6, m7 = _min_image(m6, a6, x, b6), _min_image(m7, a7, x, b7)
            out[i : i + 8] = (m0, m1, m2, m3, m4, m5, m6, m7)
        for i in range(k8, k):
            ai, bi, m = a[i], b[i], out[i]
            for j in range(tile.size):
                m = _min_image(m, ai, tile[j], bi)
            out[i] = m
    for i in range(k):
        out[i] >>= _S32


@njit(parallel=True, cache=True)
def minhash_matrix(
    values: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """``(n_docs, k)`` uint64 minima of every document's fingerprints under the k functions.

    ``values`` uint64 and ``offsets`` int64 (n+1) as in a FingerprintBatch; ``a`` (odd) and
    ``b`` uint64[k]. Parallel over documents.
    """
    n = offsets.size - 1
    out = np.empty((n, a.size), dtype=np.uint64)
    for d in prange(n):
        _doc_minima(values, offsets[d], offsets[d + 1], a, b, out[d])
    return out


@njit(cache=True, inline="always")
def _mix64(x: np.uint64) -> np.uint64:
    x ^= x >> _S30
    x *= _M1
    x ^= x >> _S27
    x *= _M2
    return x ^ (x >> _S31)


@njit(cache=True, inline="always")
def _rotl(h: np.uint64) -> np.uint64:
    return (h << _ROT) | (h >> _ROT_BACK)


@njit(cache=True)
def hash_words(words: np.ndarray, start: int, end: int, tag: np.uint64) -> np.uint64:
    """The frozen 64-bit key of ``words[start:end]`` under ``tag`` (see the module docstring)."""
    h = _mix64(_U64(tag) + _GOLDEN)
    for j in range(start, end):
        h = _mix64(_rotl(h) ^ words[j])
    return h


@njit(parallel=True, cache=True)
def run_hashes(matrix: np.ndarray, runs: int, width: int, tag: np.uint64) -> np.ndarray:
    """``(n, runs)`` keys: key j of row d hashes ``matrix[d, j*width:(j+1)*width]``, tag+j.

    LSH bands (``tag=TAG_BAND``) and supershingles (``tag=TAG_SUPER``). Rows whose first value
    is EMPTY (empty documents) get EMPTY keys.
    """
    n = matrix.shape[0]
    out = np.empty((n, runs), dtype=np.uint64)
    for d in prange(n):
        row = matrix[d]
        empty = row[0] == EMPTY
        for j in range(runs):
            key = hash_words(row, j * width, (j + 1) * width, _U64(tag) + _U64(j))
            out[d, j] = EMPTY if empty else key
    return out


@njit(parallel=True, cache=True)
def pair_hashes(supers: np.ndarray, tag: np.uint64) -> np.ndarray:
    """``(n, g(g-1)/2)`` megashingles: the key of every pair ``i < j`` of a row's g values.

    Pairs in lexicographic order (0,1), (0,2), …, (g-2,g-1); pair p is hashed with tag+p
    (the value of ``hash_words([s_i, s_j], 0, 2, tag + p)``).
    Rows whose first value is EMPTY get EMPTY keys.
    """
    n, g = supers.shape
    out = np.empty((n, g * (g - 1) // 2), dtype=np.uint64)
    for d in prange(n):
        empty = supers[d, 0] == EMPTY
        p = 0
        for i in range(g):
            for j in range(i + 1, g):
                h = _mix64(_U64(tag) + _U64(p) + _GOLDEN)
                h = _mix64(_rotl(h) ^ supers[d, i])
                h = _mix64(_rotl(h) ^ supers[d, j])
                out[d, p] = EMPTY if empty else h
                p += 1
    return out


@njit(parallel=True, cache=True)
def count_equal(
    matrix: np.ndarray, left: np.ndarray, right: np.ndarray, lo: int, hi: int
) -> np.ndarray:
    """For every pair i: how many of columns ``lo:hi`` of rows left[i] and right[i] are equal.

    ``-1`` when either row belongs to an empty document (first value EMPTY): they match nothing.
    """
    m = left.size
    out = np.empty(m, dtype=np.int64)
    for i in prange(m):
        x = matrix[left[i]]
        y = matrix[right[i]]
        if x[0] == EMPTY or y[0] == EMPTY:
            out[i] = -1
            continue
        c = 0
        for j in range(lo, hi):
            c += x[j] == y[j]
        out[i] = c
    return out


def equal_fraction(
    matrix: np.ndarray, left: np.ndarray, right: np.ndarray, lo: int, hi: int
) -> np.ndarray:
    """Fraction of equal values in columns ``lo:hi`` per pair; 0.0 where a document is empty."""
    counts = count_equal(matrix, left, right, lo, hi)
    return np.where(counts < 0, 0.0, counts / max(hi - lo, 1))
