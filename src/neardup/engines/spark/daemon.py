"""The daemon of neardup's Python workers on Spark: PySpark's, with the modules the stages
run imported once, before it forks a worker for each task.

Spark starts one daemon a Python interpreter and environment on each executor
(``spark.python.daemon.module``), and the daemon forks the workers that run the tasks.
PySpark's daemon imports nothing a worker runs, so every worker imports PySpark's worker
(from its zip archive, compiled each time: a zip holds no cached bytecode), pandas,
pyarrow, NumPy, numba and neardup's stages anew. Imported here, they are inherited by
every fork.

numba's own set-up before its first kernel (its extensions' entry points, its typing and
target registries) is done here too (:func:`prepare_numba`), without the imports no kernel of
neardup needs (:mod:`neardup.util.numba_trim`: SciPy's BLAS, cffi); the compiled kernels are not
loaded: running one of the parallel ones starts numba's OpenMP threads, and GNU OpenMP
refuses to run in a fork of a process that used it.

pyarrow imports pandas the first time it looks at an array (its converters ask whether a
value is a pandas object), which no stage needs: the daemon lets that first look find no
pandas (:func:`arrow_without_pandas`), so no worker pays for the import.

Spark puts archives of its distribution first on the workers' path: zip archives of PySpark
and py4j, and a jar of its own (Java classes only). Where they lie in the PySpark package the
interpreter has installed (pip's), the daemon imports the installed modules instead
(:func:`installed_pyspark`): their bytecode is cached, and a worker that adds Spark's files
to its path no longer reads the directory of every archive (thousands of entries) again.
Before forking, the daemon's objects are frozen out of the collector's reach
(:func:`gc.freeze`): PySpark's worker collects garbage after every task, and each
collection would otherwise walk every object of the modules imported here.

NumPy's BLAS is given one thread (Spark runs a worker a core; a thread pool is not
inherited by a fork). A module that fails to import here is left to the worker, where the
probe of :func:`neardup.engines.spark.spark_session.check_workers` names what fails.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from importlib.machinery import PathFinder
from pathlib import Path

from neardup.util import heap
from neardup.util.numba_trim import trim_numba_imports

MODULE = "neardup.engines.spark.daemon"
PRELOADED = (
    "pyspark.worker",
    "pyspark.sql.pandas.serializers",
    "neardup.engines.spark.documents",
    "neardup.engines.spark.batches",
    "neardup.engines.spark.spark_review",
)


def preload(names: tuple[str, ...] = PRELOADED) -> list[str]:
    """Import ``names``; those that failed (each worker imports them again and fails
    where the probe sees it)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    return failed


def arrow_without_pandas() -> bool:
    """pyarrow's probe for pandas, made while pandas cannot be imported: pyarrow keeps the
    answer "no pandas" for this process and its forks (``import pandas`` itself still works
    afterwards). Whether pyarrow now runs without it (False where pandas was imported
    already)."""
    import sys

    import pyarrow as pa

    if "pandas" in sys.modules:
        return False
    sys.meta_path.insert(0, _NoPandas)
    try:
        pa.array([0])  # the probe
    finally:
        sys.meta_path.remove(_NoPandas)
    return "pandas" not in sys.modules


class _NoPandas:
    """An import finder that finds pandas missing."""

    @staticmethod
    def find_spec(name: str, *_: object) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("No module named 'pandas'", name=name)


def prepare_numba() -> bool:
    """numba's set-up that its first kernel would do in every worker (no thread started);
    whether it was done."""
    try:
        from numba.core import entrypoints
        from numba.core.registry import cpu_target

        entrypoints.init_all()
        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()
    except Exception:  # numba's internals moved: each worker does it, as without this
        return False
    return True


def installed_pyspark() -> list[str]:
    """Drop from ``sys.path`` the archives of Spark's distribution (zips, jars) that lie
    inside the PySpark package this interpreter has installed (the same release: pip's
    package carries them, and pins the py4j it installs beside it); the entries dropped.
    Archives of another Spark (``SPARK_HOME`` elsewhere) stay first on the path, as Spark
    put them. Call it before PySpark is imported."""
    archives = [entry for entry in sys.path if entry.endswith((".zip", ".jar"))]
    rest = [entry for entry in sys.path if entry not in archives]
    installed = PathFinder.find_spec("pyspark", rest)
    if installed is None or installed.origin is None:
        return []
    package = Path(installed.origin).parent.resolve()
    own_py4j = PathFinder.find_spec("py4j", rest) is not None
    dropped = [
        entry
        for entry in archives
        if Path(entry).resolve().is_relative_to(package)
        and (own_py4j or not Path(entry).name.startswith("py4j"))
    ]
    for entry in dropped:
        sys.path.remove(entry)
    for cached in [c for c in sys.path_importer_cache if c.startswith(tuple(dropped))]:
        del sys.path_importer_cache[cached]
    return dropped


def prepare() -> None:
    """All the daemon does before it starts forking: the installed PySpark in place of its
    archived copies, the C heap tuned for batches (as the command line tunes it:
    :func:`neardup.util.heap.reuse_freed_memory`), what no kernel needs kept out, pyarrow
    without pandas, the stages' modules imported, numba set up, and every object made so
    far frozen out of the workers' collections."""
    installed_pyspark()
    heap.reuse_freed_memory()
    trim_numba_imports()
    arrow_without_pandas()
    preload()
    prepare_numba()
    gc.freeze()


if __name__ == "__main__":
    prepare()
    from pyspark.daemon import manager

    manager()
