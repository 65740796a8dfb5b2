"""Public fingerprint facade: algorithms by name, validation, stability across processes."""

import json
import subprocess
import sys
import zlib
from typing import get_args

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.fingerprints.hash_kernels import HASH_CRC32, HASH_RABIN, HASH_XXH3
from neardup.fingerprints.hashing import HASH_KINDS, HashName, fingerprint, fingerprint_spans
from neardup.text.text_config import HASH_NAMES

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
U64 = (1 << 64) - 1
RABIN_B = 0x9E3779B97F4A7C15


def rabin_reference(data: bytes, seed: int) -> int:
    h = seed
    for b in data:
        h = (h * RABIN_B + b + 1) % (1 << 64)
    return h


REFERENCE = {
    "xxh3": xxhash.xxh3_64_intdigest,
    "crc32": lambda data, seed: zlib.crc32(data, seed & 0xFFFFFFFF),
    "rabin": rabin_reference,
}


def test_names_and_kinds():
    assert HASH_KINDS == {"xxh3": HASH_XXH3, "crc32": HASH_CRC32, "rabin": HASH_RABIN}
    assert get_args(HashName) == tuple(HASH_KINDS)
    assert tuple(HASH_KINDS) == HASH_NAMES  # the config accepts exactly these


@pytest.mark.parametrize("algorithm", list(HASH_KINDS))
def test_str_is_hashed_as_utf8(algorithm):
    text = "Съешь же ещё этих мягких французских булок 中文 🙂"
    assert fingerprint(text, algorithm, 3) == fingerprint(text.encode("utf-8"), algorithm, 3)


def test_default_algorithm_is_xxh3_seed_0():
    assert fingerprint("hello") == xxhash.xxh3_64_intdigest(b"hello")


@pytest.mark.parametrize("data", [bytearray(b"abc"), memoryview(b"abc")])
def test_bytes_like_inputs(data):
    assert fingerprint(data) == fingerprint(b"abc")


@FAST
@given(
    data=st.binary(max_size=600) | st.text(max_size=200),
    algorithm=st.sampled_from(list(HASH_KINDS)),
    seed=st.integers(0, U64),
)
def test_fingerprint_matches_references(data, algorithm, seed):
    raw = data.encode("utf-8") if isinstance(data, str) else data
    got = fingerprint(data, algorithm, seed)
    assert type(got) is int
    assert got == REFERENCE[algorithm](raw, seed)


@pytest.mark.parametrize("algorithm", ["xxh64", "XXH3", "", None, 0])
def test_unknown_algorithm_is_a_config_error_naming_value_and_choices(algorithm):
    with pytest.raises(ConfigError) as err:
        fingerprint(b"x", algorithm)
    assert repr(algorithm) in str(err.value)
    assert "xxh3, crc32, rabin" in str(err.value)
    with pytest.raises(ConfigError):
        fingerprint_spans(np.zeros(3, np.uint8), [0], [1], algorithm)


@pytest.mark.parametrize("seed", [-1, 1 << 64, 1.0, True, "1", None])
def test_bad_seed_is_a_config_error(seed):
    with pytest.raises(ConfigError, match="seed"):
        fingerprint(b"x", "xxh3", seed)
    with pytest.raises(ConfigError, match="seed"):
        fingerprint_spans(np.zeros(3, np.uint8), [0], [1], "xxh3", seed)


def test_numpy_integer_seed_is_accepted():
    assert fingerprint(b"x", "xxh3", np.uint64(U64)) == xxhash.xxh3_64_intdigest(b"x", U64)


def test_non_bytes_data_is_a_type_error():
    with pytest.raises(TypeError, match="bytes or str"):
        fingerprint(123)  # type: ignore[arg-type]


# ---------------------------------------------------------------- spans


@FAST
@given(
    data=st.binary(min_size=1, max_size=800),
    algorithm=st.sampled_from(list(HASH_KINDS)),
    seed=st.integers(0, U64),
    cuts=st.lists(st.tuples(st.integers(0, 800), st.integers(0, 800)), max_size=50),
)
def test_fingerprint_spans_equals_fingerprint_of_each_span(data, algorithm, seed, cuts):
    n = len(data)
    spans = [tuple(sorted((a % (n + 1), b % (n + 1)))) for a, b in cuts]
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    got = fingerprint_spans(buf, starts, ends, algorithm, seed)
    assert got.dtype == np.uint64
    assert got.tolist() == [fingerprint(data[s:e], algorithm, seed) for s, e in spans]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.intp])
def test_any_integer_dtype_for_bounds(dtype):
    data = b"0123456789abcdef0123456789"
    buf = np.frombuffer(data, dtype=np.uint8)
    got = fingerprint_spans(buf, np.array([0, 5], dtype=dtype), np.array([26, 21], dtype=dtype))
    assert got.tolist() == [xxhash.xxh3_64_intdigest(data), xxhash.xxh3_64_intdigest(data[5:21])]


def test_lists_are_accepted_for_bounds():
    buf = np.frombuffer(b"abcdef", dtype=np.uint8)
    assert fingerprint_spans(buf, [1], [4]).tolist() == [fingerprint(b"bcd")]


def test_no_spans_gives_empty_uint64_array():
    out = fingerprint_spans(np.zeros(3, np.uint8), np.empty(0, np.int64), np.empty(0, np.int64))
    assert out.dtype == np.uint64
    assert out.shape == (0,)


def test_non_contiguous_buffer_is_hashed_by_value():
    data = np.arange(64, dtype=np.uint8)
    strided = data[::2]
    got = fingerprint_spans(strided, [0], [32])
    assert got.tolist() == [xxhash.xxh3_64_intdigest(strided.tobytes())]


@pytest.mark.parametrize(
    ("buf", "starts", "ends", "message"),
    [
        (np.zeros(8, np.int8), [0], [1], "buf must be a 1-d uint8 array"),
        (np.zeros((2, 4), np.uint8), [0], [1], "buf must be a 1-d uint8 array"),
        (b"bytes", [0], [1], "buf must be a 1-d uint8 array"),
        (np.zeros(8, np.uint8), [0.0], [1], "starts must be a 1-d integer array"),
        (np.zeros(8, np.uint8), [0], [[1]], "ends must be a 1-d integer array"),
        (np.zeros(8, np.uint8), [0, 1], [1], "differ in length"),
        (np.zeros(8, np.uint8), [0, -1], [1, 2], "starts before the buffer"),
        (np.zeros(8, np.uint8), [0, 1], [1, 9], r"ends past the buffer: ends\[1\] = 9"),
        (np.zeros(8, np.uint8), [0, 5], [1, 4], "ends before it starts"),
        (np.zeros(8, np.uint8), np.array([0], np.uint64), np.array([U64], np.uint64), "past"),
    ],
)
def test_span_validation(buf, starts, ends, message):
    with pytest.raises(ValueError, match=message):
        fingerprint_spans(buf, starts, ends)


def test_validation_errors_are_value_errors_and_config_errors_too():
    assert issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------- stability

FIXED = ["", "a", "hello world", "near-duplicate detection", "Ёлка 中文", "x" * 300, "y" * 5000]
_PRINT = """
import json
from neardup.fingerprints.hashing import HASH_KINDS, fingerprint
texts = json.loads({texts!r})
print(json.dumps({{a: [fingerprint(t, a, s) for t in texts for s in (0, 7, 2**64 - 1)]
                  for a in HASH_KINDS}}))
"""


def test_fingerprints_are_identical_in_a_fresh_process():
    code = _PRINT.format(texts=json.dumps(FIXED))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    other = json.loads(out.stdout)
    here = {a: [fingerprint(t, a, s) for t in FIXED for s in (0, 7, U64)] for a in HASH_KINDS}
    assert other == here


def test_pinned_values():
    # Values that must never change (stored fingerprints depend on them).
    assert fingerprint("", "xxh3") == 0x2D06800538D394C2
    assert fingerprint("neardup", "crc32") == zlib.crc32(b"neardup")
    assert fingerprint("", "rabin", 5) == 5
    assert fingerprint("ab", "rabin") == (98 * RABIN_B + 99) % (1 << 64)
