"""The full index and Broder's mod-m and bottom-n samples (neardup.methods.sample).

Statistical tests build pairs of fingerprint sets with a KNOWN overlap directly from seeded
random uint64 values, so the estimators are checked against the truth, not against each
other: over many pairs the mean estimate must lie within 3 standard errors of the mean truth.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.fingerprints import measures
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.sample import (
    BottomN,
    BottomNConfig,
    Full,
    FullConfig,
    ModM,
    ModMConfig,
)
from neardup.text.text_config import ShingleConfig, TextConfig

N_PAIRS = 300


# ---------------------------------------------------------------- building known sets


def batch_of(sets: list[np.ndarray]) -> FingerprintBatch:
    """A FingerprintBatch of the given fingerprint sets (sorted, distinct per document)."""
    docs = [np.unique(np.asarray(s, dtype=np.uint64)) for s in sets]
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([d.size for d in docs], out=offsets[1:])
    values = np.concatenate(docs) if docs else np.empty(0, dtype=np.uint64)
    return FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))


def distinct_random(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` distinct uniform uint64 values in random order."""
    values = np.unique(rng.integers(0, 2**64, size=size + 16, dtype=np.uint64))
    assert values.size >= size  # collisions among 2**64 values: practically never
    return rng.permutation(values)[:size]


def jaccard_pairs(seed: int, jaccard: float) -> tuple[FingerprintBatch, np.ndarray]:
    """N_PAIRS pairs (docs 2i, 2i+1) with unions of 500–2000 values and resemblance ≈ J.

    Returns the batch and every pair's exact resemblance.
    """
    rng = np.random.default_rng(seed)
    sets, truth = [], []
    for _ in range(N_PAIRS):
        union = int(rng.integers(500, 2001))
        shared = round(jaccard * union)
        only_a = int(rng.integers(0, union - shared + 1))
        pool = distinct_random(rng, union)
        a = pool[: shared + only_a]
        b = np.concatenate([pool[:shared], pool[shared + only_a :]])
        sets += [a, b]
        truth.append(measures.resemblance(np.sort(a), np.sort(b)))
    return batch_of(sets), np.array(truth)


def containment_pairs(seed: int, inside: float) -> tuple[FingerprintBatch, np.ndarray]:
    """N_PAIRS pairs where about ``inside`` of A (500–1000 values) lies in a larger B."""
    rng = np.random.default_rng(seed)
    sets, truth = [], []
    for _ in range(N_PAIRS):
        size_a = int(rng.integers(500, 1001))
        size_b = int(rng.integers(2 * size_a, 4 * size_a))
        shared = round(inside * size_a)
        pool = distinct_random(rng, size_a + size_b - shared)
        a = pool[:size_a]
        b = pool[size_a - shared :]
        sets += [a, b]
        truth.append(measures.containment(np.sort(a), np.sort(b)))
    return batch_of(sets), np.array(truth)


def pair_indices() -> tuple[np.ndarray, np.ndarray]:
    left = np.arange(0, 2 * N_PAIRS, 2)
    return left, left + 1


def assert_within_3_se(estimates: np.ndarray, truth: np.ndarray) -> None:
    """Mean error within 3 standard errors, the SE taken from the observed spread."""
    errors = estimates - truth
    se = errors.std(ddof=1) / np.sqrt(errors.size)
    assert se > 0, "estimates without spread: the test would prove nothing"
    assert abs(errors.mean()) <= 3 * se, f"bias {errors.mean():.4f} vs 3·SE {3 * se:.4f}"


# ---------------------------------------------------------------- statistics


@pytest.mark.parametrize(("jaccard", "seed"), [(0.2, 11), (0.5, 12), (0.8, 13)])
def test_modm_resemblance_is_unbiased(jaccard, seed):
    prints, truth = jaccard_pairs(seed, jaccard)
    method = ModM()
    estimates = method.score_pairs(method.sketch(prints), *pair_indices())
    assert_within_3_se(estimates, truth)


@pytest.mark.parametrize(("jaccard", "seed"), [(0.2, 21), (0.5, 22), (0.8, 23)])
def test_bottomn_resemblance_is_unbiased(jaccard, seed):
    prints, truth = jaccard_pairs(seed, jaccard)
    method = BottomN()
    estimates = method.score_pairs(method.sketch(prints), *pair_indices())
    assert_within_3_se(estimates, truth)


def test_plain_jaccard_of_bottomn_samples_is_biased():
    """Why the estimator matters: the samples' own Jaccard is far off at J = 0.5."""
    prints, truth = jaccard_pairs(22, 0.5)
    sigs = BottomN().sketch(prints)
    left, right = pair_indices()
    plain = np.array(
        [measures.resemblance(sigs[i], sigs[j]) for i, j in zip(left, right, strict=True)]
    )
    errors = plain - truth
    assert abs(errors.mean()) > 3 * errors.std(ddof=1) / np.sqrt(errors.size)


@pytest.mark.parametrize(("inside", "seed"), [(0.3, 31), (0.6, 32), (0.9, 33)])
def test_modm_containment_is_unbiased(inside, seed):
    prints, truth = containment_pairs(seed, inside)
    method = ModM()
    estimates = method.containment_pairs(method.sketch(prints), *pair_indices())
    assert_within_3_se(estimates, truth)


def test_modm_sample_size_grows_with_text():
    rng = np.random.default_rng(5)
    prints = batch_of([distinct_random(rng, size) for size in (1000, 10_000, 100_000)])
    sizes = ModM(ModMConfig(m=25)).sketch(prints).sizes()
    np.testing.assert_allclose(sizes, [40, 400, 4000], rtol=0.35)


# ---------------------------------------------------------------- exact behaviour


@pytest.fixture(scope="module")
def random_batch() -> FingerprintBatch:
    """Documents of varied sizes (including empty and tiny) drawn from a shared pool."""
    rng = np.random.default_rng(7)
    pool = distinct_random(rng, 3000)
    sizes = [0, 1, 3, 50, 159, 160, 161, 400, 1200, 2500]
    return batch_of([rng.choice(pool, size, replace=False) for size in sizes])


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    left, right = np.triu_indices(n)
    return left.astype(np.int64), right.astype(np.int64)


def test_full_scores_equal_exact_measures(random_batch):
    method, docs = Full(), random_batch
    sigs = method.sketch(docs)
    left, right = all_pairs(len(docs))
    pairs = list(zip(left, right, strict=True))
    exact_res = [measures.resemblance(docs[i], docs[j]) for i, j in pairs]
    exact_con = [measures.containment(docs[i], docs[j]) for i, j in pairs]
    assert [method.score(sigs[i], sigs[j]) for i, j in pairs] == exact_res
    assert [method.containment(sigs[i], sigs[j]) for i, j in pairs] == exact_con
    np.testing.assert_array_equal(method.score_pairs(sigs, left, right), exact_res)
    np.testing.assert_array_equal(method.containment_pairs(sigs, left, right), exact_con)


def test_full_signature_is_the_fingerprint_set(random_batch):
    sigs = Full().sketch(random_batch)
    np.testing.assert_array_equal(sigs.values, random_batch.values)
    np.testing.assert_array_equal(sigs.offsets, random_batch.offsets)


@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=60),
    st.lists(st.integers(0, 2**64 - 1), max_size=60),
)
@settings(max_examples=200, deadline=None)
def test_full_score_matches_measures_on_any_sets(a, b):
    a = np.unique(np.array(a, dtype=np.uint64))
    b = np.unique(np.array(b, dtype=np.uint64))
    assert Full().score(a, b) == measures.resemblance(a, b)
    assert Full().containment(a, b) == measures.containment(a, b)


@pytest.mark.parametrize("m", [1, 2, 7, 25, 1000])
def test_modm_keeps_exactly_the_multiples_of_m(m):
    rng = np.random.default_rng(m)
    # small values so that multiples of every m occur, plus large random ones
    sets = [
        np.concatenate([rng.choice(5000, 300, replace=False), distinct_random(rng, 300)])
        for _ in range(5)
    ]
    prints = batch_of(sets)
    sigs = ModM(ModMConfig(m=m)).sketch(prints)
    assert len(sigs) == len(prints)
    for d in range(len(prints)):
        doc = prints[d]
        np.testing.assert_array_equal(sigs[d], doc[doc % np.uint64(m) == 0])


def test_modm_handles_the_largest_m():
    prints = batch_of([np.array([0, 5, 2**64 - 1], dtype=np.uint64)])
    sigs = ModM(ModMConfig(m=2**64 - 1)).sketch(prints)
    np.testing.assert_array_equal(sigs[0], np.array([0, 2**64 - 1], dtype=np.uint64))


def test_modm_short_text_warns_once_and_scores_zero():
    m = 25
    keeps = np.array([25, 50, 75, 100, 101, 102], dtype=np.uint64)
    short = np.array([1, 2, 3], dtype=np.uint64)
    prints = batch_of([keeps, short, short + 3, keeps])
    method = ModM(ModMConfig(m=m))
    with pytest.warns(WeakSignatureWarning, match=r"2 of 4 document.*smaller m") as record:
        sigs = method.sketch(prints)
    assert len([w for w in record if w.category is WeakSignatureWarning]) == 1
    assert sigs.sizes().tolist() == [4, 0, 0, 4]
    assert method.score(sigs[1], sigs[0]) == 0.0
    assert method.score(sigs[1], sigs[2]) == 0.0  # even two identical-sized empty samples
    assert method.containment(sigs[1], sigs[0]) == 0.0
    np.testing.assert_array_equal(method.score_pairs(sigs, [1, 1, 0], [0, 1, 3]), [0.0, 0.0, 1.0])


def test_modm_empty_documents_do_not_warn():
    """A text with no shingles at all is not a mod-m weakness: a smaller m would not help."""
    prints = batch_of([np.array([], dtype=np.uint64), np.array([25, 50], dtype=np.uint64)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigs = ModM().sketch(prints)
    assert sigs.sizes().tolist() == [0, 2]


def test_bottomn_of_a_small_set_is_the_set(random_batch):
    sigs = BottomN(BottomNConfig(n=160)).sketch(random_batch)
    for d in range(len(random_batch)):
        doc = random_batch[d]
        expected = doc if doc.size <= 160 else doc[:160]
        np.testing.assert_array_equal(sigs[d], expected)
        np.testing.assert_array_equal(sigs[d], np.sort(doc)[:160])


def test_bottomn_is_exact_when_both_sets_are_small():
    rng = np.random.default_rng(3)
    pool = distinct_random(rng, 300)
    a, b = np.sort(pool[:120]), np.sort(pool[60:200])  # union 200 > n, both below n
    method = BottomN(BottomNConfig(n=160))
    sigs = method.sketch(batch_of([a, b]))
    assert method.score(sigs[0], sigs[1]) == measures.resemblance(a, b)


def test_bottomn_estimate_by_hand():
    """n = 4: bottom_4(A ∪ B) = {1, 2, 3, 4}; of those, 1 and 3 are in both: 2 / 4."""
    method = BottomN(BottomNConfig(n=4))
    sigs = method.sketch(batch_of([[1, 2, 3, 5, 8], [1, 3, 4, 5, 9]]))
    np.testing.assert_array_equal(sigs[0], [1, 2, 3, 5])
    np.testing.assert_array_equal(sigs[1], [1, 3, 4, 5])
    assert method.score(sigs[0], sigs[1]) == 0.5  # the samples' plain Jaccard would be 3/5


def broder_reference(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """|bottom_n(A∪B) ∩ A ∩ B| / |bottom_n(A∪B)| with sets, straight from the definition."""
    sample_a, sample_b = np.sort(a)[:n], np.sort(b)[:n]
    union = np.union1d(sample_a, sample_b)
    both_whole = a.size < n and b.size < n  # then the score is the exact resemblance
    bottom = union if both_whole else union[:n]
    both = np.intersect1d(sample_a, sample_b)
    return np.isin(bottom, both).sum() / bottom.size if bottom.size else 0.0


@given(
    st.sets(st.integers(0, 300), max_size=80),
    st.sets(st.integers(0, 300), max_size=80),
    st.integers(1, 60),
)
@settings(max_examples=300, deadline=None)
def test_bottomn_matches_the_definition(a, b, n):
    a = np.array(sorted(a), dtype=np.uint64)
    b = np.array(sorted(b), dtype=np.uint64)
    method = BottomN(BottomNConfig(n=n))
    sigs = method.sketch(batch_of([a, b]))
    expected = broder_reference(a, b, n)
    assert method.score(sigs[0], sigs[1]) == pytest.approx(expected)
    assert method.score_pairs(sigs, [0], [1])[0] == pytest.approx(expected)


@pytest.mark.parametrize("method", [Full(), ModM(ModMConfig(m=3)), BottomN(BottomNConfig(n=40))])
def test_score_pairs_agrees_with_score(method, random_batch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSignatureWarning)
        sigs = method.sketch(random_batch)
    left, right = all_pairs(len(sigs))
    expected = [method.score(sigs[i], sigs[j]) for i, j in zip(left, right, strict=True)]
    got = method.score_pairs(sigs, left, right)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)
    diagonal = got[left == right]
    sizes = sigs.sizes()
    np.testing.assert_array_equal(diagonal, np.where(sizes > 0, 1.0, 0.0))


@pytest.mark.parametrize("method", [Full(), ModM(), BottomN()])
def test_empty_batch(method):
    sigs = method.sketch(batch_of([]))
    assert len(sigs) == 0
    assert method.keys(sigs).keys.size == 0
    assert method.score_pairs(sigs, [], []).size == 0


def test_keys_are_the_sampled_values(random_batch):
    method = BottomN(BottomNConfig(n=10))
    sigs = method.sketch(random_batch)
    keys = method.keys(sigs)
    assert keys.keys.dtype == np.uint64
    assert keys.docs.dtype == np.int64
    for d in range(len(sigs)):
        np.testing.assert_array_equal(keys.keys[keys.docs == d], sigs[d])


def test_pair_indices_are_checked(random_batch):
    sigs = Full().sketch(random_batch)
    with pytest.raises(IndexError):
        Full().score_pairs(sigs, [0], [len(random_batch)])
    with pytest.raises(IndexError):
        BottomN().score_pairs(BottomN().sketch(random_batch), [-1], [0])
    with pytest.raises(ValueError, match="one length"):
        Full().score_pairs(sigs, [0, 1], [0])


# ---------------------------------------------------------------- configs


@pytest.mark.parametrize(
    ("config_class", "params", "named"),
    [
        (ModMConfig, {"m": 0}, "m=0"),
        (ModMConfig, {"m": -3}, "m=-3"),
        (ModMConfig, {"m": "x"}, "m='x'"),
        (ModMConfig, {"m": 2.5}, "m=2.5"),
        (ModMConfig, {"m": True}, "m=True"),
        (ModMConfig, {"m": 2**64}, "m="),
        (BottomNConfig, {"n": 0}, "n=0"),
        (BottomNConfig, {"n": -1}, "n=-1"),
        (BottomNConfig, {"n": "160"}, "n='160'"),
    ],
)
def test_bad_parameters_are_config_errors(config_class, params, named):
    with pytest.raises(ConfigError, match=named):
        config_class(**params)


def test_method_rejects_a_foreign_config():
    with pytest.raises(ConfigError, match="ModMConfig"):
        ModM(BottomNConfig())  # type: ignore[arg-type]


def test_configs_are_frozen_and_identify_the_method():
    with pytest.raises(AttributeError):
        ModMConfig().m = 3  # type: ignore[misc]
    ids = {Full().config_id, ModM().config_id, BottomN().config_id}
    assert len(ids) == 3
    assert ModM(ModMConfig(m=25)).config_id == ModM().config_id
    assert ModM(ModMConfig(m=26)).config_id != ModM().config_id
    assert Full(FullConfig()).config_id == Full().config_id
    other_text = TextConfig(shingle=ShingleConfig(size=5))
    assert Full(text=other_text).config_id != Full().config_id


def test_other_config_signatures_are_refused(random_batch):
    mine, theirs = ModM(ModMConfig(m=3)), ModM(ModMConfig(m=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSignatureWarning)
        foreign = theirs.sketch(random_batch)
    with pytest.raises(SignatureError, match="another config"):
        mine.score_pairs(foreign, [0], [1])
    with pytest.raises(SignatureError):
        mine.containment_pairs(foreign, [0], [1])
    with pytest.raises(SignatureError):
        mine.keys(foreign)
    with pytest.raises(SignatureError):
        BottomN().score_pairs(Full().sketch(random_batch), [0], [1])
