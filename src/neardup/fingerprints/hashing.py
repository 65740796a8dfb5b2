"""Fingerprints of texts and of byte spans: the public face of the compiled hash kernels.

Three 64-bit fingerprints are available, named by :data:`HashName`:

``"xxh3"``
    XXH3-64 with a 64-bit seed; bit-for-bit equal to ``xxhash.xxh3_64_intdigest(data, seed)``
    (and to every other XXH3 implementation). The default: fast and well mixed.
``"crc32"``
    ``zlib.crc32(data, seed)`` (the seed is the initial CRC; only its low 32 bits count),
    zero-extended to 64 bits. Only 32 bits of fingerprint: collisions become likely beyond
    ~10^5 distinct shingles.
``"rabin"``
    A Rabin-Karp polynomial hash modulo 2**64, defined in
    :func:`neardup.fingerprints.hash_kernels.rabin_karp`. Rollable, but weaker mixing than xxh3.

All values are stable across processes, platforms and releases: stored fingerprints stay
comparable.

>>> fingerprint("hello") == fingerprint(b"hello")
True
"""

from __future__ import annotations

import numpy as np

from neardup.errors import ConfigError
from neardup.fingerprints.hash_kernels import (
    HASH_CRC32,
    HASH_RABIN,
    HASH_XXH3,
    hash_span,
    hash_spans,
)
from neardup.text.text_config import HashName

__all__ = ["HASH_KINDS", "HashName", "fingerprint", "fingerprint_spans"]

#: Algorithm name -> kernel constant (``neardup.fingerprints.hash_kernels.HASH_*``).
HASH_KINDS: dict[str, int] = {"xxh3": HASH_XXH3, "crc32": HASH_CRC32, "rabin": HASH_RABIN}

_SEED_LIMIT = 1 << 64


def _kind(algorithm: object) -> int:
    """Kernel constant of ``algorithm``, or ConfigError naming the value and the choices."""
    kind = HASH_KINDS.get(algorithm) if isinstance(algorithm, str) else None
    if kind is None:
        raise ConfigError(f"algorithm={algorithm!r} is not one of {', '.join(HASH_KINDS)}")
    return kind


def _seed(seed: object) -> np.uint64:
    """``seed`` as a uint64, or ConfigError if it is not an integer in [0, 2**64)."""
    if (
        isinstance(seed, bool)
        or not isinstance(seed, int | np.integer)
        or not 0 <= int(seed) < _SEED_LIMIT
    ):
        raise ConfigError(f"seed={seed!r} must be an integer in [0, 2**64)")
    return np.uint64(seed)


def kernel_hash(algorithm: HashName, seed: int) -> tuple[int, np.uint64]:
    """``(kind, seed)`` for the compiled kernels' ``hash_span``; ConfigError if either is bad."""
    return _kind(algorithm), _seed(seed)


def fingerprint(data: bytes | str, algorithm: HashName = "xxh3", seed: int = 0) -> int:
    """64-bit fingerprint of ``data`` (a ``str`` is hashed as its UTF-8 bytes).

    Convenient for one value at a time; to hash many spans of one buffer use
    :func:`fingerprint_spans`, which runs the same kernel over all of them in one call.
    Raises ConfigError for an unknown ``algorithm`` or a seed outside [0, 2**64).
    """
    kind = _kind(algorithm)
    seed64 = _seed(seed)
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be bytes or str, not {type(data).__name__}")
    # A writable copy, so every call shares one compiled specialization of the kernel.
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    return int(hash_span(kind, buf, 0, buf.size, seed64))


def _span_bounds(name: str, values: object) -> np.ndarray:
    """``values`` as a 1-d integer array, or ValueError naming the argument."""
    arr = np.asarray(values)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"{name} must be a 1-d integer array, got {arr.ndim}-d array of {arr.dtype}"
        )
    return arr


def fingerprint_spans(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    algorithm: HashName = "xxh3",
    seed: int = 0,
) -> np.ndarray:
    """Fingerprints of the spans ``buf[starts[i]:ends[i]]``, as a ``uint64`` array.

    The bulk path of shingle hashing: all spans are hashed by one compiled, multi-threaded
    call without copying any bytes. Element ``i`` equals
    ``fingerprint(bytes(buf[starts[i]:ends[i]]), algorithm, seed)``.

    Raises ConfigError for an unknown ``algorithm`` or a bad seed, and ValueError if ``buf``
    is not a 1-d ``uint8`` array, ``starts``/``ends`` are not 1-d integer arrays of equal
    length, or a span is not within ``0 <= start <= end <= len(buf)``.
    """
    kind = _kind(algorithm)
    seed64 = _seed(seed)
    arr = np.asarray(buf)
    if arr.ndim != 1 or arr.dtype != np.uint8:
        raise ValueError(f"buf must be a 1-d uint8 array, got {arr.ndim}-d array of {arr.dtype}")
    lo = _span_bounds("starts", starts)
    hi = _span_bounds("ends", ends)
    if lo.shape != hi.shape:
        raise ValueError(f"starts and ends differ in length: {lo.size} != {hi.size}")
    if lo.size == 0:
        return np.empty(0, dtype=np.uint64)
    # Compare in the arrays' own dtypes first, so no value can wrap before it is checked.
    if lo.min() < 0:
        i = int(np.argmin(lo))
        raise ValueError(f"span {i} starts before the buffer: starts[{i}] = {lo[i]}")
    if hi.max() > arr.size:
        i = int(np.argmax(hi))
        raise ValueError(
            f"span {i} ends past the buffer: ends[{i}] = {hi[i]} > len(buf) = {arr.size}"
        )
    lo = lo.astype(np.int64, copy=False)
    hi = hi.astype(np.int64, copy=False)
    backwards = np.flatnonzero(hi < lo)
    if backwards.size:
        i = int(backwards[0])
        raise ValueError(f"span {i} ends before it starts: starts[{i}] = {lo[i]} > ends = {hi[i]}")
    return hash_spans(
        kind,
        np.ascontiguousarray(arr),
        np.ascontiguousarray(lo),
        np.ascontiguousarray(hi),
        seed64,
    )
