"""numba's parallel kernels in a Spark task, on the cores Spark gives the task.

An executor runs as many tasks at once as it has cores (``spark.task.cpus`` each, one by
default), each in a Python worker of its own, and tells those workers so
(``OMP_NUM_THREADS``). numba does not read that: every worker's kernels would start a
thread for each core of the machine, and the tasks' threads would take turns on the same
cores. A stage of many tasks is wrapped by :func:`on_task_cores`; a stage of one task that
runs alone (the pairing task of a small corpus, the review's passages) keeps every core.
Nothing here imports pyspark: outside a Spark worker a stage runs as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

import pyarrow as pa

Stage = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def task_cores() -> int | None:
    """The cores Spark gives the task this worker runs (``spark.task.cpus``); None outside a
    Spark task."""
    pyspark = sys.modules.get("pyspark")
    if pyspark is None:  # no Spark worker runs this process
        return None
    context = pyspark.TaskContext.get()
    return None if context is None else context.cpus()


def on_task_cores(stage: Stage) -> Stage:
    """``stage`` with numba's kernels on at most :func:`task_cores` threads, as many as
    before once it ends (a worker may run the next task of another stage)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        cores = task_cores()
        if cores is None:
            yield from stage(batches)
            return
        import numba

        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(cores, before)))
        try:
            yield from stage(batches)
        finally:
            numba.set_num_threads(before)

    return run
