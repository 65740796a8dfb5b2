"""A throwaway Spark standalone cluster for the tests: a master and workers, separate JVMs on
loopback, started by the PySpark distribution's own daemon script.

The pip package of PySpark holds ``sbin/spark-daemon.sh`` (what ``start-master.sh`` and
``start-worker.sh`` of a full distribution call) but not those two wrappers, so the daemons
are started as they start them: ``spark-daemon.sh start org.apache.spark.deploy.master.Master
1 --host … --port … --webui-port …`` and ``… deploy.worker.Worker N … spark://…``, with
SPARK_HOME the pyspark package directory and the logs, pid files and work directories in a
temporary directory. :func:`running_cluster` waits until every worker is registered (the
master's ``/json``), yields the :class:`Cluster` and stops the daemons at the end
(``spark-daemon.sh stop``; a daemon still alive then is killed by its pid).

:func:`bare_python` makes a directory whose ``python3`` is a Python without neardup (a
virtual environment made with ``--without-pip``): put first on a PATH, it is what Spark
starts as its Python workers by default.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pgserver import free_port

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
_REGISTER_SECONDS = 120.0
_FINISH_SECONDS = 60.0


class SparkClusterError(RuntimeError):
    """A daemon did not start or the workers did not register; the message holds the logs."""


@dataclass(frozen=True)
class Cluster:
    url: str  # spark://127.0.0.1:PORT
    webui: str  # http://127.0.0.1:PORT
    directory: Path  # logs, pid files, work and local directories

    def remove_finished_applications(self) -> None:
        """Delete the workers' directories of the applications that have ended (a standalone
        worker keeps them, the unpacked archives included, until its own cleanup). The
        master learns that a driver has gone a moment after it exits: its applications are
        waited for (up to ``_FINISH_SECONDS``) before their directories are removed."""
        deadline = time.monotonic() + _FINISH_SECONDS
        while True:
            running = {app["id"] for app in _state(self.webui).get("activeapps", [])}
            if not running or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        for app in self.directory.glob("work-*/app-*"):
            if app.name not in running:
                shutil.rmtree(app, ignore_errors=True)


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def bare_python(directory: Path) -> Path:
    """The ``bin`` directory of a new virtual environment (``python3``, ``python``) without
    neardup (nor anything else installed). Its own directory: a link to its ``python`` from
    elsewhere would not find the environment's ``pyvenv.cfg``."""
    venv = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin"


def _daemon(action: str, cls: str, instance: int, env: dict[str, str], *args: str) -> None:
    script = spark_home() / "sbin" / "spark-daemon.sh"
    done = subprocess.run(
        ["bash", str(script), action, cls, str(instance), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise SparkClusterError(f"spark-daemon.sh {action} {cls}: {done.stdout}{done.stderr}")


def _state(webui: str) -> dict:
    with urllib.request.urlopen(f"{webui}/json", timeout=5) as response:
        return json.load(response)


def _logs(directory: Path) -> str:
    return "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}"
        for p in sorted((directory / "logs").glob("*.out"))
    )


@contextlib.contextmanager
def running_cluster(python_bin: Path, workers: int = 2, cores: int = 1) -> Iterator[Cluster]:
    """A master and ``workers`` workers of ``cores`` cores and 1 GiB each on 127.0.0.1, whose
    PATH starts with ``python_bin``; stopped at the end."""
    directory = Path(tempfile.mkdtemp(prefix="neardup-spark-cluster-"))
    base = os.environ | {
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOG_DIR": str(directory / "logs"),
        "SPARK_PID_DIR": str(directory / "pids"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": f"{python_bin}{os.pathsep}{os.environ['PATH']}",
    }
    base.pop("PYSPARK_PYTHON", None)
    base.pop("PYTHONPATH", None)  # the workers see no neardup source tree either
    port, ui = free_port(), free_port()
    url, webui = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}"
    started: list[tuple[str, int, dict[str, str]]] = []
    try:
        _daemon("start", MASTER, 1, base, "--host", "127.0.0.1", "--port", str(port),
                "--webui-port", str(ui))  # fmt: skip
        started.append((MASTER, 1, base))
        for n in range(1, workers + 1):
            env = base | {
                "SPARK_WORKER_DIR": str(directory / f"work-{n}"),
                "SPARK_LOCAL_DIRS": str(directory / f"local-{n}"),
            }
            _daemon("start", WORKER, n, env, "--host", "127.0.0.1", "--cores", str(cores),
                    "--memory", "1g", "--webui-port", str(free_port()), url)  # fmt: skip
            started.append((WORKER, n, env))
        deadline = time.monotonic() + _REGISTER_SECONDS
        while True:
            try:
                alive = _state(webui).get("aliveworkers", 0)
            except OSError:
                alive = 0
            if alive >= workers:
                break
            if time.monotonic() > deadline:
                raise SparkClusterError(
                    f"{alive} of {workers} workers registered in {_REGISTER_SECONDS:.0f} s\n"
                    + _logs(directory)
                )
            time.sleep(0.5)
        yield Cluster(url, webui, directory)
    finally:
        for cls, n, env in reversed(started):
            with contextlib.suppress(Exception):
                _daemon("stop", cls, n, env)
        for pid in _leftovers(directory):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def _leftovers(directory: Path) -> set[int]:
    """Processes of this cluster still alive: the daemons of its pid files, and any process
    (an executor, its Python workers) whose working directory lies in ``directory``."""
    pids = set()
    for pid_file in (directory / "pids").glob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            pids.add(int(pid_file.read_text().strip()))
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if Path(os.readlink(proc / "cwd")).is_relative_to(directory):
                pids.add(int(proc.name))
    return {p for p in pids if Path(f"/proc/{p}").exists()}
