"""The lines of a CSV file for :func:`csv.reader`, read again after a bad record.

Python's csv module reads a quoted field across lines until its closing quote: one quote
left open swallows the rest of the file into one field. :class:`LineFeed` keeps the lines of
the record being parsed and bounds its size, so that the reader can report the record as bad
and resume at its second line (see :func:`neardup.corpus.read_documents`).
"""

from __future__ import annotations

import collections
from typing import IO

__all__ = ["LineFeed", "RecordTooLongError"]


class RecordTooLongError(Exception):
    """A CSV record ran past the size limit (an unterminated quote, most likely)."""


class LineFeed:
    """The lines of a CSV file for :func:`csv.reader`, keeping the lines of the record being
    parsed: after a bad record every line of it but the first is read again, so that an
    unterminated quote costs its own record only, never the rest of the file."""

    def __init__(self, fh: IO[str], limit: int) -> None:
        self.fh = fh
        self.limit = limit  # characters a record may span
        self.replay: collections.deque[str] = collections.deque()
        self.record: list[str] = []
        self.size = 0
        self.line = 0  # lines handed out so far

    def __iter__(self) -> LineFeed:
        return self

    def __next__(self) -> str:
        line = self.replay.popleft() if self.replay else self.fh.readline(self.limit + 1)
        if not line:
            raise StopIteration
        self.record.append(line)
        self.size += len(line)
        self.line += 1
        if self.size > self.limit:
            raise RecordTooLongError
        return line

    def start(self) -> int:
        """A record starts: the number of its first line."""
        self.record, self.size = [], 0
        return self.line + 1

    def rewind(self) -> None:
        """After a bad record: its lines but the first are read again (the rest of an
        over-long first line is skipped)."""
        rest = self.record[1:]
        if not rest and self.record and not self.record[0].endswith(("\n", "\r")):
            self._skip_line()
        self.replay.extendleft(reversed(rest))
        self.line -= len(rest)
        self.record, self.size = [], 0

    def _skip_line(self) -> None:
        while (part := self.fh.readline(self.limit + 1)) and not part.endswith(("\n", "\r")):
            pass
