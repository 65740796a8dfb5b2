"""neardup and its dependencies as one archive for Spark executors that lack them.

:func:`environment_archive` packs the files of the running neardup package and of every
package it depends on (its base requirements, transitively, as installed here; PySpark and
py4j left out: every executor has its own) into ``neardup-env-<hash>.tar.gz`` in neardup's
cache directory. The hash covers the Python version, the platform and each packed file's
name, size and modification time, so the archive is built once per environment and rebuilt
when a package changes. Executors unpack it (``spark.archives``) and import from it first
(``PYTHONPATH``): their own ``python3`` runs it, whatever it has installed, provided it is
the driver's Python version on the driver's platform (the packages' compiled extensions
are the driver's).

Why not a packed virtual environment (``venv-pack``): it needs the driver to run in a
virtual environment and refuses editable installs, and it carries everything installed
there, PySpark included (hundreds of MB). The installed files need neither and hold only
what neardup imports. numba's on-disk cache of neardup's kernels goes along (modification
times kept), so executors load the compiled kernels instead of compiling them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import platform
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from neardup.errors import ConfigError

ARCHIVE_DIR = "neardup-env"  # the directory executors unpack the archive into
_PROVIDED = {"pyspark", "py4j"}  # every executor has them (Spark's own Python side)


def cache_dir() -> Path:
    """Where built archives are kept: ``$XDG_CACHE_HOME/neardup/spark`` (``~/.cache`` default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neardup" / "spark"


def environment_archive(directory: Path | None = None) -> Path:
    """The archive of neardup and its dependencies for this environment, built if missing."""
    files = sorted(packed_files())
    digest = hashlib.sha256(f"{sys.version}|{platform.platform()}".encode())
    for name, path in files:
        stat = path.stat()
        digest.update(f"{name}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    target = (directory or cache_dir()) / f"{ARCHIVE_DIR}-{digest.hexdigest()[:16]}.tar.gz"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=".building-", suffix=".tar.gz")
    os.close(handle)
    try:
        # level 1: a third of level 6's time for a few percent more bytes
        with tarfile.open(partial, "w:gz", compresslevel=1) as archive:
            for name, path in files:
                archive.add(path, arcname=name, recursive=False)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def packed_files() -> Iterator[tuple[str, Path]]:
    """``(name in the archive, file)``: neardup's package directory as it is (compiled
    files and numba's cache included), then the installed files of its dependencies."""
    import neardup

    package = Path(neardup.__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file():
            yield f"neardup/{path.relative_to(package).as_posix()}", path
    for dist in dependencies("neardup"):
        files = dist.files
        if files is None:
            raise ConfigError(
                f"cannot ship {dist.metadata['Name']} to Spark's executors: its installed "
                "files are not recorded (reinstall it with pip)"
            )
        for file in files:
            if file.parts and file.parts[0] == "..":  # scripts, data outside site-packages
                continue
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                yield file.as_posix(), path


def dependencies(name: str) -> list[md.Distribution]:
    """The installed distributions ``name`` requires, transitively (base requirements, not
    extras; one whose marker excludes it here is skipped when absent), without ``name``
    itself and what Spark provides."""
    found: dict[str, md.Distribution] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        for text in md.distribution(current).requires or []:
            requirement, _, marker = text.partition(";")
            if "extra" in marker:  # an optional extra's requirement
                continue
            wanted = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if wanted is None:
                continue
            key = _normalized(wanted.group(1))
            if key in found or key in _PROVIDED or key == _normalized(name):
                continue
            try:
                found[key] = md.distribution(key)
            except md.PackageNotFoundError:
                if marker.strip():  # a requirement of another platform or Python version
                    continue
                raise ConfigError(
                    f"cannot ship neardup to Spark's executors: {wanted.group(1)} is not "
                    "installed here"
                ) from None
            pending.append(key)
    return [found[k] for k in sorted(found)]


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
