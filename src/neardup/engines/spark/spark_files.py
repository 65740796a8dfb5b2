"""``neardup dedup --engine spark``: files in, the Spark engine, files out.

Inputs are of the formats that say how Spark reads them (:mod:`neardup.io.formats`: JSONL,
plain or ``.gz``, and Parquet), on any path Spark's Hadoop layer reads (local, HDFS, S3 with
the cluster's connector). The lines of a format of one record per line are parsed by the
local reader's own function, so ids, bad records and the records written back are the local
engine's;
documents are numbered in input order (input, file name, line) without sorting the corpus.
Local ``.gz`` inputs are read through to their end first (:func:`check_compressed`), so a
damaged one stops the run as it stops the local engine.

Outputs in ``out_dir``: ``pairs``, ``clusters``, ``kept``, ``removed`` as Spark directories of
part files in the chosen format (JSONL records of ``kept`` / ``removed`` are the input lines as
the local engine writes them, ``removed`` with ``_duplicate_of``), ``review`` (JSON part files,
weakest first: the records of the local engine's ``review.jsonl``), and ``summary.json``.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from neardup.dedup.config import DedupConfig
from neardup.engines.local.pipeline import Inputs, guarantee, input_fields, run_parameters
from neardup.engines.spark.document_rows import BadRecords, bad_records
from neardup.engines.spark.documents import (
    DOCUMENT_SCHEMA,
    TEXT_SCHEMA,
    line_stage,
    line_text_stage,
)
from neardup.engines.spark.driver_files import write_json_lines
from neardup.engines.spark.spark_dedup import (
    DOC,
    SparkDedup,
    dedup_documents,
    fingerprinted,
    spark_dedup,
    timed,
    with_index,
)
from neardup.engines.spark.spark_review import review_output
from neardup.engines.spark.spark_session import spark_errors, spark_session
from neardup.errors import ConfigError, InputError
from neardup.io.files import read_through
from neardup.io.formats import Format, LineFormat, named, spark_format_of
from neardup.io.records import DEFAULT_MAX_TEXT_BYTES, ReadOptions
from neardup.text.text_config import config_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


def run_spark_dedup(
    inputs: Inputs,
    out_dir: str,
    config: DedupConfig,
    fmt: str = "jsonl",
    master: str | None = None,
    settings: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Deduplicate the inputs on Spark into ``out_dir``; returns the summary. ``settings``:
    Spark settings of the session. Errors of Spark are one line naming the log that holds
    their stack (:mod:`.spark_session`)."""
    started = time.perf_counter()
    source = check_options(inputs, config, fmt)
    if isinstance(source, LineFormat):
        check_compressed(inputs.paths)
    with timed("starting Spark"):
        spark = spark_session(master, settings)
    with spark_errors("Spark failed"):
        check_output(spark, out_dir.rstrip("/"))
        return _run(spark, inputs, out_dir, config, fmt, source, started)


def check_options(inputs: Inputs, config: DedupConfig, fmt: str) -> Format:
    """The inputs' format, as Spark reads it; ConfigError for what the Spark engine does not
    do with it (records of a format of lines written in another format; the keep field of
    a record of JSONL), before Spark starts."""
    source = spark_format_of(inputs.paths)
    if isinstance(source, LineFormat):  # records kept as their lines
        title = source.title
        if fmt != source.name:
            raise ConfigError(
                f"--engine spark writes the records of {title} inputs as {title} only"
            )
        if config.keep.kind == "field":
            raise ConfigError(
                f"--keep field:{config.keep.field} needs the local engine with {title} inputs"
            )
    return source


def _run(
    spark: SparkSession,
    inputs: Inputs,
    out_dir: str,
    config: DedupConfig,
    fmt: str,
    source: Format,
    started: float,
) -> dict[str, Any]:
    with timed("reading inputs"):
        rows = read_inputs(spark, inputs, source)
    if isinstance(source, LineFormat):
        result, bad = _dedup_lines(rows, inputs, source, config)
    else:
        docs, bad = _checked(_columns(rows, inputs), inputs)
        result = spark_dedup(docs, config, id_col="_id", text_col="_text", order="_row")
    out = out_dir.rstrip("/")
    writer_options = {"ignoreNullFields": "false"}
    writer = named(fmt).spark_writer
    spark = rows.sparkSession

    def write(name: str, output: pa.Table | DataFrame, form: str = writer) -> None:
        """An output the driver holds written there as lines of JSON (by Spark's writer of
        ``form`` when that is another), else by Spark."""
        if isinstance(output, pa.Table) and form == "json":
            write_json_lines(spark, f"{out}/{name}", output)
            return
        frame = spark.createDataFrame(output) if isinstance(output, pa.Table) else output
        frame.write.mode("overwrite").options(**writer_options).format(form).save(f"{out}/{name}")

    for name, output in result.outputs.items():
        with timed(f"writing {name}"):
            write(name, output)
    helpers = ["_id", "_text", "_row"]
    if isinstance(source, LineFormat):
        with timed("writing kept"):
            result.kept.select("_record").write.mode("overwrite").text(f"{out}/kept")
        removed = result.removed.select("_record", "_duplicate_of").mapInArrow(
            _duplicate_of_appended(source), "_record string"
        )
        with timed("writing removed"):
            removed.write.mode("overwrite").text(f"{out}/removed")
    else:
        kept, removed = result.kept.drop(*helpers), result.removed.drop(*helpers)
        for name, frame in (("kept", kept), ("removed", removed)):
            target = frame.write.mode("overwrite").options(**writer_options)
            with timed(f"writing {name}"):
                target.format(writer).save(f"{out}/{name}")
    with timed("writing review"):
        write("review", review_output(result, config.text), "json")
    with timed("summary"):
        counts = result.summary()
    summary = counts | {
        "bad_records": bad.count,
        "bad_examples": bad.examples,
        "guarantee": guarantee(config),
        "inputs": list(inputs.paths),
        "engine": "spark",
        "master": spark.sparkContext.master,
        "parameters": run_parameters(config, fmt) | input_fields(inputs),  # type: ignore[arg-type]
        "config_id": config_fingerprint(config.text),
        "timings_seconds": {"total": round(time.perf_counter() - started, 3)},
    }
    _write_summary(spark, out, summary)
    return summary


OUTPUT_NAMES = ("pairs", "clusters", "kept", "removed", "review", "summary.json")


def check_output(spark: SparkSession, out: str) -> None:
    """InputError unless ``out`` (any path Spark writes: local, HDFS, S3) is new, an empty
    directory or one holding only an earlier run's outputs (which this run replaces):
    checked before any work, so nothing else is ever overwritten."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(out)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return
    if not fs.getFileStatus(path).isDirectory():
        raise InputError(f"--out {out} exists and is not a directory")
    names = sorted(str(status.getPath().getName()) for status in fs.listStatus(path))
    foreign = [n for n in names if n not in OUTPUT_NAMES]
    if foreign:
        shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
        raise InputError(
            f"--out {out} exists and holds what is not an output of neardup dedup ({shown}); "
            "choose a new or empty directory, or one of an earlier run"
        )


def check_compressed(paths: tuple[str, ...]) -> None:
    """DamagedInputError (one line naming the file: "truncated", "corrupt ... byte N") for
    the first local ``.gz`` / ``.zst`` input cut short or corrupt, as the local engine reads
    them: Hadoop's codecs take a gzip stream cut short as its end. Each such file is
    decompressed once, to its end, on the driver (several at a time), before Spark starts.
    Paths with a scheme other than ``file:`` (HDFS, S3) are left to Hadoop."""
    files = [f for path in paths for f in _local_files(path)]
    compressed = [f for f in files if f.name.lower().endswith((".gz", ".zst"))]
    if not compressed:
        return
    with ThreadPoolExecutor(min(len(compressed), os.cpu_count() or 1)) as pool:
        checks = [pool.submit(read_through, f) for f in compressed]
        try:
            for check in checks:  # the first damaged file in input order is named
                check.result()
        finally:
            for check in checks:
                check.cancel()


def _local_files(path: str) -> list[Path]:
    """The files Spark reads for a local input path (a file, a directory's visible files, or a
    glob), sorted; none for a path of another file system."""
    if "://" in path and not path.startswith("file:"):
        return []
    local = path.removeprefix("file://") if path.startswith("file://") else path
    local = local.removeprefix("file:")
    found = sorted(Path(p) for p in glob.glob(local)) if glob.has_magic(local) else [Path(local)]
    files = []
    for item in found:
        if item.is_dir():
            files += sorted(
                f for f in item.iterdir() if f.is_file() and not f.name.startswith(("_", "."))
            )
        elif item.is_file():
            files.append(item)
    return files


def read_inputs(spark: SparkSession, inputs: Inputs, source: Format) -> DataFrame:
    """The rows of the inputs as ``source`` says Spark reads them (the lines of a
    LineFormat as ``value``, the columns of a columnar format), each with ``_input`` (the
    input's index), ``_pos`` (its number in its input, from 0) and ``_row`` (in input order)."""
    from pyspark.sql import functions as F

    frames = []
    for index, path in enumerate(inputs.paths):
        frame = spark.read.format(source.spark_source).load(path)
        frames.append(
            frame.withColumn("_input", F.lit(index)).withColumn("_file", F.input_file_name())
        )
    raw = frames[0]
    for frame in frames[1:]:
        raw = raw.unionByName(frame, allowMissingColumns=True)
    return with_index(raw, ["_input", "_file"], "_row", position="_pos")


def _checked(parsed: DataFrame, inputs: Inputs) -> tuple[DataFrame, BadRecords]:
    """The rows of ``parsed`` that are not bad records (``_bad`` null), and the bad records
    (the first raised unless ``skip_bad``)."""
    from pyspark.sql import functions as F

    bad = bad_records(parsed.where(F.col("_bad").isNotNull()), "_row", "_bad")
    bad.refuse(inputs.skip_bad)
    return parsed.where(F.col("_bad").isNull()).drop("_bad"), bad


def _dedup_lines(
    lines: DataFrame, inputs: Inputs, source: LineFormat, config: DedupConfig
) -> tuple[SparkDedup, BadRecords]:
    """The dedup of the numbered lines of LineFormat inputs, each parsed and fingerprinted in
    one pass (:func:`neardup.engines.spark.documents.line_stage`); the records kept and
    removed are the lines as stored (``_record``: without trailing whitespace, nor a BOM
    on an input's first line, as the local engine copies them), the texts the review reads
    parsed again from their lines alone."""
    from pyspark.sql import functions as F

    paths = list(inputs.paths)
    opts = ReadOptions(inputs.id_field, inputs.text_field, DEFAULT_MAX_TEXT_BYTES, len(paths) > 1)
    numbered = lines.select("value", "_input", "_pos", "_row")
    with timed("fingerprints and keys"):
        stage = line_stage(config, source, paths, opts)
        with timed("lines parsed and fingerprinted"):
            prints, documents = fingerprinted(numbered.mapInArrow(stage, DOCUMENT_SCHEMA))
        with timed("bad records"):
            bad = documents.bad()
            bad.refuse(inputs.skip_bad)
        with timed("distinct ids"):
            documents.check_distinct_ids()
    record = _stored(F.col("value"), F.col("_pos"))
    rows = lines.withColumn("_record", record).where(F.col("_record") != "")
    if bad.count:  # the lines of bad records are neither kept nor removed
        skipped = documents.frame.where(F.col("bad").isNotNull()).select(F.col("doc").alias("_row"))
        rows = rows.join(skipped, "_row", "left_anti")
    rows = rows.withColumn(DOC, F.col("_row"))
    texts_of = line_text_stage(source, paths, opts)

    def texts(wanted: DataFrame) -> DataFrame:
        held = numbered.join(wanted.select(F.col("doc").alias("_row")), "_row")
        return held.select("value", "_input", "_pos", "_row").mapInArrow(texts_of, TEXT_SCHEMA)

    result = dedup_documents(prints, rows, None, texts, config, documents=documents)
    return result, bad


# what bytes.rstrip() takes off a line, as a Java regular expression
_TRAILING = "[ \\t\\r\\x0B\\f]+\\z"


def _stored(line: Column, position: Column) -> Column:
    """A record's line as the local engine stores it: without trailing whitespace (what
    ``bytes.rstrip`` takes), and without a BOM at the start of an input."""
    from pyspark.sql import functions as F

    ends_spaced = F.lit(False)
    for space in (" ", "\t", "\r", "\x0b", "\x0c"):
        ends_spaced = ends_spaced | line.endswith(space)
    trimmed = F.when(ends_spaced, F.regexp_replace(line, _TRAILING, "")).otherwise(line)
    return F.when(position == 0, F.regexp_replace(trimmed, "^\ufeff", "")).otherwise(trimmed)


def _duplicate_of_appended(source: LineFormat) -> Any:
    """Removed records' lines with ``_duplicate_of`` added as the local engine adds it
    (:meth:`neardup.io.formats.LineFormat.with_duplicate_of`)."""
    with_duplicate_of = source.with_duplicate_of

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            records = batch.column("_record").to_pylist()
            keepers = batch.column("_duplicate_of").to_pylist()
            lines = [
                with_duplicate_of(r.encode("utf-8"), k).decode("utf-8")
                for r, k in zip(records, keepers, strict=True)
            ]
            yield pa.RecordBatch.from_pydict({"_record": lines})

    return run


def _columns(numbered: DataFrame, inputs: Inputs) -> DataFrame:
    """Rows of a columnar format (Parquet) with ``_id`` (the id field as a string, else the
    row number) and ``_text``; rows without a text are bad records."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    text_type = (
        numbered.schema[inputs.text_field].dataType
        if inputs.text_field in numbered.columns
        else None
    )
    if not isinstance(text_type, StringType):
        raise InputError(f"{inputs.paths[0]}: no string column {inputs.text_field!r}")
    line = (F.col("_pos") + 1).cast("string")
    if len(inputs.paths) > 1:
        names = F.array(*[F.lit(p) for p in inputs.paths])
        line = F.concat(F.element_at(names, F.col("_input") + 1), F.lit(":"), line)
    raw_id = (
        F.col(inputs.id_field).cast("string")
        if inputs.id_field in numbered.columns
        else F.lit(None)
    )
    bad = F.when(
        F.col(inputs.text_field).isNull(),
        F.concat(F.lit("row "), line, F.lit(f": no text in field {inputs.text_field!r}")),
    )
    return (
        numbered.withColumn("_id", F.when(raw_id.isNull() | (raw_id == ""), line).otherwise(raw_id))
        .withColumn("_text", F.col(inputs.text_field))
        .withColumn("_bad", bad)
        .drop("_input", "_file", "_pos")
    )


def _write_summary(spark: SparkSession, out: str, summary: dict[str, Any]) -> None:
    """summary.json beside the outputs (a file on local paths; else one part file)."""
    text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    if "://" not in out or out.startswith("file:"):
        path = Path(out.removeprefix("file://"))
        path.mkdir(parents=True, exist_ok=True)
        (path / "summary.json").write_text(text, encoding="utf-8")
    else:
        frame = spark.createDataFrame([(text,)], "value string").coalesce(1)
        frame.write.mode("overwrite").text(f"{out}/summary.json")
