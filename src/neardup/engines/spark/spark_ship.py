"""neardup and its dependencies as archives for Spark executors that lack them.

:func:`environment_archives` packs the files of the running neardup package, and of every
package it depends on (its base requirements, transitively, as installed here; PySpark and
py4j left out: every executor has its own), into two archives in neardup's cache directory:
neardup itself with its compiled kernels (small, rebuilt whenever a kernel is newly
compiled), and its dependencies (a few hundred MB, rebuilt only when one of them changes).
Executors unpack them (``spark.archives``) and import from them first (``PYTHONPATH``): their
own ``python3`` runs them, whatever it has installed, provided it is the driver's Python
version on the driver's platform (the packages' compiled extensions are the driver's).

An archive is named ``<kind>-<environment>-<kernels>.tar.gz`` (kind ``neardup-env`` or
``neardup-deps``). ``<environment>`` covers the Python version, the platform and each packed
file's name, size and modification time, so an archive is built once per environment and
rebuilt when a package changes; ``<kernels>`` covers only the names of the compiled files
(``__pycache__``), so a newly compiled kernel gives a new archive and a rewritten cache file
does not. Building one removes the archives unused for a day, and the older ones of its kind
and environment unused for an hour: the cache holds what recent runs use, not one archive
per change.

Why not a packed virtual environment (``venv-pack``): it needs the driver to run in a
virtual environment and refuses editable installs, and it carries everything installed
there, PySpark included (hundreds of MB). The installed files need neither and hold only
what neardup imports. numba's on-disk cache of neardup's kernels goes along (modification
times kept), so executors load the compiled kernels instead of compiling them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as md
import os
import platform
import re
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from neardup.errors import ConfigError

ARCHIVE_DIR = "neardup-env"  # where executors unpack neardup (and its kernels)
DEPENDENCIES_DIR = "neardup-deps"  # where they unpack its dependencies
_PACKAGE = "neardup/"  # the names of neardup's own files in the archives
_PROVIDED = {"pyspark", "py4j"}  # every executor has them (Spark's own Python side)
_TESTS = "tests"  # the directory of a dependency's test suite (numba's, NumPy's, Arrow's)
_COMPILED = "__pycache__"  # bytecode and numba's kernels: rewritten as they are used
_UNUSED_SECONDS = 24 * 3600  # an archive no run has used for this long is removed
_SUPERSEDED_SECONDS = 3600  # an older archive of the same environment: sooner


def cache_dir() -> Path:
    """Where built archives are kept: ``$XDG_CACHE_HOME/neardup/spark`` (``~/.cache`` default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neardup" / "spark"


def environment_archives(directory: Path | None = None) -> list[tuple[Path, str]]:
    """The archives of neardup and of its dependencies for this environment, each with the
    directory executors unpack it into (in the order of their ``PYTHONPATH``); each built if
    missing and its time set to now (archives no longer used are then removed)."""
    files = sorted(packed_files())
    folder = directory or cache_dir()
    own = [(name, path) for name, path in files if name.startswith(_PACKAGE)]
    others = [(name, path) for name, path in files if not name.startswith(_PACKAGE)]
    # the dependencies' archive first: touched before neardup's build looks for unused ones
    dependencies = _archive(folder, DEPENDENCIES_DIR, others)
    return [(_archive(folder, ARCHIVE_DIR, own), ARCHIVE_DIR), (dependencies, DEPENDENCIES_DIR)]


def _archive(folder: Path, kind: str, files: list[tuple[str, Path]]) -> Path:
    """The archive of ``files`` named for ``kind`` in ``folder``, built if missing (the
    archives no longer used then removed); its time is set to now."""
    target = folder / archive_name(files, kind)
    if target.exists():
        os.utime(target)
        return target
    folder.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".building-", suffix=".tar.gz")
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
    for stale in unused_archives(folder, target, time.time()):
        stale.unlink(missing_ok=True)
    return target


def archive_name(files: list[tuple[str, Path]], kind: str = ARCHIVE_DIR) -> str:
    """``<kind>-<environment>-<kernels>.tar.gz`` for ``(name, file)`` pairs: the
    environment digest covers every file but the compiled ones by name, size and time; the
    kernels digest covers the compiled ones by name only."""
    environment = hashlib.sha256(f"{sys.version}|{platform.platform()}".encode())
    kernels = hashlib.sha256()
    for name, path in files:
        if _COMPILED in name.split("/"):
            kernels.update(f"{name}\n".encode())
        else:
            stat = path.stat()
            environment.update(f"{name}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return f"{kind}-{environment.hexdigest()[:16]}-{kernels.hexdigest()[:8]}.tar.gz"


def unused_archives(folder: Path, kept: Path, now: float) -> list[Path]:
    """The archives in ``folder`` to remove beside ``kept``: those unused (by time) for a
    day, and those of ``kept``'s kind and environment unused for an hour (``kept`` holds
    their files and more kernels). A run still using one touched it when it started, so an
    archive a long job still serves to new executors is kept for a day."""
    environment = kept.name.rsplit("-", 1)[0]
    stale = []
    for path in folder.glob("neardup-*.tar.gz"):
        if path == kept:
            continue
        with contextlib.suppress(FileNotFoundError):
            idle = now - path.stat().st_mtime
            same = path.name.rsplit("-", 1)[0] == environment
            if idle > _UNUSED_SECONDS or (same and idle > _SUPERSEDED_SECONDS):
                stale.append(path)
    return sorted(stale)


def packed_files() -> Iterator[tuple[str, Path]]:
    """``(name in the archive, file)``: neardup's package directory as it is (compiled
    files and numba's cache included), then the installed files of its dependencies but
    their test suites (a ``tests`` directory: a third of their files)."""
    import neardup

    package = Path(neardup.__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file():
            yield f"{_PACKAGE}{path.relative_to(package).as_posix()}", path
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
            if _TESTS in file.parts[:-1]:  # a package's own test suite: never imported by a run
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
