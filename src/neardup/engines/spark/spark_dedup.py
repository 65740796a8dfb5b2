"""neardup's dedup on Apache Spark: a DataFrame of documents in, DataFrames of results out.

::

    from neardup.engines.spark.spark_dedup import spark_dedup
    result = spark_dedup(docs)            # docs: a DataFrame with id, text (+ any columns)
    result.removed.write.parquet("s3://bucket/removed")   # the records, + _duplicate_of
    result.kept, result.pairs, result.clusters, result.summary()

The stages are the local engine's, declared once in :mod:`neardup.dedup.flow` and called per
partition or group (:mod:`neardup.engines.spark.batches`), mapped onto Spark:

=========================  ========================================================
fingerprints, sketch, keys ``mapInArrow`` over the documents (the same batch functions),
                           a JSONL line parsed and fingerprinted in one pass; the sets
                           packed in binary values (:mod:`neardup.engines.spark.documents`)
a corpus of few keys       with the full index's prefix filter, up to 2**26 key entries
                           (what one task's count tables take): every document's set in
                           one task, which finds and verifies the candidate pairs and
                           decides the keepers as the local engine does (templates,
                           content scores, rare words, keeper rounds, clusters);
                           the rows below are for larger corpora and other methods
prefix order               the local count-min and mark tables, filled per partition
                           by the local kernel, merged chunk by chunk, shipped with
                           the stages that read them (≤ 256 MiB, the local bound);
                           past what they serve (> 16 entries a slot), exact counts:
                           the entries shuffled packed by key, counted in NumPy, those
                           of keys held twice or more sent back to their documents
prefix filter              per document in its row (no shuffle of entries); only the
                           entries that can pair leave it, as lists (a row a document)
candidate pairs            buckets of ≤ ``max_bucket`` documents in ``mapInArrow`` (the
                           entries shuffled packed: a row per partition and batch;
                           sorted in NumPy), each chunk's pairs distinct (with their
                           bucket counts); keys counted ≤ ``max_bucket``: the entries
                           carry their documents' needs, the buckets' pairs go packed
                           to their pairs' partitions and are summed there in NumPy,
                           kept at the smaller need (counted hits of
                           :mod:`neardup.dedup.candidates`; no row per pair);
                           a capped bucket pairs its first prefix holder with the
                           others by an aggregate and a join (no giant group)
exact verification        candidate pairs in groups (the fewest that fit a Python
                           worker, one a core at least: :mod:`neardup.engines.spark.sizing`),
                           each with the fingerprint sets of its documents, once (fingerprints are
                           hash-partitioned by document and cached: a join to them
                           shuffles only its other side)
templates                  near-copy groups (on the driver when ≤ 4 M edges, else
                           large-star / small-star), holder counts of the rescored
                           documents' shingles (only those the count tables put at
                           ``template_df`` or more): counted per partition in
                           ``mapInArrow`` against the shingles sent from the driver when
                           few, else a row per shingle entry and a group-by
rare words                 likewise: the words of documents in pairs counted per
                           partition (a few rows a word) when few, else by a group-by
keepers                    components of the pairs at the threshold, each decided
                           whole by :func:`neardup.dedup.keepers.keeper_rounds` (the
                           documents' fingerprints joined in for the rounds)
outputs                    the input rows joined to the decisions, broadcast when at
                           most :data:`BROADCAST_DECISIONS` documents are in pairs (no
                           record or text shuffled), else by a shuffle
=========================  ========================================================

Documents are identified by a ``long`` that follows the input order (``order``, or the
DataFrame's own row order), which breaks every tie as the local engine's index does: so the
pairs, clusters, kept and removed sets equal the local engine's. Only DataFrame operations
(no RDDs): it runs over Spark Connect. Nothing collected to the driver grows with the corpus
but the per-partition row counts used to number the documents; the prefix order's tables
(as large as the local engine's, at most 2 × 128 MiB + 16 MiB) pass through it, and so do
the histogram of the documents' draws that sizes verification (a row per distinct count)
and a label per shuffle partition.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup.dedup.config import DedupConfig
from neardup.dedup.flow import (
    MAX_COUNT,
    PrefixRule,
    prefix_rule,
    reaches_template,
    table_bits,
    tables_serve,
)
from neardup.engines.spark import batches as B
from neardup.engines.spark import documents as D
from neardup.engines.spark import outcome as O
from neardup.engines.spark.document_rows import (
    DOCUMENTS_ON_DRIVER,
    DocumentRows,
    refuse_repeated,
    refuse_repeated_by_spark,
)
from neardup.errors import ConfigError, InputError
from neardup.util.extras import pyspark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DOC = "_doc"  # the document number column added to the input
PAIRS_PER_BATCH = 4096  # pairs copied out of a task's sets at a time
log = logging.getLogger("neardup.spark")


@contextlib.contextmanager
def timed(name: str) -> Iterator[None]:
    """Log a stage's wall time (the stages materialize their outputs: the time is theirs)."""
    started = time.perf_counter()
    log.info("%s …", name)
    yield
    log.info("%s: %.1f s", name, time.perf_counter() - started)


@dataclass(eq=False)
class SparkDedup:
    """The outcome, as lazy DataFrames (each action recomputes from the cached stages).

    ``pairs``: ``a``, ``b`` (ids), ``score``, ``score_a_in_b``, ``score_b_in_a``,
    ``resemblance``, ``containment_a_in_b``, ``containment_b_in_a``, ``contained`` — the
    verified pairs at the threshold; ``clusters``: ``cluster``, ``ids`` (input order),
    ``keep``; ``kept``: the input rows kept; ``removed``: the input rows removed, with
    ``_duplicate_of`` (the id kept instead, which holds the removed one).
    """

    kept: DataFrame
    removed: DataFrame
    decisions: DataFrame  # doc, keep_of, label, keeper, declined for documents in a pair
    stats: dict[str, DataFrame | int]
    ids_of: Callable[[], DataFrame]  # what makes ``ids``
    texts: Callable[[DataFrame], DataFrame]  # doc, id, text of a frame of documents (doc)
    verified: DataFrame  # the pairs at the threshold by number: left, right, s_lr, s_rl, c_lr …
    small: Callable[[DataFrame], DataFrame]  # a frame of ≤ a row per decided document, to join
    documents: DocumentRows  # the documents' rows (ids, lengths, sizes, bad records)
    outcome: O.Outcome | None = None  # the decisions and pairs on the driver, when small
    threshold: float = 0.0  # the pairs' threshold (``contained`` names a direction reaching it)
    spark_outputs: tuple[DataFrame, DataFrame] | None = None  # pairs, clusters when no outcome

    @functools.cached_property
    def outputs(self) -> dict[str, pa.Table | DataFrame]:
        """``pairs`` and ``clusters`` to write, made once: tables on the driver when the
        outcome is there, else Spark's DataFrames."""
        if self.outcome is None:
            assert self.spark_outputs is not None
            pairs, clusters = self.spark_outputs
            return {"pairs": pairs, "clusters": clusters}
        return {
            "pairs": O.pair_table(self.outcome, self.threshold),
            "clusters": O.cluster_table(self.outcome),
        }

    @functools.cached_property
    def pairs(self) -> DataFrame:
        """The verified pairs at the threshold (see the class)."""
        return self._frame(self.outputs["pairs"])

    @functools.cached_property
    def clusters(self) -> DataFrame:
        """The clusters (see the class)."""
        return self._frame(self.outputs["clusters"])

    def _frame(self, output: pa.Table | DataFrame) -> DataFrame:
        if isinstance(output, pa.Table):
            return self.decisions.sparkSession.createDataFrame(output)
        return output

    @property
    def ids(self) -> DataFrame:
        """``doc, id`` of every document (made when first read)."""
        return self.ids_of()

    def summary(self) -> dict[str, Any]:
        """Counts of the run (a few Spark actions over the run's computed tables, not over
        its outputs: a removed document is one whose keeper is another, a cluster a label
        held by two or more documents in pairs)."""

        documents, empty = self.documents.counts()
        decided = self._decided() if self.outcome is None else O.counts(self.outcome)
        out: dict[str, Any] = {
            "documents": documents,
            "removed": decided["removed"],
            "clusters": decided["clusters"],
            "largest_cluster": decided["largest_cluster"],
            "candidate_pairs": _value(self.stats["candidates"]),
            "verified_pairs": decided["verified_pairs"],
            "capped_buckets": _value(self.stats["capped"]),
            "template_shingles": _value(self.stats["templates"]),
            "declined_pairs": decided["declined_pairs"],
            "empty_documents": empty,
        }
        out["kept"] = out["documents"] - out["removed"]
        return out

    def _decided(self) -> dict[str, int]:
        """:func:`neardup.engines.spark.outcome.counts` by Spark jobs."""
        from pyspark.sql import functions as F

        decisions = self.decisions
        removed = decisions.where(F.col("keep_of") != F.col("doc")).agg(F.count("*"))
        sizes = decisions.groupBy("label").agg(F.count("*").alias("n")).where(F.col("n") >= 2)
        clusters, largest = sizes.agg(F.count("*"), F.max("n")).first()
        return {
            "removed": _value(removed),
            "clusters": int(clusters),
            "largest_cluster": int(largest or 0),
            "verified_pairs": _value(self.stats["verified"]),
            "declined_pairs": _value(self.stats["declined"]),
        }


def _value(stat: DataFrame | int) -> int:
    return stat if isinstance(stat, int) else int(stat.first()[0] or 0)


def spark_dedup(
    docs: DataFrame,
    config: DedupConfig | None = None,
    *,
    id_col: str = "id",
    text_col: str = "text",
    order: str | None = None,
    pairs_per_task: int | None = None,
    exact_counts: bool | None = None,
) -> SparkDedup:
    """Deduplicate the documents of ``docs`` (columns ``id_col``, ``text_col`` and any).

    ``order`` names a column of distinct integers giving the input order (ties of the keep
    policy go to the earliest); by default the DataFrame's own row order. Ids must be
    distinct and texts present: a clear :class:`InputError` otherwise.

    ``pairs_per_task``: candidate pairs verified per task; a task holds the fingerprint
    sets of the documents of its pairs (at most twice as many), each shipped to it once.
    Fewer, larger tasks ship fewer copies of the sets (a document is in one copy per task
    holding one of its pairs) but need more memory each. By default the fewest tasks, at
    least one a core, whose sets fit in a Python worker (``spark.executor.pyspark.memory``
    shared by the executor's cores, else 2 GiB), estimated from how the candidate pairs
    spread over documents (:mod:`neardup.engines.spark.sizing`).

    ``exact_counts``: the prefix order of the full index from exact key frequencies (a
    shuffle of every key entry and one back of those held twice or more) instead of the
    count tables; by default when the tables stop ordering the keys
    (:func:`neardup.dedup.prefix.tables_serve`: beyond ~2 G key entries). The results are
    the same either way; only the candidate pairs that verification drops differ.
    """
    pyspark("the Spark engine")
    from pyspark.sql import functions as F

    config = config or DedupConfig()
    _check_config(config)
    _check_columns(docs, id_col, text_col, order, config)
    with timed("numbering and checking documents"):
        if order is None:
            docs = with_index(docs, [], DOC)
        else:
            docs = docs.withColumn(DOC, F.col(order).cast("long"))
        _check_documents(docs, id_col, text_col)
    values = None
    columns = [F.col(DOC).alias("doc"), F.col(text_col).alias("text")]
    if config.keep.kind == "field":
        values = docs.select(F.col(DOC).alias("doc"), F.col(str(config.keep.field)).alias("value"))
        columns.append(F.col(str(config.keep.field)).alias("value"))
    with timed("fingerprints and keys"):
        stage = D.text_stage(config, values is not None)
        found = docs.select(*columns).mapInArrow(stage, D.DOCUMENT_SCHEMA)
        prints, documents = fingerprinted(found)
    ids = docs.select(F.col(DOC).alias("doc"), F.col(id_col).alias("id"))
    named = docs.select(F.col(DOC).alias("doc"), F.col(id_col).alias("id"), columns[1])
    return dedup_documents(
        prints,
        docs,
        ids,
        lambda wanted: named.join(wanted, "doc"),
        config,
        values,
        documents=documents,
        pairs_per_task=pairs_per_task,
        exact_counts=exact_counts,
    )


def dedup_documents(
    prints: DataFrame,
    rows: DataFrame,
    ids: DataFrame | None,
    texts: Callable[[DataFrame], DataFrame],
    config: DedupConfig,
    values: DataFrame | None = None,
    *,
    documents: DocumentRows | None = None,
    pairs_per_task: int | None = None,
    exact_counts: bool | None = None,
) -> SparkDedup:
    """The dedup of documents already fingerprinted: ``prints``, rows of
    :data:`neardup.engines.spark.documents.DOCUMENT_SCHEMA` (:func:`fingerprinted`;
    released here once read); ``rows``, the input rows to keep or remove (``_doc``: their
    numbers); ``ids``, their ``doc, id`` (None: those in ``prints``); ``texts``, what gives
    ``doc, id, text`` of a frame of documents (``doc``); ``values``, the keep field's
    ``doc, value``;
    ``documents``, :func:`document_rows` of ``prints`` when the caller computed them. The
    options are :func:`spark_dedup`'s."""
    from pyspark.sql import functions as F

    documents = document_rows(prints) if documents is None else documents
    # the documents' ids, and ids and lengths, in Spark: made when a stage reads them there
    on_driver = None  # the ids and lengths of the documents, when the driver holds them
    if ids is None:
        on_driver = documents.described()
        ids_of = functools.cache(lambda: documents.documents().select("doc", "id"))

        def described() -> DataFrame:
            return documents.documents().select("doc", "id", "length")
    else:  # the DataFrame's own ids, of their own type
        given = ids

        def ids_of() -> DataFrame:
            return given

        def described() -> DataFrame:
            return given.join(documents.documents().select("doc", "length"), "doc")

    sets = prints.where(F.col("kind") == D.SETS).select("sets")
    whole = None if exact_counts else _whole_corpus(sets, documents, config)
    if whole is not None:  # no later stage reads the sets: their memory goes to the outputs
        scored, templates, candidate_count, capped, decided = whole.frames()
        released(prints)
    else:
        with timed("fingerprints by document"):  # the later stages join the sets by document
            names = B.fingerprint_schema(config)
            unpack = D.packed_stage(D.columns_stage([c.split()[0] for c in names.split(", ")]))
            fp = by_doc(sets.mapInArrow(unpack, names))
            released(prints)
        with timed("candidate pairs"):
            candidates, capped, shingles = _candidates(fp, config, exact_counts)
        candidate_count = candidates.agg(F.count("*"))
    with timed("verification and templates"):
        if whole is None:
            scored, templates, tmpl_sets = _scored(fp, candidates, shingles, config, pairs_per_task)
        with timed("templates: rescoring on content"):
            if whole is None:  # the one task's rows are checkpointed already
                scored = scored.localCheckpoint()  # read again by the rare words' groups
            at_threshold = scored.where(F.col("score") >= F.lit(config.threshold))
            if whole is None:
                at_threshold = at_threshold.localCheckpoint()
    with timed("components and keepers"):
        if whole is None:
            rare = _rare_words(fp, scored, at_threshold) if config.identity else None
            decided = _decisions(values, fp, tmpl_sets, rare, at_threshold, config)
            with timed("keepers: decisions"):
                decided = decided.localCheckpoint()
        decisions = decided.where(F.col("doc") >= 0).select(
            "doc", "keep_of", "label", "keeper", "declined"
        )
        found = decided.where(F.col("doc") < 0).withColumn("score", F.greatest("s_lr", "s_rl"))
        columns = ["left", "right", "score", "s_lr", "s_rl", "resemblance", "c_lr", "c_rl"]
        at_threshold = at_threshold.select(*columns).unionByName(found.select(*columns))
    collected = None  # the one task's rows on the driver, and the decisions among them
    if whole is not None and whole.rows is not None:
        collected = whole.rows, _decision_rows(whole.rows)
    decided = decisions.count() if collected is None else collected[1].num_rows
    small = F.broadcast if decided <= BROADCAST_DECISIONS else _as_planned
    outcome = None
    if decided <= BROADCAST_DECISIONS:
        with timed("outcome to the driver"):
            if collected is None:
                outcome = _collected(decisions, at_threshold, described, on_driver)
            else:
                outcome = _outcome_of(*collected, described, on_driver)
    spark_outputs = None
    if outcome is None:
        ids = ids_of()
        spark_outputs = _pair_output(at_threshold, ids, config), _cluster_output(decisions, ids)
        moved = decisions.where(F.col("keep_of") != F.col("doc")).select(F.col("doc").alias(DOC))
        removed = _removed(rows, decisions, ids, small)
    else:
        spark = decisions.sparkSession
        docs, keepers = outcome.removed()
        keeper_ids = pa.table({DOC: docs, "_duplicate_of": outcome.ids_of(keepers)})
        removals = spark.createDataFrame(keeper_ids)  # one local table for kept and removed
        moved = removals.select(DOC)
        removed = rows.join(F.broadcast(removals), DOC).drop(DOC)
    return SparkDedup(
        kept=rows.join(small(moved), DOC, "left_anti").drop(DOC),
        removed=removed,
        decisions=decisions,
        stats={
            "candidates": candidate_count,
            "verified": at_threshold.agg(F.count("*")),
            "capped": capped,
            "templates": templates,
            "declined": decisions.agg(F.sum("declined")),
        },
        ids_of=ids_of,
        texts=lambda wanted: texts(small(wanted)),
        verified=at_threshold,
        small=small,
        documents=documents,
        outcome=outcome,
        threshold=config.threshold,
        spark_outputs=spark_outputs,
    )


def _collected(
    decisions: DataFrame,
    verified: DataFrame,
    described: Callable[[], DataFrame],
    on_driver: pa.Table | None,
) -> O.Outcome | None:
    """The decided documents (with their ``id`` and ``length`` from ``described``, or from
    its table ``on_driver``) and the verified pairs on the driver
    (:mod:`neardup.engines.spark.outcome`), when at most
    :data:`~neardup.engines.spark.outcome.OUTCOME_ROWS` pairs; else None."""
    pairs = verified.select(*O.PAIR_COLUMNS).limit(O.OUTCOME_ROWS + 1).toArrow()
    if pairs.num_rows > O.OUTCOME_ROWS:
        return None
    decided = decisions.select(*O.DECISION_COLUMNS)
    return O.Outcome.of(_described(decided, described, on_driver), pairs)


def _outcome_of(
    rows: pa.Table,
    decisions: pa.Table,
    described: Callable[[], DataFrame],
    on_driver: pa.Table | None,
) -> O.Outcome:
    """The outcome of the one task's rows on the driver (:attr:`WholeCorpus.rows`): its
    ``decisions`` (:func:`_decision_rows` of them), with each document's ``id`` and
    ``length`` (as :func:`_collected`), and the pairs at the threshold with those the keeper
    rounds add."""
    kind, doc = rows.column("kind"), rows.column("doc")
    verified = rows.filter(pc.equal(kind, 0))
    added = rows.filter(pc.and_(pc.equal(kind, 4), pc.less(doc, 0)))
    scored = [
        t.append_column("score", pc.max_element_wise(t["s_lr"], t["s_rl"]))
        for t in (verified, added)
    ]
    pairs = pa.concat_tables(scored).select(list(O.PAIR_COLUMNS))
    decided: pa.Table | DataFrame = decisions
    if on_driver is None:
        decided = described().sparkSession.createDataFrame(decided)
    return O.Outcome.of(_described(decided, described, on_driver), pairs)


def _decision_rows(rows: pa.Table) -> pa.Table:
    """The decisions among the one task's rows on the driver
    (:data:`~neardup.engines.spark.outcome.DECISION_COLUMNS`)."""
    decided = pc.and_(pc.equal(rows.column("kind"), 4), pc.greater_equal(rows.column("doc"), 0))
    return rows.filter(decided).select(list(O.DECISION_COLUMNS))


def _described(
    decided: DataFrame | pa.Table, described: Callable[[], DataFrame], on_driver: pa.Table | None
) -> pa.Table:
    """``decided`` (:data:`~neardup.engines.spark.outcome.DECISION_COLUMNS`) on the driver
    with each document's ``id`` and ``length``: joined there to ``on_driver`` when it holds
    them, else in Spark to ``described()``."""
    from pyspark.sql import functions as F

    if on_driver is not None:
        table = decided if isinstance(decided, pa.Table) else decided.toArrow()
        return table.join(on_driver, "doc")
    assert not isinstance(decided, pa.Table)
    return F.broadcast(decided).join(described(), "doc").toArrow()


def fingerprinted(prints: DataFrame) -> tuple[DataFrame, DocumentRows]:
    """``prints`` (rows of :data:`neardup.engines.spark.documents.DOCUMENT_SCHEMA`) kept on
    disk (read once or twice, their bulk in the JVM's heap would cost its collector more
    than reading them back), and their :func:`document_rows`, computed by one job: the sets
    are written to disk as the documents' rows are taken from them (not read back for
    those). Release them with :func:`released`.

    With a local master they are a local checkpoint: rows written as they are, where the
    cache of a DataFrame builds column buffers of each batch first (copies of the sets that
    the JVM's collector then moves). Its lineage is dropped, which costs nothing there: the
    one executor is the driver's JVM. Elsewhere a lost executor's blocks are computed again
    from their lineage: they are cached."""
    from pyspark import StorageLevel

    from neardup.engines.spark.spark_session import is_local

    if is_local(prints.sparkSession.sparkContext.master):
        prints = prints.localCheckpoint(eager=False, storageLevel=StorageLevel.DISK_ONLY)
    else:
        prints = prints.persist(StorageLevel.DISK_ONLY)
    return prints, document_rows(prints)


def released(frame: DataFrame) -> None:
    """Free the blocks of ``frame``, cached or locally checkpointed (a checkpoint's blocks
    stay until the session ends otherwise)."""
    frame.unpersist()
    plan = frame._jdf.queryExecution().logical()
    if plan.nodeName() == "LogicalRDD":
        plan.rdd().unpersist(False)


def document_rows(prints: DataFrame) -> DocumentRows:
    """The rows of ``prints`` that describe a document or a bad record (no sets), computed
    once (:class:`~neardup.engines.spark.document_rows.DocumentRows`): the checks and counts
    read them so, and only the task that pairs documents reads the sets."""
    from pyspark.sql import functions as F

    return DocumentRows.of(prints.where(F.col("kind") == D.DOCUMENT))


# documents in pairs up to which the outputs broadcast them to the input rows (the records
# and texts read where they are, not shuffled), and the driver collects the outcome
BROADCAST_DECISIONS = 1 << 22


def _as_planned(frame: DataFrame) -> DataFrame:
    return frame


# ── checks ───────────────────────────────────────────────────────────────────────────────────


def _check_config(config: DedupConfig) -> None:
    if not config.verify:
        raise ConfigError("the Spark engine verifies every pair exactly: drop --no-verify")
    method = config.build_method()
    if getattr(method, "needs_idf", False):
        raise ConfigError(
            f"method {config.method!r} with IDF weights is not supported by the Spark engine; "
            "use the local engine"
        )


def _check_columns(
    docs: DataFrame, id_col: str, text_col: str, order: str | None, config: DedupConfig
) -> None:
    wanted = [id_col, text_col] + ([order] if order else [])
    if config.keep.kind == "field":
        wanted.append(str(config.keep.field))
    for name in wanted:
        if name not in docs.columns:
            raise InputError(f"the DataFrame has no column {name!r} (columns: {docs.columns})")


def _check_documents(docs: DataFrame, id_col: str, text_col: str) -> None:
    """Every text present, every id present and distinct (one pass each, first offender)."""
    from pyspark.sql import functions as F

    missing = docs.where(F.col(id_col).isNull() | F.col(text_col).isNull()).first()
    if missing is not None:
        raise InputError(f"document {missing[id_col]!r} has no id or no text")
    check_distinct_ids(docs, id_col)


IDS_ON_DRIVER = DOCUMENTS_ON_DRIVER  # documents whose ids the driver checks distinct


def check_distinct_ids(docs: DataFrame, id_col: str) -> None:
    """InputError naming an id that two documents hold, if any: counted on the driver for
    at most :data:`IDS_ON_DRIVER` documents (their ids collected at once), else by a Spark
    aggregation (the ids shuffled)."""
    ids = docs.select(id_col).limit(IDS_ON_DRIVER + 1).toArrow().column(0)
    if len(ids) <= IDS_ON_DRIVER:
        refuse_repeated(ids.combine_chunks())
    else:
        refuse_repeated_by_spark(docs, id_col)


def by_doc(df: DataFrame) -> DataFrame:
    """``df`` hash-partitioned by ``doc`` (into the session's shuffle partitions) and sorted
    by it, cached and computed: the joins on ``doc`` that read it then shuffle and sort only
    their other side (a checkpoint would forget the partitioning, and the fingerprint sets
    would be shuffled again by every join that brings them to pairs or components). A
    cached ``df`` is released once its copy is computed."""
    out = cached(df.repartition(partitions(df), "doc").sortWithinPartitions("doc"))
    df.unpersist()
    return out


def cached(df: DataFrame) -> DataFrame:
    """``df`` cached (in memory, else on disk) and computed."""
    from pyspark import StorageLevel

    out = df.persist(StorageLevel.MEMORY_AND_DISK)
    out.count()
    return out


def partitions(df: DataFrame) -> int:
    """The session's shuffle partitions: given explicitly to the shuffles that feed Python
    stages (buckets, keepers), which adaptive execution would otherwise coalesce into a
    few tasks by their bytes — a few large tasks leave cores idle where each row costs
    far more in Python than in the shuffle."""
    try:
        return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    except ValueError:  # "auto" (Databricks)
        return 200


def partition_labels(df: DataFrame, parts: int) -> np.ndarray:
    """For each of ``parts`` partitions, an integer that ``repartition(parts, column)``
    sends there (Spark's Murmur3 hash, pmod ``parts``), found by Spark's own hash among
    the first integers: rows packed per partition (:func:`batches.scatter_stage`) then
    fill every partition once."""
    from pyspark.sql import functions as F

    found = (
        df.sparkSession.range(64 * parts)
        .select("id", F.pmod(F.hash("id"), F.lit(parts)).alias("p"))
        .groupBy("p")
        .agg(F.min("id").alias("id"))
        .collect()
    )
    labels = np.full(parts, -1, dtype=np.int64)
    for row in found:
        labels[row["p"]] = row["id"]
    missing = labels < 0
    labels[missing] = 64 * parts + np.arange(np.count_nonzero(missing))  # shared, still right
    return labels


# ── numbering rows in their order ────────────────────────────────────────────────────────────


def with_index(
    df: DataFrame, groups: list[str], name: str, position: str | None = None
) -> DataFrame:
    """``df`` with ``name``: 0, 1, 2 … in the order of ``groups`` (e.g. input file rank),
    then of the rows within each Spark partition, then of the partitions.

    Rows of a partition come in the order read, and one file's splits in increasing
    partitions, so this numbers the rows of files in file order without sorting them: one
    aggregation (a row per group and partition) to the driver, a broadcast join back.
    ``position`` also adds each row's number within its group (a line number).
    """
    from pyspark.sql import Row
    from pyspark.sql import functions as F

    marked = df.withColumn("_mid", F.monotonically_increasing_id()).withColumn(
        "_part", F.shiftright("_mid", 33)
    )
    marked = marked.localCheckpoint()  # the numbers must not change when recomputed
    keys = [*groups, "_part"]
    segments = sorted(
        marked.groupBy(*keys)
        .agg(F.min("_mid").alias("_start"), F.count("*").alias("_rows"))
        .collect(),
        key=lambda row: tuple(row[k] for k in keys),
    )
    rows, total, group_start, last_group = [], 0, 0, None
    for seg in segments:
        group = tuple(seg[g] for g in groups)
        if group != last_group:
            group_start, last_group = total, group
        rows.append(
            Row(
                **{k: seg[k] for k in keys},
                _start=seg["_start"],
                _offset=total,
                _group_start=group_start,
            )
        )
        total += seg["_rows"]
    schema = (
        marked.select(*keys)
        .schema.add("_start", "long")
        .add("_offset", "long")
        .add("_group_start", "long")
    )
    table = df.sparkSession.createDataFrame(rows, schema)
    out = marked.join(F.broadcast(table), keys).withColumn(
        name, F.col("_offset") + F.col("_mid") - F.col("_start")
    )
    if position is not None:
        out = out.withColumn(position, F.col(name) - F.col("_group_start"))
    return out.drop("_mid", "_part", "_start", "_offset", "_group_start")


# ── candidates ───────────────────────────────────────────────────────────────────────────────


def _candidates(
    fp: DataFrame, config: DedupConfig, exact: bool | None
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Distinct candidate pairs ``left < right``, the count of capped buckets, and the
    documents' fingerprints that can be template shingles (``doc, fps``: with the counts
    of the prefix order, those it counts at ``template_df`` or more; else all). ``exact``:
    the prefix order from exact counts (None: when the count tables stop serving)."""
    from pyspark.sql import functions as F

    cap = config.max_bucket
    if cap < 2:
        raise ConfigError(f"max_bucket={cap!r} must be at least 2")
    rule = prefix_rule(config)
    # keys counted ≤ low (never saturated, never in a capped bucket) make pairs by counted
    # hits when least > 0 (:mod:`neardup.dedup.candidates`); the others as before
    low = rule.low
    # the part value of each shuffle partition, for the packed shuffles (one tiny job, once)
    labels = functools.cache(lambda: partition_labels(fp, partitions(fp)))
    shingles = fp.select("doc", "fps")
    if rule.score > 0.0:
        template = min(config.template_df, MAX_COUNT)
        keys = _keys(fp, config)
        entries = _value(keys.agg(F.sum(F.size("keys"))))
        if exact is None:
            exact = not tables_serve(entries)
        per_doc, hot, exact = _prefix_entries(keys, entries, rule, template, exact, labels)
        # only entries counted above ``low`` become rows (the others pair by counted hits)
        zipped = F.arrays_zip("key", "count", "in_prefix")
        entry = F.explode(F.filter(zipped, lambda e: e["count"] > F.lit(low))).alias("e")
        entries = per_doc.select("doc", entry).select("doc", "e.key", "e.count", "e.in_prefix")
        if template:
            with timed("candidate pairs: template candidates"):
                hot = hot.transform(by_doc)
            shingles = hot.select("doc", "fps")
    else:
        exact = False
        entries = _keys(fp, config).select(
            "doc",
            F.explode("keys").alias("key"),
            F.lit(MAX_COUNT).cast("long").alias("count"),
            F.lit(True).alias("in_prefix"),
        )
    # a key the estimate counts ≤ cap is held by ≤ cap documents: exact holder counts are
    # needed for the others only (a group-by and a join of the frequent keys' entries)
    hot = entries.where(F.col("count") > cap)
    if exact:  # the counts are exact; a key in no prefix (not marked) pairs nothing
        hot = hot.withColumnRenamed("count", "freq")
        capped = hot.where("in_prefix").agg(F.count_distinct("key"))
    else:
        hot = hot.drop("count")
        freq = hot.groupBy("key").agg(F.count("*").alias("freq"))
        with timed("candidate pairs: frequent keys"):
            hot = hot.join(freq, "key").localCheckpoint()
        capped = hot.where(F.col("freq") > cap).agg(F.count_distinct("key"))
    small = (
        entries.where((F.col("count") <= cap) & (F.col("count") > low))
        .select("key", "doc", "in_prefix")
        .unionByName(hot.where(F.col("freq").between(2, cap)).select("key", "doc", "in_prefix"))
        .repartition(partitions(entries), "key")
        .mapInArrow(B.bucket_stage(cap), B.BUCKET_SCHEMA)
        .select("left", "right")
    )
    # a capped bucket: its first prefix holder with every other prefix holder, by an
    # aggregate (map-side combined) and a join (a hot key is split by adaptive skew joins)
    holders = hot.where((F.col("freq") > cap) & F.col("in_prefix")).select("key", "doc")
    first = holders.groupBy("key").agg(F.min("doc").alias("left"))
    big = (
        holders.join(first, "key")
        .where(F.col("doc") != F.col("left"))
        .select("left", F.col("doc").alias("right"))
    )
    pairs = small.unionByName(big)
    if low:
        pairs = pairs.unionByName(_counted_pairs(per_doc, low, cap, labels()))
    with timed("candidate pairs: buckets"):
        pairs = pairs.distinct().localCheckpoint()
    return pairs, capped, shingles


def _whole_corpus(
    sets: DataFrame, documents: DocumentRows, config: DedupConfig
) -> WholeCorpus | None:
    """With the full index's prefix filter, a corpus whose keys fit one count-table task
    (at most :data:`CORPUS_TASK_KEYS` entries, which the tables serve: ``documents`` holds
    each document's count of keys) gets its candidate pairs, their verification and its keepers
    in one task, as the local engine finds and decides them (:func:`batches.corpus_stage`
    over the packed ``sets``: no table, entry or set through Spark's shuffles, no
    components; the identity check's rare words counted there, over every document's
    words; the keep field's values packed with the sets): its rows, and those the outcome
    reads collected by one job (:class:`WholeCorpus`). None for other corpora."""
    from pyspark.sql import functions as F

    rule = prefix_rule(config)
    if rule.score <= 0.0:
        return None
    entries = documents.entries()
    if entries > CORPUS_TASK_KEYS or not tables_serve(entries):
        return None
    with timed("one task: candidate pairs, verification, rare words, keepers"):
        stage = D.packed_stage(B.corpus_stage(config, rule))
        out = sets.coalesce(1).mapInArrow(stage, B.CORPUS_SCHEMA).localCheckpoint()
        at_threshold = F.greatest("s_lr", "s_rl") >= F.lit(config.threshold)
        needed = out.where((F.col("kind") != 0) | at_threshold)
        rows = needed.limit(O.OUTCOME_ROWS + 1).toArrow()
    return WholeCorpus(out, rows if rows.num_rows <= O.OUTCOME_ROWS else None)


@dataclass(frozen=True, eq=False)
class WholeCorpus:
    """The one task's rows (:data:`~neardup.engines.spark.batches.CORPUS_SCHEMA`), computed
    once (a local checkpoint); ``rows``: those the outcome reads (the counts, the pairs at
    the threshold, the decisions), collected by one job when at most
    :data:`~neardup.engines.spark.outcome.OUTCOME_ROWS` (else None: Spark reads them)."""

    out: DataFrame
    rows: pa.Table | None

    def frames(self) -> tuple[DataFrame, int, int, int, DataFrame]:
        """``(scored, templates, candidates, capped, decided)`` as :func:`_scored`,
        :func:`_candidates` and :func:`_decisions` give them (the counts as numbers)."""
        from pyspark.sql import functions as F

        out = self.out
        if self.rows is not None:
            counts = self.rows.filter(pc.equal(self.rows.column("kind"), 1)).to_pylist()[0]
        else:
            counts = out.where(F.col("kind") == 1).first().asDict()
        columns = ["left", "right", "resemblance", "c_lr", "c_rl", "s_lr", "s_rl", "near_copy"]
        scored = _with_score(out.where(F.col("kind") == 0).select(*columns))
        decision = [c.split()[0] for c in B.DECISION_SCHEMA.split(", ")]
        decided = out.where(F.col("kind") == 4).select(*decision)
        templates = int(counts["resemblance"])
        return scored, templates, int(counts["left"]), int(counts["right"]), decided


def _keys(fp: DataFrame, config: DedupConfig) -> DataFrame:
    """``doc, keys``: each document's distinct index keys (the full index's: ``fps``)."""
    from pyspark.sql import functions as F

    column = "fps" if B.keys_are_fingerprints(config) else "keys"
    return fp.select("doc", F.col(column).alias("keys"))


def _counted_pairs(per_doc: DataFrame, low: int, cap: int, labels: np.ndarray) -> DataFrame:
    """``left, right``: the pairs of documents sharing, among their entries counted ≤
    ``low`` (``per_doc``: ``doc, need`` and the lists ``key, count, in_prefix``), at least
    the smaller of their two needs of keys in either one's hit prefix — the buckets' pairs,
    one per shared key, counted (:mod:`neardup.dedup.candidates`). The entries travel to
    their keys' partitions with their documents' needs, and the buckets' pairs to their
    pairs' partitions, packed (:func:`batches.scatter_stage`): two shuffles of a few large
    rows, no row per pair."""
    stage = B.scatter_stage(labels, ("key", "in_prefix"), most=low, repeated=("need",))
    return (
        per_doc.mapInArrow(stage, B.PACKED_NEED_SCHEMA)
        .repartition(labels.size, "part")
        .mapInArrow(B.counted_bucket_stage(cap, labels), B.PACKED_PAIRS_SCHEMA)
        .repartition(labels.size, "part")
        .mapInArrow(B.counted_pairs_stage(), B.PAIR_SCHEMA)
    )


CHUNK = 1 << 16  # the count and mark tables travel in chunks of 64 KiB
KEYS_PER_TABLE = 1 << 26  # keys per task filling count tables (each task ships whole tables)
CORPUS_TASK_KEYS = KEYS_PER_TABLE  # up to this, one task finds and verifies the candidates


def _prefix_entries(
    keys: DataFrame,
    entries: int,
    rule: PrefixRule,
    template: int,
    exact: bool,
    labels: Callable[[], np.ndarray],
) -> tuple[DataFrame, DataFrame, bool]:
    """``doc, need, key, count, in_prefix`` (the last three lists: a row a document) of
    the entries that can make a pair, as
    :func:`neardup.dedup.candidates.candidate_pairs` finds them: the order by the count-min
    estimate of :mod:`neardup.dedup.prefix`, the prefix per document (``rule``; with
    counted hits, each document's need), then only keys counted more than once whose mark
    slot some prefix entry shares (``frequent``: the uncapped limit, 0 for none). Also
    ``doc, fps``: each document's keys (the full index's: its fingerprints) counted at
    ``template`` or more, the only ones that can be template shingles (none for 0).

    The two tables (``2 × 2**bits`` bytes, at most 256 MiB, as the local engine's) are
    filled per partition by the local kernel, summed chunk by chunk (shuffle compression
    shrinks their zeros), brought to the driver and shipped to the tasks with the stage
    that reads them (PySpark broadcasts a large function); so is the mark table (one bit a
    slot). Each document's keys stay in its row: no shuffle of entries until the buckets,
    and one pass over them (``keys``: ``doc, keys``) finds both its entries and its
    template candidates.

    ``entries``: how many keys the documents hold in all. With ``exact`` (past what the
    tables serve: :func:`neardup.dedup.prefix.tables_serve`), the counts are exact instead
    (:func:`_exact_pairing`, its entries packed to the parts ``labels()`` gives); then
    every key held twice or more is an entry (the buckets skip those in no prefix, as the
    mark would). Also returns whether they were.
    """
    from pyspark.sql import functions as F

    bits = table_bits(entries)
    # each task fills whole tables: a few tasks of many keys (coalesce: no shuffle)
    tasks = max(1, -(-entries // KEYS_PER_TABLE))
    few = keys.coalesce(tasks)
    chunk = min(CHUNK, (1 << bits) // 8)
    if exact:
        with timed("candidate pairs: exact counts and pairing entries"):
            per_doc = _exact_pairing(keys, rule, template, labels()).localCheckpoint()
    else:
        with timed("candidate pairs: count tables"):
            stage = B.count_table_stage(bits, chunk)
            chunks = few.mapInArrow(stage, B.CHUNK_SCHEMA)
            counts = _table(chunks, 2 << bits, chunk, bitset=False, tasks=tasks)
            counts = counts.reshape(2, 1 << bits)
        with timed("candidate pairs: mark table"):
            stage = B.mark_stage(counts, bits, rule, chunk)
            chunks = few.mapInArrow(stage, B.CHUNK_SCHEMA)
            marks = _table(chunks, (1 << bits) // 8, chunk, bitset=True, tasks=tasks)
        with timed("candidate pairs: pairing entries"):
            # the tables travel with the stage and are unpickled by each of its tasks:
            # as many tasks as cores (coalesce: no shuffle), not one a partition
            stage = B.pairing_stage(counts, marks, bits, rule, template)
            spread = keys.coalesce(max(tasks, _cores(keys)))
            per_doc = spread.mapInArrow(stage, B.PAIRING_SCHEMA).localCheckpoint()
    return per_doc, per_doc.select("doc", F.col("hot").alias("fps")), exact


def _exact_pairing(
    keys: DataFrame, rule: PrefixRule, template: int, labels: np.ndarray
) -> DataFrame:
    """:func:`batches.exact_pairing_stage` over ``doc, keys``: every key entry shuffled by
    key and counted there (:func:`batches.key_count_stage`: no sort, no group of a hot
    key's documents), the entries of keys held twice or more sent back to their documents
    (the others are held once: no need) — a row per document and partition, gathered by a
    group-by —, beside the documents' keys (partitioned by document already)."""
    from pyspark.sql import functions as F

    packed = keys.select("doc", F.col("keys").alias("key")).mapInArrow(
        B.scatter_stage(labels, ("key",)), B.PACKED_KEYS_SCHEMA
    )
    shared = (
        packed.repartition(labels.size, "part")
        .mapInArrow(B.key_count_stage(), B.SHARED_SCHEMA)
        .groupBy("doc")
        .agg(F.collect_list(F.struct("keys", "counts")).alias("shared"))
    )
    none = F.array().cast(B.SHARED_TYPE)
    rows = keys.join(shared, "doc", "left").select(
        "doc", "keys", F.coalesce("shared", none).alias("shared")
    )
    return rows.mapInArrow(B.exact_pairing_stage(rule, template), B.PAIRING_SCHEMA)


def _table(chunks: DataFrame, size: int, chunk: int, *, bitset: bool, tasks: int) -> np.ndarray:
    """A table of ``size`` bytes from the chunks (``chunk, data``) of ``tasks`` partitions:
    summed (saturating) or or-ed. One task's table, or up to :data:`DRIVER_MERGE_BYTES` of
    them in all, are brought to the driver as Arrow (and merged there); more are merged by
    Spark chunk by chunk first (a shuffle), and the merged table collected."""
    table = np.zeros(size, dtype=np.uint8)
    if tasks > 1 and tasks * size > DRIVER_MERGE_BYTES:
        chunks = (
            chunks.repartition("chunk")
            .sortWithinPartitions("chunk")
            .mapInArrow(B.merge_stage(bitset), B.CHUNK_SCHEMA)
        )
    merged = chunks.toArrow()
    index = merged.column("chunk").to_numpy()
    for c, data in zip(index, merged.column("data").to_pylist(), strict=True):
        piece, into = np.frombuffer(data, np.uint8), table[c * chunk : (c + 1) * chunk]
        if bitset:
            into |= piece
        else:  # saturating, as the 8-bit counters (the sum of non-negative parts, capped)
            np.minimum(into + piece.astype(np.uint16), MAX_COUNT, out=into, casting="unsafe")
    return table


DRIVER_MERGE_BYTES = 1 << 26  # the tasks' tables merged on the driver (no shuffle) up to this


# ── verification and templates ───────────────────────────────────────────────────────────────


def _verified(
    pairs: DataFrame, sets: DataFrame, inner: B.SetsStage, schema: str, parts: int
) -> DataFrame:
    """``inner`` over ``pairs`` (``left``, ``right`` and any) with the set columns of
    ``sets`` (``doc`` and sets) of their documents (empty for a document without a row).

    The pairs are cut into ``parts`` groups by their left document; each group gets the
    sets of the documents its pairs hold, once (:func:`batches.with_sets_stage`): a
    document's sets are shipped once per group instead of once per pair.
    """
    from pyspark.sql import functions as F

    names = [c for c in sets.columns if c != "doc"]
    extra = [c for c in pairs.columns if c not in ("left", "right")]
    empty = F.array().cast("array<long>")
    grouped = pairs.withColumn("part", F.pmod(F.xxhash64("left"), F.lit(parts)))
    needed = (
        grouped.select("part", F.col("left").alias("doc"))
        .unionByName(grouped.select("part", F.col("right").alias("doc")))
        .distinct()
    )
    doc_rows = needed.join(sets, "doc", "left").select(
        "part",
        F.lit(0).alias("kind"),
        F.col("doc").alias("left"),
        F.lit(-1).cast("long").alias("right"),
        *[F.lit(None).cast(pairs.schema[c].dataType).alias(c) for c in extra],
        *[F.coalesce(c, empty).alias(c) for c in names],
    )
    pair_rows = grouped.select(
        "part", F.lit(1).alias("kind"), "left", "right", *extra, *[empty.alias(c) for c in names]
    )
    stage = B.with_sets_stage(inner, names, PAIRS_PER_BATCH)
    return (
        doc_rows.unionByName(pair_rows)
        .repartition(parts, "part")
        .sortWithinPartitions("part")
        .mapInArrow(stage, schema)
    )


def _scored(
    fp: DataFrame,
    candidates: DataFrame,
    shingles: DataFrame,
    config: DedupConfig,
    pairs_per_task: int | None,
) -> tuple[DataFrame, DataFrame | int, DataFrame | None]:
    """Every candidate pair with its exact measures and the run's scores (templates
    discounted), the number of template shingles, and the rescored documents' template
    shingles (``doc, tmpl``; None without templates)."""
    from pyspark.sql import functions as F

    sets = fp.select("doc", "fps")
    parts = _verification_groups(fp, candidates, pairs_per_task)
    with timed("verification: measures"):
        measured = _verified(
            candidates, sets, B.measure_stage(config), B.MEASURE_SCHEMA, parts
        ).localCheckpoint()
    if not config.template_df:
        return _with_score(measured), 0, None
    with timed("templates: template shingles"):
        found = _templates_by_driver(shingles, measured, config)
        if found is None:
            exploded = shingles.select("doc", F.explode("fps").alias("f"))
            template = _template_shingles(exploded, measured, config)
            templates: DataFrame | int = template.agg(F.count("*"))
    if found is None:
        with timed("templates: the rescored documents' template shingles"):
            wanted_sets = (
                exploded.join(_rescored_docs(measured), "doc")
                .join(template, "f", "left_semi")
                .groupBy("doc")
                .agg(F.collect_list("f").alias("tmpl"))
                .localCheckpoint()
            )
    else:
        wanted_sets, templates = found
    rescore = measured.where("rescore").select("left", "right", "shared")
    both = sets.join(wanted_sets, "doc", "left")
    content = _verified(rescore, both, B.content_stage(config), B.CONTENT_SCHEMA, parts)
    content = content.select(
        "left", "right", F.col("s_lr").alias("c_s_lr"), F.col("s_rl").alias("c_s_rl")
    )
    scored = (
        measured.join(content, ["left", "right"], "left")
        .withColumn("s_lr", F.coalesce("c_s_lr", "s_lr"))
        .withColumn("s_rl", F.coalesce("c_s_rl", "s_rl"))
        .drop("c_s_lr", "c_s_rl")
    )
    return _with_score(scored), templates, wanted_sets


def _templates_by_driver(
    held: DataFrame, measured: DataFrame, config: DedupConfig
) -> tuple[DataFrame, int] | None:
    """The rescored documents' template shingles (``doc, tmpl``) and how many distinct
    template shingles there are, when the rescored documents' candidate shingles (``held``:
    ``doc, fps``) number at most :data:`DRIVER_WORDS` and the documents that are not their
    group's holder as few: both go to the driver and back to the tasks with the stage that
    counts each shingle's holders (:func:`batches.held_counts_stage`: a table of counts a
    task, summed on the driver; no row per shingle). None beyond that."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from neardup.util.arrays import unique

    mine = held.join(_rescored_docs(measured), "doc", "left_semi")
    mine = mine.where(F.size("fps") > 0).localCheckpoint()
    if _value(mine.agg(F.sum(F.size("fps")))) > DRIVER_WORDS:
        return None
    skip = _not_holders(measured).limit(DRIVER_WORDS + 1).toArrow()
    if skip.num_rows > DRIVER_WORDS:
        return None
    mine_t = mine.toArrow()
    values, offsets = B.flat_lists(mine_t.column("fps"))
    wanted = unique(values)
    stage = B.held_counts_stage(wanted, np.sort(skip.column("doc").to_numpy()), COUNT_CHUNK)
    # the wanted table travels with the stage: unpickled once a core, not once a partition
    spread = held.coalesce(_cores(held))
    chunks = spread.mapInArrow(stage, B.CHUNK_SCHEMA).toArrow()
    counts = B.summed_counts(chunks, wanted.size, COUNT_CHUNK)
    template = wanted[reaches_template(wanted, counts, config.template_df)]
    is_template = B.members(values, template)
    kept = np.r_[0, np.cumsum(is_template)][offsets]
    table = pa.table({"doc": mine_t.column("doc"), "tmpl": B.list_array(values[is_template], kept)})
    sets = measured.sparkSession.createDataFrame(table, "doc long, tmpl array<long>")
    return sets, int(template.size)


COUNT_CHUNK = 1 << 20  # the holders' counts travel in chunks of 1 MiB


def _verification_groups(fp: DataFrame, candidates: DataFrame, pairs_per_task: int | None) -> int:
    """The groups :func:`_verified` cuts the candidate pairs into: by ``pairs_per_task``
    when given, else :func:`neardup.engines.spark.sizing.verification_groups` from each
    document's draws (its own group when it is a left side, one per pair where it is the
    right: a histogram to the driver), the mean set size, the worker's memory and cores."""
    from pyspark.sql import functions as F

    from neardup.engines.spark import sizing

    count = _value(candidates.agg(F.count("*")))
    if pairs_per_task is not None:
        return max(2, -(-count // pairs_per_task))
    ends = candidates.select(
        F.col("left").alias("doc"), F.lit(1).alias("is_left"), F.lit(0).alias("is_right")
    ).unionByName(
        candidates.select(
            F.col("right").alias("doc"), F.lit(0).alias("is_left"), F.lit(1).alias("is_right")
        )
    )
    draws = ends.groupBy("doc").agg((F.max("is_left") + F.sum("is_right")).alias("draws"))
    hist = draws.groupBy("draws").count().collect()
    spark = fp.sparkSession
    memory = sizing.worker_memory(
        spark.conf.get("spark.executor.pyspark.memory", None),
        spark.conf.get("spark.executor.cores", None),
    )
    groups = sizing.verification_groups(
        np.array([r["draws"] for r in hist], dtype=np.int64),
        np.array([r["count"] for r in hist], dtype=np.int64),
        8.0 * float(fp.agg(F.avg("size")).first()[0] or 0.0),
        memory,
        _cores(fp),
        count,
    )
    log.info("verification: %d candidate pairs in %d groups", count, groups)
    return groups


def _cores(df: DataFrame) -> int:
    """The cluster's cores (Spark's default parallelism); over Spark Connect, which has no
    SparkContext, the shuffle partitions."""
    try:
        return int(df.sparkSession.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect raises its own not-implemented error
        return partitions(df)


def _with_score(pairs: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return pairs.withColumn("score", F.greatest("s_lr", "s_rl"))


def _rescored_docs(measured: DataFrame) -> DataFrame:
    """Documents of the pairs rescored on content (``doc``)."""
    from pyspark.sql import functions as F

    pairs = measured.where("rescore")
    return (
        pairs.select(F.col("left").alias("doc"))
        .unionByName(pairs.select(F.col("right").alias("doc")))
        .distinct()
    )


def _template_shingles(shingles: DataFrame, measured: DataFrame, config: DedupConfig) -> DataFrame:
    """``f``: the rescored documents' fingerprints held by ≥ ``template_df`` groups of near
    copies, Han shingles by ``HAN_DF`` times that (:func:`neardup.dedup.templates.
    template_shingles` over the holders)."""
    from pyspark.sql import functions as F

    not_holders = _not_holders(measured)
    wanted = shingles.join(_rescored_docs(measured), "doc").select("f").distinct()
    wanted = wanted.localCheckpoint()
    if _value(wanted.agg(F.count("*"))) <= BROADCAST_SHINGLES:
        # sent whole to every task: the holders are filtered where they are, and only
        # their counts shuffled (else every holder's entry is, to be joined by fingerprint)
        wanted = F.broadcast(wanted)
    holders = shingles.join(not_holders, "doc", "left_anti").select("f")
    counts = holders.join(wanted, "f", "left_semi").groupBy("f").agg(F.count("*").alias("n"))
    stage = B.template_stage(config)
    return counts.mapInArrow(stage, B.TEMPLATE_SCHEMA).localCheckpoint()


BROADCAST_SHINGLES = 1 << 21  # the rescored documents' distinct shingles sent to every task


def _near_copy_groups(measured: DataFrame) -> DataFrame:
    """``node, label``: the groups of near copies among the verified pairs (documents in
    none are their own group), each labelled by its smallest document."""
    from pyspark.sql import functions as F

    from neardup.engines.spark.graph import component_labels

    edges = measured.where("near_copy").select(
        F.col("left").alias("src"), F.col("right").alias("dst")
    )
    return component_labels(edges)


def _not_holders(measured: DataFrame) -> DataFrame:
    """``doc``: the documents that are not their group's holder (its smallest document)."""
    from pyspark.sql import functions as F

    labels = _near_copy_groups(measured)
    return labels.where(F.col("node") != F.col("label")).select(F.col("node").alias("doc"))


def _rare_words(fp: DataFrame, measured: DataFrame, pairs: DataFrame) -> DataFrame:
    """``doc, rare``: the rare words of the documents in ``pairs`` (those that may be
    removed), their own words marked, as :func:`neardup.dedup.identity.run_names` counts
    them.

    When the documents in pairs hold at most :data:`DRIVER_WORDS` word entries and the
    groups of near copies are as few, both go to the driver and back to the tasks with the
    stage that counts the words (:func:`batches.word_groups_stage`: a few rows a word and
    partition, no row per word entry); the rare words of each document are then found on
    the driver. Otherwise every word entry is a row, counted by a group-by."""
    from pyspark.sql import functions as F

    from neardup.dedup.flow import LEAST_DOCUMENTS, RARE_GROUPS
    from neardup.fingerprints.word_kernels import CHARACTERS, WORD

    script = int(CHARACTERS)  # under 2**63: a Spark long as it is
    word = int(WORD) - (1 << 64)  # the same bits as a Spark long
    wanted_docs = (
        pairs.select(F.col("left").alias("doc"))
        .unionByName(pairs.select(F.col("right").alias("doc")))
        .distinct()
    )
    groups = _near_copy_groups(measured).select(F.col("node").alias("doc"), "label")
    mine = fp.join(wanted_docs, "doc", "left_semi").select("doc", "words")
    mine = mine.where(F.size("words") > 0).localCheckpoint()
    if _value(mine.agg(F.sum(F.size("words")))) <= DRIVER_WORDS:
        labels = groups.limit(DRIVER_WORDS + 1).toArrow()
        if labels.num_rows <= DRIVER_WORDS:
            return _rare_words_by_driver(fp, mine.toArrow(), labels)

    def plain(frame: DataFrame) -> DataFrame:  # the word, and whether its document repeats it
        marked = frame.select("doc", F.explode("words").alias("marked"))
        w, r = F.col("marked").bitwiseAND(word), F.col("marked").bitwiseAND(1)
        return marked.select("doc", w.alias("w"), r.alias("r"))

    words, wanted = plain(fp), plain(mine)
    counts = (
        words.join(wanted.select("w").distinct(), "w", "left_semi")
        .join(groups, "doc", "left")
        .withColumn("group", F.coalesce("label", "doc"))
        .groupBy("w")
        .agg(
            F.count("*").alias("documents"),
            F.countDistinct("group").alias("groups"),
            F.max("r").alias("repeated"),
        )
    )
    shared = (F.col("documents") >= LEAST_DOCUMENTS) & (F.col("groups") < RARE_GROUPS)
    alone = (F.col("documents") == 1) & (F.col("repeated") == 1)
    rare = counts.where((shared | alone) & (F.col("w") != script))
    rare = rare.select("w", alone.alias("own"))
    marked = F.when(F.col("own"), F.col("w").bitwiseOR(1)).otherwise(F.col("w"))
    return (
        wanted.join(rare, "w")
        .groupBy("doc")
        .agg(F.collect_list(marked).alias("rare"))
        .localCheckpoint()
    )


DRIVER_WORDS = 1 << 24  # entries (words, shingles) of documents in pairs brought to the driver


def _rare_words_by_driver(fp: DataFrame, mine: pa.Table, labels: pa.Table) -> DataFrame:
    """:func:`_rare_words` with the words of the documents in pairs (``mine``: ``doc,
    words``) and the groups of near copies (``labels``: ``doc, label``) on the driver."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from neardup.dedup.flow import LEAST_DOCUMENTS, RARE_GROUPS
    from neardup.fingerprints.word_kernels import CHARACTERS, REPEATED, WORD
    from neardup.util.arrays import unique

    values, offsets = B.flat_lists(mine.column("words"))
    plain = values & WORD
    wanted = unique(plain)
    nodes = labels.column("doc").to_numpy().astype(np.int64)
    order = np.argsort(nodes, kind="stable")
    label = labels.column("label").to_numpy().astype(np.int64)[order]
    stage = B.word_groups_stage(wanted, nodes[order], label, RARE_GROUPS)
    shared = (F.col("documents") >= LEAST_DOCUMENTS) & (F.col("groups") < RARE_GROUPS)
    counts = (
        fp.select("doc", "words")
        .mapInArrow(stage, B.WORD_GROUP_SCHEMA)
        .groupBy("w")
        .agg(F.sum("n").alias("documents"), F.countDistinct("g").alias("groups"))
        .where(shared | (F.col("documents") == 1))
        .select("w", shared.alias("shared"))
        .toArrow()
    )
    found = counts.column("w").to_numpy().astype(np.int64).view(np.uint64)
    order = np.argsort(found)
    found, is_shared = found[order], counts.column("shared").to_numpy(zero_copy_only=False)[order]
    at = np.minimum(np.searchsorted(found, plain), max(found.size - 1, 0))
    hit = B.members(plain, found) & (plain != CHARACTERS)
    shared_here = is_shared[at] if found.size else np.zeros(plain.size, dtype=bool)
    own = hit & ~shared_here & (values & REPEATED > 0)  # used by its document alone, repeated
    is_rare = hit & (shared_here | own)
    rare = np.where(own, values, plain)[is_rare]  # own words keep their mark
    kept = np.r_[0, np.cumsum(is_rare)][offsets]
    table = pa.table({"doc": mine.column("doc"), "rare": B.list_array(rare, kept)})
    return fp.sparkSession.createDataFrame(table, "doc long, rare array<long>")


# ── keepers and outputs ──────────────────────────────────────────────────────────────────────


def _decisions(
    values: DataFrame | None,
    fp: DataFrame,
    tmpl_sets: DataFrame | None,
    rare: DataFrame | None,
    pairs: DataFrame,
    config: DedupConfig,
) -> DataFrame:
    """``doc, keep_of, label, keeper, declined`` for every document in a pair at the
    threshold, and the pairs the keeper rounds add (``doc`` -1): components found in Spark,
    each decided whole in one task with its documents' fingerprints and template shingles
    joined in (the rounds verify documents against their neighbours' keepers there)."""
    from pyspark.sql import functions as F

    from neardup.engines.spark.graph import component_labels

    comps = component_labels(pairs.select(F.col("left").alias("src"), F.col("right").alias("dst")))
    comps = comps.select(F.col("node").alias("doc"), F.col("label").alias("comp"))
    empty = F.array().cast("array<long>")
    if tmpl_sets is None:
        tmpl_sets = fp.select("doc", empty.alias("tmpl")).where(F.lit(False))
    names, no_names = [], []  # the identity check's words and rare words
    sets = ["doc", "length", "fps"] + (["words"] if rare is not None else [])
    with_sets = comps.join(fp.select(*sets), "doc").join(tmpl_sets, "doc", "left")
    if rare is not None:
        names = ["words", F.coalesce("rare", empty).alias("rare")]
        no_names = [empty.alias("words"), empty.alias("rare")]
        with_sets = with_sets.join(rare, "doc", "left")
    if values is None:
        with_sets = with_sets.withColumn("value", F.lit(None))
    else:
        with_sets = with_sets.join(values, "doc")
    doc_rows = with_sets.select(
        "comp",
        F.lit(0).alias("kind"),
        F.col("doc").alias("a"),
        F.lit(-1).cast("long").alias("b"),
        F.lit(0.0).alias("s_lr"),
        F.lit(0.0).alias("s_rl"),
        F.lit(0.0).alias("resemblance"),
        F.lit(0.0).alias("c_lr"),
        F.lit(0.0).alias("c_rl"),
        "length",
        "value",
        "fps",
        F.coalesce("tmpl", empty).alias("tmpl"),
        *names,
    )
    pair_rows = pairs.join(comps.withColumnRenamed("doc", "left"), "left").select(
        "comp",
        F.lit(1).alias("kind"),
        F.col("left").alias("a"),
        F.col("right").alias("b"),
        "s_lr",
        "s_rl",
        "resemblance",
        "c_lr",
        "c_rl",
        F.lit(0).cast("long").alias("length"),
        F.lit(None).cast(doc_rows.schema["value"].dataType).alias("value"),
        empty.alias("fps"),
        empty.alias("tmpl"),
        *no_names,
    )
    rows = doc_rows.unionByName(pair_rows).repartition(partitions(pairs), "comp")
    rows = rows.sortWithinPartitions("comp")
    return rows.mapInArrow(B.decision_stage(config), B.DECISION_SCHEMA)


def _removed(
    docs: DataFrame,
    decisions: DataFrame,
    ids: DataFrame,
    small: Callable[[DataFrame], DataFrame],
) -> DataFrame:
    """The removed input rows with ``_duplicate_of``: the removed documents and their
    keepers' ids (``small``: how a frame of a row per removal joins the input rows)."""
    from pyspark.sql import functions as F

    moved = decisions.where(F.col("keep_of") != F.col("doc")).select(
        F.col("doc").alias(DOC), F.col("keep_of")
    )
    keeper_ids = ids.select(F.col("doc").alias("keep_of"), F.col("id").alias("_duplicate_of"))
    keeper_ids = keeper_ids.join(small(moved.select("keep_of").distinct()), "keep_of", "left_semi")
    return docs.join(small(moved.join(keeper_ids, "keep_of")), DOC).drop("keep_of", DOC)


def _pair_output(pairs: DataFrame, ids: DataFrame, config: DedupConfig) -> DataFrame:
    from pyspark.sql import functions as F

    a = ids.select(F.col("doc").alias("left"), F.col("id").alias("a"))
    b = ids.select(F.col("doc").alias("right"), F.col("id").alias("b"))
    contained = (
        F.when((F.col("score") >= config.threshold) & (F.col("s_lr") > F.col("s_rl")), "a_in_b")
        .when((F.col("score") >= config.threshold) & (F.col("s_lr") < F.col("s_rl")), "b_in_a")
        .otherwise(F.lit(None).cast("string"))
    )
    return (
        pairs.join(a, "left")
        .join(b, "right")
        .orderBy("left", "right")
        .select(
            "a",
            "b",
            "score",
            F.col("s_lr").alias("score_a_in_b"),
            F.col("s_rl").alias("score_b_in_a"),
            "resemblance",
            F.col("c_lr").alias("containment_a_in_b"),
            F.col("c_rl").alias("containment_b_in_a"),
            contained.alias("contained"),
        )
    )


def _cluster_output(decisions: DataFrame, ids: DataFrame) -> DataFrame:
    """Clusters of two or more, numbered by their first member (as the local engine)."""
    from pyspark.sql import functions as F

    members = decisions.join(ids, "doc")
    keeper_ids = ids.select(F.col("doc").alias("keeper"), F.col("id").alias("keep"))
    grouped = (
        members.groupBy("label")
        .agg(
            F.sort_array(F.collect_list(F.struct("doc", "id"))).alias("m"),
            F.first("keeper").alias("keeper"),
        )
        .where(F.size("m") >= 2)
        .join(keeper_ids, "keeper")
        .orderBy("label")
    )
    numbered = with_index(grouped, [], "cluster")
    return numbered.orderBy("label").select("cluster", F.col("m.id").alias("ids"), "keep")
