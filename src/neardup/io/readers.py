"""Streaming corpus input: documents from JSONL / CSV / Parquet files and directories.

:func:`read_documents` turns any mix of inputs into one stream of :class:`Document`\\ s without
ever loading a whole file, so a corpus larger than RAM can be deduplicated. Inputs, chosen by
extension (case-insensitive):

- JSONL: ``.jsonl`` / ``.ndjson``, plain, ``.gz`` or ``.zst`` (extra ``zstd``); one JSON object
  per line, blank lines skipped;
- CSV: ``.csv`` / ``.csv.gz`` / ``.csv.zst`` with a header row;
- Parquet: ``.parquet``, read in record batches;
- a directory: every ``.txt`` / ``.html`` / ``.htm`` file below it, in sorted order; the id is
  the relative POSIX path, HTML goes through :func:`neardup.text.clean.strip_html`, and the
  record is ``{"id", "path"}``.

Bad records (malformed JSON, not an object, missing or non-string text, invalid UTF-8, a NUL
character (raw or ``\\u0000``) or a lone surrogate or NaN anywhere in the record, a CSV row
with the wrong number of fields or an unterminated quote, a text over ``max_text_bytes``, a
duplicate id, an unreadable file) raise :class:`~neardup.errors.InputError` naming the file and
line, or with ``skip_bad`` are handed to ``on_bad`` as a :class:`BadRecord` and skipped. A
compressed file cut short or corrupt is not a bad record: it raises
:class:`~neardup.errors.DamagedInputError` whatever ``skip_bad`` says. Empty
or whitespace-only texts are *not* bad records here: they are yielded, and dedup reports them
on its own. An input that holds no record, and the files of a directory that are not read
(other extensions), are handed to ``on_skip`` as :class:`Skipped` notices.

Writing records back out is :mod:`neardup.io.writers`.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from neardup.errors import ConfigError, DamagedInputError, InputError
from neardup.io.csvlines import csv_records
from neardup.io.files import (
    InputFile,
    bad_record_error,
    byte_chunks,
    classify,
    open_binary,
    read_error,
    read_errors,
    split_lines,
)
from neardup.io.jsonvalues import json_problem, may_hold_problem
from neardup.io.text_input import decode_text
from neardup.util.extras import pyarrow

__all__ = [
    "DEFAULT_MAX_TEXT_BYTES",
    "BadRecord",
    "Document",
    "Skipped",
    "count_lines",
    "line_limit",
    "overlong",
    "read_documents",
]

DEFAULT_MAX_TEXT_BYTES = 64 * 2**20
_PARQUET_READ_BATCH = 1024  # rows per batch: bounded memory even with long texts
_COUNT_EXACT_BYTES = 8 * 2**20  # plain files up to this size are counted exactly (~5 ms)
_CSV_RECORD_SLACK = 2**20  # characters a CSV record may hold beyond its text's limit
_DIR_SUFFIXES = (".txt", ".html", ".htm")
_HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True, slots=True)
class Document:
    """One input document; ``record`` is the original record with every field (for kept.jsonl).

    ``line`` is the 1-based line (JSONL, CSV: the line where the record starts) or row number
    (Parquet); 0 for a file of a directory input, whose ``source`` is the file itself.
    """

    id: str
    text: str
    record: dict[str, Any]
    source: str
    line: int

    @property
    def where(self) -> str:
        """``file:line`` (or the file alone), for messages."""
        return _where(self.source, self.line)


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record that was skipped: where it is and why (``line`` 0: the whole file)."""

    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{_where(self.source, self.line)}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """An input that gave no record (``files`` empty), or the files of a directory input that
    were not read: because of their extension, or (``why``) as they are not regular files."""

    source: str
    files: tuple[str, ...] = ()
    why: str = ""  # why the files were not read: by default, their extension

    def __str__(self) -> str:
        if not self.files:
            return f"{self.source}: no records (an empty input)"
        shown = ", ".join(self.files[:5]) + (", …" if len(self.files) > 5 else "")
        why = self.why or f"not {'/'.join(_DIR_SUFFIXES)}"
        return f"{self.source}: {len(self.files)} file(s) skipped, {why}: {shown}"


def _where(source: str, line: int) -> str:
    return f"{source}:{line}" if line else source


@dataclass(frozen=True, slots=True)
class _Options:
    id_field: str
    text_field: str
    max_text_bytes: int
    several: bool  # several inputs: a missing id becomes "path:line", not "line"


# A reader yields, per record, a Document or a BadRecord (never raises for bad data), and
# Skipped notices.
_Item = Document | BadRecord | Skipped


# --------------------------------------------------------------------------------------------
# reading


def read_documents(
    paths: Sequence[str | Path],
    *,
    id_field: str = "id",
    text_field: str = "text",
    skip_bad: bool = False,
    on_bad: Callable[[BadRecord], None] | None = None,
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
    on_skip: Callable[[Skipped], None] | None = None,
    on_input: Callable[[int], None] | None = None,
) -> Iterator[Document]:
    """Stream the documents of ``paths`` (files or directories; or one path) in order.

    The id is the ``id_field`` value (a string or a number) as a string; a record without one
    (missing, null or "") gets its line number: ``"17"`` with one input, ``"data.jsonl:17"``
    with several. Ids must be unique across all inputs: the seen ids are kept in a dict (id →
    place, about 125 bytes per document for 12-character ids; never the texts).

    Unknown extensions and missing optional packages raise at once, before anything is read.
    Bad records raise :class:`InputError` (``data.jsonl:17: not valid JSON (...)``) unless
    ``skip_bad`` is set; then ``on_bad`` (if given) gets each :class:`BadRecord`. ``on_skip``
    gets each :class:`Skipped` notice (empty inputs, files of other extensions); ``on_input``
    (if given) is called with each input's index before its documents.
    """
    if max_text_bytes <= 0:
        raise ConfigError(f"max_text_bytes must be positive, got {max_text_bytes}")
    if isinstance(paths, str | Path):  # one path, not its characters
        paths = [paths]
    inputs = [classify(Path(p)) for p in paths]
    opts = _Options(id_field, text_field, max_text_bytes, several=len(inputs) > 1)
    return _stream(inputs, opts, skip_bad, on_bad, on_skip, on_input)


def _stream(
    inputs: list[InputFile],
    opts: _Options,
    skip_bad: bool,
    on_bad: Callable[[BadRecord], None] | None,
    on_skip: Callable[[Skipped], None] | None = None,
    on_input: Callable[[int], None] | None = None,
) -> Iterator[Document]:
    """Documents of every input; bad ones and duplicate ids raised or reported."""
    seen: dict[str, int] = {}  # id -> line * len(inputs) + input index
    for index, inp in enumerate(inputs):
        records = 0
        if on_input is not None:
            on_input(index)
        for item in _READERS[inp.kind](inp, opts):
            if isinstance(item, Skipped):
                if on_skip is not None:
                    on_skip(item)
                continue
            records += 1
            if isinstance(item, Document):
                here = item.line * len(inputs) + index
                first = seen.setdefault(item.id, here)
                if first == here:
                    yield item
                    continue
                item = _duplicate(inputs, item.source, item.line, item.id, first)
            if not skip_bad:
                raise bad_record_error(inp, str(item))
            if on_bad is not None:
                on_bad(item)
        if not records and on_skip is not None:
            on_skip(Skipped(str(inp.path)))


def _duplicate(
    inputs: list[InputFile], source: str, line: int, doc_id: str, first: int
) -> BadRecord:
    """The bad record of an id seen before, at the place packed in the seen-ids dict."""
    return BadRecord(
        source, line, f"duplicate id {doc_id!r} (first at {_place(inputs, first, doc_id)})"
    )


def _place(inputs: list[InputFile], packed: int, doc_id: str) -> str:
    """``file:line`` of the place packed in the seen-ids dict."""
    line, index = divmod(packed, len(inputs))
    inp = inputs[index]
    if inp.kind == "dir":
        return str(inp.path / doc_id)
    return _where(str(inp.path), line)


def line_limit(max_text_bytes: int) -> int:
    """The longest line a record may take: its text's limit and 1 MiB for the other fields
    and escapes, as for a CSV record. Reading stops at a longer line, so memory stays bounded
    whatever a file holds (a text written with many ``\\u`` escapes may need a higher
    limit)."""
    return max_text_bytes + _CSV_RECORD_SLACK


def overlong(max_text_bytes: int) -> str:
    """The reason given for a line over :func:`line_limit`."""
    return (
        f"a line longer than {_mib(line_limit(max_text_bytes))} (the text limit of "
        f"{_mib(max_text_bytes)} and 1 MiB); not read (raise it with --max-text-bytes)"
    )


def _read_jsonl(inp: InputFile, opts: _Options) -> Iterator[_Item]:
    """JSONL: one object per line; blank lines skipped; the file read line by line."""
    source, lineno = str(inp.path), 0
    try:
        with byte_chunks(inp) as chunks:
            lines = split_lines(chunks, line_limit(opts.max_text_bytes))
            for lineno, raw in enumerate(lines, 1):
                if raw is None:
                    yield BadRecord(source, lineno, overlong(opts.max_text_bytes))
                elif raw and not raw.isspace():
                    yield _jsonl_item(raw, source, lineno, opts)
    except DamagedInputError:
        raise
    except read_errors(inp) as exc:
        yield BadRecord(source, lineno + 1 if lineno else 0, read_error(exc))


def _jsonl_item(raw: bytes, source: str, lineno: int, opts: _Options) -> _Item:
    """One JSONL line → a Document, or a BadRecord saying what is wrong with it.

    Parsed by orjson straight from the bytes (UTF-8 checked, no lone surrogates); a line it
    refuses, or whose id it read as a float (orjson turns integers beyond 64 bits into
    floats), goes through the json module, which says exactly what is wrong.
    """
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _jsonl_item_exact(raw, source, lineno, opts)
    if not isinstance(record, dict) or isinstance(record.get(opts.id_field), float):
        return _jsonl_item_exact(raw, source, lineno, opts)
    if b"\\u0000" in raw and (problem := json_problem(record)):  # orjson reads NULs
        return BadRecord(source, lineno, problem)
    return _document(record, source, lineno, opts, valid_utf8=True)


def _jsonl_item_exact(raw: bytes, source: str, lineno: int, opts: _Options) -> _Item:
    """:func:`_jsonl_item` with the json module: exact integers and error messages."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadRecord(source, lineno, f"invalid UTF-8 at byte {exc.start} ({exc.reason})")
    if lineno == 1:
        line = line.removeprefix("\ufeff")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return BadRecord(source, lineno, f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return BadRecord(source, lineno, "not valid JSON (nested too deeply)")
    if not isinstance(record, dict):
        return BadRecord(source, lineno, f"not a JSON object but {_type_name(record)}")
    if may_hold_problem(raw) and (problem := json_problem(record)):
        return BadRecord(source, lineno, problem)
    return _document(record, source, lineno, opts)


def _document(
    record: dict[str, Any], source: str, lineno: int, opts: _Options, valid_utf8: bool = False
) -> _Item:
    """The Document of a parsed ``record`` (id and text taken out and checked; with
    ``valid_utf8`` the text is known to hold no lone surrogate)."""
    text = record.get(opts.text_field)
    if not isinstance(text, str):
        if opts.text_field not in record:
            return BadRecord(source, lineno, f"no field {opts.text_field!r}")
        why = f"field {opts.text_field!r} is {_type_name(text)}, not a string"
        return BadRecord(source, lineno, why)
    reason = _check_text(text, opts.max_text_bytes, valid_utf8)
    if reason:
        return BadRecord(source, lineno, reason)
    raw_id = record.get(opts.id_field)
    if raw_id is None or raw_id == "":
        doc_id = f"{source}:{lineno}" if opts.several else str(lineno)
    elif isinstance(raw_id, str | int | float) and not isinstance(raw_id, bool):
        doc_id = str(raw_id)
    else:
        return BadRecord(
            source, lineno, f"id field {opts.id_field!r} is {_type_name(raw_id)}, not a string"
        )
    return Document(doc_id, text, record, source, lineno)


def _check_text(text: str, max_bytes: int, valid_utf8: bool = False) -> str | None:
    """Why ``text`` cannot be used (too large, lone surrogates), or None."""
    if valid_utf8 and 4 * len(text) <= max_bytes:  # at most 4 bytes a character
        return None
    if len(text) <= max_bytes:  # else its UTF-8 is too long whatever it holds
        try:
            if len(text.encode("utf-8")) <= max_bytes:
                return None
        except UnicodeEncodeError as exc:
            return f"text has an unpaired surrogate at character {exc.start} (invalid UTF-8)"
    return text_too_large(max_bytes)


def text_too_large(max_bytes: int) -> str:
    """The reason given for a text over ``max_bytes`` of UTF-8."""
    return f"text larger than the limit of {_mib(max_bytes)} (raise it with --max-text-bytes)"


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size} bytes"


def _type_name(value: Any) -> str:
    names = {
        dict: "an object",
        list: "an array",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), f"a {type(value).__name__}")


def _read_csv(inp: InputFile, opts: _Options) -> Iterator[_Item]:
    """CSV with a header row; a record's line is the line where it starts.

    Parsed strictly: a quoted field must end with its closing quote followed by a comma or
    the end of the line. A record that breaks this, or runs to the end of the file or past
    ``max_text_bytes`` (+ 1 MiB) inside an open quote, is a bad record at its first line, and
    reading resumes at its second line.
    """
    source, lineno = str(inp.path), 0
    csv.field_size_limit(opts.max_text_bytes + _CSV_RECORD_SLACK)  # a runaway field stops
    try:
        with (
            open_binary(inp) as raw,
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape", newline="") as fh,
        ):
            records = csv_records(_csv_lines(fh, line_limit(opts.max_text_bytes), opts, source))
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
    except read_errors(inp) as exc:
        yield BadRecord(source, lineno, read_error(exc))


def _csv_lines(fh: io.TextIOWrapper, limit: int, opts: _Options, source: str) -> Iterator[str]:
    """The lines of a CSV file, each read up to ``limit`` characters: a longer one stops the
    run (InputError), as where the next record starts is unknown."""
    lineno = 0
    while line := fh.readline(limit + 1):
        lineno += 1
        if len(line) > limit:
            raise InputError(f"{source}:{lineno}: {overlong(opts.max_text_bytes)}")
        yield line


def _csv_problem(exc: Exception, opts: _Options, lines: int = 1) -> str:
    """Why a CSV record (of ``lines`` lines read) could not be parsed, for its BadRecord."""
    if "field larger than field limit" in str(exc):
        limit = _mib(opts.max_text_bytes + _CSV_RECORD_SLACK)
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


def _csv_item(header: list[str], row: list[str], source: str, lineno: int, opts: _Options) -> _Item:
    if len(row) != len(header):
        return BadRecord(source, lineno, f"{len(row)} fields, the header has {len(header)}")
    joined = "\x1f".join(row)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return BadRecord(source, lineno, "invalid UTF-8")
    if "\x00" in joined:
        return BadRecord(source, lineno, "a NUL byte in the record (a binary file?)")
    return _document(dict(zip(header, row, strict=True)), source, lineno, opts)


def _read_parquet(inp: InputFile, opts: _Options) -> Iterator[_Item]:
    """Parquet, batch by batch; ``line`` is the 1-based row number."""
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
        for batch in pfile.iter_batches(batch_size=_PARQUET_READ_BATCH):
            for record in batch.to_pylist():
                row += 1
                problem = json_problem(record)  # a NUL, a NaN: as in a JSONL record
                yield (
                    BadRecord(source, row, problem)
                    if problem
                    else _document(record, source, row, opts)
                )
    except DamagedInputError:
        raise
    except read_errors(inp) as exc:
        yield BadRecord(source, row + 1 if row else 0, read_error(exc))


def _read_dir(inp: InputFile, opts: _Options) -> Iterator[_Item]:
    """Every .txt/.html/.htm file below a directory, sorted; HTML stripped to plain text."""
    skipped: list[str] = []
    odd: list[str] = []
    for path, rel in _dir_files(inp.path, skipped, odd):
        yield _file_item(path, rel, opts)
    if skipped:
        yield Skipped(str(inp.path), tuple(skipped))
    if odd:
        why = "not regular files (a FIFO, socket or device would block or never end)"
        yield Skipped(str(inp.path), tuple(odd), why)


def _dir_files(
    root: Path, skipped: list[str] | None = None, odd: list[str] | None = None
) -> Iterator[tuple[Path, str]]:
    """(path, relative POSIX path) of the text files below ``root``, each directory sorted;
    the relative paths of the files of other extensions are appended to ``skipped``, those of
    text files that are not regular files (a FIFO: reading it would wait) to ``odd``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(filenames):
            path = base / name
            rel = path.relative_to(root).as_posix()
            if not name.lower().endswith(_DIR_SUFFIXES):
                if skipped is not None:
                    skipped.append(rel)
            elif path.is_file():  # a regular file, or a link to one
                yield path, rel
            elif odd is not None:
                odd.append(rel)


def _file_item(path: Path, rel: str, opts: _Options) -> _Item:
    source = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(opts.max_text_bytes + 1)
    except OSError as exc:
        return BadRecord(source, 0, read_error(exc))
    if len(data) > opts.max_text_bytes:
        why = f"file over the limit of {_mib(opts.max_text_bytes)} (raise it with --max-text-bytes)"
        return BadRecord(source, 0, why)
    try:
        text = decode_text(data, source)
    except InputError as exc:
        return BadRecord(source, 0, str(exc).removeprefix(f"{source}: "))
    if path.suffix.lower() in _HTML_SUFFIXES:
        from neardup.text.clean import strip_html

        text = strip_html(text)
    return Document(rel, text, {"id": rel, "path": source}, source, 0)


_READERS: dict[str, Callable[[InputFile, _Options], Iterator[_Item]]] = {
    "jsonl": _read_jsonl,
    "csv": _read_csv,
    "parquet": _read_parquet,
    "dir": _read_dir,
}


def count_lines(path: str | Path) -> int | None:
    """A cheap estimate of the number of records in ``path``, for a progress bar.

    Parquet: the row count of its metadata; a directory: the number of text files; plain
    JSONL/CSV: the number of lines (exact up to 8 MiB, else estimated from the first 8 MiB;
    CSV minus the header); compressed or unreadable files: None (unknown).
    """
    inp = classify(Path(path))
    if inp.kind == "dir":
        return sum(1 for _ in _dir_files(inp.path))
    if inp.compression is not None:
        return None
    try:
        if inp.kind == "parquet":
            pq = pyarrow("reading .parquet files").parquet
            return int(pq.ParquetFile(inp.path).metadata.num_rows)
        lines = _estimate_lines(inp.path)
    except read_errors(inp):
        return None
    return max(lines - 1, 0) if inp.kind == "csv" else lines


def _estimate_lines(path: Path) -> int:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(_COUNT_EXACT_BYTES)
    lines = head.count(b"\n") + (1 if head and not head.endswith(b"\n") else 0)
    if size <= len(head) or not lines:
        return lines
    return round(lines * size / len(head))


# The JSONL line parser under public names, for an engine that reads the lines itself (Spark).
JsonlOptions = _Options
parse_jsonl_line = _jsonl_item
