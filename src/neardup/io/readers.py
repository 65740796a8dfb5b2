"""Streaming corpus input: documents from any mix of inputs, each read by its format.

:func:`read_documents` turns any mix of inputs into one stream of :class:`Document`\\ s without
ever loading a whole file, so a corpus larger than RAM can be deduplicated. Each input's
format is recognized from its extension (case-insensitive) by :mod:`neardup.io.formats`:

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

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from neardup.errors import ConfigError
from neardup.io.files import InputFile, bad_record_error
from neardup.io.formats import classify, named
from neardup.io.records import (
    DEFAULT_MAX_TEXT_BYTES,
    BadRecord,
    Document,
    ReadOptions,
    Skipped,
    line_limit,
    overlong,
    text_too_large,
)

__all__ = [
    "DEFAULT_MAX_TEXT_BYTES",
    "BadRecord",
    "Document",
    "ReadOptions",
    "Skipped",
    "count_lines",
    "duplicate_record",
    "line_limit",
    "overlong",
    "read_documents",
    "text_too_large",
]

_COUNT_EXACT_BYTES = 8 * 2**20  # plain files up to this size are counted exactly (~5 ms)


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
    opts = ReadOptions(id_field, text_field, max_text_bytes, several=len(inputs) > 1)
    return _stream(inputs, opts, skip_bad, on_bad, on_skip, on_input)


def _stream(
    inputs: list[InputFile],
    opts: ReadOptions,
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
        for item in named(inp.kind).read(inp, opts):
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
                item = duplicate_record(inputs, item.source, item.line, item.id, first)
            if not skip_bad:
                raise bad_record_error(inp, str(item))
            if on_bad is not None:
                on_bad(item)
        if not records and on_skip is not None:
            on_skip(Skipped(str(inp.path)))


def duplicate_record(
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
    return named(inp.kind).place(inp, line, doc_id)


def count_lines(path: str | Path) -> int | None:
    """A cheap estimate of the number of records in ``path``, for a progress bar.

    Files of one record per line (JSONL, CSV: ``line_records`` of their format), plain: the
    number of lines (exact up to 8 MiB, else estimated from the first 8 MiB; less a header);
    compressed: None (unknown); others as their format counts (Parquet: the row count of its
    metadata; a directory: the number of text files); unreadable files: None.
    """
    inp = classify(Path(path))
    fmt = named(inp.kind)
    headers = fmt.line_records
    try:
        if headers is None:
            return fmt.count(inp)
        if inp.compression is not None:
            return None
        lines = _estimate_lines(inp.path)
    except fmt.read_errors(inp):
        return None
    return max(lines - headers, 0) if headers else lines


def _estimate_lines(path: Path) -> int:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(_COUNT_EXACT_BYTES)
    lines = head.count(b"\n") + (1 if head and not head.endswith(b"\n") else 0)
    if size <= len(head) or not lines:
        return lines
    return round(lines * size / len(head))
