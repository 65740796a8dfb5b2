"""Reading texts from files and streams, with errors that name the file and the place.

I/O lives here so the math modules stay pure.
"""

from __future__ import annotations

import sys
from pathlib import Path

from neardup.errors import InputError

MAX_TEXT_BYTES = 256 * 1024 * 1024  # a single text larger than this is refused, not read


def decode_text(data: bytes, source: str) -> str:
    """Decode UTF-8 bytes of one text; binary or invalid UTF-8 raises InputError naming it."""
    if b"\x00" in data:
        raise InputError(f"{source}: looks like a binary file (contains NUL bytes), not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{source}: invalid UTF-8 at byte {exc.start} (line {line}): {exc.reason}"
        ) from None
    return text.removeprefix("\ufeff")


def read_text(path: str | Path) -> str:
    """A whole text file (or standard input for ``-``), as UTF-8."""
    source = "<stdin>" if str(path) == "-" else str(path)
    try:
        if source == "<stdin>":
            data = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
        else:
            with open(path, "rb") as fh:
                data = fh.read(MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source}: is a directory, not a text file") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_TEXT_BYTES:
        raise InputError(f"{source}: larger than {MAX_TEXT_BYTES // 2**20} MiB, refused")
    return decode_text(data, source)
