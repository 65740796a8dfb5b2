"""The defaults of a dedup run, in a module that imports nothing heavy: the command line
shows them in ``neardup dedup --help`` without loading NumPy's or numba's kernels.

:mod:`neardup.dedup.config` (``DedupConfig``) and the stages take them from here.
"""

from __future__ import annotations

from typing import Literal, get_args

Measure = Literal["resemblance", "containment"]
MEASURES: tuple[str, ...] = get_args(Measure)
DEFAULT_METHOD = "full"
DEFAULT_THRESHOLD = 0.6
DEFAULT_MEASURE: Measure = "containment"
DEFAULT_MAX_BUCKET = 50  # measured: the bench loses nothing at 30; real clusters chain via stars
DEFAULT_TEMPLATE_DF = 10  # shingles of this many groups of documents are templates
