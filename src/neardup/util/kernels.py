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


def kernels_compiled() -> bool:
    """Whether the kernels every text goes through (pre-check, script counts, the fused
    tokens-to-fingerprint-sets pass) are in numba's on-disk cache for this source and numba
    version; if not, this is a fresh install and the first calls compile them (about a
    minute for all). Unknown: True."""
    from neardup.fingerprints import fingerprint_kernels as fingerprint
    from neardup.text import script_kernels as script
    from neardup.text.precheck_kernels import cleaning_flags

    kernels = (fingerprint._fingerprint_into, script.script_counts, cleaning_flags)
    try:
        return all(bool(k._cache._cache_file._load_index()) for k in kernels)
    except Exception:  # numba internals changed: say nothing
        return True
