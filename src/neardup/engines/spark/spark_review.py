"""The Spark engine's ``review/``: the records of ``review.jsonl``
(:mod:`neardup.engines.local.review`) from the run's DataFrames, weakest first.

Each removed document is joined with its keeper's text and with the verified pair of the two
(either way round), by document number; each Arrow batch is reviewed by
:func:`neardup.engines.local.review.review_records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from neardup.engines.local.review import MAX_REVIEWED, review_records
from neardup.engines.spark.spark_dedup import timed
from neardup.text.text_config import TextConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from neardup.engines.spark.spark_dedup import SparkDedup

REVIEW_SCHEMA = (
    "id string, keeper string, containment double, score double, missing array<string>, "
    "missing_passages long, _row long"
)
_ARROW = pa.schema(
    [
        ("id", pa.string()),
        ("keeper", pa.string()),
        ("containment", pa.float64()),
        ("score", pa.float64()),
        ("missing", pa.list_(pa.string())),
        ("missing_passages", pa.int64()),
        ("_row", pa.int64()),
    ]
)


def review_frame(result: SparkDedup, text: TextConfig) -> DataFrame:
    """``id, keeper, containment, score, missing, missing_passages`` of every removal,
    ordered weakest first (containment, score, input order), as ``review.jsonl``.

    Built from the run's decisions and verified pairs by document number: only the removed
    documents and their keepers bring their texts (the removals broadcast to the input rows
    when few: no text shuffled), and each removal meets the pair of the two (either way
    round) by number. The reviewed rows (one per removal) are computed
    here and kept: the ordering samples its input before sorting it, which would otherwise
    review every removal twice."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    moved = result.decisions.where(F.col("keep_of") != F.col("doc")).select("doc", "keep_of")
    wanted = moved.select("doc").unionByName(moved.select(F.col("keep_of").alias("doc")))
    with timed("review: texts"):
        texts = result.texts(wanted.distinct()).localCheckpoint()  # read twice, parsed once
    gone = texts.join(moved, "doc")
    keepers = texts.select(
        F.col("doc").alias("keep_of"),
        F.col("id").alias("keeper"),
        F.col("text").alias("keeper_text"),
    )
    pairs = result.verified
    held = pairs.select(
        F.col("left").alias("doc"),
        F.col("right").alias("keep_of"),
        F.col("c_lr").alias("containment"),
        F.col("s_lr").alias("score"),
    ).unionByName(
        pairs.select(
            F.col("right").alias("doc"),
            F.col("left").alias("keep_of"),
            F.col("c_rl").alias("containment"),
            F.col("s_rl").alias("score"),
        )
    )
    rows = (
        gone.join(keepers, "keep_of")
        .join(held, ["doc", "keep_of"], "left")
        .select(
            "id",
            "keeper",
            "text",
            "keeper_text",
            "containment",
            "score",
            F.col("doc").alias("_row"),
        )
    )
    with timed("review: passages"):
        reviewed = rows.mapInArrow(_stage(text), REVIEW_SCHEMA).localCheckpoint()
    order = (F.col("containment").asc_nulls_last(), F.col("score").asc_nulls_last(), "_row")
    # as the local engine: passages for the weakest MAX_REVIEWED removals that lack something
    lossy = F.col("containment").isNull() | (F.col("containment") != 1.0)
    earlier = Window.orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    beyond = lossy & (F.sum(lossy.cast("long")).over(earlier) > MAX_REVIEWED)
    for column in ("missing", "missing_passages"):
        reviewed = reviewed.withColumn(column, F.when(beyond, None).otherwise(F.col(column)))
    return reviewed.orderBy(*order).drop("_row")


def _stage(text: TextConfig) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            cols = batch.to_pydict()
            records = review_records(
                cols["id"],
                cols["keeper"],
                cols["text"],
                cols["keeper_text"],
                cols["containment"],
                cols["score"],
                text,
            )
            for record, row in zip(records, cols["_row"], strict=True):
                record["_row"] = row
            yield pa.RecordBatch.from_pylist(records, schema=_ARROW)

    return run
