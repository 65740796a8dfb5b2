"""Compiled scans of JSONL bytes (without the GIL, so the reading thread and the workers
parsing blocks run side by side): what Arrow's JSON reader takes that the
line-by-line reader refuses (a fast test for the words first, then the exact scan)."""

from __future__ import annotations

import numpy as np
from numba import njit

_NEWLINE = 0x0A


_QUOTE, _BACKSLASH, _N, _I, _ZERO = 0x22, 0x5C, 0x4E, 0x49, 0x30
_NAN = np.frombuffer(b"NaN", dtype=np.uint8)
_INFINITY = np.frombuffer(b"Infinity", dtype=np.uint8)


@njit(cache=True, inline="always")
def _at(raw: np.ndarray, i: int, word: np.ndarray) -> bool:
    """Whether ``word`` is at ``raw[i:]``."""
    if i + word.size > raw.size:
        return False
    for k in range(word.size):  # noqa: SIM110 - a loop numba compiles
        if raw[i + k] != word[k]:
            return False
    return True


@njit(cache=True, nogil=True)
def json_non_finite(raw: np.ndarray) -> bool:
    """Whether JSON lines hold a ``NaN`` or ``Infinity`` literal: Arrow's JSON reader takes
    them in the fields it ignores, where the line-by-line reader refuses the record (JSON
    has no such numbers; :func:`neardup.io.jsonvalues.json_problem`). Only outside strings
    (the word in a text is fine); a line feed ends any string (JSON strings hold none)."""
    inside = False
    i = 0
    n = raw.size
    while i < n:
        b = raw[i]
        if b == _NEWLINE:
            inside = False
        elif inside:
            if b == _BACKSLASH:
                i += 1  # the escaped byte
            elif b == _QUOTE:
                inside = False
        elif b == _QUOTE:
            inside = True
        elif (b == _N and _at(raw, i, _NAN)) or (b == _I and _at(raw, i, _INFINITY)):
            return True
        i += 1
    return False


@njit(cache=True, nogil=True)
def suspect_words(raw: np.ndarray) -> tuple[bool, bool]:
    """Whether the bytes ``NaN`` or ``Infinity`` occur in ``raw`` at all, strings included,
    and whether a ``\\u0000`` escape (a NUL) does: one pass without a branch per byte (it
    vectorizes), so that :func:`json_non_finite`, which tells strings apart byte by byte,
    runs only on the rare blocks that hold the words."""
    n = raw.size
    words, nul = False, False
    for i in range(n - 7):  # both words fit
        words |= _nan_at(raw, i) | (
            (raw[i] == _I) & (raw[i + 1] == 0x6E) & (raw[i + 2] == 0x66) & (raw[i + 3] == 0x69)
            & (raw[i + 4] == 0x6E) & (raw[i + 5] == 0x69) & (raw[i + 6] == 0x74)
            & (raw[i + 7] == 0x79)
        )  # fmt: skip
        nul |= _nul_at(raw, i)
    for i in range(max(n - 7, 0), n - 2):  # the last bytes: only NaN fits, and perhaps a NUL
        words |= _nan_at(raw, i)
        if i + 6 <= n:
            nul |= _nul_at(raw, i)
    return words, nul


@njit(cache=True, inline="always")
def _nul_at(raw: np.ndarray, i: int) -> bool:
    return (
        (raw[i] == _BACKSLASH) & (raw[i + 1] == 0x75) & (raw[i + 2] == _ZERO)
        & (raw[i + 3] == _ZERO) & (raw[i + 4] == _ZERO) & (raw[i + 5] == _ZERO)
    )  # fmt: skip


@njit(cache=True, inline="always")
def _nan_at(raw: np.ndarray, i: int) -> bool:
    return (raw[i] == _N) & (raw[i + 1] == 0x61) & (raw[i + 2] == _N)


@njit(cache=True, nogil=True)
def longest_string(raw: np.ndarray) -> tuple[int, int, bool]:
    """``(start, end, escaped)``: the longest string of one JSON line, ``raw[start:end]``
    between its quotes, and whether it holds a backslash (an escape); ``(-1, -1, False)``
    when the line holds no whole string."""
    best_start, best_end, best_escaped = -1, -1, False
    n = raw.size
    i = 0
    while i < n:
        if raw[i] == _QUOTE:
            i += 1
            start, escaped = i, False
            while i < n and raw[i] != _QUOTE:
                if raw[i] == _BACKSLASH:
                    escaped = True
                    i += 1  # the escaped byte
                i += 1
            if i >= n:
                break  # a string left open
            if i - start > best_end - best_start:
                best_start, best_end, best_escaped = start, i, escaped
        i += 1
    return best_start, best_end, best_escaped
