"""The protocol of an input/output format: how it recognizes a path, reads its records,
gives them again for a run's outputs, is read by the Spark engine, and (if it can be an
output) writes records.

A format is one class deriving from :class:`Format` (or :class:`LineFormat`, for one record
per line): an instance of it as ``FORMAT`` in a module of :mod:`neardup.io.formats`, or
registered with :func:`neardup.io.formats.register`. Every other module asks the
registry which format a path is and calls these methods; none names a format.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from neardup.errors import DamagedInputError, InputError
from neardup.io.files import (
    InputFile,
    byte_chunks,
    line_blocks,
    read_error,
    read_errors,
    split_lines,
    split_suffix,
)
from neardup.io.formats.copies import Copy, Lines, Rows
from neardup.io.records import BadRecord, Document, Item, ReadOptions, line_limit, overlong, where
from neardup.util.extras import zstandard

if TYPE_CHECKING:
    from neardup.io.blocks import BatchSource, TextBatch
    from neardup.io.writers import Sink

__all__ = ["Format", "LineFormat"]


class Format(ABC):
    """One kind of input (and maybe output) file. Subclasses set the class attributes and
    implement :meth:`read`; every other method has a default that fits most formats."""

    order: ClassVar[int] = 100  # where it comes in the order paths are tried and listed
    name: ClassVar[str]  # the registry's key, --format's value, the outputs' suffix (jsonl)
    title: ClassVar[str]  # "JSONL": the format in messages
    described: ClassVar[str]  # how the message listing the supported inputs names it
    suffixes: ClassVar[tuple[str, ...]] = ()  # the extensions of its files, lower case
    compressions: ClassVar[tuple[str, ...]] = ()  # "gz", "zst": compressed files it reads
    line_records: ClassVar[int | None] = None  # records are lines, but this many headers
    takes_json_lines: ClassVar[bool] = False  # its sink takes records as lines of JSON
    # The Spark engine: the endings of the paths it reads as this format (none: it refuses
    # the format), how its refusal names them, and Spark's data source reading them:
    # "text" for a LineFormat (a line a record, parsed by parse_line), else a columnar one
    # whose columns are the record's fields (parquet); spark_writer: Spark's data source
    # writing outputs in this format ("" if it cannot).
    spark_suffixes: ClassVar[tuple[str, ...]] = ()
    spark_described: ClassVar[str] = ""
    spark_source: ClassVar[str] = ""
    spark_writer: ClassVar[str] = ""

    def recognize(self, path: Path) -> InputFile | None:
        """``path`` as an input of this format, or None: from its extension (and that of
        its compression, when the format reads compressed files)."""
        base, compression = split_suffix(path)
        if base in self.suffixes and (compression is None or compression in self.compressions):
            return InputFile(path, self.name, compression)
        return None

    def require(self, inp: InputFile) -> None:
        """Raise MissingDependencyError when an optional package ``inp`` needs is missing."""
        if inp.compression == "zst":
            zstandard("reading .zst files")

    @abstractmethod
    def read(self, inp: InputFile, opts: ReadOptions) -> Iterator[Item]:
        """Every record of ``inp`` in order, as a Document or a BadRecord (never raising for
        bad data; a damaged compressed stream raises DamagedInputError), and Skipped
        notices for what is not read."""

    def read_errors(self, inp: InputFile) -> tuple[type[BaseException], ...]:
        """What reading ``inp`` raises when the file is missing or unreadable."""
        return read_errors(inp)

    def count(self, inp: InputFile) -> int | None:
        """A cheap estimate of the records in ``inp`` for a progress bar (None: unknown);
        used when ``line_records`` is None (else the lines are counted)."""
        return None

    def place(self, inp: InputFile, line: int, doc_id: str) -> str:
        """Where the document ``doc_id`` read at ``line`` of ``inp`` is, for messages."""
        return where(str(inp.path), line)

    def copies(
        self,
        inp: InputFile,
        lines: np.ndarray,
        ids: Sequence[str],
        opts: ReadOptions,
        output: str,
    ) -> Iterator[Copy | Lines | Rows]:
        """The records at ``lines`` (increasing; their documents' ``ids``) of ``inp`` again,
        for outputs in format ``output``: as stored where :meth:`keeps_stored` says the
        output takes them so (:meth:`stored`), else read again, one :class:`Copy` each.

        Matched by line, or by id where the line is 0 (a file of a directory): a record
        skipped in the first pass (a duplicate of an earlier input's id) is skipped again.
        """
        if self.keeps_stored(output):
            yield from self.stored(inp, lines)
            return
        wanted, count = 0, len(lines)
        for item in self.read(inp, opts):
            if not isinstance(item, Document):
                continue
            found = wanted < count and item.line == lines[wanted]
            if found and (item.line or item.id == ids[wanted]):
                yield Copy(item)
                wanted += 1
        if wanted < count:
            raise InputError(f"{inp.path}: changed while being read (a record is gone)")

    def keeps_stored(self, output: str) -> bool:
        """Whether outputs in format ``output`` take this format's records as stored."""
        return False

    def stored(self, inp: InputFile, lines: np.ndarray) -> Iterator[Lines | Rows]:
        """The records at ``lines`` of ``inp`` as stored (when :meth:`keeps_stored`)."""
        raise NotImplementedError

    def batches(self, paths: Sequence[str | Path], **options: Any) -> BatchSource | None:
        """The documents of ``paths`` (all of this format) as reading jobs that run on
        worker threads (:class:`neardup.io.blocks.BatchSource`), or None: read them one by
        one. ``options``: those of :func:`neardup.io.readers.read_documents`."""
        return None

    # -- as an output (formats that can be one: sink is not None) --------------------------

    def sink(self, path: Path, sync: bool) -> Sink | None:
        """A writer of records into ``path`` (see :class:`neardup.io.writers.Sink`), or None
        when the format is not an output."""
        return None

    def read_output(self, path: Path) -> Iterator[Mapping[str, Any]]:
        """The records of an output file this format's sink wrote."""
        raise InputError(f"{path}: {self.title} is not an output format")


class LineFormat(Format):
    """A format of one record per line (blank lines skipped), read line by line and copied
    into the outputs as stored when they are of the same format."""

    line_records: ClassVar[int | None] = 0

    @abstractmethod
    def parse_line(self, raw: bytes, source: str, lineno: int, opts: ReadOptions) -> Item:
        """One line (without its b"\\n") → a Document, or a BadRecord saying what is wrong."""

    @abstractmethod
    def with_duplicate_of(self, line: bytes, keeper: str) -> bytes:
        """A record's line as stored with ``_duplicate_of: keeper`` added."""

    def parse_lines(
        self, block: bytes, count: int, first_line: int, index: int, source: str, opts: ReadOptions
    ) -> TextBatch:
        """The documents and bad records of ``count`` whole lines joined by b"\\n" (blank ones
        skipped), the first of them line ``first_line`` of input ``index``, named ``source``:
        as :meth:`parse_line` reads each of them."""
        from neardup.io.blocks import lines_one_by_one

        return lines_one_by_one(self.parse_line, block, count, first_line, index, source, opts)

    def text_of_line(self, line: bytes, text_field: str) -> str:
        """The text of a record's line as stored (a line that was read as a document)."""
        item = self.parse_line(line, "", 1, ReadOptions("", text_field, 2**62, False))
        assert isinstance(item, Document)
        return item.text

    def read(self, inp: InputFile, opts: ReadOptions) -> Iterator[Item]:
        source, lineno = str(inp.path), 0
        try:
            with byte_chunks(inp) as chunks:
                lines = split_lines(chunks, line_limit(opts.max_text_bytes))
                for lineno, raw in enumerate(lines, 1):
                    if raw is None:
                        yield BadRecord(source, lineno, overlong(opts.max_text_bytes))
                    elif raw and not raw.isspace():
                        yield self.parse_line(raw, source, lineno, opts)
        except DamagedInputError:
            raise
        except self.read_errors(inp) as exc:
            yield BadRecord(source, lineno + 1 if lineno else 0, read_error(exc))

    def keeps_stored(self, output: str) -> bool:
        """Outputs of this format get the lines as stored (never parsed again)."""
        return output == self.name

    def stored(self, inp: InputFile, lines: np.ndarray) -> Iterator[Lines | Rows]:
        """The lines as stored, a block at a time."""
        for block in line_blocks(inp, lines):
            yield Lines(block, self)
