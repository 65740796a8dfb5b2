"""Swapping two paths in one step: Linux ``renameat2(RENAME_EXCHANGE)``, called through libc.

Replacing a directory by another otherwise takes two renames (the old one aside, the new one
in), with an instant between them where neither is in place.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["exchange"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# the OS or the file system has no atomic exchange: the caller falls back to two renames
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2`` (glibc 2.28+, musl 1.2.3+), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


def exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` (both must exist) in one atomic step; False (nothing
    done) where the OS or the file system cannot, OSError for any other failure."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))
