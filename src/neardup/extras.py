"""Optional dependencies, imported on first use with a clear "pip install neardup[x]" error."""

from __future__ import annotations

import importlib
from types import ModuleType

from neardup.errors import MissingDependencyError

IO_BUFFER = 1 << 20  # bytes buffered per file read or written


def zstandard(feature: str) -> ModuleType:
    """The zstandard module, for ``feature`` (named in the error when it is missing)."""
    return _require("zstandard", "zstd", feature)


def pyarrow(feature: str) -> ModuleType:
    """pyarrow with its parquet module loaded."""
    module = _require("pyarrow", "parquet", feature)
    importlib.import_module("pyarrow.parquet")
    return module


def _require(package: str, extra: str, feature: str) -> ModuleType:
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingDependencyError(package, extra, feature) from None
