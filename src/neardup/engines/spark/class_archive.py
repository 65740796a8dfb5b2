"""A class-data-sharing archive for the JVM of a local master: the classes a run loads,
mapped from one file at start instead of looked up in the distribution's jars and verified.

The first run with a local master records the classes its JVM loads
(``-XX:DumpLoadedClassList``); once it is done, a detached process makes the archive of
them with ``java -Xshare:dump`` (:func:`start_dump`: under a minute of one core, once
per Java and Spark installation, while the user goes on), which later runs map
(``-XX:SharedArchiveFile``). A JVM that cannot map it (another Java, other jars, a damaged
file) starts as usual: :func:`check_mapped` then removes the archive, and the next run
records again. Archives live in neardup's cache directory (:func:`archive_dir`), named by
the Java and Spark they serve; building one removes those of other installations.

``NEARDUP_SPARK_CLASS_ARCHIVE=off`` turns all of it off (a read-only or small home).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from neardup.util.tablecache import cache_dir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("neardup.spark")

SWITCH = "NEARDUP_SPARK_CLASS_ARCHIVE"
# the launch options a dump must share with the runs that map the archive
_SHARED_OPTIONS = ("--add-opens", "--add-exports", "--add-modules", "-XX:+IgnoreUnrecognized")
DUMP_TIMEOUT = 600  # seconds a dump may take before it is given up
STALE_SECONDS = 3600  # a class list or a dump's lock this old belongs to a run long gone


def enabled(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the archive is used and built (``NEARDUP_SPARK_CLASS_ARCHIVE`` not off)."""
    return env.get(SWITCH, "").strip().lower() not in {"off", "0", "no", "false"}


def archive_dir() -> Path:
    """``spark-classes`` in neardup's cache directory."""
    return cache_dir() / "spark-classes"


def installation_key() -> str | None:
    """What names the archive of this Java and Spark: the ``java`` a launch runs
    (``$JAVA_HOME/bin/java``, else PATH's) and the jars of PySpark's distribution, by path,
    size and time; None when either is not found."""
    import pyspark

    home = os.environ.get("JAVA_HOME")
    java = Path(home, "bin", "java") if home else shutil.which("java")
    jars = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent, "jars")
    if java is None or not jars.is_dir():
        return None
    seen = [_stamp(Path(java).resolve())]
    seen += [_stamp(jar) for jar in sorted(jars.glob("*.jar"))]
    return hashlib.sha256("\n".join(seen).encode()).hexdigest()[:20]


def _stamp(path: Path) -> str:
    found = path.stat()
    return f"{path}:{found.st_size}:{found.st_mtime_ns}"


def archive_path(key: str) -> Path:
    return archive_dir() / f"{key}.jsa"


def launch_options(key: str) -> tuple[str, Path | None]:
    """The JVM options for a local run of installation ``key``: map its archive when there
    is one; else record the classes loaded into a list (returned) for :func:`start_dump`."""
    archive = archive_path(key)
    if archive.is_file():
        return f"-XX:SharedArchiveFile={archive} -Xshare:auto", None
    archive.parent.mkdir(parents=True, exist_ok=True)
    for pattern in ("*.classes", "*.partial"):  # of runs and dumps stopped before their end
        for stale in archive.parent.glob(pattern):
            _remove_if_older(stale, STALE_SECONDS)
    listed = archive.parent / f"{key}.{os.getpid()}.classes"
    return f"-XX:DumpLoadedClassList={listed}", listed


def _remove_if_older(path: Path, seconds: float) -> None:
    with contextlib.suppress(OSError):
        if time.time() - path.stat().st_mtime > seconds:
            path.unlink()


def check_mapped(spark: SparkSession, key: str) -> bool:
    """Whether the running JVM maps installation ``key``'s archive (HotSpot turns
    ``UseSharedSpaces`` off when it cannot); an archive it could not map is removed."""
    jvm = spark.sparkContext._jvm
    bean_class = jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(bean_class)
    mapped = str(bean.getVMOption("UseSharedSpaces").getValue()) == "true"
    log.info("class archive %s: %s", archive_path(key), "mapped" if mapped else "not mapped")
    if not mapped:
        with contextlib.suppress(OSError):
            archive_path(key).unlink(missing_ok=True)
    return mapped


def dump_command(spark: SparkSession, listed: Path, archive: Path) -> list[str]:
    """``java -Xshare:dump`` of the classes ``listed`` into ``archive``, with the running
    JVM's Java, class path and the launch options the archive must share with it."""
    jvm = spark.sparkContext._jvm
    java = Path(str(jvm.System.getProperty("java.home")), "bin", "java")
    classpath = str(jvm.System.getProperty("java.class.path"))
    arguments = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    shared = [str(a) for a in arguments if str(a).startswith(_SHARED_OPTIONS)]
    return [
        str(java),
        "-Xshare:dump",
        f"-XX:SharedClassListFile={listed}",
        f"-XX:SharedArchiveFile={archive}",
        "-cp",
        classpath,
        *shared,
    ]


def start_dump(spark: SparkSession, listed: Path, key: str, log_file: Path) -> bool:
    """Start the dump of a finished run's class list as a process of its own that outlives
    this one (:func:`main`); False (the list removed) when another dump of ``key`` runs."""
    lock = archive_dir() / f"{key}.dumping"
    _remove_if_older(lock, DUMP_TIMEOUT)
    try:
        lock.touch(exist_ok=False)
    except OSError:
        listed.unlink(missing_ok=True)
        return False
    partial = archive_dir() / f"{key}.{os.getpid()}.partial"
    command = dump_command(spark, listed, partial)
    with open(log_file, "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", __name__, key, str(listed), str(partial), *command],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # not stopped with the command, nor by its Ctrl-C
        )
    return True


def finish_dump(key: str, listed: Path, partial: Path, command: list[str]) -> Path | None:
    """Run the dump; on success the archive of ``key`` in place (renamed whole) and the
    archives of other installations removed. The list, the partial file and the lock are
    removed either way."""
    archive = archive_path(key)
    try:
        done = subprocess.run(command, timeout=DUMP_TIMEOUT, check=False)
        if done.returncode != 0 or not partial.is_file():
            print(f"neardup: class archive not built (exit {done.returncode})", file=sys.stderr)
            return None
        partial.replace(archive)
        for other in archive.parent.glob("*.jsa"):
            if other != archive:
                other.unlink(missing_ok=True)
        return archive
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"neardup: class archive not built ({exc})", file=sys.stderr)
        return None
    finally:
        listed.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
        (archive.parent / f"{key}.dumping").unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    key, listed, partial, *command = argv
    return 0 if finish_dump(key, Path(listed), Path(partial), command) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
