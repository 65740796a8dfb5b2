"""A very long text's shingle set, made window by window, equals the whole-text kernel's."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.fingerprint_kernels import fingerprint_texts
from neardup.fingerprints.hashing import kernel_hash
from neardup.fingerprints.longtext import LONG_TEXT, windowed_fingerprints
from neardup.fingerprints.shingles import fingerprint_batch, fingerprints_and_words
from neardup.fingerprints.word_kernels import word_sets_of
from neardup.text import canon
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

WORDS = [
    *[
        "the",
        "a",
        "of",
        "and",
        "Rose",
        "is",
        "été",
        "ÉTÉ",
        "straße",
        ",",
        ".",
        "!",
        "42",
        "x-y",
        "½",
        "ﬁ",
        "the",
        "the",
        "a",
    ],
    "don't",
]
HAN = ["中文", "字", "。", "的", "我们"]


def _prepared(texts: list[str], config: TextConfig) -> tuple[canon.TokenizerInput, tuple]:
    raw = np.frombuffer("".join(texts).encode(), dtype=np.uint8)
    sizes = [len(t.encode()) for t in texts]
    ends = np.cumsum(sizes)
    starts = ends - np.array(sizes)
    prepared, _ = canon.tokenizer_input(raw, starts, ends, config.canon, config.shingle.unit, texts)
    sh = config.shingle
    return prepared, ((sh.size, sh.step, sh.han_units), kernel_hash(sh.hash, sh.seed))


def _windowed(text: str, config: TextConfig, window: int, overlap: int):
    prepared, (shape, hashing) = _prepared([text], config)
    return windowed_fingerprints(
        prepared.arrays(), 0, prepared.split_han, shape, hashing, window, overlap
    )


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS + HAN[:1]), min_size=40, max_size=500),
    size=st.integers(1, 6),
    step=st.integers(1, 3),
    unit=st.sampled_from(["word", "auto"]),
    stopwords=st.booleans(),
    window=st.integers(20, 400),
    overlap=st.integers(4, 120),
)
def test_windows_give_the_whole_texts_set_and_counts(
    words, size, step, unit, stopwords, window, overlap
):
    text = " ".join(words)
    shingle = ShingleConfig(unit=unit, size=size, step=step)
    config = TextConfig(CanonConfig(stopwords=stopwords), shingle)
    got = _windowed(text, config, window, overlap)
    if got is None:  # not shown equal: the caller takes the whole text
        return
    want = fingerprint_batch([text], config)
    assert got[0].dtype == np.uint64
    assert got[1].dtype == np.uint32
    assert np.array_equal(got[0], want.values)
    assert np.array_equal(got[1], want.counts)


def test_most_texts_of_words_are_made_in_windows():
    rng = np.random.default_rng(3)
    config = TextConfig()
    made = sum(
        _windowed(" ".join(rng.choice(WORDS, 400)), config, 300, 60) is not None for _ in range(20)
    )
    assert made == 20


def test_han_clauses_are_left_to_the_whole_text_kernel():
    text = " ".join(["我们 的 中文 。"] * 200)
    assert _windowed(text, TextConfig(shingle=ShingleConfig(unit="auto")), 100, 30) is None


def test_a_text_without_spaces_is_left_to_the_whole_text_kernel():
    assert _windowed("x" * 5000, TextConfig(), 300, 60) is None


def test_a_batch_with_a_long_text_equals_the_whole_text_kernel():
    rng = np.random.default_rng(11)
    vocab = np.array([f"w{i}" for i in range(5000)] + WORDS)
    long = " ".join(rng.choice(vocab, LONG_TEXT // 4))
    assert len(long.encode()) > LONG_TEXT
    texts = ["a short text here", long, "", "another short one, with words"]
    config = TextConfig()
    got = fingerprint_batch(texts, config)
    prepared, (shape, hashing) = _prepared(texts, config)
    whole = fingerprint_texts(prepared.arrays(), prepared.split_han, False, shape, hashing, 1)
    for mine, kernel in zip((got.values, got.offsets, got.counts), whole, strict=True):
        assert np.array_equal(mine, kernel)
    assert got.sizes()[1] > 1000
    prints, words = fingerprints_and_words(*canon.split_texts(texts), config)
    assert np.array_equal(prints.values, got.values)
    whole_words = fingerprint_texts(
        prepared.arrays(), prepared.split_han, False, shape, hashing, 1, True
    )[3:]
    sets, whole_sets = word_sets_of(*words), word_sets_of(*whole_words)  # lists, made sets
    assert all(np.array_equal(m, k) for m, k in zip(sets, whole_sets, strict=True))
    assert (
        np.diff(words[1])[1] > 0
    )  # the long text has words (its "w123" tokens are not), made in windows


@settings(max_examples=100, deadline=None)
@given(
    a=st.lists(st.integers(0, 50), max_size=30),
    b=st.lists(st.integers(0, 50), max_size=30),
)
def test_merging_two_counted_sets_sums_the_counts_of_shared_values(a, b):
    from neardup.fingerprints.merge_kernels import merge_counted

    def counted(xs: list[int]) -> tuple[np.ndarray, np.ndarray]:
        values, counts = np.unique(np.array(xs, dtype=np.uint64), return_counts=True)
        return values.astype(np.uint64), counts.astype(np.uint32)

    values, counts = merge_counted(*counted(a), *counted(b))
    want_values, want_counts = counted(a + b)
    assert np.array_equal(values, want_values)
    assert np.array_equal(counts, want_counts)


def test_a_windows_set_is_held_without_the_windows_arrays():
    # a repeated text has a few distinct fingerprints per window: holding those must not hold
    # each window's whole array of hashes (one window's worth of memory each, to the end)
    from neardup.fingerprints.longtext import _Distinct

    found = _Distinct()
    window = np.tile(np.arange(10, dtype=np.uint64), 100_000)
    for _ in range(3):
        found.add(window.copy())
    held = [a for pair in found._pending for a in pair]
    assert sum(a.nbytes if a.base is None else a.base.nbytes for a in held) < 1000
    values, counts = found.result()
    assert values.tolist() == list(range(10))
    assert counts.tolist() == [300_000] * 10
