"""The Spark session of ``neardup dedup --engine spark``: its JVM, its log, its Python workers.

:func:`spark_session` checks what a cluster user gets wrong before Spark's JVM starts (no
Java, a master URL Spark cannot use or where no master answers), starts the JVM with its
output (log lines, progress bars, Java stack traces) going to a log file instead of the
terminal, and then makes sure the Python workers run this neardup
(:func:`prepare_workers`):

- with a local master, the workers run the driver's own interpreter (``sys.executable``),
  not the ``python3`` first on PATH (a virtual environment used without activating it),
  unless ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` names one;
- with any other master, neardup and its dependencies are shipped to the executors
  (:mod:`neardup.engines.spark.spark_ship`) and imported there first;
- a tiny first job (:func:`check_workers`) imports neardup in the workers: a worker that
  cannot, or that runs another neardup version, stops the run with one line (not needed
  where the workers are forks of neardup's daemon in the driver's interpreter).

Errors of Spark itself become one line naming the log file that holds the whole stack
(:func:`spark_errors`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.engines.spark import class_archive, daemon
from neardup.errors import ConfigError, NearDupError
from neardup.util.extras import pyspark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MASTER = re.compile(
    r"local(\[(\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|spark://.+|k8s://.+"
)
_CONNECT_SECONDS = 5.0  # how long a standalone master may take to accept a connection
_log_path: Path | None = None


class SparkRunError(NearDupError):
    """Spark failed (a task, a job, the JVM): the message is one line, the stack is in the log."""


def log_path() -> Path:
    """This process's Spark log: the JVM's output and the stacks of failed jobs."""
    global _log_path
    if _log_path is None:
        directory = Path(tempfile.gettempdir()) / "neardup-spark"
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        _log_path = directory / f"{stamp}-{os.getpid()}.log"
    return _log_path


def _log_stages() -> None:
    """The engine's stage timings (logger ``neardup.spark``) into the log file, once."""
    logger = logging.getLogger("neardup.spark")
    path = str(log_path())
    if any(getattr(h, "baseFilename", None) == path for h in logger.handlers):
        return
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s neardup: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def check_java() -> None:
    """MissingDependencyError unless a ``java`` can be run (``$JAVA_HOME/bin/java``, else PATH)."""
    home = os.environ.get("JAVA_HOME")
    java = Path(home, "bin", "java") if home else None
    if java is not None and os.access(java, os.X_OK):
        return
    if java is None and shutil.which("java"):
        return
    where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH"
    raise ConfigError(
        f"the Spark engine needs Java 17 or newer ({where}): install it (Debian: apt-get "
        "install openjdk-17-jre-headless) or set JAVA_HOME"
    )


def check_master(master: str | None) -> None:
    """ConfigError for a master URL Spark does not know, or a standalone master
    (``spark://host:port[,host:port]``) that none of whose hosts accepts a connection."""
    if master is None:
        return
    if not _MASTER.fullmatch(master):
        raise ConfigError(
            f"--master {master!r} is not a Spark master URL (local[N], spark://HOST:PORT, "
            "yarn, k8s://HOST:PORT)"
        )
    if not master.startswith("spark://"):
        return
    reasons = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--master {master!r}: {address!r} is not HOST:PORT")
        try:
            with socket.create_connection((host, int(port)), timeout=_CONNECT_SECONDS):
                return
        except OSError as exc:
            reasons.append(f"{address}: {exc.strerror or exc}")
    raise ConfigError(f"--master {master}: no Spark master answers ({'; '.join(reasons)})")


def parse_settings(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``KEY=VALUE`` Spark settings as a dict (ConfigError naming one without ``=``)."""
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--spark-conf {pair!r}: expected KEY=VALUE")
        settings[key.strip()] = value.strip()
    return settings


def spark_session(
    master: str | None = None, settings: dict[str, str] | None = None
) -> SparkSession:
    """The active session, or a new one (``master``, else Spark's default / spark-submit's;
    ``settings`` on top) whose JVM writes to :func:`log_path`; its Python workers prepared
    and checked. On an active session, ``settings`` are set where Spark allows it."""
    pyspark("the Spark engine")
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    settings = settings or {}
    _log_stages()
    if SparkContext._active_spark_context is None:
        check_java()
        check_master(master)
        conf = SparkConf().setAppName("neardup dedup")
        conf.set("spark.ui.showConsoleProgress", "false")  # its output goes to the log
        if master:
            conf.setMaster(master)
        defaults = local_defaults(master, settings, os.environ, physical_memory())
        conf.setAll(list(_with_class_archive(defaults).items()))
        conf.setAll(list(settings.items()))
        with spark_errors("Spark did not start"):
            _start_context(conf)
        spark = SparkSession.builder.getOrCreate()
        if _classes is not None and _classes[1] is None:
            with spark_errors("Spark's JVM"):
                class_archive.check_mapped(spark, _classes[0])
    else:
        spark = SparkSession.builder.getOrCreate()
        with spark_errors("Spark settings"):
            for key, value in settings.items():
                spark.conf.set(key, value)
    with spark_errors("Spark's executors cannot run neardup"):
        prepare_workers(spark)
        context = spark.sparkContext
        daemon_module = spark.conf.get(DAEMON_MODULE, None)
        if not forks_the_driver(context.master, context.pythonExec, daemon_module):
            check_workers(spark)
    return spark


def forks_the_driver(master: str, python: str | None, daemon_module: str | None) -> bool:
    """Whether the workers are forks of neardup's daemon (:mod:`.daemon`) in the driver's
    own interpreter, on a local master: they run this neardup, or none starts (the daemon is
    a module of neardup), so :func:`check_workers` has nothing to find."""
    return is_local(master) and python == sys.executable and daemon_module == daemon.MODULE


_classes: tuple[str, Path | None] | None = None  # this JVM's archive key; the list it records


def _with_class_archive(defaults: dict[str, str]) -> dict[str, str]:
    """``defaults`` with the class archive's options (:mod:`.class_archive`) added to the
    JVM's when they are neardup's own (a user's Java options stand as given)."""
    global _classes
    options = "spark.driver.extraJavaOptions"
    if defaults.get(options) != LOCAL_JAVA_OPTIONS or not class_archive.enabled():
        return defaults
    try:  # the run goes on without the archive when the cache cannot hold it
        key = class_archive.installation_key()
        if key is None:
            return defaults
        extra, listed = class_archive.launch_options(key)
    except OSError:
        return defaults
    _classes = (key, listed)
    return defaults | {options: f"{defaults[options]} {extra}"}


def records_classes() -> bool:
    """Whether this process's JVM records the classes it loads, for the class archive later
    runs map (:func:`start_class_archive`)."""
    return _classes is not None and _classes[1] is not None


def start_class_archive() -> bool:
    """After a run whose JVM recorded its classes: start building the archive later runs
    map, in a process of its own (under a minute of one core, once); whether it
    started."""
    from pyspark.sql import SparkSession

    global _classes
    spark = SparkSession.getActiveSession()
    if not records_classes() or spark is None:
        return False
    key, listed = _classes  # type: ignore[misc]
    _classes = None
    with spark_errors("Spark's JVM"):
        try:
            return class_archive.start_dump(spark, listed, key, log_path())  # type: ignore[arg-type]
        except OSError:
            return False


def _start_context(conf: Any) -> None:
    """A SparkContext whose JVM's stdout and stderr go to the log file (launched here so
    that they can be redirected: Spark's own launch leaves them on the terminal)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    with open(log_path(), "ab") as log:  # the JVM keeps its own descriptors
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext(conf=conf, gateway=gateway)


DRIVER_MEMORY_SHARE = 4  # a local master's JVM takes up to this fraction of the memory
DRIVER_MEMORY_LEAST = 1 << 30  # Spark's own default
DRIVER_MEMORY_MOST = 32 << 30
# a local run's JVM compiles with the quick compiler only and collects garbage in one thread:
# on runs of minutes, the optimizing compiler and parallel collectors cost more CPU than
# they save
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def local_defaults(
    master: str | None, settings: dict[str, str], env: Any, physical: int | None
) -> dict[str, str]:
    """Settings for a local master (``local[N]``, or none given: PySpark's default is
    ``local[*]``) that the user did not choose, where the driver's JVM is the executor too:

    - ``spark.driver.memory``: a quarter of the machine's memory, at least Spark's own 1g
      and at most 32g, in whole MiB (Spark's 1g runs out of heap on corpora of 100,000
      documents);
    - ``spark.driver.extraJavaOptions``: :data:`LOCAL_JAVA_OPTIONS`;
    - ``spark.python.daemon.module``: :mod:`neardup.engines.spark.daemon` (the Python
      workers' imports made once), unless the user chose the workers' Python
      (``PYSPARK_PYTHON``, ``spark.pyspark.python``), which may not hold neardup; with it,
      ``SPARK_SIMPLIFIED_TRACEBACK`` in the workers' environment (:data:`SIMPLIFIED_TRACEBACK`:
      one daemon for every job, not one for the jobs whose runners set it and one for those
      that do not).

    None for other masters. A setting stands when ``settings``, the environment
    (``SPARK_DRIVER_MEMORY``, ``PYSPARK_SUBMIT_ARGS``: ``--driver-memory`` /
    ``--driver-java-options``) or a ``spark-defaults.conf`` (``$SPARK_CONF_DIR``,
    ``$SPARK_HOME/conf``) sets it."""
    if master is not None and not is_local(master):
        return {}
    submit = env.get("PYSPARK_SUBMIT_ARGS", "")
    homes = [env.get("SPARK_CONF_DIR"), env.get("SPARK_HOME") and f"{env['SPARK_HOME']}/conf"]
    files = [Path(home, "spark-defaults.conf") for home in homes if home]

    def chosen(key: str, flag: str | None = None) -> bool:
        return (
            key in settings
            or key in submit
            or (flag is not None and flag in submit)
            or any(_defaults_set(path, key) for path in files)
        )

    out = {}
    memory = "spark.driver.memory"
    sized = env.get("SPARK_DRIVER_MEMORY") or chosen(memory, "--driver-memory")
    if physical is not None and not sized:
        share = min(max(physical // DRIVER_MEMORY_SHARE, DRIVER_MEMORY_LEAST), DRIVER_MEMORY_MOST)
        out[memory] = f"{share >> 20}m"
    options = "spark.driver.extraJavaOptions"
    if not chosen(options, "--driver-java-options"):
        out[options] = LOCAL_JAVA_OPTIONS
    python_chosen = env.get("PYSPARK_PYTHON") or chosen("spark.pyspark.python")
    if not python_chosen and not chosen(DAEMON_MODULE):
        out[DAEMON_MODULE] = daemon.MODULE
        if not chosen(SIMPLIFIED_TRACEBACK):
            out[SIMPLIFIED_TRACEBACK] = "1"
    return out


DAEMON_MODULE = "spark.python.daemon.module"
# Spark starts a Python daemon for each environment its runners give the workers, and some
# of its runners add this variable where others do not: set for all, one daemon serves all
SIMPLIFIED_TRACEBACK = "spark.executorEnv.SPARK_SIMPLIFIED_TRACEBACK"


def _defaults_set(path: Path, key: str) -> bool:
    """Whether a spark-defaults.conf sets ``key`` (a line ``key value`` or ``key=value``)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(re.match(rf"\s*{re.escape(key)}[\s=]", line) for line in lines)


def physical_memory() -> int | None:
    """The machine's memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def is_local(master: str) -> bool:
    return master == "local" or master.startswith(("local[", "local-cluster["))


def prepare_workers(spark: SparkSession) -> None:
    """Which Python the workers run and what it imports: the driver's interpreter with a
    local master (unless ``PYSPARK_PYTHON`` / ``spark.pyspark.python`` is set); else
    neardup shipped (:mod:`neardup.engines.spark.spark_ship`), unpacked into the executors'
    working directories and put first on their ``PYTHONPATH``. The SparkContext reads both
    when it sends a Python function, so they apply to a running session too."""
    from neardup.engines.spark import spark_ship

    context = spark.sparkContext
    # PySpark reads PYSPARK_PYTHON once, when the context starts, and never the setting
    chosen = os.environ.get("PYSPARK_PYTHON") or spark.conf.get("spark.pyspark.python", None)
    local = is_local(context.master)
    if chosen or local:
        context.pythonExec = chosen or sys.executable
    if local:
        return
    started = time.perf_counter()
    archives = spark_ship.environment_archives()
    shipped_names = ", ".join(str(archive) for archive, _ in archives)
    logging.getLogger("neardup.spark").info(
        "shipping %s (%.1f s)", shipped_names, time.perf_counter() - started
    )
    for archive, directory in archives:
        context.addArchive(f"{archive}#{directory}")
    paths = context.environment.get("PYTHONPATH")
    present = paths.split(os.pathsep) if paths else []
    shipped = [directory for _, directory in archives if directory not in present]
    if shipped:
        context.environment["PYTHONPATH"] = os.pathsep.join([*shipped, *present])


def check_workers(spark: SparkSession) -> None:
    """One task a core imports neardup (and its compiled dependencies) in a Python worker:
    ConfigError naming the worker's Python when the import fails or finds another version."""
    import neardup

    context = spark.sparkContext
    tasks = max(1, min(int(context.defaultParallelism), 64))
    found = context.parallelize(range(tasks), tasks).map(_probe()).distinct().collect()
    for version, error, python, host in sorted(found, key=str):
        if version is not None and version != neardup.__version__:
            raise ConfigError(
                f"the Python workers on {host} run neardup {version} ({python}), this command "
                f"neardup {neardup.__version__}: install the same version there or set "
                "PYSPARK_PYTHON to a Python that has it"
            )
        if error is not None:
            raise ConfigError(
                f"the Python workers cannot import neardup on {host} ({python}): {error}; "
                "install neardup there or set PYSPARK_PYTHON to a Python that has it"
            )


def _probe() -> Callable[[int], tuple[str | None, str | None, str, str]]:
    """The probe task, defined here so that it is pickled by value (a function of a neardup
    module would be pickled by reference: unpickling it would import neardup first)."""

    def probe(_: int) -> tuple[str | None, str | None, str, str]:
        import socket
        import sys

        python = f"{sys.executable}, Python {sys.version_info[0]}.{sys.version_info[1]}"
        version = None
        try:
            import neardup

            version = getattr(neardup, "__version__", "unknown")
            import neardup.engines.spark.documents  # numpy, numba, pyarrow: what the stages import
        except Exception as exc:
            return version, f"{type(exc).__name__}: {exc}", python, socket.gethostname()
        return version, None, python, socket.gethostname()

    return probe


@contextlib.contextmanager
def spark_errors(what: str) -> Iterator[None]:
    """Errors of Spark (Py4J, PySpark) as :class:`SparkRunError`: ``what``, the error's
    first telling line, and the log file the whole error is appended to."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        yield
    except (Py4JError, PySparkException) as exc:
        text = str(exc)
        path = log_path()
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"\n==== neardup: {what} ====\n{type(exc).__name__}: {text}\n")
        raise SparkRunError(f"{what}: {first_line(text)} (details: {path})") from None


def first_line(text: str) -> str:
    """The line of a Spark error that says what went wrong: a Python worker's exception (the
    last line of its traceback), else the innermost exception named on the first line that
    names one (Spark wraps a task's error in "Job aborted … most recent failure: …"), else
    the error's first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if "Traceback (most recent call last)" in text:
        raised = [line for line in lines if _PYTHON_ERROR.match(line)]
        if raised:
            return _short(raised[-1])
    for line in lines:
        named = [m for m in _JAVA_ERROR.finditer(line) if not m.group().startswith(_WRAPPERS)]
        if named:
            return _short(line[named[-1].start() :])
    return _short(lines[0] if lines else "unknown error")


_PYTHON_ERROR = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit)(: |$)")
_JAVA_ERROR = re.compile(r"(?:[a-z_]\w*\.)+[A-Z]\w*(?:Exception|Error): ")
_WRAPPERS = ("org.apache.spark.SparkException", "py4j.")


def _short(line: str, limit: int = 400) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"
