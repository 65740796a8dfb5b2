"""The class archive of a local master's JVM: recorded by a first run, built apart, mapped by
the runs after it, dropped when a JVM cannot map it.

The suite turns the archive off (``tests/conftest.py``); these tests turn it on in a cache
directory of their own. Their JVMs are subprocesses: they need not share the Spark tests'
worker (``xdist_group("spark")``), and run beside them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neardup.engines.spark import class_archive
from neardup.engines.spark.class_archive import SWITCH

SMALL = ["--spark-conf", "spark.sql.shuffle.partitions=2", "--spark-conf", "spark.ui.enabled=false"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(SWITCH, "on")
    return tmp_path / "cache" / "spark-classes"


@pytest.mark.parametrize(
    ("value", "on"), [("", True), ("on", True), ("off", False), ("0", False), ("No", False)]
)
def test_the_switch(value, on):
    assert class_archive.enabled({SWITCH: value}) is on
    assert class_archive.enabled({}) is True


def test_a_run_records_its_classes_until_an_archive_exists_then_maps_it(cache):
    key = "k" * 20
    options, listed = class_archive.launch_options(key)
    assert listed == cache / f"{key}.{os.getpid()}.classes"
    assert options == f"-XX:DumpLoadedClassList={listed}"
    (cache / f"{key}.jsa").write_bytes(b"archive")
    options, listed = class_archive.launch_options(key)
    assert listed is None
    assert options == f"-XX:SharedArchiveFile={cache / f'{key}.jsa'} -Xshare:auto"


def test_lists_and_dumps_of_runs_long_gone_are_removed_and_recent_ones_kept(cache):
    key = "k" * 20
    cache.mkdir(parents=True)
    old = [cache / f"{key}.1.classes", cache / f"{key}.1.partial", cache / "other.3.partial"]
    recent = [cache / f"{key}.2.classes", cache / f"{key}.2.partial"]
    for path in old + recent:
        path.write_text("java/lang/Object\n")
    hours_ago = time.time() - 2 * class_archive.STALE_SECONDS
    for path in old:
        os.utime(path, (hours_ago, hours_ago))
    class_archive.launch_options(key)
    assert not any(path.exists() for path in old)
    assert all(path.exists() for path in recent)


def test_the_key_names_the_java_and_the_jars(tmp_path, monkeypatch):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    jar = home / "jars" / "a.jar"
    jar.write_bytes(b"jar")
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    first = class_archive.installation_key()
    assert first is not None
    assert class_archive.installation_key() == first
    jar.write_bytes(b"another jar")
    assert class_archive.installation_key() != first
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "nowhere"))
    assert class_archive.installation_key() is None


def _shell(script: str) -> list[str]:
    return ["sh", "-c", script]


def test_a_dump_puts_its_archive_in_place_whole_and_removes_other_installations(cache):
    key, other = "k" * 20, "o" * 20
    cache.mkdir(parents=True)
    listed, partial = cache / f"{key}.7.classes", cache / f"{key}.7.partial"
    listed.write_text("java/lang/Object\n")
    (cache / f"{key}.dumping").touch()
    (cache / f"{other}.jsa").write_bytes(b"old")
    done = class_archive.finish_dump(key, listed, partial, _shell(f"echo built > {partial}"))
    assert done == cache / f"{key}.jsa"
    assert done.read_text() == "built\n"
    assert sorted(p.name for p in cache.iterdir()) == [f"{key}.jsa"]


def test_a_failed_dump_leaves_no_archive_nor_its_list_nor_its_lock(cache):
    key = "k" * 20
    cache.mkdir(parents=True)
    listed, partial = cache / f"{key}.7.classes", cache / f"{key}.7.partial"
    listed.write_text("java/lang/Object\n")
    (cache / f"{key}.dumping").touch()
    script = f"echo half > {partial}; exit 1"
    assert class_archive.finish_dump(key, listed, partial, _shell(script)) is None
    assert list(cache.iterdir()) == []


def _logs(tmp: Path) -> list[str]:
    return sorted(p.read_text() for p in (tmp / "neardup-spark").glob("*.log"))


def test_a_first_run_builds_the_archive_the_next_maps_it_a_foreign_one_is_dropped(tmp_path, cache):
    """The whole cycle with real JVMs: a first ``dedup --engine spark`` records its classes
    and starts the dump; the next run maps the archive (HotSpot's UseSharedSpaces); an
    archive no JVM can map is removed by the run that finds it so. The later runs stop
    right after their session starts (their ``--out`` holds another file: refused, exit 1): the
    archive is checked when the session starts."""
    from neardup.io.sample_corpus import sample_path

    env = os.environ | {"TMPDIR": str(tmp_path)}
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("not an output of neardup")

    def dedup(out: Path, code: int) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "neardup", "dedup", str(path), "--out", str(out)]
        command += ["--engine", "spark", "--master", "local[1]", *SMALL]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == code, done.stderr
        return done

    with sample_path() as path:
        first = dedup(tmp_path / "one", 0)
        assert "preparing Spark's JVM for quicker starts" in first.stderr
        key = class_archive.installation_key()
        archive = cache / f"{key}.jsa"
        deadline = time.monotonic() + class_archive.DUMP_TIMEOUT
        while (cache / f"{key}.dumping").exists() and time.monotonic() < deadline:
            time.sleep(1)
        assert archive.is_file()
        assert not list(cache.glob("*.classes"))  # the list went into the archive
        second = dedup(taken, 1)
        assert "notes.txt" in second.stderr  # stopped after the session's start
        assert "preparing" not in second.stderr
        assert any(f"class archive {archive}: mapped" in log for log in _logs(tmp_path))
        damaged = archive.with_suffix(".damaged")  # a new file: JVMs may still map the old
        damaged.write_bytes(b"not an archive")
        damaged.replace(archive)
        (cache / f"{key}.dumping").touch()  # a dump under way: the third run starts none
        third = dedup(taken, 1)
    assert "preparing" not in third.stderr
    assert any(f"class archive {archive}: not mapped" in log for log in _logs(tmp_path))
    assert not archive.exists()


def test_a_cache_that_cannot_hold_the_archive_leaves_the_jvm_options_as_they_were(
    tmp_path, monkeypatch
):
    from neardup.engines.spark import spark_session

    blocked = tmp_path / "a file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(blocked))
    monkeypatch.setenv(SWITCH, "on")
    monkeypatch.setattr(spark_session, "_classes", None)
    defaults = {"spark.driver.extraJavaOptions": spark_session.LOCAL_JAVA_OPTIONS}
    assert spark_session._with_class_archive(defaults) == defaults
    assert not spark_session.records_classes()
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    extended = spark_session._with_class_archive(defaults)
    assert "-XX:DumpLoadedClassList=" in extended["spark.driver.extraJavaOptions"]
    assert spark_session.records_classes()
    mine = {"spark.driver.extraJavaOptions": "-Xss4m"}  # a user's own options stand
    assert spark_session._with_class_archive(mine) == mine
