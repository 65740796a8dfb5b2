"""Input files as bytes: their decompressed bytes in chunks, the lines in them, and lines
picked again as stored (for the outputs' copies of records). Which format a path is and
parsing its records is :mod:`neardup.io.formats`."""

from __future__ import annotations

import array
import contextlib
import io
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import numpy as np

from neardup.errors import DamagedInputError, InputError
from neardup.io.compressed import ChunkReader, gunzip_chunks, unzstd_chunks
from neardup.util.extras import IO_BUFFER, zstandard
from neardup.util.heap import release_free_memory

__all__ = [
    "BOM",
    "InputFile",
    "LineBlock",
    "bad_record_error",
    "byte_chunks",
    "jsonl_line_blocks",
    "line_blocks",
    "line_lists",
    "open_binary",
    "read_error",
    "read_errors",
    "read_through",
    "split_lines",
    "split_suffix",
]


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input path and how to read it: its format's name and compression."""

    path: Path
    kind: str = ""
    compression: Literal["gz", "zst"] | None = None


def split_suffix(path: Path) -> tuple[str, Literal["gz", "zst"] | None]:
    """The extension of ``path`` (lower case) and its compression: ``("", None)`` for
    ``a``, ``(".jsonl", "gz")`` for ``a.JSONL.gz``, ``("", "zst")`` for ``a.zst``."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    compression: Literal["gz", "zst"] | None = None
    if suffixes and suffixes[-1] in (".gz", ".zst"):
        compression = "gz" if suffixes.pop() == ".gz" else "zst"
    return (suffixes[-1] if suffixes else ""), compression


@contextlib.contextmanager
def open_binary(inp: InputFile) -> Iterator[IO[bytes]]:
    """``inp`` opened for reading bytes, decompressed (damage raises DamagedInputError)."""
    if inp.compression is None:
        with open(inp.path, "rb", buffering=IO_BUFFER) as fh:
            yield fh
        return
    with byte_chunks(inp) as chunks, io.BufferedReader(ChunkReader(chunks), IO_BUFFER) as fh:
        yield fh


def read_error(exc: BaseException) -> str:
    """A short reason for an exception raised while reading a file."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror}"
    return f"cannot read: {exc}"


def read_errors(inp: InputFile) -> tuple[type[BaseException], ...]:
    """What a missing or unreadable file raises while being read (a bad record at the place
    reading stopped). Catch DamagedInputError before these: it is an error of its own."""
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, ValueError, zlib.error)
    if inp.compression == "zst":
        errors += (zstandard("reading .zst files").ZstdError,)
    return errors


@dataclass(frozen=True, slots=True, eq=False)
class LineBlock:
    """Lines of a file as stored, not copied: line ``k`` is ``data[starts[k]:ends[k]]``."""

    data: bytes | bytearray
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return int(self.starts.size)

    def __getitem__(self, k: int) -> bytes:
        line = self.data[self.starts[k] : self.ends[k]]
        return line if isinstance(line, bytes) else bytes(line)

    def __iter__(self) -> Iterator[bytes]:
        return (self[k] for k in range(len(self)))

    def runs(self, rows: np.ndarray) -> list[memoryview]:
        """Lines ``rows`` (increasing) as few pieces of ``data``: consecutive lines that lie
        one b"\\n" apart there are one piece (joined by b"\\n", the pieces are the lines)."""
        if not rows.size:
            return []
        starts, ends = self.starts[rows], self.ends[rows]
        cut = np.flatnonzero(ends[:-1] + 1 != starts[1:]) + 1
        firsts, lasts = np.r_[0, cut].tolist(), np.r_[cut - 1, rows.size - 1].tolist()
        view = memoryview(self.data)
        return [view[starts[a] : ends[b]] for a, b in zip(firsts, lasts, strict=True)]


def jsonl_line_blocks(path: str | Path, wanted: np.ndarray) -> Iterator[LineBlock]:
    """:func:`line_blocks` of the file at ``path`` (compressed as its extension says)."""
    path = Path(path)
    return line_blocks(InputFile(path, compression=split_suffix(path)[1]), wanted)


def line_blocks(inp: InputFile, wanted: np.ndarray) -> Iterator[LineBlock]:
    """Lines ``wanted`` (1-based, increasing) of a file of one record per line as stored, a
    BOM and trailing whitespace taken off, a block per chunk read: records copied into
    outputs without being parsed again, and without a Python object per line of the file.

    Raises InputError when the file cannot be read or no longer has those lines.
    """
    path = inp.path
    wanted = np.asarray(wanted, dtype=np.int64)
    done, first = 0, 1  # wanted lines yielded; the number of the piece's first line
    if not wanted.size:
        return

    def is_wanted(index: int) -> bool:  # a line that spans chunks: rare, a binary search
        at = int(np.searchsorted(wanted, index + 1))
        return at < wanted.size and int(wanted[at]) == index + 1

    try:
        with byte_chunks(inp) as chunks:
            for data, starts, ends in _line_spans(chunks, is_wanted):
                end = first + starts.size
                upto = int(np.searchsorted(wanted, end))
                if upto > done:
                    rows = wanted[done:upto] - first
                    picked = _trimmed(data, starts[rows], ends[rows], wanted[done] == 1)
                    yield LineBlock(data, *picked)
                done, first = upto, end
                if done == wanted.size:
                    return
    except DamagedInputError:
        raise
    except read_errors(inp) as exc:
        raise InputError(f"{path}: {read_error(exc)}") from None
    raise InputError(f"{path}: changed while being read (line {wanted[done]} is gone)")


BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark a file may start with
_TRAILING = np.frombuffer(b" \t\r\x0b\x0c", dtype=np.uint8)  # what bytes.rstrip() takes


def _trimmed(
    data: bytes | bytearray, starts: np.ndarray, ends: np.ndarray, first_line: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Spans without trailing whitespace, and the first without a BOM if it is line 1."""
    raw = np.frombuffer(data, dtype=np.uint8)
    filled = ends > starts
    spaced = np.flatnonzero(filled & np.isin(raw[np.maximum(ends - 1, 0)], _TRAILING))
    if spaced.size:  # rare: Python per such line
        ends = ends.copy()
        for k in spaced.tolist():
            ends[k] = starts[k] + len(data[starts[k] : ends[k]].rstrip())
    if first_line and data.startswith(BOM, int(starts[0]), int(ends[0])):
        starts = starts.copy()
        starts[0] += len(BOM)
    return starts, ends


_HUGE_LINE = 16 * 2**20  # a line longer than this is given its own memory back once joined


def _line_spans(
    chunks: Iterator[bytes], wanted: Callable[[int], bool] | None = None
) -> Iterator[tuple[bytes | bytearray, np.ndarray, np.ndarray]]:
    """The lines of a stream of byte chunks as spans ``data[starts[k]:ends[k]]`` (without
    b"\\n"): a chunk's whole lines are not copied, a line that spans chunks is joined alone —
    when ``wanted`` (given its 0-based number) says so; else it is given empty, its pieces
    let go as they are read (a line too long to hold, skipped when it was read). A line over
    ``_HUGE_LINE`` is grown in one bytearray as it is read, never held as its pieces and their
    join at once."""
    pending: list[bytes] = []  # pieces of a line not ended yet
    long: bytearray | None = None  # the same, once over _HUGE_LINE
    size = 0  # bytes in pending
    held, index = wanted is None or wanted(0), 0  # whether the line being read is kept
    for chunk in chunks:
        ends = _newlines(chunk)
        if not ends.size:
            if long is not None:
                long += chunk
            elif held:
                pending.append(chunk)
                size += len(chunk)
                if size > _HUGE_LINE:
                    long, pending = bytearray().join(pending), []
            continue
        starts, rest = np.r_[0, ends[:-1] + 1], int(ends[-1]) + 1
        if pending or long is not None or not held:
            line: bytes | bytearray = b""
            if long is not None:
                long += memoryview(chunk)[: ends[0]]
                line, long = long, None
                release_free_memory()  # the heap its growth left free
            elif held:
                line = b"".join([*pending, chunk[: ends[0]]])
            pending, size = [], 0
            yield line, np.zeros(1, np.int64), np.array([len(line)], np.int64)
            del line
            starts, ends = starts[1:], ends[1:]
            index += 1
        index += ends.size
        if ends.size:
            yield chunk, starts, ends
        held = wanted is None or wanted(index)
        pending = [chunk[rest:]] if rest < len(chunk) and held else []
        size = len(pending[0]) if pending else 0
    if long is not None:
        yield long, np.zeros(1, np.int64), np.array([len(long)], np.int64)
    elif pending:
        line = b"".join(pending)
        yield line, np.zeros(1, np.int64), np.array([len(line)], np.int64)


def _newlines(data: bytes) -> np.ndarray:
    """Where the b"\\n" of ``data`` are (a memchr per line: faster than splitting)."""
    found = array.array("q")
    find, at = data.find, data.find(b"\n")
    while at >= 0:
        found.append(at)
        at = find(b"\n", at + 1)
    return np.frombuffer(found, dtype=np.int64) if found else np.empty(0, np.int64)


@contextlib.contextmanager
def byte_chunks(inp: InputFile) -> Iterator[Iterator[bytes]]:
    """The decompressed bytes of ``inp`` in chunks of up to 1 MiB, as they come; a
    compressed stream cut short or corrupt raises DamagedInputError after its last good
    bytes."""
    with open(inp.path, "rb", buffering=0 if inp.compression else IO_BUFFER) as raw:
        if inp.compression == "gz":
            yield gunzip_chunks(raw, inp.path)
        elif inp.compression == "zst":
            yield unzstd_chunks(raw, inp.path)
        else:
            yield iter(lambda: raw.read1(IO_BUFFER), b"")


def read_through(path: Path) -> None:
    """Decompress a ``.gz`` / ``.zst`` file to its end, keeping nothing: DamagedInputError
    when it is cut short or corrupt (what every reader here would meet)."""
    compression: Literal["gz", "zst"] = "zst" if path.name.lower().endswith(".zst") else "gz"
    with byte_chunks(InputFile(path, compression=compression)) as chunks:
        for _ in chunks:
            pass


def bad_record_error(inp: InputFile, message: str) -> InputError:
    """The error that stops a run at a bad record of ``inp``: the damage of its compressed
    stream when it has any (read to its end to know: corrupt data can inflate to records
    that are bad before the checksum at the end tells), else the bad record's ``message``."""
    if inp.compression is not None:
        try:
            read_through(inp.path)
        except DamagedInputError as exc:
            return exc
        except read_errors(inp):
            pass
    return InputError(message)


def split_lines(chunks: Iterator[bytes], limit: int | None = None) -> Iterator[bytes | None]:
    """The lines (without b"\\n") in a stream of byte chunks; a line may span many chunks. A
    line longer than ``limit`` bytes is None, its bytes let go as they are read."""
    for block in line_lists(chunks, limit):
        yield from block


def line_lists(chunks: Iterator[bytes], limit: int | None = None) -> Iterator[list[bytes | None]]:
    """The lines of a stream of byte chunks, as a list of the lines each chunk completes; a
    line longer than ``limit`` bytes (it spans chunks) is None and never held whole."""
    pending: list[bytes] = []  # pieces of a line longer than a chunk
    size, over = 0, False  # bytes in pending; the line is over the limit (pieces dropped)
    for chunk in chunks:
        parts: list[bytes | None] = chunk.split(b"\n")  # type: ignore[assignment]
        if len(parts) == 1:
            if not over:
                pending.append(chunk)
                size += len(chunk)
                if limit is not None and size > limit:
                    pending, size, over = [], 0, True
            continue
        if over or (limit is not None and size + len(parts[0]) > limit):  # type: ignore[arg-type]
            parts[0] = None
        elif pending:
            parts[0] = b"".join([*pending, parts[0]])  # type: ignore[list-item]
        last = parts.pop()
        pending = [last] if last else []  # type: ignore[list-item]
        size, over = len(last or b""), False
        yield parts
    if over:
        yield [None]
    elif pending:
        yield [b"".join(pending)]
