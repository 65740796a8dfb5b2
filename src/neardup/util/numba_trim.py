"""numba's imports that no neardup kernel needs, kept out of a process before numba loads.

When numba loads its first kernel it probes for BLAS (``import scipy.linalg.cython_blas``:
a tenth of a second or more where SciPy is installed) only to choose how ``np.dot`` and its
kin are compiled, and its typing registries import cffi and build an ``FFI()`` (cffi's C
parser with it) only to type cffi functions passed to a kernel. neardup's kernels do
neither. Blocking the two modules makes numba answer "no BLAS" and "no cffi" at once. And
``import numba`` imports SciPy, where it is installed, only to check its version: neardup
uses no SciPy, so the command's processes skip it.

Process-wide, so for neardup's own processes only (the command line, the Spark workers'
daemon), not the library: a program that imported SciPy's BLAS or cffi already keeps them.
"""

from __future__ import annotations

import sys

__all__ = ["trim_numba_imports"]

SKIPPED = ("scipy", "scipy.linalg.cython_blas", "cffi")


def trim_numba_imports() -> None:
    """Block the modules of :data:`SKIPPED` that are not imported yet."""
    for name in SKIPPED:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
