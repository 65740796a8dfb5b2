"""The archives neardup ships to Spark's executors (neardup with its kernels, and its
dependencies): a name changes when a package or the set of compiled kernels changes (not when
a cache file is rewritten), an archive is reused and touched on every use, a new kernel
rebuilds neardup's archive only, and building one removes the archives no run uses any more."""

from __future__ import annotations

import os
import tarfile
import time
from pathlib import Path

from neardup.engines.spark import spark_ship

HOUR = 3600.0


def _file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _files(root: Path) -> list[tuple[str, Path]]:
    return sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())


def _aged(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def _parts(name: str) -> tuple[str, str]:
    environment, kernels = name.removesuffix(".tar.gz").rsplit("-", 1)
    return environment, kernels


def test_a_rewritten_kernel_cache_keeps_the_name_a_new_kernel_or_package_changes_it(tmp_path):
    root = tmp_path / "site"
    _file(root / "neardup/a.py", "x = 1")
    cache = _file(root / "neardup/__pycache__/a.f-3.py311.nbi", "index")
    first = spark_ship.archive_name(_files(root))

    cache.write_text("a longer index")  # rewritten: new size and time, same name
    _aged(cache, -10)
    assert spark_ship.archive_name(_files(root)) == first

    _file(root / "neardup/__pycache__/a.f-3.py311.1.nbc", "kernel")
    with_kernel = spark_ship.archive_name(_files(root))
    assert _parts(with_kernel)[0] == _parts(first)[0]
    assert _parts(with_kernel)[1] != _parts(first)[1]

    _aged(root / "neardup/a.py", HOUR)  # an upgraded package: its files' times change
    upgraded = spark_ship.archive_name(_files(root))
    assert _parts(upgraded)[0] != _parts(with_kernel)[0]


def test_unused_archives_are_those_idle_for_a_day_or_superseded_for_an_hour(tmp_path):
    kept = tmp_path / "neardup-env-aaaa-11111111.tar.gz"
    _file(kept, "")
    named = {
        "same_recent": ("neardup-env-aaaa-22222222.tar.gz", 10 * 60),
        "same_stale": ("neardup-env-aaaa-33333333.tar.gz", 2 * HOUR),
        "other_recent": ("neardup-env-bbbb-11111111.tar.gz", 2 * HOUR),
        "other_stale": ("neardup-env-bbbb-22222222.tar.gz", 25 * HOUR),
        "not_an_archive": ("notes.txt", 100 * HOUR),
    }
    paths = {key: _aged(_file(tmp_path / name, ""), age) for key, (name, age) in named.items()}
    _aged(kept, 100 * HOUR)  # the archive just chosen is never removed, however old

    stale = spark_ship.unused_archives(tmp_path, kept, time.time())
    assert stale == sorted([paths["same_stale"], paths["other_stale"]])


def _names(archive: Path) -> list[str]:
    with tarfile.open(archive) as opened:
        return sorted(opened.getnames())


def test_the_archives_are_built_once_touched_on_use_and_replace_the_unused(tmp_path, monkeypatch):
    root = tmp_path / "site"
    _file(root / "neardup/__init__.py", "")
    _file(root / "dep/core.py", "y = 2")
    monkeypatch.setattr(spark_ship, "packed_files", lambda: iter(_files(root)))
    cache = tmp_path / "cache"

    (first, own), (deps, deps_dir) = spark_ship.environment_archives(cache)
    assert (own, deps_dir) == (spark_ship.ARCHIVE_DIR, spark_ship.DEPENDENCIES_DIR)
    assert _names(first) == ["neardup/__init__.py"]
    assert _names(deps) == ["dep/core.py"]
    _aged(first, 2 * HOUR)
    _aged(deps, 2 * HOUR)
    assert spark_ship.environment_archives(cache) == [(first, own), (deps, deps_dir)]
    for archive in (first, deps):
        assert time.time() - archive.stat().st_mtime < 60  # touched: in use again

    _file(root / "neardup/__pycache__/core.f-1.py311.1.nbc", "kernel")
    (second, _), (same_deps, _) = spark_ship.environment_archives(cache)
    assert second != first
    assert same_deps == deps  # a new kernel does not pack the dependencies again
    assert first.exists()  # used within the hour: kept
    _aged(first, 2 * HOUR)
    _file(root / "neardup/__pycache__/core.g-9.py311.1.nbc", "kernel")
    (third, _), _ = spark_ship.environment_archives(cache)
    assert sorted(cache.glob("*.tar.gz")) == sorted([second, third, deps])
    assert not list(cache.glob(".building-*"))


def test_the_dependencies_are_packed_without_their_test_suites():
    names = [name for name, _ in spark_ship.packed_files()]
    assert "neardup/__init__.py" in names
    assert any(n.startswith("numpy/_core/_multiarray_umath") for n in names)
    assert any(n.startswith("numba/core/") for n in names)
    assert not [n for n in names if "tests" in n.split("/")[:-1]]
