"""Tables derived from the running Python's Unicode database, kept on disk between runs.

Building the per-code-point tables of :mod:`neardup.text.chars` takes most of a second (a
pass of ``unicodedata`` and ``str.casefold`` over all 1.1 M code points); every command
needs them. They depend only on the Python and its Unicode version, so they are stored
once in the user's cache directory (``$NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``
or ``~/.cache/neardup``) and loaded in milliseconds after that. Anything going wrong with
the cache (read-only home, a damaged file) only means building the table again.
"""

from __future__ import annotations

import contextlib
import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

FORMAT = 1  # bump when a table's definition changes


def cache_dir() -> Path:
    """Where derived tables are kept."""
    explicit = os.environ.get("NEARDUP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "neardup"


def cached_arrays(name: str, build: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The arrays ``build()`` returns, from the cache when this Python stored them before."""
    version = f"py{sys.version_info[0]}{sys.version_info[1]}-ucd{unicodedata.unidata_version}"
    path = cache_dir() / f"{name}-{version}-v{FORMAT}.npz"
    with contextlib.suppress(Exception), np.load(path) as stored:
        return tuple(stored[f"arr_{i}"] for i in range(len(stored.files)))
    arrays = build()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, *arrays)
        os.replace(tmp, path)
    return arrays
