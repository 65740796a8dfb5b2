"""The C heap (glibc's malloc) tuned for batches: freed batch memory kept for the next batch
during a run, and given back to the system once reading is done; Arrow's buffers taken from
that heap too. Elsewhere: nothing."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from typing import Any

_M_TRIM_THRESHOLD = -1  # mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
KEEP_BELOW = 64 * 2**20  # blocks smaller than this come from the heap and are reused
ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"  # Arrow's allocator, read at its first allocation


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL("libc.so.6")


def reuse_freed_memory() -> None:
    """Serve blocks under ``KEEP_BELOW`` from the heap and keep up to 4 × that free at its
    top: by default glibc maps each batch array of a few MiB afresh and unmaps it when freed,
    so every batch faults its memory in again (half of the page faults of a 100k-document
    dedup, ~0.2 s of system time). Process-wide: for the command line, not the library.

    Arrow's buffers (parsed JSON, record batches) come from this heap as well, unless the
    user chose Arrow's allocator (``ARROW_DEFAULT_MEMORY_POOL``): its default, mimalloc, hands
    freed pages back at once, so every batch's buffers were faulted in afresh. Set before
    pyarrow allocates (it reads the variable once); nothing is imported here."""
    os.environ.setdefault(ARROW_POOL, "system")
    with contextlib.suppress(OSError, AttributeError):
        _libc().mallopt(_M_MMAP_THRESHOLD, KEEP_BELOW)
        _libc().mallopt(_M_TRIM_THRESHOLD, 4 * KEEP_BELOW)


def release_free_memory() -> None:
    """Give the C heap's freed memory back to the system: after reading, the many freed batch
    arrays otherwise stay counted in the peak memory."""
    with contextlib.suppress(OSError, AttributeError):
        _libc().malloc_trim(0)
