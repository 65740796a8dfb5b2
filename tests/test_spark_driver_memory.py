"""The driver memory a local master gets unless the user sized it (no Spark started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup.engines.spark_session import default_driver_memory

GIB = 1 << 30


@pytest.mark.parametrize(
    ("physical", "expected"),
    [(24 * GIB, "6144m"), (2 * GIB, "1024m"), (512 * GIB, "32768m"), (None, None)],
)
def test_a_local_master_gets_a_quarter_of_the_machine_within_bounds(physical, expected):
    for master in ("local[2]", "local[*]", "local", None):
        assert default_driver_memory(master, {}, {}, physical) == expected


@pytest.mark.parametrize("master", ["spark://host:7077", "yarn", "k8s://host:443"])
def test_other_masters_keep_spark_s_default(master):
    assert default_driver_memory(master, {}, {}, 24 * GIB) is None


def test_the_user_s_choice_stands(tmp_path: Path):
    assert default_driver_memory("local[2]", {"spark.driver.memory": "2g"}, {}, 24 * GIB) is None
    assert default_driver_memory("local[2]", {}, {"SPARK_DRIVER_MEMORY": "2g"}, 24 * GIB) is None
    submit = {"PYSPARK_SUBMIT_ARGS": "--driver-memory 2g pyspark-shell"}
    assert default_driver_memory("local[2]", {}, submit, 24 * GIB) is None
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("spark.executor.memory 3g\n", encoding="utf-8")
    assert default_driver_memory("local[2]", {}, {"SPARK_CONF_DIR": str(tmp_path)}, 24 * GIB)
    conf.write_text("spark.executor.memory 3g\nspark.driver.memory   2g\n", encoding="utf-8")
    assert (
        default_driver_memory("local[2]", {}, {"SPARK_CONF_DIR": str(tmp_path)}, 24 * GIB) is None
    )
    home = {"SPARK_HOME": str(tmp_path.parent)}
    (tmp_path.parent / "conf").mkdir()
    (tmp_path.parent / "conf" / "spark-defaults.conf").write_text("spark.driver.memory=2g\n")
    assert default_driver_memory("local[2]", {}, home, 24 * GIB) is None
