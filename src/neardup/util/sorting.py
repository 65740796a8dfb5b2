"""In-place sorts of large integer arrays on every core.

NumPy sorts on one thread (without holding the GIL). A large array is first partitioned in
place around pivots taken from a sample of it (every value of a piece below every value of
the next), then its pieces are sorted by NumPy on as many threads: the same sorted array.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

PARALLEL_MIN_SIZE = 1 << 22  # smaller arrays are sorted on the calling thread
_SAMPLE = 1 << 12  # values looked at to choose a pivot


def sort_in_place(values: np.ndarray) -> None:
    """Sort the 1-d integer array ``values`` in place, on every thread numba is given."""
    parts = numba.get_num_threads()
    if parts < 2 or values.size < PARALLEL_MIN_SIZE:
        values.sort()
        return
    pieces = [values]
    while len(pieces) < parts:
        largest = max(range(len(pieces)), key=lambda p: pieces[p].size)
        piece = pieces[largest]
        cut = _partition(piece, _pivot(piece))
        if cut in (0, piece.size):  # no value below the pivot: leave this one whole
            break
        pieces[largest : largest + 1] = [piece[:cut], piece[cut:]]
    if len(pieces) == 1:
        values.sort()
        return
    with ThreadPoolExecutor(len(pieces)) as pool:
        for _ in pool.map(np.ndarray.sort, pieces):
            pass


def _pivot(values: np.ndarray) -> np.generic:
    """The median of an evenly strided sample of ``values``, raised above the smallest
    value so that some values fall below it whenever they are not all equal."""
    sample = np.sort(values[:: max(values.size // _SAMPLE, 1)])
    pivot = sample[sample.size // 2]
    if pivot == sample[0]:
        above = sample[sample > pivot]
        return above[0] if above.size else pivot
    return pivot


@njit(cache=True)
def _partition(values: np.ndarray, pivot: np.uint64) -> int:
    """Reorder ``values`` in place so that those below ``pivot`` come first; their count."""
    i = 0
    j = values.size - 1
    while True:
        while i <= j and values[i] < pivot:
            i += 1
        while i <= j and values[j] >= pivot:
            j -= 1
        if i >= j:
            return i
        values[i], values[j] = values[j], values[i]
        i += 1
        j -= 1
