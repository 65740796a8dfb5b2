"""The input records of a dedup run again, for ``kept`` / ``removed``, at the least cost.

The first pass over the inputs keeps only where each document is (input index, line); the
output pass then takes every record from its input again:

- a JSONL input's lines are copied as stored, a block of lines at a time: never parsed,
  never serialized again (a removed record gets ``_duplicate_of`` spliced in before its
  closing brace);
- a Parquet input written to Parquet outputs: its Arrow batches, the wanted rows taken as
  they are (column types kept);
- other inputs (CSV, Parquet to JSONL, directories) are read again and their records
  serialized once.

So writing the outputs costs about as much as copying the input file.
"""

from __future__ import annotations

import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from neardup.errors import InputError
from neardup.io.files import LineBlock, input_kind, jsonl_line_blocks
from neardup.io.readers import Document, read_documents
from neardup.io.writers import dumps
from neardup.util.extras import pyarrow

DUPLICATE_OF = "_duplicate_of"
_PARQUET_BATCH = 8192  # rows per Arrow batch read from a Parquet input


@dataclass(eq=False)
class Places:
    """Where every document of a run came from: its input's index and its line (0: the
    whole file of a directory input), appended while the inputs are read."""

    inputs: array.array = field(default_factory=lambda: array.array("q"))
    lines: array.array = field(default_factory=lambda: array.array("q"))
    current: int = 0

    def start_input(self, index: int) -> None:
        self.current = index

    def add(self, line: int) -> None:
        self.inputs.append(self.current)
        self.lines.append(line)

    def add_lines(self, index: int, lines: list[int]) -> None:
        """Documents of input ``index`` at ``lines``, in order."""
        self.inputs.extend([index] * len(lines))
        self.lines.extend(lines)


@dataclass(frozen=True, slots=True, eq=False)
class Copy:
    """One input record to write: its JSON line as stored, or its Document read again."""

    line: bytes | None
    doc: Document | None

    def text(self, text_field: str) -> str:
        """The document's text (only for the few documents the report shows)."""
        if self.doc is not None:
            return self.doc.text
        return orjson.loads(self.line)[text_field]

    def json(self, duplicate_of: str | None = None) -> bytes:
        """The record as a line of JSON, with ``_duplicate_of`` when given."""
        if self.line is not None:
            return self.line if duplicate_of is None else with_duplicate_of(self.line, duplicate_of)
        assert self.doc is not None
        if duplicate_of is None:
            return dumps(self.doc.record)
        return dumps(self.doc.record | {DUPLICATE_OF: duplicate_of})


@dataclass(frozen=True, slots=True, eq=False)
class Lines:
    """Consecutive documents' JSON lines as stored (a JSONL input, a block at a time)."""

    lines: LineBlock

    def __len__(self) -> int:
        return len(self.lines)

    def text(self, row: int, text_field: str) -> str:
        return orjson.loads(self.lines[row])[text_field]

    def split(self, keepers: Sequence[str | None]) -> tuple[list[memoryview], list[bytes]]:
        """``(kept lines, removed lines with _duplicate_of)``; ``keepers[r]`` is None for a
        kept row, else the id kept instead. The kept lines come as runs of lines (pieces of
        the block joined by b"\\n"), not copied one by one."""
        gone = [r for r, k in enumerate(keepers) if k is not None]
        stay = np.ones(len(keepers), dtype=np.bool_)
        stay[gone] = False
        removed = [with_duplicate_of(self.lines[r], keepers[r]) for r in gone]  # type: ignore[arg-type]
        return self.lines.runs(np.flatnonzero(stay)), removed


@dataclass(frozen=True, slots=True, eq=False)
class Rows:
    """Consecutive documents as an Arrow table: a Parquet input's rows as read."""

    table: Any

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def text(self, row: int, text_field: str) -> str:
        return self.table.column(text_field)[row].as_py()

    def split(self, keepers: Sequence[str | None]) -> tuple[Any, Any]:
        """``(kept rows, removed rows with _duplicate_of)``; ``keepers[r]`` is None for a
        kept row, else the id kept instead."""
        pa = pyarrow("writing .parquet files")
        removed = pa.array([k is not None for k in keepers], type=pa.bool_())
        gone = self.table.filter(removed)
        column = pa.array([k for k in keepers if k is not None], type=pa.string())
        names = gone.schema.names
        if DUPLICATE_OF in names:
            gone = gone.set_column(names.index(DUPLICATE_OF), DUPLICATE_OF, column)
        else:
            gone = gone.append_column(DUPLICATE_OF, column)
        stays = pa.array([k is None for k in keepers], type=pa.bool_())
        return self.table.filter(stays), gone


def with_duplicate_of(line: bytes, keeper: str) -> bytes:
    """A JSON object's line with ``"_duplicate_of": keeper`` as its last member (a JSON
    reader keeps the last of repeated names, so it overrides one the record had)."""
    body = line.rstrip()
    if not body.endswith(b"}"):  # not an object as stored: parse it
        return dumps(orjson.loads(line) | {DUPLICATE_OF: keeper})
    head = body[:-1].rstrip()
    sep = b"" if head.endswith(b"{") else b","
    return head + sep + b'"' + DUPLICATE_OF.encode() + b'":' + orjson.dumps(keeper) + b"}"


def input_records(
    paths: Sequence[str],
    places: Places,
    ids: Sequence[str],
    id_field: str = "id",
    text_field: str = "text",
    arrow: bool = False,
) -> Iterator[Copy | Lines | Rows]:
    """Every document's record, in the order of the first pass (``places``, ``ids``): a
    JSONL input's as :class:`Lines`, and with ``arrow`` a Parquet input's as :class:`Rows`
    (a block at a time); the others one :class:`Copy` each."""
    inputs = np.frombuffer(places.inputs, dtype=np.int64) if places.inputs else np.empty(0, int)
    lines = np.frombuffer(places.lines, dtype=np.int64) if places.lines else np.empty(0, int)
    bounds = np.searchsorted(inputs, np.arange(len(paths) + 1))
    for index, path in enumerate(paths):
        lo, hi = int(bounds[index]), int(bounds[index + 1])
        if lo == hi:
            continue
        kind = input_kind(path)
        if kind == "jsonl":
            for block in jsonl_line_blocks(path, lines[lo:hi]):
                yield Lines(block)
        elif kind == "parquet" and arrow:
            yield from _parquet_rows(path, lines[lo:hi])
        else:
            yield from _reread(path, lines[lo:hi].tolist(), ids[lo:hi], id_field, text_field)


def _reread(
    path: str, lines: list[int], ids: Sequence[str], id_field: str, text_field: str
) -> Iterator[Copy]:
    """The wanted documents of one non-JSONL input, read again (bad ones skipped as before).

    Matched by line, or by id for a directory's files (line 0): a record skipped in the
    first pass (a duplicate of an earlier input's id) is skipped again."""
    wanted = 0
    docs = read_documents([path], id_field=id_field, text_field=text_field, skip_bad=True)
    for doc in docs:
        found = wanted < len(lines) and doc.line == lines[wanted]
        if found and (doc.line or doc.id == ids[wanted]):
            yield Copy(None, doc)
            wanted += 1
    if wanted < len(lines):
        raise InputError(f"{path}: changed while being read (a record is gone)")


def _parquet_rows(path: str, rows: np.ndarray) -> Iterator[Rows]:
    """The wanted rows (1-based, increasing) of a Parquet file, batch by batch as read."""
    pa = pyarrow("reading .parquet files")
    first = 1
    taken = 0
    for batch in pa.parquet.ParquetFile(path).iter_batches(batch_size=_PARQUET_BATCH):
        last = first + batch.num_rows
        stop = int(np.searchsorted(rows, last))
        if stop > taken:
            yield Rows(pa.Table.from_batches([batch.take(rows[taken:stop] - first)]))
        taken, first = stop, last
    if taken < rows.size:
        raise InputError(f"{path}: changed while being read (row {rows[taken]} is gone)")
