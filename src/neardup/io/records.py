"""What reading an input gives: documents, bad records, notices of what was not read, and
the checks every format applies to a record's id and text (:func:`record_document`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_TEXT_BYTES",
    "RECORD_SLACK",
    "BadRecord",
    "Document",
    "Item",
    "ReadOptions",
    "Skipped",
    "check_text",
    "line_limit",
    "mib",
    "overlong",
    "record_document",
    "text_too_large",
    "type_name",
    "where",
]

DEFAULT_MAX_TEXT_BYTES = 64 * 2**20
RECORD_SLACK = 2**20  # bytes a record may hold beyond its text's limit (other fields, escapes)


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
        return where(self.source, self.line)


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record that was skipped: where it is and why (``line`` 0: the whole file)."""

    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{where(self.source, self.line)}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """An input that gave no record (``files`` empty), or the files of an input that were not
    read, and why (e.g. their extension)."""

    source: str
    files: tuple[str, ...] = ()
    why: str = "not read"

    def __str__(self) -> str:
        if not self.files:
            return f"{self.source}: no records (an empty input)"
        shown = ", ".join(self.files[:5]) + (", …" if len(self.files) > 5 else "")
        return f"{self.source}: {len(self.files)} file(s) skipped, {self.why}: {shown}"


def where(source: str, line: int) -> str:
    """``file:line``, or the file alone for line 0."""
    return f"{source}:{line}" if line else source


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read each record: the fields holding its id and text, the largest text, and
    whether there are several inputs (a missing id becomes "path:line", not "line")."""

    id_field: str
    text_field: str
    max_text_bytes: int
    several: bool


# A reader yields, per record, a Document or a BadRecord (never raises for bad data), and
# Skipped notices.
Item = Document | BadRecord | Skipped


def record_document(
    record: dict[str, Any], source: str, lineno: int, opts: ReadOptions, valid_utf8: bool = False
) -> Document | BadRecord:
    """The Document of a parsed ``record`` (id and text taken out and checked; with
    ``valid_utf8`` the text is known to hold no lone surrogate)."""
    text = record.get(opts.text_field)
    if not isinstance(text, str):
        if opts.text_field not in record:
            return BadRecord(source, lineno, f"no field {opts.text_field!r}")
        why = f"field {opts.text_field!r} is {type_name(text)}, not a string"
        return BadRecord(source, lineno, why)
    reason = check_text(text, opts.max_text_bytes, valid_utf8)
    if reason:
        return BadRecord(source, lineno, reason)
    raw_id = record.get(opts.id_field)
    if raw_id is None or raw_id == "":
        doc_id = f"{source}:{lineno}" if opts.several else str(lineno)
    elif isinstance(raw_id, str | int | float) and not isinstance(raw_id, bool):
        doc_id = str(raw_id)
    else:
        return BadRecord(
            source, lineno, f"id field {opts.id_field!r} is {type_name(raw_id)}, not a string"
        )
    return Document(doc_id, text, record, source, lineno)


def check_text(text: str, max_bytes: int, valid_utf8: bool = False) -> str | None:
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
    return f"text larger than the limit of {mib(max_bytes)} (raise it with --max-text-bytes)"


def line_limit(max_text_bytes: int) -> int:
    """The longest line a record may take: its text's limit and 1 MiB for the other fields
    and escapes, as for a CSV record. Reading stops at a longer line, so memory stays bounded
    whatever a file holds (a text written with many ``\\u`` escapes may need a higher
    limit)."""
    return max_text_bytes + RECORD_SLACK


def overlong(max_text_bytes: int) -> str:
    """The reason given for a line over :func:`line_limit`."""
    return (
        f"a line longer than {mib(line_limit(max_text_bytes))} (the text limit of "
        f"{mib(max_text_bytes)} and 1 MiB); not read (raise it with --max-text-bytes)"
    )


def mib(size: int) -> str:
    """``size`` bytes for messages: in MiB from 1 MiB up."""
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size} bytes"


def type_name(value: Any) -> str:
    """What a JSON value is, for messages ("an object", "null", ...)."""
    names = {
        dict: "an object",
        list: "an array",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), f"a {type(value).__name__}")
