"""Compiled letter counts per script (Han, Cyrillic, Latin) for every document of a batch.

The ranges are those of :mod:`neardup.text.script`; counting over the batch's code points
in one compiled pass is what lets language detection cost nothing per document.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

HAN, CYRILLIC, LATIN = 0, 1, 2


@njit(cache=True, inline="always")
def _script(c: np.uint32) -> int:
    if c < 0x80:
        return LATIN if (0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A) else -1
    if 0xC0 <= c <= 0x24F:
        return LATIN if c != 0xD7 and c != 0xF7 else -1
    if 0x1E00 <= c <= 0x1EFF:
        return LATIN
    if 0x400 <= c <= 0x52F or 0x1C80 <= c <= 0x1C8F or 0x2DE0 <= c <= 0x2DFF:
        return CYRILLIC
    if 0xA640 <= c <= 0xA69F:
        return CYRILLIC
    if 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xF900 <= c <= 0xFAFF:
        return HAN
    if 0x20000 <= c <= 0x2A6DF or 0x2A700 <= c <= 0x2EE5F:
        return HAN
    if 0x2F800 <= c <= 0x2FA1F or 0x30000 <= c <= 0x323AF:
        return HAN
    return -1


@njit(cache=True, parallel=True)
def script_counts(cps: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(n_docs, 3) letter counts: Han, Cyrillic, Latin, of cps[starts[d]:ends[d]]."""
    n = starts.size
    out = np.zeros((n, 3), dtype=np.int64)
    for d in prange(n):
        han = cyrillic = latin = 0
        for i in range(starts[d], ends[d]):
            c = cps[i]
            if c < 0x80:  # ASCII: a letter or nothing
                folded = np.int64(c | 0x20) - 0x61
                latin += 0 <= folded < 26
                continue
            s = _script(c)
            if s == HAN:
                han += 1
            elif s == CYRILLIC:
                cyrillic += 1
            elif s == LATIN:
                latin += 1
        out[d, HAN], out[d, CYRILLIC], out[d, LATIN] = han, cyrillic, latin
    return out
