"""The input records of a dedup run again, for ``kept`` / ``removed``, at the least cost.

The first pass over the inputs keeps only where each document is (input index, line); the
output pass then asks each input's format for its records again
(:meth:`neardup.io.formats.Format.copies`), in the cheapest form it has for the run's output
format:

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
from pathlib import Path

import numpy as np

from neardup.io.formats import classify, named
from neardup.io.formats.copies import DUPLICATE_OF, Copy, Lines, Rows
from neardup.io.jsonlines import with_duplicate_of
from neardup.io.records import DEFAULT_MAX_TEXT_BYTES, ReadOptions

__all__ = ["DUPLICATE_OF", "Copy", "Lines", "Places", "Rows", "input_records", "with_duplicate_of"]


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


def input_records(
    paths: Sequence[str],
    places: Places,
    ids: Sequence[str],
    id_field: str = "id",
    text_field: str = "text",
    output: str = "jsonl",
) -> Iterator[Copy | Lines | Rows]:
    """Every document's record, in the order of the first pass (``places``, ``ids``), as
    each input's format gives them for outputs of format ``output``: blocks of
    :class:`Lines` or :class:`Rows`, or one :class:`Copy` each."""
    inputs = np.frombuffer(places.inputs, dtype=np.int64) if places.inputs else np.empty(0, int)
    lines = np.frombuffer(places.lines, dtype=np.int64) if places.lines else np.empty(0, int)
    bounds = np.searchsorted(inputs, np.arange(len(paths) + 1))
    opts = ReadOptions(id_field, text_field, DEFAULT_MAX_TEXT_BYTES, several=False)
    for index, path in enumerate(paths):
        lo, hi = int(bounds[index]), int(bounds[index + 1])
        if lo == hi:
            continue
        inp = classify(Path(path))
        yield from named(inp.kind).copies(inp, lines[lo:hi], ids[lo:hi], opts, output)
