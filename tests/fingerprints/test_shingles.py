"""Shingles and fingerprints: sets, sizes, steps, the short-text rule, hash functions."""

import subprocess
import sys
import zlib

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.shingles import (
    fingerprint_batch,
    fingerprint_utf8,
    fingerprints,
    is_han,
    iter_fingerprint_batches,
    mark_han,
    shingle_fingerprints,
    shingles,
)
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

RAW = CanonConfig.profile("none", lowercase=True)


def cfg(canon=RAW, **shingle):
    return TextConfig(canon, ShingleConfig(**shingle))


def test_a_rose_is_a_rose_gives_five_shingles_three_distinct():
    text = "a rose is a rose is a rose"
    found = [s.text for s in shingles(text, cfg(size=4))]
    assert found == ["a rose is a", "rose is a rose", "is a rose is"]
    assert fingerprints(text, cfg(size=4)).size == 3


def test_overlapping_shingles_count_n_minus_w_plus_one():
    words = [f"w{i}" for i in range(10)]
    assert len(shingles(" ".join(words), cfg(size=3))) == 8


def test_step_skips_shingle_starts():
    found = [s.text for s in shingles("a b c d e f g", cfg(size=2, step=3))]
    assert found == ["a b", "d e"]  # starts 0 and 3; a start at 6 would lack a second word


def test_short_text_gives_one_shingle_of_all_its_words_and_empty_gives_none():
    assert [s.text for s in shingles("two words", cfg(size=4))] == ["two words"]
    assert [s.text for s in shingles("exactly four words here", cfg(size=4))] == [
        "exactly four words here"
    ]
    assert fingerprints("", cfg()).size == 0
    assert fingerprints("   \n", cfg()).size == 0


def test_character_shingles():
    found = [s.text for s in shingles("abcab", cfg(unit="char", size=3))]
    assert found == ["abc", "bca", "cab"]
    assert [s.text for s in shingles("ab", cfg(unit="char", size=5))] == ["ab"]


def test_character_shingles_of_chinese_span_code_points_not_bytes():
    config = TextConfig(CanonConfig(), ShingleConfig(unit="char", size=2))
    found = [s.text for s in shingles("春眠不觉晓", config)]
    assert found == ["春眠", "眠不", "不觉", "觉晓"]


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("xxh3", lambda b: xxhash.xxh3_64_intdigest(b)),
        ("crc32", lambda b: zlib.crc32(b)),
    ],
)
def test_fingerprints_are_the_hash_of_the_shingle_text_moved_into_the_han_region(name, reference):
    for unit, text in (
        ("word", "Съешь же ещё этих мягких французских булок"),
        ("auto", "春眠不觉晓"),
    ):
        found = shingles(text, cfg(unit=unit, size=3, hash=name))
        assert found
        han = np.full(len(found), unit == "auto")
        hashes = np.array([reference(s.text.encode()) for s in found], dtype=np.uint64)
        assert [s.fingerprint for s in found] == mark_han(hashes, han).tolist()
        assert is_han(np.array([s.fingerprint for s in found], dtype=np.uint64)).tolist() == list(
            han
        )


def test_the_han_mark_moves_few_other_fingerprints_and_keeps_every_bit_uniform():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 1 << 63, 200_000, dtype=np.uint64) * np.uint64(2)
    raw += rng.integers(0, 2, raw.size, dtype=np.uint64)
    han = rng.random(raw.size) < 0.5
    marked = mark_han(raw.copy(), han)
    assert is_han(marked).tolist() == han.tolist()
    assert (marked[~han] != raw[~han]).mean() < 0.001  # 1 in 4096 moved out of the region
    bits = (marked[han][:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    assert np.abs(bits.mean(axis=0) - 0.5).max() < 0.01


@pytest.mark.parametrize("unit", ["auto", "char"])
def test_only_shingles_of_han_characters_alone_carry_the_han_bit(unit):
    found = shingles("春眠不觉晓，x，处处闻啼鸟。abc def", cfg(CanonConfig(), unit=unit, size=3))
    flagged = {s.text for s in found if is_han(np.array([s.fingerprint], dtype=np.uint64))[0]}
    assert flagged == {s.text for s in found if all("\u4e00" <= c <= "\u9fff" for c in s.text)}
    assert flagged
    assert len(flagged) < len(found)


def test_rabin_fingerprints_differ_from_the_others_and_are_deterministic():
    text = "the quick brown fox jumps over the lazy dog"
    rabin = fingerprints(text, cfg(hash="rabin"))
    assert rabin.size == 6
    assert not np.array_equal(rabin, fingerprints(text, cfg(hash="xxh3")))
    assert np.array_equal(rabin, fingerprints(text, cfg(hash="rabin")))


def test_seed_changes_fingerprints():
    text = "one two three four five"
    assert not np.array_equal(fingerprints(text, cfg(seed=1)), fingerprints(text, cfg(seed=2)))


def test_batch_values_are_sorted_distinct_sets_with_counts():
    batch = fingerprint_batch(["x y x y x y", "", "p q r s"], cfg(size=2))
    assert list(batch.sizes()) == [2, 0, 3]
    for d in range(3):
        assert np.all(np.diff(batch[d].astype(np.float64)) > 0)
    assert sorted(batch.counts[batch.offsets[0] : batch.offsets[1]].tolist()) == [2, 3]


def test_fingerprints_are_the_same_in_another_process():
    text = "Fingerprints must never depend on the process: Ёж, 北京, café."
    code = (
        "from neardup.fingerprints.shingles import fingerprints;"
        f"print(','.join(map(str, fingerprints({text!r}).tolist())))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ",".join(map(str, fingerprints(text).tolist()))


def test_streaming_batches_equal_one_batch():
    texts = [f"document number {i} says {i % 7} things" for i in range(50)]
    whole = fingerprint_batch(texts)
    parts = list(iter_fingerprint_batches(texts, batch_size=7))
    assert len(parts) == 8
    flat = [p[d] for p in parts for d in range(len(p))]
    assert all(np.array_equal(flat[i], whole[i]) for i in range(50))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.text(alphabet="ab cд北\n", max_size=30), min_size=1, max_size=6),
    st.integers(1, 5),
    st.integers(1, 3),
)
def test_batch_equals_plain_python_reference(texts, size, step):
    """The compiled path agrees with a direct Python definition of word shingle sets."""
    config = cfg(size=size, step=step)
    batch = fingerprint_batch(texts, config)
    for d, text in enumerate(texts):
        words = text.lower().split()
        if not words:
            expected = set()
        elif len(words) <= size:
            expected = {" ".join(words)}
        else:
            expected = {
                " ".join(words[i : i + size]) for i in range(0, len(words) - size + 1, step)
            }
        raw = np.array([xxhash.xxh3_64_intdigest(s.encode()) for s in expected], np.uint64)
        han = np.full(raw.size, set(words) == {"北"})  # the text is one Han clause
        hashes = set(mark_han(raw, han).tolist())
        assert set(batch[d].tolist()) == hashes


def test_auto_unit_takes_words_for_spaced_languages_and_characters_for_chinese():
    config = TextConfig(CanonConfig(stopwords=False), ShingleConfig(unit="auto", size=2))
    batch_words = [s.text for s in shingles("red fox runs", config)]
    assert batch_words == ["red fox", "fox runs"]
    assert [s.text for s in shingles("春眠不觉", config)] == ["春眠", "眠不", "不觉"]


def _mark_han_reference(hashes: np.ndarray, han: np.ndarray) -> np.ndarray:
    """The Han mark in NumPy, as first defined (the compiled pass must equal it bit for bit)."""
    mix = np.uint64(0x9E3779B97F4A7C15)
    unmix = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
    image = hashes * mix
    inside = (image >> np.uint64(52)) == np.uint64(0xFFF)
    move = han != inside
    image[han] |= np.uint64(0xFFF << 52)
    image[~han & inside] &= ~np.uint64(1 << 52)
    out = hashes.copy()
    out[move] = image[move] * unmix
    return out


@given(seed=st.integers(0, 2**32 - 1), size=st.integers(0, 3000))
@settings(max_examples=60, deadline=None)
def test_the_compiled_han_mark_is_the_reference(seed, size):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**64 - 1, size, dtype=np.uint64, endpoint=True)
    raw[: size // 3] = _mark_han_reference(raw[: size // 3], np.ones(size // 3, bool))  # inside
    han = rng.random(size) < 0.5
    expected = _mark_han_reference(raw, han)
    assert mark_han(raw.copy(), han).tolist() == expected.tolist()


_UTF8_ALPHABET = "ab é<>&[{'\n>\x00жД北京。，ﬁＡ\u00a0"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet=_UTF8_ALPHABET, max_size=40), min_size=1, max_size=8),
    st.sampled_from([TextConfig(), TextConfig(shingle=ShingleConfig(unit="char", size=3))]),
    st.integers(0, 3),
)
def test_fingerprints_of_utf8_equal_those_of_the_strings(texts, config, gap):
    """Texts given as UTF-8 spans (with any bytes between them) fingerprint as the strings do."""
    encoded = [t.encode() for t in texts]
    filler = b"<\x00>"[:gap]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    starts = np.cumsum(lengths + gap) - lengths - gap
    buf = np.frombuffer(b"".join(e + filler for e in encoded), dtype=np.uint8)
    got = fingerprint_utf8(buf, starts, starts + lengths, config)
    want = fingerprint_batch(texts, config)
    for name in ("values", "offsets", "counts"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet=_UTF8_ALPHABET, max_size=60), min_size=1, max_size=6),
    st.sampled_from(
        [
            ShingleConfig(),
            ShingleConfig(unit="char", size=3),
            ShingleConfig(size=2, step=2),
            ShingleConfig(hash="crc32", seed=7),
        ]
    ),
)
def test_the_one_pass_fingerprints_are_the_hashed_marked_spans(texts, shingle):
    """fingerprint_tokens (spans hashed in one pass, never stored) = shingle_fingerprints
    (spans stored, then hashed and Han-marked), before the per-document sets."""
    from neardup.fingerprints.hashing import kernel_hash
    from neardup.fingerprints.shingle_kernels import shingle_hashes, shingle_offsets
    from neardup.text.canon import canonicalize_batch

    tokens = canonicalize_batch(texts, CanonConfig(), shingle.unit)
    want, _, _, want_offsets = shingle_fingerprints(tokens, shingle)
    shape = (shingle.size, shingle.step, shingle.han_units)
    arrays = tokens.shingle_input(shingle.unit)
    offsets = shingle_offsets(arrays, *shape)
    got = shingle_hashes(arrays, offsets, *shape, *kernel_hash(shingle.hash, shingle.seed))
    assert offsets.tolist() == want_offsets.tolist()
    assert got.tolist() == want.tolist()


_WORDS = st.text(alphabet="aB é ßΐ жД北京。，ﬁ\u00ad\n.", max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_WORDS, min_size=1, max_size=10),
    st.sampled_from(
        [
            TextConfig(),
            TextConfig(shingle=ShingleConfig(unit="word", size=2, step=2)),
            TextConfig(shingle=ShingleConfig(unit="char", size=3)),
            TextConfig(shingle=ShingleConfig(unit="auto", size=3, hash="crc32", seed=5)),
            TextConfig(CanonConfig(stopwords=False, lowercase=False), ShingleConfig(size=1)),
            TextConfig(shingle=ShingleConfig(unit="word", size=3, hash="rabin")),
        ]
    ),
    st.sampled_from([1, 2, 5]),
)
def test_the_fused_pass_equals_tokens_then_shingle_sets(texts, config, parts):
    """The fused kernel (tokens, shingles, hashes and sets per document in one compiled
    pass, cut into ``parts`` tasks whose results are packed) = fingerprint_tokens of the
    canonical batch (each step over the whole batch); fingerprint_batch takes it."""
    from neardup.fingerprints.fingerprint_kernels import fingerprint_texts
    from neardup.fingerprints.hashing import kernel_hash
    from neardup.fingerprints.shingles import fingerprint_tokens
    from neardup.text import canon

    shingle = config.shingle
    want = fingerprint_tokens(canon.canonicalize_batch(texts, config.canon, shingle.unit), shingle)
    prepared, _ = canon.tokenizer_input(*canon.split_texts(texts), config.canon, shingle.unit)
    got = fingerprint_texts(
        prepared.arrays(),
        prepared.split_han,
        shingle.unit == "char",
        (shingle.size, shingle.step, shingle.han_units),
        kernel_hash(shingle.hash, shingle.seed),
        parts,
    )
    batch = fingerprint_batch(texts, config)
    for name, array in zip(("values", "offsets", "counts"), got, strict=True):
        assert array.tolist() == getattr(want, name).tolist()
        assert getattr(batch, name).tolist() == getattr(want, name).tolist()
