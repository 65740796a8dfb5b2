"""CSV: ``.csv`` / ``.csv.gz`` / ``.csv.zst`` with a header row; a record's line is the line
where it starts. An input only (outputs are JSONL or Parquet)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import ClassVar

from neardup.errors import InputError
from neardup.io.csvlines import csv_records
from neardup.io.files import InputFile, open_binary, read_error
from neardup.io.formats.protocol import Format
from neardup.io.records import (
    RECORD_SLACK,
    BadRecord,
    Item,
    ReadOptions,
    line_limit,
    mib,
    overlong,
    record_document,
)

__all__ = ["FORMAT", "CsvFormat"]


class CsvFormat(Format):
    """Comma-separated values with a header row."""

    order: ClassVar[int] = 20
    name: ClassVar[str] = "csv"
    title: ClassVar[str] = "CSV"
    described: ClassVar[str] = ".csv (plain, .gz, .zst)"
    suffixes: ClassVar[tuple[str, ...]] = (".csv",)
    compressions: ClassVar[tuple[str, ...]] = ("gz", "zst")
    line_records: ClassVar[int | None] = 1  # lines less the header

    def read(self, inp: InputFile, opts: ReadOptions) -> Iterator[Item]:
        """Parsed strictly: a quoted field must end with its closing quote followed by a
        comma or the end of the line. A record that breaks this, or runs to the end of the
        file or past ``max_text_bytes`` (+ 1 MiB) inside an open quote, is a bad record at
        its first line, and reading resumes at its second line."""
        source, lineno = str(inp.path), 0
        csv.field_size_limit(opts.max_text_bytes + RECORD_SLACK)  # a runaway field stops
        try:
            with (
                open_binary(inp) as raw,
                io.TextIOWrapper(
                    raw, encoding="utf-8-sig", errors="surrogateescape", newline=""
                ) as fh,
            ):
                limit = line_limit(opts.max_text_bytes)
                records = csv_records(_csv_lines(fh, limit, opts, source))
                header: list[str] | None = None
                for lineno, row, lines in records:
                    if isinstance(row, csv.Error):
                        problem = _csv_problem(row, opts, lines)
                        yield BadRecord(source, lineno, f"malformed CSV header ({problem})")
                        return
                    header = row
                    break
                problem = _header_problem(header, opts.text_field)
                if problem or header is None:
                    yield BadRecord(source, 1, problem or "empty CSV file")
                    return
                for lineno, row, lines in records:
                    if isinstance(row, csv.Error):
                        yield BadRecord(source, lineno, _csv_problem(row, opts, lines))
                    elif row:
                        yield _csv_item(header, row, source, lineno, opts)
        except InputError:  # a damaged stream, an overlong line: not a bad record
            raise
        except self.read_errors(inp) as exc:
            yield BadRecord(source, lineno, read_error(exc))


def _csv_lines(fh: io.TextIOWrapper, limit: int, opts: ReadOptions, source: str) -> Iterator[str]:
    """The lines of a CSV file, each read up to ``limit`` characters: a longer one stops the
    run (InputError), as where the next record starts is unknown."""
    lineno = 0
    while line := fh.readline(limit + 1):
        lineno += 1
        if len(line) > limit:
            raise InputError(f"{source}:{lineno}: {overlong(opts.max_text_bytes)}")
        yield line


def _csv_problem(exc: Exception, opts: ReadOptions, lines: int = 1) -> str:
    """Why a CSV record (of ``lines`` lines read) could not be parsed, for its BadRecord."""
    if "field larger than field limit" in str(exc):
        limit = mib(opts.max_text_bytes + RECORD_SLACK)
        return f"a field runs past the limit of {limit}: an unterminated quote? (--max-text-bytes)"
    if "unexpected end of data" in str(exc):
        return "unterminated quote: the quoted field runs to the end of the file"
    if lines > 1:
        return f"malformed CSV: a quote left open? ({exc}, {lines - 1} line(s) later)"
    return f"malformed CSV ({exc})"


def _header_problem(header: list[str] | None, text_field: str) -> str | None:
    if header is None:
        return "empty CSV file (no header row)"
    if len(set(header)) != len(header):
        return f"CSV header has repeated column names: {header}"
    if text_field not in header:
        return f"CSV header has no column {text_field!r} (columns: {', '.join(header)})"
    return None


def _csv_item(
    header: list[str], row: list[str], source: str, lineno: int, opts: ReadOptions
) -> Item:
    if len(row) != len(header):
        return BadRecord(source, lineno, f"{len(row)} fields, the header has {len(header)}")
    joined = "\x1f".join(row)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return BadRecord(source, lineno, "invalid UTF-8")
    if "\x00" in joined:
        return BadRecord(source, lineno, "a NUL byte in the record (a binary file?)")
    return record_document(dict(zip(header, row, strict=True)), source, lineno, opts)


FORMAT = CsvFormat()
