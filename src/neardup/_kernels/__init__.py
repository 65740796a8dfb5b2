"""Compiled (numba) kernels behind neardup's public API; private, signatures may change."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba

# Below this much work (bytes of text, values...) a batch runs on the calling thread only:
# a parallel region costs a barrier, and when the other cores are busy a descheduled worker
# turns a sub-millisecond call into a 100 ms one (measured with OpenMP under load).
PARALLEL_MIN_WORK = 1 << 18


@contextlib.contextmanager
def threads_for(work: int) -> Iterator[None]:
    """Run the kernels of this block on one thread when ``work`` is small."""
    if work >= PARALLEL_MIN_WORK or numba.get_num_threads() == 1:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
