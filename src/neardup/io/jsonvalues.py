"""What JSON values can be stored and given back: valid Unicode strings without NUL, finite
numbers; and which ids.

Python's ``json`` reads ``"\\ud800"`` as a string holding a lone surrogate, which no UTF-8
file, SQLite text or HTTP response can hold, ``"\\u0000"`` as a NUL character, which a
PostgreSQL text cannot hold, and ``NaN`` / ``Infinity``, which JSON has not. :func:`json_problem`
finds them, so that readers, collections and the service refuse such a record (as they refuse
a raw NUL byte) before any store is touched, rather than failing when it is written or read
back. :func:`id_problem` adds what an id must be to be read and removed again by URL: no
control character, at most :data:`MAX_ID_BYTES` bytes of UTF-8.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_ID_BYTES", "id_problem", "json_problem", "may_hold_problem"]

MAX_ID_BYTES = 1024  # an id's UTF-8 length at most (an index key every store takes)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def may_hold_problem(raw: bytes) -> bool:
    """Whether a JSON text may hold a lone surrogate, a NUL or a non-finite number (a cheap
    test of its bytes: a valid JSON text gets surrogates and NULs only from ``\\u`` escapes)."""
    return (
        b"\\ud" in raw or b"\\uD" in raw or b"\\u0000" in raw or b"NaN" in raw or b"Infinity" in raw
    )


def json_problem(value: Any, where: str = "") -> str | None:
    """Why ``value`` (parsed JSON) cannot be stored and given back, naming where (``""``: a
    record, whose keys are named as fields); or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            at = exc.start
            return f"{where or 'value'} has an unpaired surrogate at character {at} (invalid UTF-8)"
        if "\x00" in value:
            at = value.index("\x00")
            return f"{where or 'value'} has a NUL character (\\u0000) at character {at}"
    elif isinstance(value, float) and value - value != 0:  # NaN or ±Infinity
        return f"{where or 'value'} is {value}: JSON numbers must be finite"
    elif isinstance(value, dict):
        for key, item in value.items():
            inside = f"{where}.{key}" if where else f"field {key!r}"
            if problem := json_problem(key, f"a key of {where or 'the record'}") or json_problem(
                item, inside
            ):
                return problem
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if problem := json_problem(item, f"{where}[{i}]"):
                return problem
    return None


def id_problem(doc_id: str) -> str | None:
    """Why ``doc_id`` cannot be stored as a document's id (it could not be read or removed
    again by URL), or None."""
    if match := _CONTROL.search(doc_id):
        return f"id {_shown(doc_id)} has a control character (U+{ord(match.group()):04X})"
    if len(doc_id) * 4 > MAX_ID_BYTES and len(doc_id.encode("utf-8", "replace")) > MAX_ID_BYTES:
        return f"id {_shown(doc_id)} is longer than {MAX_ID_BYTES} bytes of UTF-8"
    return None


def _shown(doc_id: str) -> str:
    """An id for a message: escaped, and cut when long."""
    return ascii(doc_id[:40] + ("…" if len(doc_id) > 40 else ""))
