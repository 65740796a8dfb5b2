"""Compiled fingerprint kernels over byte spans of one big ``uint8`` buffer.

Every word shingle of every document is hashed as a span ``buf[start:end]`` of a shared
buffer, so these functions take ``(buf, start, end, seed)`` instead of a ``bytes`` object and
never copy.  Three fingerprints are provided:

* :func:`xxh3_64`    -- bit-exact XXH3-64 (``XXH3_64bits_withSeed`` of xxHash 0.8), written
  from the published algorithm specification; equals ``xxhash.xxh3_64_intdigest(data, seed)``.
* :func:`crc32`      -- table-driven (slice-by-8) CRC-32/ISO-HDLC, equals ``zlib.crc32``.
* :func:`rabin_karp` -- a 64-bit polynomial fingerprint whose definition is frozen (see its
  docstring), useful where a rolling hash is wanted.

Numba typing rules matter here: mixing ``uint64`` with ``int64`` (or a bare Python int literal)
in arithmetic silently produces ``float64``.  Hence every constant below is an ``np.uint64``,
and values cross between the two worlds only through explicit ``np.uint64(...)`` casts.
Byte offsets are ``int64`` where they are computed, but the hot loads index with unsigned
positions: numba then emits no negative-index wraparound code and LLVM fuses byte loads into
single 32/64-bit loads.  ``uint64`` arithmetic wraps modulo 2**64, as the hashes require.

Performance notes: the public kernels contain no calls to other compiled functions (helpers
that take the buffer are inlined), because numba maintains the array's reference count
around such calls with atomic operations that cost more than hashing a 30-byte shingle.

Preconditions (not checked here, for speed; :mod:`neardup.fingerprints.hashing` validates them):
``buf`` is a 1-d C-contiguous ``uint8`` array and ``0 <= start <= end <= len(buf)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "HASH_CRC32",
    "HASH_RABIN",
    "HASH_XXH3",
    "PARALLEL_MIN_SPANS",
    "RABIN_BASE",
    "crc32",
    "hash_span",
    "hash_spans",
    "rabin_karp",
    "xxh3_64",
]

HASH_XXH3 = 0
HASH_CRC32 = 1
HASH_RABIN = 2

#: :func:`hash_spans` hands spans to threads in chunks of this many ...
_CHUNK = 2048
#: ... and uses the thread pool only for at least this many spans.
PARALLEL_MIN_SPANS = 2 * _CHUNK

_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)
_MASK8 = _U64(0xFF)
_ONE = _U64(1)
_S8 = _U64(8)
_S16 = _U64(16)
_S24 = _U64(24)
_S32 = _U64(32)
_S40 = _U64(40)
_S48 = _U64(48)
_S56 = _U64(56)

# ----------------------------------------------------------------------------------------
# XXH3 constants (xxHash specification, "XXH3 Algorithm Overview").
# ----------------------------------------------------------------------------------------
_P32_1 = _U64(0x9E3779B1)
_P32_2 = _U64(0x85EBCA77)
_P32_3 = _U64(0xC2B2AE3D)
_P64_1 = _U64(0x9E3779B185EBCA87)
_P64_2 = _U64(0xC2B2AE3D27D4EB4F)
_P64_3 = _U64(0x165667B19E3779F9)
_P64_4 = _U64(0x85EBCA77C2B2AE63)
_P64_5 = _U64(0x27D4EB2F165667C5)
_PMX1 = _U64(0x165667919E3779F9)
_PMX2 = _U64(0x9FB21C651E98DF25)

#: The 192-byte default secret of XXH3 ("kSecret").
_SECRET = np.frombuffer(
    bytes.fromhex(
        "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
        "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
        "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
        "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
        "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
        "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e"
    ),
    dtype=np.uint8,
)
_SECRET_SIZE = 192
_STRIPE_LEN = 64
_STRIPES_PER_BLOCK = (_SECRET_SIZE - _STRIPE_LEN) // 8  # 16
_BLOCK_LEN = _STRIPE_LEN * _STRIPES_PER_BLOCK  # 1024
_S47 = _U64(47)
#: The default secret as 24 little-endian uint64 words (for the seeded derivation).
_SECRET_WORDS = _SECRET.view("<u8").astype(np.uint64)
#: Type of the 8 XXH3 accumulators (a tuple, so they stay in registers).
_Acc = tuple[np.uint64, ...]


# ----------------------------------------------------------------------------------------
# Small helpers: little-endian loads, rotations, byte swaps, 64x64->128 multiply.
# ----------------------------------------------------------------------------------------
@njit(cache=True)
def _r32(a: np.ndarray, i: int) -> np.uint64:
    """Little-endian 32-bit load of ``a[i:i+4]``, zero-extended to uint64.

    The index is made unsigned so numba emits no negative-index wraparound code; LLVM then
    fuses the byte loads into one (unaligned) 32-bit load.
    """
    p = _U64(i)
    return (
        _U64(a[p])
        | (_U64(a[p + _U64(1)]) << _S8)
        | (_U64(a[p + _U64(2)]) << _S16)
        | (_U64(a[p + _U64(3)]) << _S24)
    )


@njit(cache=True)
def _r64(a: np.ndarray, i: int) -> np.uint64:
    """Little-endian 64-bit load of ``a[i:i+8]`` (any alignment; fused into one load)."""
    p = _U64(i)
    return (
        _U64(a[p])
        | (_U64(a[p + _U64(1)]) << _S8)
        | (_U64(a[p + _U64(2)]) << _S16)
        | (_U64(a[p + _U64(3)]) << _S24)
        | (_U64(a[p + _U64(4)]) << _S32)
        | (_U64(a[p + _U64(5)]) << _S40)
        | (_U64(a[p + _U64(6)]) << _S48)
        | (_U64(a[p + _U64(7)]) << _S56)
    )


@njit(cache=True)
def _rotl64(x: np.uint64, r: int) -> np.uint64:
    """Rotate a uint64 left by ``r`` bits (0 < r < 64)."""
    return (x << _U64(r)) | (x >> _U64(64 - r))


@njit(cache=True)
def _bswap32(x: np.uint64) -> np.uint64:
    """Reverse the byte order of the low 32 bits of ``x`` (high bits must be zero)."""
    return (
        ((x & _MASK8) << _S24)
        | (((x >> _S8) & _MASK8) << _S16)
        | (((x >> _S16) & _MASK8) << _S8)
        | ((x >> _S24) & _MASK8)
    )


@njit(cache=True)
def _bswap64(x: np.uint64) -> np.uint64:
    """Reverse the byte order of a uint64."""
    return (_bswap32(x & _MASK32) << _S32) | _bswap32(x >> _S32)


@njit(cache=True)
def _mul128_fold64(a: np.uint64, b: np.uint64) -> np.uint64:
    """Full 64x64->128-bit product of ``a`` and ``b``, folded as ``low64 XOR high64``.

    Computed from four 32x32->64 partial products; none of the sums can overflow.
    """
    a_lo = a & _MASK32
    a_hi = a >> _S32
    b_lo = b & _MASK32
    b_hi = b >> _S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _MASK32) + lo_hi
    upper = (hi_lo >> _S32) + (cross >> _S32) + hi_hi
    lower = (cross << _S32) | (lo_lo & _MASK32)
    return lower ^ upper


@njit(cache=True)
def _xxh64_avalanche(h: np.uint64) -> np.uint64:
    """XXH64's final mix (``avalanche_XXH64`` in the spec)."""
    h ^= h >> _U64(33)
    h *= _P64_2
    h ^= h >> _U64(29)
    h *= _P64_3
    h ^= h >> _U64(32)
    return h


@njit(cache=True)
def _xxh3_avalanche(h: np.uint64) -> np.uint64:
    """XXH3's final mix (``avalanche`` in the spec)."""
    h ^= h >> _U64(37)
    h *= _PMX1
    h ^= h >> _U64(32)
    return h


@njit(cache=True)
def _rrmxmx(h: np.uint64, n: np.uint64) -> np.uint64:
    """Stronger final mix used for 4..8-byte inputs; ``n`` is the input length."""
    h ^= _rotl64(h, 49) ^ _rotl64(h, 24)
    h *= _PMX2
    h ^= (h >> _U64(35)) + n
    h *= _PMX2
    h ^= h >> _U64(28)
    return h


# ----------------------------------------------------------------------------------------
# XXH3-64, inputs of 0..240 bytes (always the default secret; the seed is mixed in).
# ----------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _len_0(seed: np.uint64) -> np.uint64:
    """XXH3-64 of the empty input."""
    return _xxh64_avalanche(seed ^ (_r64(_SECRET, 56) ^ _r64(_SECRET, 64)))


@njit(cache=True, inline="always")
def _len_1to3(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of 1..3 bytes: first, middle and last byte plus the length in one word."""
    c1 = _U64(buf[s])
    c2 = _U64(buf[s + (n >> 1)])
    c3 = _U64(buf[s + n - 1])
    combined = (c1 << _S16) | (c2 << _S24) | c3 | (_U64(n) << _S8)
    bitflip = (_r32(_SECRET, 0) ^ _r32(_SECRET, 4)) + seed
    return _xxh64_avalanche(combined ^ bitflip)


@njit(cache=True, inline="always")
def _len_4to8(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of 4..8 bytes: first and last 4 bytes, seed with byte-swapped low half."""
    seed2 = seed ^ (_bswap32(seed & _MASK32) << _S32)
    first = _r32(buf, s)
    last = _r32(buf, s + n - 4)
    bitflip = (_r64(_SECRET, 8) ^ _r64(_SECRET, 16)) - seed2
    keyed = (last + (first << _S32)) ^ bitflip
    return _rrmxmx(keyed, _U64(n))


@njit(cache=True, inline="always")
def _len_9to16(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of 9..16 bytes: first and last 8 bytes, one folded 128-bit product."""
    bitflip1 = (_r64(_SECRET, 24) ^ _r64(_SECRET, 32)) + seed
    bitflip2 = (_r64(_SECRET, 40) ^ _r64(_SECRET, 48)) - seed
    lo = _r64(buf, s) ^ bitflip1
    hi = _r64(buf, s + n - 8) ^ bitflip2
    acc = _U64(n) + _bswap64(lo) + hi + _mul128_fold64(lo, hi)
    return _xxh3_avalanche(acc)


@njit(cache=True)
def _mix16b(buf: np.ndarray, p: int, off: int, seed: np.uint64) -> np.uint64:
    """Mix 16 input bytes at ``buf[p:]`` with 16 default-secret bytes at ``off``."""
    lo = _r64(buf, p) ^ (_r64(_SECRET, off) + seed)
    hi = _r64(buf, p + 8) ^ (_r64(_SECRET, off + 8) - seed)
    return _mul128_fold64(lo, hi)


@njit(cache=True, inline="always")
def _len_17to128(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of 17..128 bytes: 16-byte chunks paired from both ends of the input.

    Up to 64 bytes with 16 bytes of buffer either side, the middle pair is hashed whatever
    the length and kept past 32 bytes by a mask: word shingles' lengths straddle 32, and a
    branch on it would be mispredicted often (its bytes outside the span count for nothing).
    """
    e = s + n
    acc = _U64(n) * _P64_1
    if n <= 64 and s >= 16 and e + 16 <= buf.size:
        middle = _mix16b(buf, s + 16, 32, seed) + _mix16b(buf, e - 32, 48, seed)
        acc += middle & (_U64(0) - _U64(n > 32))
        acc += _mix16b(buf, s, 0, seed) + _mix16b(buf, e - 16, 16, seed)
        return _xxh3_avalanche(acc)
    if n > 32:
        if n > 64:
            if n > 96:
                acc += _mix16b(buf, s + 48, 96, seed)
                acc += _mix16b(buf, e - 64, 112, seed)
            acc += _mix16b(buf, s + 32, 64, seed)
            acc += _mix16b(buf, e - 48, 80, seed)
        acc += _mix16b(buf, s + 16, 32, seed)
        acc += _mix16b(buf, e - 32, 48, seed)
    acc += _mix16b(buf, s, 0, seed)
    acc += _mix16b(buf, e - 16, 16, seed)
    return _xxh3_avalanche(acc)


@njit(cache=True, inline="always")
def _len_129to240(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of 129..240 bytes: 8 chunks, avalanche, remaining chunks, last 16 bytes."""
    acc = _U64(n) * _P64_1
    for i in range(8):
        acc += _mix16b(buf, s + 16 * i, 16 * i, seed)
    acc = _xxh3_avalanche(acc)
    for i in range(8, n // 16):
        acc += _mix16b(buf, s + 16 * i, 16 * (i - 8) + 3, seed)
    # secret offset 119 = XXH3_SECRET_SIZE_MIN (136) - 17
    acc += _mix16b(buf, s + n - 16, 119, seed)
    return _xxh3_avalanche(acc)


# ----------------------------------------------------------------------------------------
# XXH3-64, inputs of more than 240 bytes: 8 accumulators, 64-byte stripes, 1 KiB blocks.
# ----------------------------------------------------------------------------------------
@njit(cache=True)
def _secret_word(w: int, seed: np.uint64) -> np.uint64:
    """LE64 word ``w`` (0..23) of the seeded secret: default word +seed (even) / -seed (odd).

    This is XXH3's custom-secret derivation, evaluated lazily; with ``seed == 0`` it is the
    default secret, so one code path serves the seeded and unseeded cases.
    """
    if w & 1:
        return _SECRET_WORDS[w] - seed
    return _SECRET_WORDS[w] + seed


@njit(cache=True)
def _secret64(off: int, seed: np.uint64) -> np.uint64:
    """LE64 read at byte offset ``off`` of the seeded secret (no 192-byte copy is made)."""
    w = off >> 3
    r = off & 7
    if r == 0:
        return _secret_word(w, seed)
    lo_shift = _U64(8 * r)
    hi_shift = _U64(64 - 8 * r)
    return (_secret_word(w, seed) >> lo_shift) | (_secret_word(w + 1, seed) << hi_shift)


@njit(cache=True)
def _mul32x32(k: np.uint64) -> np.uint64:
    """Low 32 bits times high 32 bits of ``k`` (the stripe accumulation product)."""
    return (k & _MASK32) * (k >> _S32)


@njit(cache=True, inline="always")
def _accumulate_512(acc: _Acc, buf: np.ndarray, p: int, off: int, seed: np.uint64) -> _Acc:
    """Fold the 64-byte stripe ``buf[p:p+64]`` into the 8 accumulators (kept in a tuple).

    For lane ``i``: ``acc[i ^ 1] += data[i]`` and ``acc[i] += lo32(key[i]) * hi32(key[i])``
    with ``key = data ^ secret[off:off+64]``.
    """
    a0, a1, a2, a3, a4, a5, a6, a7 = acc
    d0 = _r64(buf, p)
    d1 = _r64(buf, p + 8)
    d2 = _r64(buf, p + 16)
    d3 = _r64(buf, p + 24)
    d4 = _r64(buf, p + 32)
    d5 = _r64(buf, p + 40)
    d6 = _r64(buf, p + 48)
    d7 = _r64(buf, p + 56)
    return (
        a0 + d1 + _mul32x32(d0 ^ _secret64(off, seed)),
        a1 + d0 + _mul32x32(d1 ^ _secret64(off + 8, seed)),
        a2 + d3 + _mul32x32(d2 ^ _secret64(off + 16, seed)),
        a3 + d2 + _mul32x32(d3 ^ _secret64(off + 24, seed)),
        a4 + d5 + _mul32x32(d4 ^ _secret64(off + 32, seed)),
        a5 + d4 + _mul32x32(d5 ^ _secret64(off + 40, seed)),
        a6 + d7 + _mul32x32(d6 ^ _secret64(off + 48, seed)),
        a7 + d6 + _mul32x32(d7 ^ _secret64(off + 56, seed)),
    )


@njit(cache=True)
def _scramble1(a: np.uint64, off: int, seed: np.uint64) -> np.uint64:
    """Scramble one accumulator with the secret word at ``off``."""
    a ^= a >> _S47
    a ^= _secret64(off, seed)
    return a * _P32_1


@njit(cache=True, inline="always")
def _scramble(acc: _Acc, seed: np.uint64) -> _Acc:
    """End-of-block scramble of the 8 accumulators with the last 64 secret bytes."""
    o = _SECRET_SIZE - _STRIPE_LEN
    return (
        _scramble1(acc[0], o, seed),
        _scramble1(acc[1], o + 8, seed),
        _scramble1(acc[2], o + 16, seed),
        _scramble1(acc[3], o + 24, seed),
        _scramble1(acc[4], o + 32, seed),
        _scramble1(acc[5], o + 40, seed),
        _scramble1(acc[6], o + 48, seed),
        _scramble1(acc[7], o + 56, seed),
    )


@njit(cache=True, inline="always")
def _merge_accs(acc: _Acc, off: int, start: np.uint64, seed: np.uint64) -> np.uint64:
    """Merge the 8 accumulators into one 64-bit value (``finalMerge`` in the spec)."""
    result = start
    for i in range(4):
        result += _mul128_fold64(
            acc[2 * i] ^ _secret64(off + 16 * i, seed),
            acc[2 * i + 1] ^ _secret64(off + 16 * i + 8, seed),
        )
    return _xxh3_avalanche(result)


@njit(cache=True, inline="always")
def _hash_long(buf: np.ndarray, s: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of more than 240 bytes: 1 KiB blocks of 16 stripes, seed-derived secret.

    Allocation-free (accumulators live in a tuple, the secret is derived on the fly), so
    the kernel needs no heap and no reference counting.
    """
    acc = (_P32_3, _P64_1, _P64_2, _P64_3, _P64_4, _P32_2, _P64_5, _P32_1)
    nb_blocks = (n - 1) // _BLOCK_LEN
    for b in range(nb_blocks):
        base = s + b * _BLOCK_LEN
        for k in range(_STRIPES_PER_BLOCK):
            acc = _accumulate_512(acc, buf, base + k * _STRIPE_LEN, 8 * k, seed)
        acc = _scramble(acc, seed)
    # Last (possibly full) block: all stripes but the last, then the last 64 input bytes.
    base = s + nb_blocks * _BLOCK_LEN
    nb_stripes = ((n - 1) - nb_blocks * _BLOCK_LEN) // _STRIPE_LEN
    for k in range(nb_stripes):
        acc = _accumulate_512(acc, buf, base + k * _STRIPE_LEN, 8 * k, seed)
    # secret offset 121 = secret size - 64 - 7
    last_off = _SECRET_SIZE - _STRIPE_LEN - 7
    acc = _accumulate_512(acc, buf, s + n - _STRIPE_LEN, last_off, seed)
    return _merge_accs(acc, 11, _U64(n) * _P64_1, seed)


@njit(cache=True)
def xxh3_64(buf: np.ndarray, start: int, end: int, seed: int) -> np.uint64:
    """XXH3-64 (``XXH3_64bits_withSeed``) of ``buf[start:end]``; equals xxhash's result.

    Bit-for-bit equal to ``xxhash.xxh3_64_intdigest(bytes(buf[start:end]), seed)`` for every
    length, so fingerprints agree with any other XXH3 implementation (C, Rust, Go, ...).
    ``seed`` is taken modulo 2**64.  Inputs of more than 240 bytes with a nonzero seed use
    the secret derived from the seed, exactly as the reference does.
    """
    n = end - start
    sd = _U64(seed)
    if n <= 16:
        if n > 8:
            return _len_9to16(buf, start, n, sd)
        if n >= 4:
            return _len_4to8(buf, start, n, sd)
        if n > 0:
            return _len_1to3(buf, start, n, sd)
        return _len_0(sd)
    if n <= 128:
        return _len_17to128(buf, start, n, sd)
    if n <= 240:
        return _len_129to240(buf, start, n, sd)
    return _hash_long(buf, start, n, sd)


# ----------------------------------------------------------------------------------------
# CRC-32 (ISO-HDLC / zlib): reflected polynomial 0xEDB88320, slice-by-8 tables.
# ----------------------------------------------------------------------------------------
def _make_crc_tables() -> np.ndarray:
    """Build the 8 x 256 slice-by-8 tables for the reflected CRC-32 polynomial."""
    tables = np.zeros((8, 256), dtype=np.uint32)
    c = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        c = np.where(c & 1, (c >> 1) ^ np.uint32(0xEDB88320), c >> 1)
    tables[0] = c
    for k in range(1, 8):
        tables[k] = (tables[k - 1] >> 8) ^ tables[0][tables[k - 1] & 0xFF]
    return tables


_CRC_TABLES = _make_crc_tables()


@njit(cache=True)
def crc32(buf: np.ndarray, start: int, end: int, init: int) -> np.uint64:
    """CRC-32 of ``buf[start:end]`` continuing from ``init``; equals ``zlib.crc32``.

    Same value as ``zlib.crc32(bytes(buf[start:end]), init)`` (only the low 32 bits of
    ``init`` are used, as zlib does), zero-extended to uint64.  Processes 8 bytes per step
    with slice-by-8 tables, then at most one 4-byte step and 3 single bytes.
    """
    t = _CRC_TABLES
    c = (_U64(init) & _MASK32) ^ _MASK32
    i = _U64(start)  # unsigned positions: no negative-index wraparound code
    e = _U64(end)
    while i + _S8 <= e:
        lo = c ^ _r32(buf, i)
        hi = _r32(buf, i + _U64(4))
        c = _U64(
            t[7, lo & _MASK8]
            ^ t[6, (lo >> _S8) & _MASK8]
            ^ t[5, (lo >> _S16) & _MASK8]
            ^ t[4, lo >> _S24]
            ^ t[3, hi & _MASK8]
            ^ t[2, (hi >> _S8) & _MASK8]
            ^ t[1, (hi >> _S16) & _MASK8]
            ^ t[0, hi >> _S24]
        )
        i += _S8
    if i + _U64(4) <= e:
        lo = c ^ _r32(buf, i)
        c = _U64(
            t[3, lo & _MASK8]
            ^ t[2, (lo >> _S8) & _MASK8]
            ^ t[1, (lo >> _S16) & _MASK8]
            ^ t[0, lo >> _S24]
        )
        i += _U64(4)
    while i < e:
        c = _U64(t[0, (c ^ _U64(buf[i])) & _MASK8]) ^ (c >> _S8)
        i += _ONE
    return c ^ _MASK32


# ----------------------------------------------------------------------------------------
# Rabin-Karp polynomial fingerprint modulo 2**64.
# ----------------------------------------------------------------------------------------
#: Multiplier of :func:`rabin_karp`: 2**64 / golden ratio, rounded to an odd integer.
#: Part of the fingerprint's definition -- never change it.
RABIN_BASE = 0x9E3779B97F4A7C15
_RB1, _RB2, _RB3, _RB4, _RB5, _RB6, _RB7, _RB8 = (
    _U64(pow(RABIN_BASE, k, 1 << 64)) for k in range(1, 9)
)
#: The "+1" of eight bytes folded at once: B**7 + B**6 + ... + B + 1 (mod 2**64).
_RB_ONES8 = _U64(sum(pow(RABIN_BASE, k, 1 << 64) for k in range(8)) % (1 << 64))


@njit(cache=True)
def rabin_karp(buf: np.ndarray, start: int, end: int, seed: int) -> np.uint64:
    """64-bit Rabin-Karp polynomial fingerprint of ``buf[start:end]``.

    Definition (frozen; stored fingerprints depend on it)::

        B = 0x9E3779B97F4A7C15          # RABIN_BASE, odd
        h = seed mod 2**64
        for b in buf[start:end]:
            h = (h * B + (b + 1)) mod 2**64
        return h

    i.e. ``h = seed*B**n + sum((b_i + 1) * B**(n-1-i))`` mod 2**64.  The ``+ 1`` makes
    leading zero bytes change the value; ``B`` odd makes ``h -> h*B`` a bijection, so the
    hash can be rolled (remove the first byte's term, multiply, add the next byte).  Eight
    bytes are folded per step with precomputed ``B**2..B**8`` and ``B**7+...+B+1``, which
    gives the identical result with a much shorter dependency chain.
    """
    h = _U64(seed)
    i = _U64(start)  # unsigned positions: no negative-index wraparound code
    e = _U64(end)
    while i + _S8 <= e:
        h = (
            h * _RB8
            + _U64(buf[i]) * _RB7
            + _U64(buf[i + _U64(1)]) * _RB6
            + _U64(buf[i + _U64(2)]) * _RB5
            + _U64(buf[i + _U64(3)]) * _RB4
            + _U64(buf[i + _U64(4)]) * _RB3
            + _U64(buf[i + _U64(5)]) * _RB2
            + _U64(buf[i + _U64(6)]) * _RB1
            + _U64(buf[i + _U64(7)])
            + _RB_ONES8
        )
        i += _S8
    while i < e:
        h = h * _RB1 + (_U64(buf[i]) + _ONE)
        i += _ONE
    return h


# ----------------------------------------------------------------------------------------
# Dispatch by kind.
# ----------------------------------------------------------------------------------------
# Inlined twins of the public kernels.  A numba function that calls another compiled
# function with an array argument keeps the array's reference count up to date around the
# call (two atomic operations, ~10 ns: more than hashing a shingle).  Inlining the kernels
# into the dispatchers at numba-IR level leaves no calls, so numba prunes the reference
# counting away.  Not cached themselves: their code lives in their (cached) callers.
_xxh3_64_inline = njit(inline="always")(xxh3_64.py_func)
_crc32_inline = njit(inline="always")(crc32.py_func)
_rabin_karp_inline = njit(inline="always")(rabin_karp.py_func)


@njit(cache=True)
def hash_span(kind: int, buf: np.ndarray, start: int, end: int, seed: int) -> np.uint64:
    """Fingerprint ``buf[start:end]`` with ``kind`` (``HASH_XXH3``/``HASH_CRC32``/``HASH_RABIN``).

    One entry point so callers can make the algorithm a runtime setting; raises ValueError
    for an unknown kind.  For CRC-32 the seed is the initial CRC value (low 32 bits).
    (Written with a single exit: numba prunes the array reference counting only for simple
    control flow, and an early return here would cost two atomic operations per call.)
    """
    if kind == HASH_XXH3:
        h = _xxh3_64_inline(buf, start, end, seed)
    elif kind == HASH_CRC32:
        h = _crc32_inline(buf, start, end, seed)
    elif kind == HASH_RABIN:
        h = _rabin_karp_inline(buf, start, end, seed)
    else:
        raise ValueError("unknown hash kind; expected HASH_XXH3, HASH_CRC32 or HASH_RABIN")
    return h


@njit(inline="always")
def _dispatch_valid(kind: int, buf: np.ndarray, start: int, end: int, seed: int) -> np.uint64:
    """:func:`hash_span` for a ``kind`` already validated: no raise, so prange stays parallel."""
    if kind == HASH_XXH3:
        return _xxh3_64_inline(buf, start, end, seed)
    if kind == HASH_CRC32:
        return _crc32_inline(buf, start, end, seed)
    return _rabin_karp_inline(buf, start, end, seed)


@njit(cache=True)
def _hash_range(
    kind: int,
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    seed: int,
    out: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """``out[j] = hash of span j`` for ``lo <= j < hi`` (one thread's share of the work)."""
    for j in range(lo, hi):
        out[j] = _dispatch_valid(kind, buf, starts[j], ends[j], seed)


@njit(cache=True, parallel=True, nogil=True)
def hash_spans(
    kind: int, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, seed: int
) -> np.ndarray:
    """Fingerprint every span ``buf[starts[j]:ends[j]]``, in parallel; returns uint64[m].

    The bulk path for shingle hashing: one compiled call, spans spread over numba's threads
    in chunks of ``_CHUNK``.  Result ``j`` equals ``hash_span(kind, buf, starts[j], ends[j],
    seed)``.  Fewer than ``PARALLEL_MIN_SPANS`` spans are hashed on the calling thread:
    waking the thread pool costs more than hashing them.  (The per-chunk call keeps the
    parallel loop body tiny, which makes the parfor compile several times faster than
    with the kernels inlined into it.)
    """
    if kind < HASH_XXH3 or kind > HASH_RABIN:
        raise ValueError("unknown hash kind; expected HASH_XXH3, HASH_CRC32 or HASH_RABIN")
    m = starts.shape[0]
    if ends.shape[0] != m:
        raise ValueError("starts and ends must have the same length")
    out = np.empty(m, dtype=np.uint64)
    if m < PARALLEL_MIN_SPANS:
        _hash_range(kind, buf, starts, ends, seed, out, 0, m)
        return out
    n_chunks = (m + _CHUNK - 1) // _CHUNK
    for c in prange(n_chunks):
        lo = c * _CHUNK
        _hash_range(kind, buf, starts, ends, seed, out, lo, min(lo + _CHUNK, m))
    return out
