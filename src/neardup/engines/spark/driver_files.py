"""Small outputs the driver holds, written by the driver itself as lines of JSON.

An output worked out on the driver (the pairs, clusters and review of a run whose outcome
is there: :mod:`neardup.engines.spark.outcome`) costs Spark a job, a plan and a data
source's set-up to write, whatever its size. The driver writes it instead, through
Hadoop's file system (any path Spark writes: local, HDFS, S3), in the layout Spark's
writers leave: the directory holds one part file and a ``_SUCCESS`` marker. Its lines are
those the local engine writes (:func:`neardup.io.writers.dumps`: the columns in order,
nulls written).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from neardup.io.writers import dumps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PART = "part-00000.json"
ROWS_AT_ONCE = 1 << 16  # rows turned into lines and handed to the JVM at a time


def json_lines(table: pa.Table) -> bytes:
    """Each row of ``table`` as a line of JSON, as the local engine writes its records."""
    return b"".join(dumps(row) + b"\n" for row in table.to_pylist())


def write_json_lines(spark: SparkSession, directory: str, table: pa.Table) -> None:
    """``directory`` made anew (an earlier run's removed), holding :data:`PART` with the
    rows of ``table`` as lines of JSON and ``_SUCCESS``; the lines made and written
    :data:`ROWS_AT_ONCE` rows at a time (never all of them in memory)."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    path = hadoop_path(directory)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    fs.delete(path, True)
    stream = fs.create(hadoop_path(path, PART))
    try:
        for start in range(0, table.num_rows, ROWS_AT_ONCE):
            stream.write(bytearray(json_lines(table.slice(start, ROWS_AT_ONCE))))
    finally:
        stream.close()
    fs.create(hadoop_path(path, "_SUCCESS")).close()
