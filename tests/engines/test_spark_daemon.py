"""The Python workers' daemon: what it imports before it forks them (no Spark started)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark

from neardup.engines.spark import daemon

PACKAGE = Path(pyspark.__file__).resolve().parent


def _printed(code: str, path: list[Path] | None = None) -> list[str]:
    """What ``code`` prints in a fresh interpreter (nothing imported yet), split; ``path``
    first on its module path, as Spark puts its archives there for the workers."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.split()


def _spark_s_archives() -> list[Path]:
    """What Spark puts first on its Python workers' path from pip's PySpark: the zip
    archives of PySpark and py4j, and the jar of Spark's core."""
    archives = sorted((PACKAGE / "python" / "lib").glob("*.zip"))
    archives += sorted((PACKAGE / "jars").glob("spark-core_*.jar"))
    assert len(archives) == 3
    return archives


def test_the_stages_modules_are_imported_before_any_fork():
    printed = _printed(
        "import sys; from neardup.engines.spark import daemon; failed = daemon.preload(); "
        "print(failed, all(name in sys.modules for name in daemon.PRELOADED))"
    )
    assert printed == ["[]", "True"]


def test_a_module_that_fails_is_left_to_the_worker_and_the_others_still_load():
    printed = _printed(
        "import sys; from neardup.engines.spark import daemon; "
        "print(daemon.preload(('no_such_module_here', 'neardup.engines.spark.batches')), "
        "'neardup.engines.spark.batches' in sys.modules)"
    )
    assert printed == ["['no_such_module_here']", "True"]


def test_numpy_s_blas_gets_one_thread_unless_the_user_chose():
    code = "import os; {}; from neardup.engines.spark import daemon; daemon.preload(()); "
    code += "print(os.environ['OPENBLAS_NUM_THREADS'])"
    assert _printed(code.format("os.environ.pop('OPENBLAS_NUM_THREADS', None)")) == ["1"]
    assert _printed(code.format("os.environ['OPENBLAS_NUM_THREADS'] = '3'")) == ["3"]


def test_the_module_spark_is_told_to_run_is_this_one():
    assert daemon.__name__ == daemon.MODULE


def test_numba_is_set_up_before_any_fork_and_starts_no_thread():
    """The forks find numba's registries filled (their first kernel loads from the cache at
    once), and no thread is running that a fork would lose."""
    printed = _printed(
        "import os; from neardup.engines.spark import daemon; daemon.preload(); "
        "print(daemon.prepare_numba()); from numba.core.registry import cpu_target; "
        "print(cpu_target.target_context._registries != {}); "
        "import threading; print(threading.active_count())"
    )
    assert printed == ["True", "True", "1"]


def test_the_daemon_sets_numba_up_without_scipy_s_blas_or_cffi():
    """numba's set-up in the daemon skips its BLAS probe (SciPy's linear algebra) and its
    cffi support, as the command line does: no kernel of neardup uses either."""
    printed = _printed(
        "import sys; from neardup.engines.spark import daemon; daemon.prepare(); "
        "print('numba.np.arraymath' in sys.modules, 'scipy.linalg' in sys.modules, "
        "sys.modules.get('cffi', 'absent') is None)"
    )
    assert printed == ["True", "False", "True"]


def test_arrow_in_the_workers_runs_without_pandas_yet_pandas_still_imports():
    """After the daemon's set-up, pyarrow's conversions both ways import no pandas (it costs
    every run a quarter of a second of CPU for nothing), and a program that imports pandas
    itself still gets it."""
    printed = _printed(
        "import sys; from neardup.engines.spark import daemon; daemon.prepare(); "
        "import numpy as np, pyarrow as pa; "
        "batch = pa.RecordBatch.from_pydict({'a': np.arange(3)}); "
        "print(batch.column('a').to_numpy().sum(), pa.array([1, 2]).to_pylist() == [1, 2], "
        "'pandas' in sys.modules); import pandas; print('pandas' in sys.modules)"
    )
    assert printed == ["3", "True", "False", "True"]


def test_arrow_keeps_pandas_where_it_was_imported_already():
    printed = _printed(
        "import pandas; from neardup.engines.spark import daemon; "
        "print(daemon.arrow_without_pandas())"
    )
    assert printed == ["False"]


def test_the_installed_pyspark_s_own_archives_leave_the_path_and_it_loads_from_the_package():
    code = (
        "import sys; from neardup.engines.spark import daemon; "
        "dropped = daemon.installed_pyspark(); import pyspark, py4j; "
        "print(len(dropped), any(p in sys.path for p in dropped), "
        "any(c.startswith(tuple(dropped)) for c in sys.path_importer_cache), "
        "pyspark.__file__.endswith('pyspark/__init__.py'), "
        "py4j.__file__.endswith('py4j/__init__.py'))"
    )
    assert _printed(code, _spark_s_archives()) == ["3", "False", "False", "True", "True"]


def test_the_archives_of_another_spark_stay_first(tmp_path: Path):
    """A ``SPARK_HOME`` elsewhere may hold another release: its archives are Spark's choice."""
    other = tmp_path / "spark" / "python" / "lib" / "pyspark.zip"
    other.parent.mkdir(parents=True)
    shutil.copy(PACKAGE / "python" / "lib" / "pyspark.zip", other)
    code = (
        "from neardup.engines.spark import daemon; print(daemon.installed_pyspark()); "
        f"import pyspark; print(pyspark.__file__.startswith({str(other)!r}))"
    )
    assert _printed(code, [other]) == ["[]", "True"]


def test_the_daemon_s_objects_are_frozen_out_of_the_workers_collections():
    """PySpark's worker collects garbage after every task: the objects of the modules the
    daemon imported are frozen before it forks, so a collection walks only the task's."""
    printed = _printed(
        "import gc; from neardup.engines.spark import daemon; daemon.prepare(); "
        "print(gc.get_freeze_count() > 100_000, len(gc.get_objects()) < 1_000)"
    )
    assert printed == ["True", "True"]
