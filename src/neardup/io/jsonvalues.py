"""What JSON values can be stored and given back: valid Unicode strings, finite numbers.

Python's ``json`` reads ``"\\ud800"`` as a string holding a lone surrogate, which no UTF-8
file, SQLite text or HTTP response can hold, and ``NaN`` / ``Infinity``, which JSON has not.
:func:`json_problem` finds them, so that readers and the service refuse such a record before
anything is stored rather than failing when it is written or read back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_problem", "may_hold_problem"]


def may_hold_problem(raw: bytes) -> bool:
    """Whether a JSON text may hold a lone surrogate or a non-finite number (a cheap test of
    its bytes: a valid UTF-8 text gets surrogates only from ``\\u`` escapes)."""
    return b"\\ud" in raw or b"\\uD" in raw or b"NaN" in raw or b"Infinity" in raw


def json_problem(value: Any, where: str = "") -> str | None:
    """Why ``value`` (parsed JSON) cannot be stored and given back, naming where (``""``: a
    record, whose keys are named as fields); or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            at = exc.start
            return f"{where or 'value'} has an unpaired surrogate at character {at} (invalid UTF-8)"
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
