"""``neardup dedup --engine spark`` as a user runs it: a subprocess whose Spark workers find a
``python3`` without neardup first on their PATH.

- ``local[2]``: the workers run the command's own interpreter, not the PATH's;
- a standalone cluster (a master and two workers, separate JVMs: ``spark_cluster``): neardup
  is shipped to the executors and the outputs equal the local engine's;
- the errors a cluster user meets are one line, the Java stack in the log file it names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import neardup, run
from sparkout import assert_same_outputs
from textgen import near_copies, text

# one worker holds the cluster (one a run); the Spark session of the other Spark tests is
# another worker's, so the two groups run side by side
pytestmark = pytest.mark.xdist_group("spark-cluster")

SMALL = ["--spark-conf", "spark.sql.shuffle.partitions=2", "--spark-conf", "spark.ui.enabled=false"]


def _env(bare_python_bin: Path) -> dict[str, str]:
    env = os.environ | {"PATH": f"{bare_python_bin}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYSPARK_PYTHON", None)
    return env


def _generated(path: Path) -> Path:
    """Near copies, halves of texts (contained in their originals) and unrelated texts."""
    originals, copies = near_copies(25, seed=40, n=120)
    halves = [body[: len(body) // 2] for body in originals[:8]]
    others = [text(900 + i, 80) for i in range(20)]
    bodies = [t for group in zip(originals, copies, strict=True) for t in group]
    bodies += halves + others
    with path.open("w", encoding="utf-8") as out:
        for i, body in enumerate(bodies):
            out.write(json.dumps({"id": f"g{i:03d}", "text": body}) + "\n")
    return path


def _one_line_error(done: subprocess.CompletedProcess, code: int) -> str:
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert not re.search(r"\bat (org|java|scala)\.", done.stderr)
    return lines[0]


def test_the_path_python_lacking_neardup_does_not_matter_with_a_local_master(
    tmp_path, bare_python_bin
):
    """neardup run by an interpreter that is not the PATH's ``python3`` (a virtual
    environment used without activating it): the workers run that interpreter."""
    from neardup.io.sample_corpus import sample_path

    env = _env(bare_python_bin)
    lacking = subprocess.run(
        ["python3", "-c", "import neardup.engines.spark.batches"], env=env, capture_output=True
    )
    assert lacking.returncode != 0  # the PATH's python3 cannot run the engine
    with sample_path() as path:
        local = run("dedup", str(path), "--out", str(tmp_path / "local"))
        assert local.exit_code == 0, local.output
        command = [sys.executable, "-m", "neardup", "dedup", str(path)]
        command += ["--out", str(tmp_path / "spark"), "--engine", "spark"]
        command += ["--master", "local[2]", *SMALL]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert assert_same_outputs(tmp_path / "local", tmp_path / "spark")["removed"]


@pytest.mark.parametrize("method", ["full", "minhash"])
def test_a_standalone_cluster_without_neardup_gives_the_local_engine_answer(
    tmp_path, spark_cluster, bare_python_bin, method
):
    """Two workers, separate JVMs, whose Python lacks neardup: neardup is shipped, and the
    pairs, clusters, kept and removed records equal the local engine's, on the bundled
    sample and a generated corpus read together (two inputs)."""
    from neardup.io.sample_corpus import sample_path

    corpus = _generated(tmp_path / "generated.jsonl")
    with sample_path() as sample:
        inputs = [str(sample), str(corpus)]
        local = run("dedup", *inputs, "--method", method, "--out", str(tmp_path / "local"))
        assert local.exit_code == 0, local.output
        done = neardup(
            "dedup", *inputs, "--method", method, "--out", str(tmp_path / "spark"),
            "--engine", "spark", "--master", spark_cluster.url, *SMALL,
            env=_env(bare_python_bin), timeout=900,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    removed = [json.loads(x)["id"] for x in (tmp_path / "local/removed.jsonl").open()]
    assert any(i.startswith("g") for i in removed)  # both corpora hold duplicates
    assert any(not i.startswith("g") for i in removed)
    assert summary["clusters"] > 10
    spark_summary = json.loads((tmp_path / "spark" / "summary.json").read_text())
    assert spark_summary["master"] == spark_cluster.url
    # the work ran on the cluster's executors (their directories hold the shipped neardup)
    assert list(spark_cluster.directory.glob("work-*/app-*/*/neardup-env/neardup/__init__.py"))


def test_no_java_is_one_line(tmp_path, bare_python_bin):
    env = os.environ | {"PATH": str(bare_python_bin)}  # no java on it
    env.pop("JAVA_HOME", None)
    done = neardup(
        "dedup", _generated(tmp_path / "in.jsonl").as_posix(), "--out", str(tmp_path / "o"),
        "--engine", "spark", "--master", "local[1]", env=env, timeout=300,
    )  # fmt: skip
    line = _one_line_error(done, 1)
    assert "needs Java 17 or newer (no java on PATH)" in line


@pytest.mark.parametrize(
    ("master", "message"),
    [
        ("sprak://127.0.0.1:7077", "is not a Spark master URL"),
        ("spark://127.0.0.1:{free}", "no Spark master answers (127.0.0.1:{free}: "),
        ("spark://127.0.0.1", "'127.0.0.1' is not HOST:PORT"),
    ],
)
def test_a_wrong_master_url_is_one_line(tmp_path, master, message):
    from pgserver import free_port

    port = str(free_port())
    done = neardup(
        "dedup", _generated(tmp_path / "in.jsonl").as_posix(), "--out", str(tmp_path / "o"),
        "--engine", "spark", "--master", master.format(free=port), timeout=300,
    )  # fmt: skip
    assert message.format(free=port) in _one_line_error(done, 2)
    assert not (tmp_path / "o").exists()


def test_a_worker_python_spark_cannot_start_is_one_line_and_the_stack_is_in_the_log(tmp_path):
    """PYSPARK_PYTHON naming no program: Spark fails the first job with a Java stack; the
    terminal gets one line naming the log file, which holds the stack."""
    env = os.environ | {"PYSPARK_PYTHON": str(tmp_path / "no-such-python")}
    done = neardup(
        "dedup", _generated(tmp_path / "in.jsonl").as_posix(), "--out", str(tmp_path / "o"),
        "--engine", "spark", "--master", "local[1]", *SMALL, env=env, timeout=900,
    )  # fmt: skip
    line = _one_line_error(done, 1)
    assert line.startswith("neardup: error: Spark's executors cannot run neardup: ")
    assert "no-such-python" in line
    log = re.search(r"\(details: (\S+)\)$", line)
    assert log is not None, line
    assert re.search(r"\bat org\.apache\.spark\.", Path(log.group(1)).read_text())
