"""Compiled scans of JSONL bytes (without the GIL, so the reading thread and the workers
parsing blocks run side by side): lines, and what Arrow's JSON reader cannot take exactly."""

from __future__ import annotations

import numpy as np
from numba import njit

_NEWLINE = 0x0A


@njit(cache=True, nogil=True)
def line_ends(raw: np.ndarray, start: int, wanted: int) -> tuple[int, int]:
    """``(end, found)``: the lines ended in ``raw[start:]`` up to ``wanted`` of them, and
    where the last of those ends (after its line feed; ``start`` if none)."""
    end = start
    found = 0
    for i in range(start, raw.size):
        if raw[i] == _NEWLINE:
            found += 1
            end = i + 1
            if found == wanted:
                break
    return end, found


_INFINITY = np.frombuffer(b"Infinity", dtype=np.uint8)


@njit(cache=True, nogil=True)
def json_may_hold_problem(raw: np.ndarray) -> bool:
    """:func:`neardup.io.jsonvalues.may_hold_problem` over JSON bytes in one compiled pass
    (without the GIL): a ``\\ud``/``\\uD`` escape, ``NaN`` or ``Infinity`` anywhere."""
    n = raw.size
    for i in range(n - 2):
        b = raw[i]
        if b == 0x5C:  # backslash
            if raw[i + 1] == 0x75 and (raw[i + 2] == 0x64 or raw[i + 2] == 0x44):
                return True
        elif b == 0x4E:  # N
            if raw[i + 1] == 0x61 and raw[i + 2] == 0x4E:
                return True
        elif b == 0x49 and i + 8 <= n:  # I
            same = True
            for k in range(1, 8):
                if raw[i + k] != _INFINITY[k]:
                    same = False
                    break
            if same:
                return True
    return False
