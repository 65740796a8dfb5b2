"""The input/output formats and the registry every other module asks: which format a path
is (:func:`classify`, :func:`format_of`), the format of a name (:func:`named`), and which
the Spark engine reads a path as (:func:`spark_format_of`).

Each format is one module here whose ``FORMAT`` implements
:class:`~neardup.io.formats.protocol.Format`: ``jsonl`` (plain, ``.gz``, ``.zst``),
``csvfile``, ``parquet``, ``textdir`` (a directory of ``.txt`` / ``.html`` files). The
modules are found when the registry is first asked, so a new format is one new module here;
a format defined elsewhere joins with :func:`register`. Nothing else changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError, InputError
from neardup.io.files import InputFile
from neardup.io.formats.protocol import Format, LineFormat

if TYPE_CHECKING:
    from neardup.io.blocks import BatchSource

__all__ = [
    "Format",
    "LineFormat",
    "batch_source",
    "classify",
    "format_of",
    "formats",
    "named",
    "output_names",
    "register",
    "spark_format_of",
    "unregister",
]

_FORMATS: list[Format] = []


def formats() -> list[Format]:
    """Every format, in the order a path is tried and the formats are listed (their
    ``order``): the ``FORMAT`` of each module of this package, and those registered."""
    if not _FORMATS:
        for info in pkgutil.iter_modules(__path__):
            module = importlib.import_module(f"{__name__}.{info.name}")
            fmt = getattr(module, "FORMAT", None)
            if isinstance(fmt, Format):
                _FORMATS.append(fmt)
        _FORMATS.sort(key=lambda f: f.order)
    return _FORMATS


def register(fmt: Format) -> Format:
    """Add a format (replacing one of the same name), in its ``order``; returns it."""
    known = formats()
    known[:] = sorted([*(f for f in known if f.name != fmt.name), fmt], key=lambda f: f.order)
    return fmt


def unregister(name: str) -> None:
    """Take the format ``name`` out of the registry."""
    known = formats()
    known[:] = [f for f in known if f.name != name]


def named(name: str) -> Format:
    """The format called ``name``; ConfigError when there is none."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise ConfigError(f"no format {name!r} (known: {', '.join(f.name for f in formats())})")


def output_names() -> list[str]:
    """The names of the formats that can be outputs."""
    return [f.name for f in formats() if type(f).sink is not Format.sink]


def classify(path: Path) -> InputFile:
    """``path`` as an input: its format (from its extension; a directory) and compression;
    unknown → InputError listing the supported inputs; a missing optional package →
    MissingDependencyError."""
    for fmt in formats():
        inp = fmt.recognize(path)
        if inp is not None:
            fmt.require(inp)
            return inp
    supported = ", ".join(f.described for f in formats())
    raise InputError(f"{path}: not a directory nor a known kind of file (supported: {supported})")


def format_of(path: str | Path) -> Format:
    """The format of the input ``path`` (see :func:`classify`)."""
    return named(classify(Path(path)).kind)


def batch_source(paths: Sequence[str | Path], **options: Any) -> BatchSource | None:
    """The documents of ``paths`` as reading jobs on worker threads, when they are all of
    one format that reads so (:meth:`Format.batches`); else None (or any path unknown)."""
    try:
        found = {format_of(p).name for p in paths}
    except InputError:
        return None  # read_documents says what is wrong
    if len(found) != 1:
        return None
    return named(found.pop()).batches(paths, **options)


def spark_format_of(paths: Sequence[str]) -> Format:
    """The one format the Spark engine reads ``paths`` as (any path Hadoop reads: a file or
    a directory of part files, named by the format's ``spark_suffixes``); InputError for
    a path of no such format, or of several formats at once."""
    readable = [f for f in formats() if f.spark_suffixes]
    found: dict[str, Format] = {}
    for path in paths:
        name = path.rstrip("/").lower()
        fmt = next((f for f in readable if name.endswith(f.spark_suffixes)), None)
        if fmt is None:
            listed = " and ".join(f.spark_described for f in readable)
            raise InputError(f"{path}: the Spark engine reads {listed} files or directories")
        found[fmt.name] = fmt
    if len(found) > 1:
        titles = " or ".join(f.title for f in readable)
        raise InputError(f"the Spark engine reads inputs of one kind at a time ({titles})")
    return next(iter(found.values()))
