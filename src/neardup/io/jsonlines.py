"""One line of JSONL: parsed into a Document or a BadRecord saying exactly what is wrong
(:func:`jsonl_item`), and written back with ``_duplicate_of`` (:func:`with_duplicate_of`).
The JSONL format, its block reader and the Spark engine all read lines with it."""

from __future__ import annotations

import json

import orjson

from neardup.io.formats.copies import DUPLICATE_OF
from neardup.io.jsonvalues import json_problem, may_hold_problem
from neardup.io.records import BadRecord, Item, ReadOptions, record_document, type_name
from neardup.io.writers import dumps

__all__ = ["jsonl_item", "with_duplicate_of"]


def jsonl_item(raw: bytes, source: str, lineno: int, opts: ReadOptions) -> Item:
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
    return record_document(record, source, lineno, opts, valid_utf8=True)


def _jsonl_item_exact(raw: bytes, source: str, lineno: int, opts: ReadOptions) -> Item:
    """:func:`jsonl_item` with the json module: exact integers and error messages."""
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
        return BadRecord(source, lineno, f"not a JSON object but {type_name(record)}")
    if may_hold_problem(raw) and (problem := json_problem(record)):
        return BadRecord(source, lineno, problem)
    return record_document(record, source, lineno, opts)


def with_duplicate_of(line: bytes, keeper: str) -> bytes:
    """A JSON object's line with ``"_duplicate_of": keeper`` as its last member (a JSON
    reader keeps the last of repeated names, so it overrides one the record had)."""
    body = line.rstrip()
    if not body.endswith(b"}"):  # not an object as stored: parse it
        return dumps(orjson.loads(line) | {DUPLICATE_OF: keeper})
    head = body[:-1].rstrip()
    sep = b"" if head.endswith(b"{") else b","
    return head + sep + b'"' + DUPLICATE_OF.encode() + b'":' + orjson.dumps(keeper) + b"}"
