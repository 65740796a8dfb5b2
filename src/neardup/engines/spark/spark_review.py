"""The Spark engine's ``review/``: the records of ``review.jsonl``
(:mod:`neardup.engines.local.review`) from the run's DataFrames, weakest first.

Each removed row is joined with its keeper's text and with the verified pair of the two (either
way round); each Arrow batch is reviewed by :func:`neardup.engines.local.review.review_records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from neardup.engines.local.review import MAX_REVIEWED, review_records
from neardup.text.text_config import TextConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


def review_frame(
    removed: DataFrame, kept: DataFrame, pairs: DataFrame, text: TextConfig
) -> DataFrame:
    """``id, keeper, containment, score, missing, missing_passages`` of every removal,
    ordered weakest first (containment, score, input order), as ``review.jsonl``.

    Only the keepers of removed rows bring their texts; the reviewed rows (one per removal)
    are computed here and kept: the ordering samples its input before sorting it, which
    would otherwise review every removal twice."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    gone = removed.select(
        F.col("_id").alias("id"),
        F.col("_text").alias("text"),
        F.col("_duplicate_of").alias("keeper"),
        "_row",
    )
    keepers = kept.select(F.col("_id").alias("keeper"), F.col("_text").alias("keeper_text")).join(
        gone.select("keeper").distinct(), "keeper", "left_semi"
    )
    held = pairs.select(
        F.col("a").alias("id"),
        F.col("b").alias("keeper"),
        F.col("containment_a_in_b").alias("containment"),
        F.col("score_a_in_b").alias("score"),
    ).unionByName(
        pairs.select(
            F.col("b").alias("id"),
            F.col("a").alias("keeper"),
            F.col("containment_b_in_a").alias("containment"),
            F.col("score_b_in_a").alias("score"),
        )
    )
    rows = gone.join(keepers, "keeper").join(held, ["id", "keeper"], "left")
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
