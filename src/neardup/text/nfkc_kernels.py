"""Compiled NFKC of the texts whose changed characters NFKC replaces one by one.

Most texts that NFKC changes at all change only by characters it replaces wherever they
stand: no-break spaces, ellipses, numero signs, full-width punctuation, ligatures
(:func:`neardup.text.chars.nfkc_replacements`). Such texts are normalized here, a batch at a
time, by writing each of those characters' replacements — on the calling thread, without the
GIL, where ``unicodedata.normalize`` would hold it for every text. A text holding a
character whose normalization may depend on its neighbours (a combining mark, a Hangul
jamo...) is left as it is, for ``unicodedata``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.text.chars import NFKC_KEEP, nfkc_replacements
from neardup.text.tokenize_kernels import decode_utf8
from neardup.util.arrays import regrown_spans

__all__ = ["nfkc_replaced"]


def nfkc_replaced(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, todo: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(text, starts, ends, done)``: the batch's UTF-8 (text ``d`` is
    ``text[starts[d]:ends[d]]``, in order) with the NFKC of every ``todo`` text that can be
    normalized character by character (``done``); the other texts and the bytes between
    texts as they were. Unchanged (nothing ``done``) when no text is to do, or the texts
    are not laid out in order."""
    done = np.zeros(starts.size, dtype=np.bool_)
    in_order = starts.size < 2 or bool(np.all(starts[1:] >= ends[:-1]))
    if not todo.any() or not in_order:
        return text, starts, ends, done
    index, offsets, pool = nfkc_replacements()
    lengths = _normalized_lengths(text, starts, ends, todo, index, offsets, done)
    if not done.any():
        return text, starts, ends, done
    growth = lengths - (ends - starts)
    new_starts, new_ends = regrown_spans(starts, ends, growth)
    out = np.empty(text.size + int(growth.sum()), dtype=np.uint8)
    _write(text, starts, ends, done, new_starts, new_ends, index, offsets, pool, out)
    out.flags.writeable = False  # typed as the input is: no second compiled specialization
    return out, new_starts, new_ends, done


@njit(cache=True, parallel=True, nogil=True)
def _normalized_lengths(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    todo: np.ndarray,
    index: np.ndarray,
    offsets: np.ndarray,
    done: np.ndarray,
) -> np.ndarray:
    """Per text, its length in bytes once normalized where ``done`` is set here (a ``todo``
    text of stable and replaced characters only), else its length as it is."""
    lengths = ends - starts
    nowhere = np.empty(0, dtype=np.uint8)
    for d in prange(starts.size):
        if todo[d]:
            size = _replaced(text, starts[d], ends[d], index, offsets, nowhere, nowhere, 0)
            if size >= 0:
                lengths[d] = size
                done[d] = True
    return lengths


@njit(cache=True)
def _replaced(
    text: np.ndarray,
    lo: int,
    hi: int,
    index: np.ndarray,
    offsets: np.ndarray,
    pool: np.ndarray,
    out: np.ndarray,
    at: int,
) -> int:
    """text[lo:hi] with its characters replaced, written into ``out`` from ``at`` (an empty
    ``out``: only measured); where the text ends there, or -1 if a character of it needs its
    neighbours."""
    write = out.size > 0
    p = at
    i = lo
    while i < hi:
        if text[i] < 0x80:
            if write:
                out[p] = text[i]
            p += 1
            i += 1
            continue
        c, width = decode_utf8(text, i)
        k = index[c]
        if k == NFKC_KEEP:
            if write:
                out[p : p + width] = text[i : i + width]
            p += width
        elif k >= 0:
            size = offsets[k + 1] - offsets[k]
            if write:
                out[p : p + size] = pool[offsets[k] : offsets[k + 1]]
            p += size
        else:
            return -1
        i += width
    return p


@njit(cache=True, parallel=True, nogil=True)
def _write(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    done: np.ndarray,
    new_starts: np.ndarray,
    new_ends: np.ndarray,
    index: np.ndarray,
    offsets: np.ndarray,
    pool: np.ndarray,
    out: np.ndarray,
) -> None:
    """Each text (normalized where ``done``) and the bytes before it, at its new place."""
    n = starts.size
    for d in prange(n):
        before = ends[d - 1] if d > 0 else 0
        to = new_ends[d - 1] if d > 0 else 0
        out[to : new_starts[d]] = text[before : starts[d]]
        if done[d]:
            _replaced(text, starts[d], ends[d], index, offsets, pool, out, new_starts[d])
        else:
            out[new_starts[d] : new_ends[d]] = text[starts[d] : ends[d]]
    last = ends[n - 1] if n else 0
    out[new_ends[n - 1] if n else 0 :] = text[last:]
