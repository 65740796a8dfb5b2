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


def fastapi(feature: str) -> ModuleType:
    """fastapi (and the pydantic it brings) for the HTTP service: the ``serve`` extra."""
    return _require("fastapi", "serve", feature)


def uvicorn(feature: str) -> ModuleType:
    """uvicorn, the server the HTTP service runs in: the ``serve`` extra."""
    return _require("uvicorn", "serve", feature)


def swagger_ui(feature: str) -> ModuleType:
    """The ``swagger_ui_bundle`` module (Swagger UI's files), or a clear install message."""
    return _require("swagger_ui_bundle", "serve", feature)


def jinja2(feature: str) -> ModuleType:
    """Jinja2, the templates of the web pages: the ``serve`` extra."""
    return _require("jinja2", "serve", feature)


def psycopg(feature: str) -> ModuleType:
    """psycopg 3, checking that psycopg_pool (the same extra) is installed too."""
    module = _require("psycopg", "postgres", feature)
    _require("psycopg_pool", "postgres", feature)
    return module


def pyspark(feature: str) -> ModuleType:
    """PySpark, for the Spark engine: the ``spark`` extra (Java 17 must be installed)."""
    return _require("pyspark", "spark", feature)


def _require(package: str, extra: str, feature: str) -> ModuleType:
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingDependencyError(package, extra, feature) from None
