"""Sort a large array of uint64 in place on every core, with NumPy's own sort.

NumPy sorts on one thread. A large array is cut in place into as many ranges of values as
there are threads (each part's values all below the next part's: partitions around pivots
sampled from the array), and each part is sorted by NumPy on a thread of its own (NumPy
releases the GIL while it sorts). The result is the sorted array, the same as ``a.sort()``.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

PARALLEL_SORT_MIN = 1 << 21  # smaller arrays: one NumPy sort (no threads, no partition)
_SAMPLE = 1024  # values sampled to choose the pivots


def parallel_sort(values: np.ndarray, threads: int | None = None) -> None:
    """Sort the contiguous uint64 array ``values`` in place, on ``threads`` threads (numba's
    thread count by default)."""
    threads = threads or numba.get_num_threads()
    if threads < 2 or values.size < max(PARALLEL_SORT_MIN, 2):
        values.sort()
        return
    sample = np.sort(values[:: max(values.size // _SAMPLE, 1)])
    cuts = [0]
    for k in range(1, threads):  # the values below the k-th pivot to the left of the rest
        pivot = sample[k * sample.size // threads]
        cuts.append(cuts[-1] + _partition(values[cuts[-1] :], pivot))
    cuts.append(values.size)
    parts = [values[a:b] for a, b in itertools.pairwise(cuts)]
    with ThreadPoolExecutor(threads, thread_name_prefix="neardup-sort") as pool:
        list(pool.map(np.ndarray.sort, parts))


@njit(cache=True, nogil=True)
def _partition(values: np.ndarray, pivot: np.uint64) -> int:
    """Reorder ``values`` in place so that those below ``pivot`` come first; returns how
    many they are."""
    i, j = 0, values.size - 1
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
