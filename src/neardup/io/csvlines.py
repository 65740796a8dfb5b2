"""CSV records that survive a stray quote: :func:`csv.reader` over a file's lines, resumed
after a bad record at the record's second line.

Python's csv module reads a quoted field across lines until its closing quote: one quote
left open swallows the rest of the file into one field. Parsed strictly, such a record ends
in an error — at the end of the file, at a later line's quote followed by text, or at the
field size limit — and :func:`csv_records` then reads on from the line after the one where
the record started, so the stray quote costs one record. The lines of the record being
parsed are held by :func:`itertools.tee` (all in C: reading costs what csv.reader over the
file costs) and let go after each record.
"""

from __future__ import annotations

import collections
import csv
import itertools
from collections.abc import Iterator

__all__ = ["csv_records"]


def csv_records(lines: Iterator[str]) -> Iterator[tuple[int, list[str] | csv.Error, int]]:
    """``(first line, row or csv.Error, lines read)`` of every record of ``lines`` (1-based
    line numbers; blank lines give an empty row). After an error, reading resumes at the
    second line of the failed record."""
    base = 0  # lines before those of the current reader
    while True:
        ahead, behind = itertools.tee(lines)
        reader = csv.reader(ahead, strict=True)
        done = 0  # lines of the current reader in records already given
        while True:
            try:
                row: list[str] | csv.Error = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                row = exc
            yield base + done + 1, row, reader.line_num - done
            if isinstance(row, csv.Error):
                next(behind, None)  # the failed record's first line; the rest is read again
                base += done + 1
                lines = behind
                break
            collections.deque(itertools.islice(behind, reader.line_num - done), maxlen=0)
            done = reader.line_num
