"""Compiled SimHash (Charikar): weighted bit votes of every document's features → 64 bits.

Weights are integers (``int64``) so that the 64 sums are exact and independent of summation
order: the same features and weights give the same fingerprint on every machine.

Numba typing: ``uint64`` mixed with ``int64`` gives ``float64``, so every constant that meets
a ``uint64`` is an ``np.uint64`` (see :mod:`neardup.fingerprints.hash_kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_U64 = np.uint64
_GAMMA = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_S27 = _U64(27)
_S30 = _U64(30)
_S31 = _U64(31)
_ONE = _U64(1)


@njit(cache=True, inline="always")
def mix64(x: np.uint64) -> np.uint64:
    """SplitMix64 step: a fixed bijection of 64-bit words with full avalanche.

    Applied to every feature before its bits vote, so 32-bit fingerprints (CRC-32) still
    vote on all 64 bits and no fingerprint bit bias reaches the result; maps 0 to non-zero.
    """
    z = x + _GAMMA
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, parallel=True)
def mix64_array(values: np.ndarray) -> np.ndarray:
    """:func:`mix64` of every element."""
    out = np.empty(values.size, dtype=np.uint64)
    for i in prange(values.size):
        out[i] = mix64(values[i])
    return out


@njit(cache=True, parallel=True)
def simhash_batch(
    values: np.ndarray, offsets: np.ndarray, weights: np.ndarray, salts: np.ndarray
) -> np.ndarray:
    """``(n_docs, salts.size)`` SimHash fingerprints of every document
    ``values[offsets[d]:offsets[d+1]]``, one per salt.

    Fingerprint j votes with the bits of ``mix64(value ^ salts[j])``: independent hyperplanes
    per salt, and salt 0 gives the classic single fingerprint. Bit b is set when the features
    whose (mixed) bit b is 1 weigh MORE than those whose bit b is 0 (a tie gives 0). Counting
    only the 1-votes, ``ones[b]``, against the total weight ``total`` is the same test as the
    sign of ``Σ ±w``: ``2·ones[b] > total``. A document without features gets 0.
    """
    n = offsets.size - 1
    m = salts.size
    out = np.zeros((n, m), dtype=np.uint64)
    for d in prange(n):
        ones = np.zeros((m, 64), dtype=np.int64)
        total = 0
        for i in range(offsets[d], offsets[d + 1]):
            w = weights[i]
            total += w
            for j in range(m):
                h = mix64(values[i] ^ salts[j])
                for b in range(64):
                    ones[j, b] += np.int64((h >> _U64(b)) & _ONE) * w
        for j in range(m):
            fp = _U64(0)
            for b in range(64):
                if 2 * ones[j, b] > total:
                    fp |= _ONE << _U64(b)
            out[d, j] = fp
    return out
