"""An input's records again, for a run's ``kept`` and ``removed``, in the cheapest form its
format gives them: lines as stored (:class:`Lines`), Arrow rows as read (:class:`Rows`), or
one :class:`Copy` of a Document read again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.io.files import LineBlock
from neardup.io.records import Document
from neardup.util.extras import pyarrow

if TYPE_CHECKING:
    from neardup.io.formats.protocol import LineFormat

__all__ = ["DUPLICATE_OF", "Copy", "Lines", "Rows"]

DUPLICATE_OF = "_duplicate_of"  # the field of a removed record naming the id kept instead


@dataclass(frozen=True, slots=True, eq=False)
class Copy:
    """One input record to write: its Document read again."""

    doc: Document

    def text(self, text_field: str) -> str:
        """The document's text (only for the few documents the report shows)."""
        return self.doc.text

    def fields(self, duplicate_of: str | None = None) -> dict[str, Any]:
        """The record, with ``_duplicate_of`` when given."""
        if duplicate_of is None:
            return self.doc.record
        return self.doc.record | {DUPLICATE_OF: duplicate_of}


@dataclass(frozen=True, slots=True, eq=False)
class Lines:
    """Consecutive documents' lines as stored in an input of a line format, a block at a
    time (their format says how to read a text from one and mark one removed)."""

    lines: LineBlock
    format: LineFormat

    def __len__(self) -> int:
        return len(self.lines)

    def text(self, row: int, text_field: str) -> str:
        return self.format.text_of_line(self.lines[row], text_field)

    def split(self, keepers: Sequence[str | None]) -> tuple[list[memoryview], list[bytes]]:
        """``(kept lines, removed lines with _duplicate_of)``; ``keepers[r]`` is None for a
        kept row, else the id kept instead. The kept lines come as runs of lines (pieces of
        the block joined by b"\\n"), not copied one by one."""
        gone = [r for r, k in enumerate(keepers) if k is not None]
        stay = np.ones(len(keepers), dtype=np.bool_)
        stay[gone] = False
        removed = [self.format.with_duplicate_of(self.lines[r], keepers[r]) for r in gone]  # type: ignore[arg-type]
        return self.lines.runs(np.flatnonzero(stay)), removed


@dataclass(frozen=True, slots=True, eq=False)
class Rows:
    """Consecutive documents as an Arrow table: a columnar input's rows as read."""

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
