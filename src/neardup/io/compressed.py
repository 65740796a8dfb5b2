"""Decompressed bytes of .gz and .zst files, in bounded chunks, that never end early in
silence: a stream cut short or corrupt raises :class:`~neardup.errors.DamagedInputError`
naming the file (and, for corrupt data, about where), after every byte before the damage was
delivered.

Damage is not a bad record: the records after it cannot be read at all, so readers let this
error stop the run whatever ``skip_bad`` says.
"""

from __future__ import annotations

import functools
import io
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from neardup.errors import DamagedInputError
from neardup.util.extras import IO_BUFFER, zstandard

__all__ = ["ChunkReader", "gunzip_chunks", "unzstd_chunks", "zstd_frames_problem"]

_GZIP_READ = 1 << 18  # compressed bytes read at a time
_GZIP_HEADER = (0x1F, 0x8B, 0x08)  # the magic bytes, then deflate
_ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # skippable frames: this magic with any low 4 bits


@functools.cache
def _inflater() -> tuple[Any, tuple[type[Exception], ...]]:
    """Intel's igzip where it is installed (with neardup on x86-64 and 64-bit ARM, else
    ``pip install 'neardup[gzip]'``: the same bytes, inflated faster), else zlib; and the
    errors it raises on corrupt data."""
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - zlib, as before
        return zlib, (zlib.error,)
    return isal_zlib, (zlib.error, isal_zlib.error)


def gunzip_chunks(raw: IO[bytes], path: str | Path) -> Iterator[bytes]:
    """Gzip decompression in pieces of up to 1 MiB (gzip.GzipFile gives 20 KiB ones: slower).

    Handles concatenated members and zero padding like :mod:`gzip`. Corrupt data (a bad
    header, block or checksum) and a stream cut before its end marker raise
    DamagedInputError once everything before was delivered. Inflated by igzip where it is
    installed, else by zlib.
    """
    module, errors = _inflater()
    inflate = module.decompressobj(wbits=31)
    data = b""
    starting = True  # at the start of a member: its header checked here (igzip waits for
    # more bytes after a short bad header where zlib reports it)
    while data or (data := raw.read(_GZIP_READ)):
        if inflate.eof:  # another member follows, or zero padding
            data = data.lstrip(b"\x00")
            if not data:
                continue
            inflate = module.decompressobj(wbits=31)
            starting = True
        if starting and (problem := _header_problem(data)):
            raise DamagedInputError(
                f"{path}: corrupt gzip data, detected by byte {raw.tell()} of the file ({problem})"
            )
        starting = False
        try:
            out = inflate.decompress(data, IO_BUFFER)
        except errors as exc:
            raise DamagedInputError(
                f"{path}: corrupt gzip data, detected by byte {raw.tell()} of the file ({exc})"
            ) from None
        data = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
        if out:
            yield out
    if not inflate.eof:
        raise DamagedInputError(
            f"{path}: truncated: the gzip data ends before its end marker (cut short?)"
        )


def _header_problem(data: bytes) -> str | None:
    """What is wrong with the start of a gzip member's header (None: nothing seen yet)."""
    for at, (got, want) in enumerate(zip(data[:3], _GZIP_HEADER, strict=False)):
        if got != want:
            return "incorrect header check" if at < 2 else "unknown compression method"
    if len(data) > 3 and data[3] & 0xE0:
        return "unknown header flags set"
    return None


class _Counted(io.RawIOBase):
    """A binary file that counts the bytes read from it (where a decoder stopped)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        got = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.offset += got or 0
        return got or 0


def unzstd_chunks(raw: IO[bytes], path: str | Path) -> Iterator[bytes]:
    """Zstandard decompression (every frame) in pieces of up to 1 MiB.

    The decoder reports corrupt blocks but ends quietly where the file ends, even inside a
    frame; so once it ends, the file's frames are walked (headers only) to tell a whole
    stream from one cut short (not for a pipe, which cannot be read again).
    """
    zstd = zstandard("reading .zst files")
    counted = _Counted(raw)
    reader = zstd.ZstdDecompressor().stream_reader(counted, read_across_frames=True, closefd=False)
    try:
        while chunk := reader.read1(IO_BUFFER):
            yield chunk
    except zstd.ZstdError as exc:
        raise DamagedInputError(
            f"{path}: corrupt zstd data, detected by byte {counted.offset} of the file ({exc})"
        ) from None
    if not raw.seekable():  # a pipe: its frames cannot be walked again
        return
    problem = zstd_frames_problem(raw)
    if problem:
        raise DamagedInputError(f"{path}: {problem}")


def zstd_frames_problem(fh: IO[bytes]) -> str | None:
    """What is wrong with the frame layout of a zstd file (RFC 8878: frames of blocks, or
    skippable frames, up to the end of the file), or None when every frame is whole.
    Reads the headers only: block contents are skipped over."""
    total = fh.seek(0, io.SEEK_END)
    at = fh.seek(0)
    if not total:
        return "truncated: the file is empty (not even one zstd frame)"
    while at < total:
        if at + 8 > total:
            return _cut(at)
        magic, size = struct.unpack("<II", fh.read(8))
        if magic & 0xFFFFFFF0 == _SKIPPABLE:
            end: int | None = at + 8 + size
        elif magic == _ZSTD_MAGIC:
            end = _frame_end(fh, at, total)
        else:
            return f"corrupt at byte {at}: not the start of a zstd frame"
        if end is None or end > total:
            return _cut(at)
        at = fh.seek(end)
    return None


def _frame_end(fh: IO[bytes], start: int, total: int) -> int | None:
    """The offset after the zstd frame at ``start`` (None: the file ends inside it)."""
    fh.seek(start + 4)
    flags = fh.read(1)[0]
    single_segment = bool(flags & 0x20)
    size_field = (1 if single_segment else 0, 2, 4, 8)[flags >> 6]
    header = (0 if single_segment else 1) + (0, 1, 2, 4)[flags & 3] + size_field
    at = start + 5 + header
    while at + 3 <= total:
        fh.seek(at)
        word = int.from_bytes(fh.read(3), "little")
        kind, size = (word >> 1) & 3, word >> 3
        at += 3 + (1 if kind == 1 else size)  # an RLE block stores its one byte
        if word & 1:  # the frame's last block, then maybe a checksum
            return at + (4 if flags & 0x04 else 0)
    return None


def _cut(at: int) -> str:
    return f"truncated: the zstd data ends inside the frame that starts at byte {at} (cut short?)"


class ChunkReader(io.RawIOBase):
    """A readable binary stream over an iterator of byte chunks (for text readers)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size
