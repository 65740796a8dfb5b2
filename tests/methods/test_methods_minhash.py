"""MinHash sketch, estimates, LSH banding and parameter choice (neardup.methods.minhash).

Statistical tests use fingerprint sets of KNOWN resemblance built directly from fixed-seed
random uint64 arrays, and accept results within 3σ (the seeds are fixed, so they are exact
regression tests too).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig, deduplicate
from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods import get_method
from neardup.methods.base import Method, deserialize, serialize
from neardup.methods.minhash import (
    MinHash,
    MinHashConfig,
    candidate_probability,
    min_hashes,
    optimal_bands,
    permutation_family,
    recall_bands,
    target_resemblance,
)
from neardup.methods.minhash_kernels import _TILE, EMPTY, TAG_BAND, hash_words
from textgen import near_copies

MASK = (1 << 64) - 1


def known_pairs(n_pairs: int, resemblance: float, union: int = 4000, seed: int = 0):
    """A batch of 2·n_pairs documents; docs 2i and 2i+1 have exactly the given resemblance."""
    shared = round(resemblance * union)
    private = (union - shared) // 2
    assert shared + 2 * private == union, "choose a union that makes the resemblance exact"
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**64, size=(n_pairs, union), dtype=np.uint64)
    a = np.sort(x[:, : shared + private], axis=1)
    b = np.sort(np.hstack([x[:, :shared], x[:, shared + private :]]), axis=1)
    values = np.stack([a, b], axis=1).ravel()
    size = shared + private
    offsets = np.arange(2 * n_pairs + 1, dtype=np.int64) * size
    batch = FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))
    left = np.arange(0, 2 * n_pairs, 2)
    return batch, left, left + 1


def batch_of(*docs: list[int]) -> FingerprintBatch:
    arrays = [np.unique(np.asarray(d, dtype=np.uint64)) for d in docs]
    sizes = [a.size for a in arrays]
    values = np.concatenate(arrays) if arrays else np.zeros(0, np.uint64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))


def reference_minima(values: np.ndarray, num_perm: int, seed: int) -> list[int]:
    """The frozen definition, in plain Python: min over x of ((a·x + b) mod 2^64) >> 32."""
    a, b = permutation_family(num_perm, seed)
    return [
        min(((int(ai) * int(x) + int(bi)) & MASK) >> 32 for x in values)
        for ai, bi in zip(a, b, strict=True)
    ]


def reference_key(words: list[int], tag: int) -> int:
    """The frozen key hash of the kernel module, in plain Python."""

    def mix(x: int) -> int:
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & MASK
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & MASK
        return x ^ (x >> 31)

    h = mix((tag + 0x9E3779B97F4A7C15) & MASK)
    for v in words:
        h = mix((((h << 23) | (h >> 41)) & MASK) ^ v)
    return h


# --- frozen definitions ---------------------------------------------------------------------
def test_permutation_family_is_frozen():
    a, b = permutation_family(4, 1)
    assert int(a[0]) == 0x8306BDF37922E4FF
    assert int(b[0]) == 0xF35196BBC152A866
    assert int(a[1]) == 0x24E7A4F608EC18CD
    assert int(b[1]) == 0xF2DAB0AED2AC6FD2
    assert np.all(a & np.uint64(1) == 1)
    a128, b128 = permutation_family(128, 1)
    assert np.array_equal(a128[:4], a)
    assert np.array_equal(b128[:4], b)
    assert not np.array_equal(permutation_family(4, 2)[0], a)


def test_sketch_equals_plain_python_definition():
    rng = np.random.default_rng(7)
    docs = [rng.integers(0, 2**64, size=n, dtype=np.uint64) for n in (1, 3, 50, 700)]
    method = MinHash(MinHashConfig(num_perm=23, seed=5))  # not a multiple of the kernel's 8
    sigs = method.sketch(batch_of(*docs))
    for d, doc in enumerate(docs):
        assert sigs[d].tolist() == reference_minima(np.unique(doc), 23, 5)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, MASK), max_size=30), max_size=4),
    st.integers(1, 19),
    st.integers(0, 2**64 - 1),
)
def test_minima_equal_plain_python_definition_on_any_values(docs, num_perm, seed):
    """Any values, any number of functions (blocks of 8 and the rest), empty documents."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSignatureWarning)  # empty documents
        sigs = min_hashes(batch_of(*docs), num_perm, seed, "MinHash")
    for d, doc in enumerate(docs):
        empty = [int(EMPTY)] * num_perm
        want = reference_minima(sorted(set(doc)), num_perm, seed) if doc else empty
        assert sigs[d].tolist() == want


def test_minima_of_images_near_the_top_and_across_tiles():
    """The kernel keeps 64-bit minima and shifts them once: an image of all ones (shifted:
    0xFFFFFFFF) is still a minimum, and a document longer than a tile carries its minima over."""
    a, b = permutation_family(10, 3)
    top = [(MASK - int(bi)) * pow(int(ai), -1, 1 << 64) & MASK for ai, bi in zip(a, b, strict=True)]
    rng = np.random.default_rng(3)
    long = rng.integers(0, 2**64, size=2 * _TILE + 5, dtype=np.uint64).tolist()
    docs = [top[:1], top, long]
    sigs = MinHash(MinHashConfig(num_perm=10, seed=3)).sketch(batch_of(*docs))
    assert sigs[0].tolist()[0] == 0xFFFFFFFF
    for d, doc in enumerate(docs):
        assert sigs[d].tolist() == reference_minima(sorted(set(doc)), 10, 3)


def test_band_keys_equal_plain_python_definition():
    method = MinHash(MinHashConfig(num_perm=12, bands=3, rows=4))
    sigs = method.sketch(batch_of([1, 2, 3, 4, 5]))
    keys = method.keys(sigs)
    row = sigs[0].tolist()
    expected = [reference_key(row[4 * j : 4 * j + 4], TAG_BAND + j) for j in range(3)]
    assert keys.keys.tolist() == expected
    assert keys.docs.tolist() == [0, 0, 0]
    words = np.array(row, dtype=np.uint64)
    assert int(hash_words(words, 4, 8, np.uint64(1))) == expected[1]


# --- estimates ------------------------------------------------------------------------------
@pytest.mark.parametrize("resemblance", [0.2, 0.5, 0.8, 0.95])
def test_estimates_are_unbiased(resemblance):
    n_pairs, k = 400, 128
    batch, left, right = known_pairs(n_pairs, resemblance, seed=int(resemblance * 100))
    method = MinHash()
    est = method.score_pairs(method.sketch(batch), left, right)
    sigma = np.sqrt(resemblance * (1 - resemblance) / k)
    assert abs(est.mean() - resemblance) < 3 * sigma / np.sqrt(n_pairs)
    assert 0.8 * sigma < est.std() < 1.2 * sigma


def test_score_agrees_with_score_pairs():
    batch, left, right = known_pairs(20, 0.5, seed=3)
    method = MinHash()
    sigs = method.sketch(batch)
    many = method.score_pairs(sigs, left, right)
    one = [method.score(sigs[i], sigs[j]) for i, j in zip(left, right, strict=True)]
    assert many.tolist() == one
    assert method.score(sigs[0], sigs[0]) == 1.0


# --- LSH ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("num_perm", "bands", "rows"), [(128, 16, 8), (100, 20, 5)])
@pytest.mark.parametrize("resemblance", [0.3, 0.5, 0.7, 0.8])
def test_band_collisions_follow_the_s_curve(num_perm, bands, rows, resemblance):
    n_pairs = 600
    batch, left, right = known_pairs(n_pairs, resemblance, union=2000, seed=bands + rows)
    method = MinHash(MinHashConfig(num_perm=num_perm, bands=bands, rows=rows))
    keys = method.keys(method.sketch(batch)).keys.reshape(2 * n_pairs, bands)
    hit = np.any(keys[left] == keys[right], axis=1).mean()
    p = method.candidate_probability(resemblance)
    assert p == pytest.approx(1 - (1 - resemblance**rows) ** bands)
    assert abs(hit - p) <= 3 * np.sqrt(p * (1 - p) / n_pairs) + 1 / n_pairs


def test_keys_are_tagged_by_band():
    # a signature whose bands hold equal values still gets a different key per band
    method = MinHash(MinHashConfig(num_perm=8, bands=4, rows=2))
    batch = batch_of([10, 20], [10, 20])
    keys = method.keys(method.sketch(batch))
    assert len(set(keys.keys[keys.docs == 0].tolist())) == 4
    assert np.array_equal(keys.keys[keys.docs == 0], keys.keys[keys.docs == 1])


# --- parameters -----------------------------------------------------------------------------
def half_point(bands: int, rows: int) -> float:
    s = np.linspace(0, 1, 100001)
    return float(s[np.searchsorted(candidate_probability(s, bands, rows), 0.5)])


THRESHOLDS = [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]


@pytest.mark.parametrize("measure", ["resemblance", "containment"])
@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("num_perm", [64, 128, 256])
def test_default_banding_finds_a_pair_at_the_threshold(num_perm, threshold, measure):
    config = MinHashConfig(num_perm=num_perm, threshold=threshold, measure=measure)
    s_min = threshold if measure == "resemblance" else threshold / (2 - threshold)
    assert config.target == pytest.approx(s_min)
    assert target_resemblance(threshold, measure) == pytest.approx(s_min)
    b, r = config.bands, config.rows
    assert b * r <= num_perm
    assert (b, r) == recall_bands(num_perm, s_min, 0.95)
    assert 1 - (1 - s_min**r) ** b >= 0.95
    assert candidate_probability(s_min, b, r) >= 0.95
    # the fewest bands of these rows: one band fewer would miss the recall
    assert b == 1 or 1 - (1 - s_min**r) ** (b - 1) < 0.95
    # of all (b', r') reaching the recall, none has fewer false candidates below s_min
    s = np.linspace(0, s_min, 2001)
    mine = np.trapezoid(candidate_probability(s, b, r), s)
    for rows in range(1, num_perm + 1):
        for bands in range(1, num_perm // rows + 1):
            if candidate_probability(s_min, bands, rows) >= 0.95:
                assert np.trapezoid(candidate_probability(s, bands, rows), s) >= mine - 1e-9
                break


@pytest.mark.parametrize(
    ("threshold", "measure", "banding"),
    [
        (0.5, "resemblance", (23, 3)),
        (0.8, "resemblance", (13, 7)),
        (0.9, "resemblance", (10, 12)),
        (0.55, "containment", (20, 2)),
        (0.8, "containment", (22, 5)),
    ],
)
def test_default_banding_is_frozen(threshold, measure, banding):
    config = MinHashConfig(threshold=threshold, measure=measure)
    assert (config.bands, config.rows) == banding


@pytest.mark.parametrize("recall", [0.9, 0.99, 0.999])
def test_recall_is_a_parameter(recall):
    method = MinHash(MinHashConfig(threshold=0.8, recall=recall))
    assert method.candidate_probability(0.8) >= recall
    assert method.config_id != MinHash(MinHashConfig(threshold=0.8)).config_id


def test_measure_is_part_of_the_config_id():
    res = MinHash(MinHashConfig(threshold=0.8, measure="resemblance"))
    con = MinHash(MinHashConfig(threshold=0.8, measure="containment"))
    assert res.config_id != con.config_id
    assert con.candidate_probability(0.8 / 1.2) >= 0.95


def test_unreachable_recall_is_a_config_error():
    with pytest.raises(ConfigError, match=r"num_perm=8 .* num_perm ≥ 14"):
        MinHashConfig(num_perm=8, threshold=0.2)
    assert MinHashConfig(num_perm=8, threshold=0.2, bands=8, rows=1).bands == 8


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9])
def test_weighted_banding_crosses_half_near_the_threshold(threshold):
    method = MinHash(MinHashConfig(threshold=threshold, fp_weight=0.5, fn_weight=0.5))
    assert method.bands * method.rows <= 128
    assert abs(half_point(method.bands, method.rows) - threshold) < 0.06
    assert (method.bands, method.rows) == optimal_bands(128, threshold)
    assert (MinHashConfig(threshold=threshold, fp_weight=0.5).bands, method.rows) == (
        method.bands,
        method.rows,
    )


def test_weights_move_the_curve():
    recall = MinHash(MinHashConfig(threshold=0.8, fp_weight=0.1, fn_weight=0.9))
    precision = MinHash(MinHashConfig(threshold=0.8, fp_weight=0.9, fn_weight=0.1))
    assert recall.candidate_probability(0.8) > precision.candidate_probability(0.8)
    # the recall-targeted default finds more pairs at the threshold than even-weighted bands
    even = MinHash(MinHashConfig(threshold=0.8, fp_weight=0.5, fn_weight=0.5))
    assert even.candidate_probability(0.8) < 0.6 < 0.95 <= MinHash().candidate_probability(0.8)


def test_explicit_bands_and_rows_are_respected():
    assert MinHash(MinHashConfig(bands=32, rows=4)).bands == 32
    method = MinHash(MinHashConfig(bands=32, rows=3))
    assert (method.bands, method.rows) == (32, 3)
    assert (MinHashConfig(bands=10).bands, MinHashConfig(bands=10).rows) == (10, 12)
    assert (MinHashConfig(rows=5).bands, MinHashConfig(rows=5).rows) == (25, 5)
    assert get_method("minhash", bands=8, rows=16).rows == 16


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"bands": 20, "rows": 7}, "exceeds num_perm=128"),
        ({"num_perm": 0}, "num_perm=0"),
        ({"num_perm": 1.5}, "num_perm=1.5"),
        ({"seed": -1}, "seed=-1"),
        ({"threshold": 0.0}, "threshold=0.0"),
        ({"threshold": 1.5}, "threshold=1.5"),
        ({"bands": 0}, "bands=0"),
        ({"rows": 200}, "rows=200"),
        ({"fp_weight": -0.1}, "fp_weight=-0.1"),
        ({"fp_weight": 0.0, "fn_weight": 0.0}, "both be 0"),
        ({"measure": "cosine"}, "measure='cosine'"),
        ({"recall": 1.0}, "recall=1.0"),
        ({"recall": 0}, "recall=0"),
    ],
)
def test_bad_config_is_named(params, bad):
    with pytest.raises(ConfigError, match=bad.replace(".", r"\.")):
        MinHashConfig(**params)


def test_int_and_float_settings_give_one_fingerprint():
    assert (
        MinHash(MinHashConfig(threshold=1)).config_id
        == MinHash(MinHashConfig(threshold=1.0)).config_id
    )


def test_wrong_config_type():
    with pytest.raises(ConfigError, match="MinHashConfig"):
        MinHash(object())  # type: ignore[arg-type]


# --- recall at the run's threshold, end to end -----------------------------------------------
@pytest.mark.parametrize("measure", ["containment", "resemblance"])
def test_dedup_finds_lightly_edited_copies_at_threshold_0_8(measure):
    # 200 texts of 200 words and copies with 3 % of the words changed (resemblance of the
    # default word 3-shingles ≈ 0.82): the keys must make ≥ 95 % of them candidates
    # (expected 97 % with 13 × 7 bands, ~100 % with containment's 22 × 5; the former
    # even-weighted 9 × 13 bands: 49 %, here 91 of 200)
    originals, copies = near_copies(200, seed=1000)
    corpus = [(f"o{i}", t) for i, t in enumerate(originals)]
    corpus += [(f"c{i}", t) for i, t in enumerate(copies)]
    result = deduplicate(corpus, DedupConfig(method="minhash", threshold=0.8, measure=measure))
    exact = deduplicate(corpus, DedupConfig(method="full", threshold=0.8, measure=measure))
    pairs = {
        (result.ids[a], result.ids[b])
        for a, b in zip(result.pairs.left, result.pairs.right, strict=True)
    }
    every = {
        (exact.ids[a], exact.ids[b])
        for a, b in zip(exact.pairs.left, exact.pairs.right, strict=True)
    }
    wanted = {(f"o{i}", f"c{i}") for i in range(200)}
    assert every == wanted  # every copy is a near-duplicate of its original, nothing else
    assert len(pairs & wanted) >= 190
    assert pairs <= wanted


# --- empty documents, configs, storage ------------------------------------------------------
def test_empty_documents_match_nothing_and_warn_once():
    method = MinHash()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sigs = method.sketch(batch_of([], [1, 2, 3], [], [1, 2, 3]))
    weak = [w for w in caught if issubclass(w.category, WeakSignatureWarning)]
    assert len(weak) == 1
    assert "2 of 4 documents" in str(weak[0].message)
    assert np.all(sigs[0] == EMPTY)
    assert np.all(sigs[2] == EMPTY)
    keys = method.keys(sigs)
    assert set(keys.docs.tolist()) == {1, 3}
    assert method.score(sigs[0], sigs[2]) == 0.0
    assert method.score_pairs(sigs, np.array([0, 1]), np.array([2, 3])).tolist() == [0.0, 1.0]


def test_no_warning_without_empty_documents():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MinHash().sketch(batch_of([1], [2, 3]))


def test_empty_batch():
    method = MinHash()
    sigs = method.sketch(batch_of())
    assert len(sigs) == 0
    keys = method.keys(sigs)
    assert keys.docs.size == 0
    assert keys.keys.dtype == np.uint64


def test_signatures_of_another_config_are_refused():
    sigs = MinHash(MinHashConfig(seed=2)).sketch(batch_of([1, 2]))
    method = MinHash()
    with pytest.raises(SignatureError):
        method.keys(sigs)
    with pytest.raises(SignatureError):
        method.score_pairs(sigs, np.array([0]), np.array([0]))
    with pytest.raises(SignatureError, match="expected 128"):
        method.score(np.zeros(3, np.uint64), np.zeros(128, np.uint64))


def test_bad_pair_indices_are_refused():
    method = MinHash()
    sigs = method.sketch(batch_of([1], [2]))
    with pytest.raises(IndexError):
        method.score_pairs(sigs, np.array([0]), np.array([2]))
    with pytest.raises(ValueError, match="same length"):
        method.score_pairs(sigs, np.array([0, 1]), np.array([1]))


def test_protocol_registry_and_serialization():
    method = get_method("minhash", threshold=0.9)
    assert isinstance(method, Method)
    assert isinstance(method, MinHash)
    assert (method.name, method.code, method.estimate) == ("minhash", 4, "resemblance")
    assert method.summary
    assert "\n" not in method.summary
    assert method.config_id == MinHash(MinHashConfig(threshold=0.9)).config_id
    assert method.config_id != MinHash().config_id
    sigs = method.sketch(batch_of([5, 6, 7]))
    code, config_id, values = deserialize(serialize(method.code, method.config_id, sigs[0]))
    assert (code, config_id) == (4, method.config_id)
    assert np.array_equal(values, sigs[0])


# --- determinism across processes -----------------------------------------------------------
TEXT = "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat. " * 3
SCRIPT = """
from neardup.text.text_config import ShingleConfig, TextConfig
from neardup.methods.minhash import MinHash
from neardup.fingerprints.shingles import fingerprint_batch
text = TextConfig(shingle=ShingleConfig(size=5))
print(MinHash(text=text).sketch(fingerprint_batch([{text!r}], text))[0].tobytes().hex())
"""


def test_signature_is_the_same_in_another_process():
    from neardup.fingerprints.shingles import fingerprint_batch
    from neardup.text.text_config import ShingleConfig, TextConfig

    text = TextConfig(shingle=ShingleConfig(size=5))
    here = MinHash(text=text).sketch(fingerprint_batch([TEXT], text))[0]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(text=TEXT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    assert out.stdout.strip() == here.tobytes().hex()
    assert np.all(here < 2**32)
