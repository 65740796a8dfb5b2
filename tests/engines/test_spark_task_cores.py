"""numba's kernels on the task's cores: outside a Spark task a stage runs as it is (the Spark
case is in test_engine_spark.py, beside its session)."""

from __future__ import annotations

from collections.abc import Iterator

import numba
import pyarrow as pa

from neardup.engines.spark.task_cores import on_task_cores, task_cores


def _threads_seen(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield batch.append_column("threads", pa.array([numba.get_num_threads()] * len(batch)))


def test_outside_a_spark_task_the_stage_keeps_its_threads_and_batches():
    before = numba.get_num_threads()
    batches = [pa.RecordBatch.from_pydict({"x": [1, 2]}), pa.RecordBatch.from_pydict({"x": [3]})]
    out = list(on_task_cores(_threads_seen)(iter(batches)))
    assert task_cores() is None
    assert [b.column("x").to_pylist() for b in out] == [[1, 2], [3]]
    assert {t for b in out for t in b.column("threads").to_pylist()} == {before}
    assert numba.get_num_threads() == before
