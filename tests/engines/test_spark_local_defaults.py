"""The settings a local master gets unless the user chose them (no Spark started)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neardup.engines.spark import daemon
from neardup.engines.spark.spark_session import (
    DAEMON_MODULE,
    LOCAL_JAVA_OPTIONS,
    SIMPLIFIED_TRACEBACK,
    forks_the_driver,
    local_defaults,
)

GIB = 1 << 30
MEMORY, OPTIONS = "spark.driver.memory", "spark.driver.extraJavaOptions"


@pytest.mark.parametrize(
    ("physical", "expected"),
    [(24 * GIB, "6144m"), (2 * GIB, "1024m"), (512 * GIB, "32768m"), (None, None)],
)
def test_a_local_master_gets_a_quarter_of_the_machine_within_bounds(physical, expected):
    for master in ("local[2]", "local[*]", "local", None):
        chosen = local_defaults(master, {}, {}, physical)
        assert chosen.get(MEMORY) == expected
        assert chosen[OPTIONS] == LOCAL_JAVA_OPTIONS
        assert chosen[DAEMON_MODULE] == daemon.MODULE
        assert chosen[SIMPLIFIED_TRACEBACK] == "1"


@pytest.mark.parametrize("master", ["spark://host:7077", "yarn", "k8s://host:443"])
def test_other_masters_keep_spark_s_defaults(master):
    assert local_defaults(master, {}, {}, 24 * GIB) == {}


def test_the_user_s_choice_stands(tmp_path: Path):
    def memory(settings: dict[str, str], env: dict[str, str]) -> str | None:
        return local_defaults("local[2]", settings, env, 24 * GIB).get(MEMORY)

    assert memory({MEMORY: "2g"}, {}) is None
    assert memory({}, {"SPARK_DRIVER_MEMORY": "2g"}) is None
    assert memory({}, {"PYSPARK_SUBMIT_ARGS": "--driver-memory 2g pyspark-shell"}) is None
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("spark.executor.memory 3g\n", encoding="utf-8")
    conf_dir = {"SPARK_CONF_DIR": str(tmp_path)}
    assert memory({}, conf_dir) == "6144m"
    conf.write_text("spark.executor.memory 3g\nspark.driver.memory   2g\n", encoding="utf-8")
    assert memory({}, conf_dir) is None
    home = {"SPARK_HOME": str(tmp_path.parent)}
    (tmp_path.parent / "conf").mkdir()
    (tmp_path.parent / "conf" / "spark-defaults.conf").write_text("spark.driver.memory=2g\n")
    assert memory({}, home) is None
    assert OPTIONS not in local_defaults("local[2]", {OPTIONS: "-Xss4m"}, {}, 24 * GIB)
    submit = {"PYSPARK_SUBMIT_ARGS": "--driver-java-options -Xss4m pyspark-shell"}
    assert OPTIONS not in local_defaults("local[2]", {}, submit, 24 * GIB)


def test_the_workers_daemon_is_neardup_s_only_for_the_driver_s_own_python(tmp_path: Path):
    def daemon_module(settings: dict[str, str], env: dict[str, str]) -> str | None:
        return local_defaults("local[2]", settings, env, 24 * GIB).get(DAEMON_MODULE)

    assert daemon_module({}, {}) == daemon.MODULE
    assert daemon_module({}, {"PYSPARK_PYTHON": "/opt/other/python"}) is None
    assert daemon_module({"spark.pyspark.python": "/opt/other/python"}, {}) is None
    assert daemon_module({DAEMON_MODULE: "my.daemon"}, {}) is None  # the user's stands
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("spark.pyspark.python /opt/other/python\n", encoding="utf-8")
    assert daemon_module({}, {"SPARK_CONF_DIR": str(tmp_path)}) is None
    submit = {"PYSPARK_SUBMIT_ARGS": "--driver-java-options -Xss4m pyspark-shell"}
    assert daemon_module({}, submit) == daemon.MODULE


def test_the_workers_environment_is_one_for_every_job_with_neardup_s_daemon():
    """With neardup's daemon, every job's workers get the variable some of Spark's runners
    add (one daemon, not two); the user's value stands, and their own daemon gets none."""
    mine = local_defaults("local[2]", {}, {}, 24 * GIB)
    assert mine[SIMPLIFIED_TRACEBACK] == "1"
    theirs = local_defaults("local[2]", {SIMPLIFIED_TRACEBACK: "0"}, {}, 24 * GIB)
    assert SIMPLIFIED_TRACEBACK not in theirs
    assert theirs[DAEMON_MODULE] == daemon.MODULE
    other = local_defaults("local[2]", {DAEMON_MODULE: "my.daemon"}, {}, 24 * GIB)
    assert SIMPLIFIED_TRACEBACK not in other


@pytest.mark.parametrize(
    ("master", "python", "module", "forks"),
    [
        ("local[2]", sys.executable, daemon.MODULE, True),
        ("local[*]", sys.executable, daemon.MODULE, True),
        ("local[2]", "/usr/bin/python3", daemon.MODULE, False),  # PYSPARK_PYTHON chosen
        ("local[2]", sys.executable, None, False),  # PySpark's own daemon
        ("local[2]", sys.executable, "their.daemon", False),
        ("spark://host:7077", sys.executable, daemon.MODULE, False),
    ],
)
def test_the_workers_probe_is_left_out_only_where_they_fork_the_driver(
    master, python, module, forks
):
    """Only forks of neardup's daemon in the driver's interpreter on a local master run
    this neardup for certain; any other workers are probed first."""
    assert forks_the_driver(master, python, module) is forks
