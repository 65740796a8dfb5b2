"""The rows that describe a run's documents, on the driver when they fit.

The fingerprint stage gives a row per document (``doc, id, bad, length, size, keys``: its
number, id, text length, set size and count of index keys) or per bad record (``bad``: the
message). The run reads them for its checks and counts: the first bad record, distinct ids,
the index's entries, the summary's documents and empty texts, the ids and lengths of the
documents in pairs. Each of those is a Spark job when the rows stay in Spark; a corpus of at
most :data:`DOCUMENTS_ON_DRIVER` documents has them collected once (a few tens of bytes a
document) and answered on the driver, and the stages that join them get a DataFrame of that
table (a local relation: nothing computed again).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup.engines.local.pipeline import SHOWN_IDS
from neardup.errors import InputError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DOCUMENTS_ON_DRIVER = 1 << 22  # documents (and bad records) whose rows the driver collects
COLUMNS = ("doc", "id", "bad", "length", "size", "keys")
BAD_EXAMPLES = SHOWN_IDS  # bad records named in the summary, as the local engine names them


class BadRecords(NamedTuple):
    """A run's bad records: how many, and the messages of the first
    :data:`BAD_EXAMPLES` in input order."""

    count: int
    examples: list[str]

    def refuse(self, skip_bad: bool) -> None:
        """InputError with the first bad record's message, unless ``skip_bad``."""
        if self.count and not skip_bad:
            raise InputError(self.examples[0])


@dataclass(frozen=True, eq=False)
class DocumentRows:
    """A run's document rows (:data:`COLUMNS`): ``table`` on the driver (``doc``
    ascending) when they fit, else None and ``spark_rows`` computed (a local checkpoint)."""

    spark_rows: DataFrame
    table: pa.Table | None

    @classmethod
    def of(cls, rows: DataFrame) -> DocumentRows:
        """The rows of ``rows`` (:data:`COLUMNS`) collected when they fit (one job), else
        checkpointed."""
        wanted = rows.select(*COLUMNS)
        table = wanted.limit(DOCUMENTS_ON_DRIVER + 1).toArrow()
        if table.num_rows <= DOCUMENTS_ON_DRIVER:
            return cls(wanted, table.sort_by("doc"))
        return cls(wanted.localCheckpoint(), None)

    @functools.cached_property
    def frame(self) -> DataFrame:
        """The rows in Spark: from the driver's table when there is one (a local relation,
        no job to recompute them)."""
        if self.table is None:
            return self.spark_rows
        return self.spark_rows.sparkSession.createDataFrame(self.table)

    def documents(self) -> DataFrame:
        """``doc, id, length, size, keys`` of the documents (no bad records), in Spark."""
        from pyspark.sql import functions as F

        rows = self.frame.where(F.col("bad").isNull())
        return rows.select("doc", "id", "length", "size", "keys")

    def bad(self) -> BadRecords:
        """The bad records among the rows."""
        from pyspark.sql import functions as F

        if self.table is not None:
            messages = self.table.column("bad").drop_null()
            return BadRecords(len(messages), messages.slice(0, BAD_EXAMPLES).to_pylist())
        return bad_records(self.frame.where(F.col("bad").isNotNull()), "doc", "bad")

    def check_distinct_ids(self) -> None:
        """InputError naming an id two documents hold, if any."""
        if self.table is None:
            refuse_repeated_by_spark(self.documents(), "id")
            return
        refuse_repeated(self._good().column("id").combine_chunks())

    def entries(self) -> int:
        """The index's entries: the documents' keys, summed."""
        from pyspark.sql import functions as F

        if self.table is None:
            return int(self.documents().agg(F.sum("keys")).first()[0] or 0)
        return int(pc.sum(self._good().column("keys")).as_py() or 0)

    def counts(self) -> tuple[int, int]:
        """The documents, and those of them with an empty set (no shingle)."""
        from pyspark.sql import functions as F

        if self.table is None:
            empty = F.sum((F.col("size") == 0).cast("long"))
            documents, empties = self.documents().agg(F.count("*"), empty).first()
            return int(documents), int(empties or 0)
        sizes = self._good().column("size").to_numpy()
        return int(sizes.size), int(np.count_nonzero(sizes == 0))

    def described(self) -> pa.Table | None:
        """``doc, id, length`` of the documents on the driver (``doc`` ascending), or None."""
        if self.table is None:
            return None
        return self._good().select(["doc", "id", "length"])

    def _good(self) -> pa.Table:
        assert self.table is not None
        return self.table.filter(pc.is_null(self.table.column("bad")))


def refuse_repeated(ids: pa.Array) -> None:
    """InputError naming the first id of ``ids`` held twice or more (with its count)."""
    counts = pc.value_counts(ids)
    twice = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(twice):
        first = twice[0].as_py()
        raise InputError(f"duplicate id {first['values']!r} ({first['counts']} documents)")


def refuse_repeated_by_spark(docs: DataFrame, id_col: str) -> None:
    """:func:`refuse_repeated` of the ids ``id_col`` of ``docs``, by a Spark aggregation (the
    ids shuffled)."""
    from pyspark.sql import functions as F

    twice = docs.groupBy(id_col).count().where(F.col("count") > 1).first()
    if twice is not None:
        raise InputError(f"duplicate id {twice[id_col]!r} ({twice['count']} documents)")


def bad_records(rows: DataFrame, order: str, message: str) -> BadRecords:
    """The bad records ``rows`` (in Spark; ``order``: their input order, ``message``: the
    column of their messages): counted, and the first examples taken, when there are any."""
    first = rows.orderBy(order).limit(BAD_EXAMPLES).collect()
    return BadRecords(rows.count() if first else 0, [row[message] for row in first])
