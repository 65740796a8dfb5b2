"""One JSONL record of a huge text, read within the memory of its line.

Parsing such a line at once holds the line, a parser's copy of its strings and the text as
a Python string together (orjson, Arrow: three times the text or more). Here the record is
parsed without its longest string (a marker in its place, by orjson), and that string, when
it is the text, is checked and unescaped piece by piece into the line's own buffer, where it
is then fingerprinted: the line, one piece and the record's other fields are all that is
held. Whatever is not that case (the text not the longest string, a bad record, a NUL) is
left to the line-by-line reader (``None``), so both ways give the same document or error.
"""

from __future__ import annotations

import secrets
from itertools import pairwise

import numpy as np
import orjson

from neardup.io.jsonl_kernels import longest_string
from neardup.io.jsonvalues import json_problem
from neardup.io.records import BadRecord, Document, ReadOptions, record_document, text_too_large

__all__ = ["text_in_place"]

PIECE = 4 * 2**20  # bytes of the string parsed at a time

# bytes a string may be cut before: not inside an escape (the byte after a backslash, the
# hex digits of \u) nor a UTF-8 continuation byte
_CUTTABLE = np.ones(256, dtype=np.bool_)
_CUTTABLE[np.frombuffer(b'"\\/bfnrtu0123456789abcdefABCDEF', dtype=np.uint8)] = False
_CUTTABLE[0x80:0xC0] = False


def text_in_place(
    line: bytearray, lineno: int, source: str, opts: ReadOptions
) -> tuple[str, int, int] | BadRecord | None:
    """The record of a JSONL ``line`` as ``(id, start, end)``, its text's UTF-8 being then
    ``line[start:end]`` (written there over its escapes), or a BadRecord; ``None`` (the line
    left as it was) when it must be read as a whole (:func:`neardup.io.jsonlines.jsonl_item`).
    """
    raw = np.frombuffer(line, dtype=np.uint8)
    start, end, escaped = longest_string(raw)
    if start < 0:
        return None
    marker = _marker(line)
    try:
        record = orjson.loads(line[:start] + marker + line[end:])
    except orjson.JSONDecodeError:
        return None
    if (
        not isinstance(record, dict)
        or record.get(opts.text_field) != marker.decode()
        or isinstance(record.get(opts.id_field), float)  # maybe an integer beyond 64 bits
        or json_problem(record)
    ):
        return None
    cuts = _cuts(raw, start, end, PIECE)
    for lo, hi in pairwise(cuts):  # every piece valid, before any is written
        try:
            if "\x00" in orjson.loads(b'"' + line[lo:hi] + b'"'):
                return None
        except orjson.JSONDecodeError:
            return None
    size = _unescape(line, cuts) if escaped else end - start
    if size > opts.max_text_bytes:
        return BadRecord(source, lineno, text_too_large(opts.max_text_bytes))
    record[opts.text_field] = ""  # its size checked above: the id's checks alone
    item = record_document(record, source, lineno, opts, valid_utf8=True)
    if not isinstance(item, Document):
        return item
    return item.id, start, start + size


def _marker(line: bytearray) -> bytes:
    """A word the line does not hold."""
    while (marker := secrets.token_hex(16).encode()) in line:
        pass
    return marker


def _cuts(raw: np.ndarray, start: int, end: int, piece: int) -> list[int]:
    """``start``, a cuttable place about every ``piece`` bytes, ``end`` (a stretch with no
    such place runs on to the next place that is)."""
    cuts = [start]
    while end - cuts[-1] > piece:
        lo = cuts[-1] + 1
        places = np.flatnonzero(_CUTTABLE[raw[lo : lo + piece]])
        if places.size:
            cuts.append(lo + int(places[-1]))
            continue
        at = lo + piece  # none: the first place after
        while at < end:
            places = np.flatnonzero(_CUTTABLE[raw[at : min(at + piece, end)]])
            if places.size:
                break
            at += piece
        if at >= end:
            break
        cuts.append(at + int(places[0]))
    cuts.append(end)
    return cuts


def _unescape(line: bytearray, cuts: list[int]) -> int:
    """Write the string's text as UTF-8 from ``cuts[0]`` on, piece by piece (each piece's text
    is no longer than its JSON, so it never overtakes what is still to be read); its size."""
    at = cuts[0]
    for lo, hi in pairwise(cuts):
        text = orjson.loads(b'"' + line[lo:hi] + b'"').encode("utf-8")
        line[at : at + len(text)] = text
        at += len(text)
    return at - cuts[0]
