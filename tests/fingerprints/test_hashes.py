"""Compiled span-hash kernels: bit-exact XXH3-64 and CRC-32, the frozen Rabin-Karp definition."""

import zlib

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import types

from neardup.fingerprints.hash_kernels import (
    HASH_CRC32,
    HASH_RABIN,
    HASH_XXH3,
    PARALLEL_MIN_SPANS,
    crc32,
    hash_span,
    hash_spans,
    rabin_karp,
    xxh3_64,
)

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every XXH3 length path and its edges, path by path.
BOUNDARY_LENGTHS = [
    *(0,),  # empty
    *(1, 2, 3),  # 1..3
    *(4, 5, 7, 8),  # 4..8
    *(9, 15, 16),  # 9..16
    *(17, 31, 32, 33, 64, 65, 96, 97, 127, 128),  # 17..128: 1 to 4 pairs of 16-byte chunks
    *(129, 143, 144, 239, 240),  # 129..240
    *(241, 255, 256, 1023, 1024, 1025, 2048, 2049),  # >240: stripes; 1 KiB blocks from 1025
]
MULTI_KB_LENGTHS = [3000, 4096, 4097, 10_000, 65_537]
SEEDS = [0, 1, 0xFFFFFFFF, 1 << 32, 1 << 63, (1 << 64) - 1, 0x0123456789ABCDEF]
U64 = (1 << 64) - 1

seeds = st.integers(min_value=0, max_value=U64)
sizes = st.integers(min_value=0, max_value=1200)
# Lengths spread evenly over 0..1200 (plain st.binary() would mostly give short inputs).
payloads = sizes.flatmap(lambda n: st.binary(min_size=n, max_size=n))
pads = st.integers(min_value=0, max_value=37)

RABIN_B = 0x9E3779B97F4A7C15  # the documented base, restated here on purpose


def rabin_reference(data: bytes, seed: int) -> int:
    """The Rabin-Karp definition of the kernel's docstring, in plain Python."""
    h = seed
    for b in data:
        h = (h * RABIN_B + b + 1) % (1 << 64)
    return h


def embed(data: bytes, before: int = 0, after: int = 0) -> tuple[np.ndarray, int, int]:
    """``data`` placed inside a larger buffer of junk bytes; returns (buf, start, end)."""
    junk = np.random.default_rng(len(data) + before).integers(0, 256, before + after + len(data))
    buf = junk.astype(np.uint8)
    buf[before : before + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return buf, before, before + len(data)


def random_bytes(n: int, seed: int = 12345) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


# ---------------------------------------------------------------- xxh3_64


@pytest.mark.parametrize("n", BOUNDARY_LENGTHS)
@pytest.mark.parametrize("seed", SEEDS)
def test_xxh3_matches_xxhash_at_every_boundary_length(n, seed):
    data = random_bytes(n, seed=n)
    buf, start, end = embed(data, before=5, after=3)
    assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


@pytest.mark.parametrize("n", range(17, 66))
@pytest.mark.parametrize(("before", "after"), [(16, 16), (15, 40), (40, 15), (16, 0)])
def test_xxh3_of_17_to_64_bytes_with_room_around_matches_xxhash(n, before, after):
    """With 16 bytes of buffer either side, 17..64 bytes take the path without a branch on
    the length (bytes around the span read, not counted); with less, the other path."""
    seed = n * 0x9E3779B97F4A7C15 % (1 << 64)
    data = random_bytes(n, seed=n + before)
    buf, start, end = embed(data, before, after)
    assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


@pytest.mark.parametrize("n", MULTI_KB_LENGTHS)
@pytest.mark.parametrize("seed", [0, 7, U64])
def test_xxh3_matches_xxhash_on_multi_kb_inputs(n, seed):
    data = random_bytes(n, seed=n)
    buf, start, end = embed(data, before=13)
    assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


@pytest.mark.parametrize("n", [0, 3, 8, 16, 128, 240, 1024, 1025])
def test_xxh3_constant_bytes(n):
    # All-zero and all-0xFF inputs exercise the carries of the 128-bit multiply.
    for byte in (b"\x00", b"\xff"):
        data = byte * n
        buf, start, end = embed(data)
        for seed in (0, U64):
            assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


@FAST
@given(data=payloads, seed=seeds)
def test_xxh3_matches_xxhash_property(data, seed):
    buf, start, end = embed(data)
    assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


@FAST
@given(data=payloads, seed=seeds, before=pads, after=pads)
def test_xxh3_span_inside_larger_buffer(data, seed, before, after):
    buf, start, end = embed(data, before, after)
    assert xxh3_64(buf, start, end, np.uint64(seed)) == xxhash.xxh3_64_intdigest(data, seed)


def test_xxh3_known_value_of_empty_input():
    # Published XXH3-64 of the empty input with seed 0.
    assert xxh3_64(np.zeros(1, np.uint8), 0, 0, np.uint64(0)) == 0x2D06800538D394C2


def test_xxh3_readonly_buffer():
    data = b"the quick brown fox jumps over the lazy dog"
    buf = np.frombuffer(data, dtype=np.uint8)  # read-only view
    assert not buf.flags.writeable
    assert xxh3_64(buf, 4, 19, np.uint64(9)) == xxhash.xxh3_64_intdigest(data[4:19], 9)


# ---------------------------------------------------------------- crc32


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 8, 9, 11, 12, 15, 16, 17, 100, 1025])
def test_crc32_matches_zlib_at_step_edges(n):
    data = random_bytes(n, seed=n)
    buf, start, end = embed(data, before=3, after=2)
    for init in (0, 1, 0xDEADBEEF, 0xFFFFFFFF):
        assert crc32(buf, start, end, np.uint64(init)) == zlib.crc32(data, init)


@FAST
@given(data=payloads, init=st.integers(0, 0xFFFFFFFF), before=pads, after=pads)
def test_crc32_matches_zlib_property(data, init, before, after):
    buf, start, end = embed(data, before, after)
    assert crc32(buf, start, end, np.uint64(init)) == zlib.crc32(data, init)


def test_crc32_uses_low_32_bits_of_init_like_zlib():
    data = b"neardup"
    buf, start, end = embed(data)
    init = (1 << 40) + 12345
    assert crc32(buf, start, end, np.uint64(init)) == zlib.crc32(data, init & 0xFFFFFFFF)


def test_crc32_continues_a_running_crc():
    data = random_bytes(333)
    buf, _, _ = embed(data)
    head = crc32(buf, 0, 100, np.uint64(0))
    assert crc32(buf, 100, 333, np.uint64(head)) == zlib.crc32(data)


# ---------------------------------------------------------------- rabin_karp


@FAST
@given(data=st.binary(max_size=300), seed=seeds, before=pads, after=pads)
def test_rabin_matches_reference_property(data, seed, before, after):
    buf, start, end = embed(data, before, after)
    assert rabin_karp(buf, start, end, np.uint64(seed)) == rabin_reference(data, seed)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 64, 1000])
def test_rabin_matches_reference_at_unroll_edges(n):
    data = random_bytes(n, seed=n)
    buf, start, end = embed(data, before=1)
    for seed in (0, 42, U64):
        assert rabin_karp(buf, start, end, np.uint64(seed)) == rabin_reference(data, seed)


def test_rabin_small_values_follow_the_definition():
    buf = np.frombuffer(b"\x00\x00a", dtype=np.uint8).copy()
    zero = np.uint64(0)
    assert rabin_karp(buf, 0, 0, np.uint64(77)) == 77
    assert rabin_karp(buf, 2, 3, zero) == ord("a") + 1
    # leading zero bytes count: "\0a" and "\0\0a" differ from "a"
    assert len({rabin_karp(buf, s, 3, zero) for s in (0, 1, 2)}) == 3


def test_rabin_rolls():
    # h(s[1:n+1]) = (h(s[0:n]) - (s0 + 1) * B**(n-1)) * B + (s_n + 1)  (mod 2**64), seed 0.
    data = random_bytes(50)
    buf, _, _ = embed(data)
    n, mod = 20, 1 << 64
    first = rabin_karp(buf, 0, n, np.uint64(0))
    rolled = ((first - (data[0] + 1) * pow(RABIN_B, n - 1, mod)) * RABIN_B + data[n] + 1) % mod
    assert rabin_karp(buf, 1, n + 1, np.uint64(0)) == rolled


# ---------------------------------------------------------------- dispatch


@pytest.mark.parametrize("fn", [xxh3_64, crc32, rabin_karp])
def test_kernels_are_typed_uint64_not_float(fn):
    buf = np.zeros(4, np.uint8)
    fn(buf, 0, 4, np.uint64(1))
    assert all(sig.return_type == types.uint64 for sig in fn.nopython_signatures)


KERNELS = {HASH_XXH3: xxh3_64, HASH_CRC32: crc32, HASH_RABIN: rabin_karp}


@pytest.mark.parametrize("kind", list(KERNELS))
def test_hash_span_dispatches(kind):
    data = random_bytes(300)
    buf, _, _ = embed(data)
    for start, end in [(0, 0), (3, 10), (0, 300), (17, 290)]:
        seed = np.uint64(99)
        assert hash_span(kind, buf, start, end, seed) == KERNELS[kind](buf, start, end, seed)


@pytest.mark.parametrize("kind", [-1, 3, 100])
def test_hash_span_rejects_unknown_kind(kind):
    with pytest.raises(ValueError, match="unknown hash kind"):
        hash_span(kind, np.zeros(4, np.uint8), 0, 4, np.uint64(0))
    with pytest.raises(ValueError, match="unknown hash kind"):
        hash_spans(kind, np.zeros(4, np.uint8), np.zeros(1, np.int64), np.ones(1, np.int64), 0)


def test_hash_spans_rejects_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        hash_spans(HASH_XXH3, np.zeros(4, np.uint8), np.zeros(2, np.int64), np.ones(1, np.int64), 0)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(list(KERNELS)),
    seed=seeds,
    spans=st.lists(st.tuples(st.integers(0, 700), st.integers(0, 300)), max_size=200),
)
def test_hash_spans_equals_per_span_results(kind, seed, spans):
    buf = np.frombuffer(random_bytes(1000), dtype=np.uint8).copy()
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([s + n for s, n in spans], dtype=np.int64)
    seed64 = np.uint64(seed)
    got = hash_spans(kind, buf, starts, ends, seed64)
    assert got.dtype == np.uint64
    assert got.shape == starts.shape
    expected = [KERNELS[kind](buf, s, e, seed64) for s, e in zip(starts, ends, strict=True)]
    assert got.tolist() == expected


def test_hash_spans_many_spans_in_parallel_match_xxhash():
    data = random_bytes(200_000)
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    rng = np.random.default_rng(3)
    m = 10 * PARALLEL_MIN_SPANS
    starts = rng.integers(0, 199_000, m)
    ends = starts + rng.integers(0, 1000, m)
    got = hash_spans(HASH_XXH3, buf, starts, ends, np.uint64(5))
    expected = [xxhash.xxh3_64_intdigest(data[s:e], 5) for s, e in zip(starts, ends, strict=True)]
    assert got.tolist() == expected


@pytest.mark.parametrize("kind", list(KERNELS))
def test_hash_spans_parallel_path_equals_per_span_kernel(kind):
    buf = np.frombuffer(random_bytes(5000), dtype=np.uint8).copy()
    rng = np.random.default_rng(kind)
    m = 3 * PARALLEL_MIN_SPANS + 7
    starts = rng.integers(0, 4900, m)
    ends = starts + rng.integers(0, 100, m)
    seed = np.uint64(U64)
    got = hash_spans(kind, buf, starts, ends, seed)
    expected = [KERNELS[kind](buf, s, e, seed) for s, e in zip(starts, ends, strict=True)]
    assert got.tolist() == expected
