"""The Spark engine's ``review/``: the records of ``review.jsonl``
(:mod:`neardup.engines.local.review`), weakest first.

When the run's outcome is on the driver (:mod:`neardup.engines.spark.outcome`) and the
reviewed texts fit one task (:data:`TEXTS_IN_ONE_TASK` characters), the driver orders the
removals as the local engine does and one Spark task reads the texts and finds their missing
passages as it does. Otherwise each removed document is joined with its keeper's text and
with the verified pair of the two (either way round), by document number, and each Arrow
batch is reviewed by :func:`neardup.engines.local.review.review_records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from neardup.engines.local.review import (
    MAX_REVIEWED,
    Removal,
    missing_fields,
    missing_passages,
    record_of,
    review_records,
    texts_needed,
)
from neardup.engines.spark.spark_dedup import timed
from neardup.engines.spark.task_cores import on_task_cores
from neardup.text.text_config import TextConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from neardup.engines.spark.outcome import Outcome
    from neardup.engines.spark.spark_dedup import SparkDedup

TEXTS_IN_ONE_TASK = 1 << 28  # characters of the reviewed texts one task reads to review them

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


def review_output(result: SparkDedup, text: TextConfig) -> pa.Table | DataFrame:
    """``id, keeper, containment, score, missing, missing_passages`` of every removal,
    ordered weakest first (containment, score, input order), as ``review.jsonl``: a table on
    the driver from the run's outcome there when it holds one and the texts fit one task
    (:func:`review_table`), else by Spark (:func:`reviewed_by_spark`)."""
    if result.outcome is not None:
        table = review_table(result.outcome, _passages_found(result, text))
        if table is not None:
            return table
    return reviewed_by_spark(result, text)


Found = list[tuple[list[str] | None, int | None]]  # each removal's missing passages, count


def review_table(
    outcome: Outcome, find: Callable[[list[Removal], np.ndarray], Found]
) -> pa.Table | None:
    """The review's records: the removals ordered as the local engine orders them, their
    missing passages from ``find`` (given the removals and the documents whose texts they
    need: the weakest ``MAX_REVIEWED`` lossy removals and their keepers); None when those
    texts exceed :data:`TEXTS_IN_ONE_TASK` characters."""
    rows = outcome.removals()
    needed = np.array(sorted(texts_needed(rows, 0, MAX_REVIEWED)), dtype=np.int64)
    if int(outcome.lengths_of(needed).sum()) > TEXTS_IN_ONE_TASK:
        return None
    with timed("review: texts and passages"):
        found = find(rows, needed)
    decided, names = outcome.column("doc").tolist(), outcome.decisions.column("id")
    ids = dict(zip(decided, names.to_pylist(), strict=True))
    records = [record_of(r, ids, *f) for r, f in zip(rows, found, strict=True)]
    return pa.Table.from_pylist(records, schema=_ARROW.remove(_ARROW.get_field_index("_row")))


def _passages_found(
    result: SparkDedup, text: TextConfig
) -> Callable[[list[Removal], np.ndarray], Found]:
    """The removals' missing passages found by one Spark task, which reads the texts they
    need (:attr:`SparkDedup.texts`) and finds them as the local engine does
    (:func:`passages_stage`): neither the texts nor the passage kernels reach the driver."""

    def find(rows: list[Removal], needed: np.ndarray) -> Found:
        wanted = result.decisions.sparkSession.createDataFrame(pa.table({"doc": needed}))
        texts = result.texts(wanted).select("doc", "text").coalesce(1)
        stage = passages_stage(rows, text, MAX_REVIEWED)
        table = texts.mapInArrow(stage, PASSAGES_SCHEMA).toArrow()
        table = table.sort_by("row")
        return list(
            zip(
                table.column("missing").to_pylist(),
                table.column("missing_passages").to_pylist(),
                strict=True,
            )
        )

    return find


PASSAGES_SCHEMA = "row long, missing array<string>, missing_passages long"
_PASSAGES = pa.schema(
    [("row", pa.int64()), ("missing", pa.list_(pa.string())), ("missing_passages", pa.int64())]
)


def passages_stage(
    rows: list[Removal], text: TextConfig, reviewed: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """``doc, text`` of the documents ``rows`` need (every batch of one task) → a row per
    removal: its index in ``rows`` and its missing passages (:func:`missing_fields`, of the
    first ``reviewed`` lossy removals; a text not given: none found)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        texts: dict[int, str] = {}
        for batch in batches:
            docs, held = batch.column("doc").to_pylist(), batch.column("text").to_pylist()
            texts.update(zip(docs, held, strict=True))
        found = missing_passages(rows, texts, text, reviewed)
        missing, counts = zip(*map(missing_fields, found), strict=True) if rows else ((), ())
        columns = {"row": range(len(rows)), "missing": missing, "missing_passages": counts}
        yield pa.RecordBatch.from_pydict(columns, schema=_PASSAGES)

    return run


def reviewed_by_spark(result: SparkDedup, text: TextConfig) -> DataFrame:
    """:func:`review_output` computed by Spark jobs.

    Built from the run's decisions and verified pairs by document number: each removal
    meets its keeper's id and the pair of the two (either way round); as the local engine,
    only the weakest ``MAX_REVIEWED`` removals that lack something get their missing
    passages, so only they and their keepers bring their texts (read again from the inputs:
    :attr:`SparkDedup.texts`). A lossless removal lacks nothing (no passage); a later lossy
    one has ``missing`` and ``missing_passages`` null. The reviewed rows are computed here and
    kept: the ordering samples its input before sorting it, which would otherwise review
    every removal twice."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    moved = result.decisions.where(F.col("keep_of") != F.col("doc")).select("doc", "keep_of")
    keepers = result.ids.select(F.col("doc").alias("keep_of"), F.col("id").alias("keeper"))
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
    order = (F.col("containment").asc_nulls_last(), F.col("score").asc_nulls_last(), "_row")
    lossy = F.col("containment").isNull() | (F.col("containment") != 1.0)
    earlier = Window.orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    with timed("review: removals"):
        removals = (
            moved.join(result.ids, "doc")
            .join(keepers, "keep_of")
            .join(held, ["doc", "keep_of"], "left")
            .withColumn("_row", F.col("doc"))
            .withColumn("_lossy", lossy)
            .withColumn(
                "_passages", lossy & (F.sum(lossy.cast("long")).over(earlier) <= MAX_REVIEWED)
            )
            .localCheckpoint()
        )
    wanted = removals.where("_passages")
    needed = wanted.select("doc").unionByName(wanted.select(F.col("keep_of").alias("doc")))
    with timed("review: texts"):
        texts = result.texts(needed.distinct()).localCheckpoint()  # read twice, parsed once
    rows = wanted.join(texts.select("doc", "text"), "doc").join(
        texts.select(F.col("doc").alias("keep_of"), F.col("text").alias("keeper_text")),
        "keep_of",
    )
    columns = ["id", "keeper", "containment", "score"]
    found = rows.select(*columns, "text", "keeper_text", "_row")
    none = F.lit(None)
    others = removals.where(~F.col("_passages")).select(
        *columns,
        F.when(F.col("_lossy"), none).otherwise(F.array()).cast("array<string>").alias("missing"),
        F.when(F.col("_lossy"), none).otherwise(F.lit(0)).cast("long").alias("missing_passages"),
        "_row",
    )
    with timed("review: passages"):
        reviewed = found.mapInArrow(_stage(text), REVIEW_SCHEMA).unionByName(others)
        reviewed = reviewed.localCheckpoint()
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

    return on_task_cores(run)
