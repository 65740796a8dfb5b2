"""Parquet: ``.parquet`` (extra ``parquet``), read in record batches; a record's line is its
1-based row number. Copied into Parquet outputs as Arrow rows, column types kept."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from neardup.errors import DamagedInputError, InputError
from neardup.io.files import InputFile, read_error, read_errors
from neardup.io.formats.copies import Lines, Rows
from neardup.io.formats.protocol import Format
from neardup.io.jsonvalues import json_problem
from neardup.io.records import BadRecord, Item, ReadOptions, record_document
from neardup.io.writers import ParquetSink
from neardup.util.extras import pyarrow

__all__ = ["FORMAT", "ParquetFormat"]

_READ_BATCH = 1024  # rows per batch read: bounded memory even with long texts
_COPY_BATCH = 8192  # rows per Arrow batch read to copy into Parquet outputs


class ParquetFormat(Format):
    """Apache Parquet, in and out."""

    order: ClassVar[int] = 30
    name: ClassVar[str] = "parquet"
    title: ClassVar[str] = "Parquet"
    described: ClassVar[str] = ".parquet"
    suffixes: ClassVar[tuple[str, ...]] = (".parquet",)
    spark_suffixes: ClassVar[tuple[str, ...]] = (".parquet",)
    spark_described: ClassVar[str] = ".parquet"
    spark_source: ClassVar[str] = "parquet"
    spark_writer: ClassVar[str] = "parquet"
    takes_json_lines: ClassVar[bool] = True

    def require(self, inp: InputFile) -> None:
        pyarrow("reading .parquet files")

    def read_errors(self, inp: InputFile) -> tuple[type[BaseException], ...]:
        return (*read_errors(inp), pyarrow("reading .parquet files").ArrowException)

    def read(self, inp: InputFile, opts: ReadOptions) -> Iterator[Item]:
        pq = pyarrow("reading .parquet files").parquet
        source, row = str(inp.path), 0
        try:
            pfile = pq.ParquetFile(inp.path)
            names = pfile.schema_arrow.names
            if opts.text_field not in names:
                if pfile.metadata.num_rows == 0:
                    return  # an empty file (written with no record, so no columns) is fine
                yield BadRecord(
                    source, 0, f"no column {opts.text_field!r} (columns: {', '.join(names)})"
                )
                return
            for batch in pfile.iter_batches(batch_size=_READ_BATCH):
                for record in batch.to_pylist():
                    row += 1
                    problem = json_problem(record)  # a NUL, a NaN: as in a JSONL record
                    yield (
                        BadRecord(source, row, problem)
                        if problem
                        else record_document(record, source, row, opts)
                    )
        except DamagedInputError:
            raise
        except self.read_errors(inp) as exc:
            yield BadRecord(source, row + 1 if row else 0, read_error(exc))

    def count(self, inp: InputFile) -> int | None:
        """The row count of the file's metadata."""
        pq = pyarrow("reading .parquet files").parquet
        return int(pq.ParquetFile(inp.path).metadata.num_rows)

    def keeps_stored(self, output: str) -> bool:
        """Parquet outputs get the rows as they are (column types kept)."""
        return output == self.name

    def stored(self, inp: InputFile, lines: np.ndarray) -> Iterator[Lines | Rows]:
        """The wanted rows of each Arrow batch."""
        pa = pyarrow("reading .parquet files")
        first = 1
        taken = 0
        for batch in pa.parquet.ParquetFile(inp.path).iter_batches(batch_size=_COPY_BATCH):
            last = first + batch.num_rows
            stop = int(np.searchsorted(lines, last))
            if stop > taken:
                yield Rows(pa.Table.from_batches([batch.take(lines[taken:stop] - first)]))
            taken, first = stop, last
        if taken < lines.size:
            raise InputError(f"{inp.path}: changed while being read (row {lines[taken]} is gone)")

    def sink(self, path: Path, sync: bool) -> ParquetSink:
        return ParquetSink(path, sync)

    def read_output(self, path: Path) -> Iterator[Mapping[str, Any]]:
        pq = pyarrow("reading .parquet files").parquet
        for batch in pq.ParquetFile(path).iter_batches():
            yield from batch.to_pylist()


FORMAT = ParquetFormat()
