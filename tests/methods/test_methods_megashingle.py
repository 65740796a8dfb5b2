"""Supershingles and megashingles (neardup.methods.megashingle).

Detection rates are measured on fingerprint sets of KNOWN resemblance built from fixed-seed
random uint64 arrays (≥ 2000 elements per set, so that one supershingle matches with
probability ≈ p^14), and compared with the formula within 3σ.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods import get_method
from neardup.methods.base import Method
from neardup.methods.megashingle import (
    MAX_TUNED_KEYS,
    MAX_TUNED_PERM,
    MegaShingle,
    MegaShingleConfig,
    detection_probability,
    key_count,
    recall_shape,
)
from neardup.methods.minhash import MinHash, MinHashConfig, resemblance_grid
from neardup.methods.minhash_kernels import EMPTY, TAG_MEGA, TAG_SUPER, hash_words


def paper(**params) -> MegaShingle:
    """The paper's 84 = 6 × 14 scheme (the shape given explicitly)."""
    return MegaShingle(MegaShingleConfig(groups=6, group_size=14, **params))


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
    offsets = np.arange(2 * n_pairs + 1, dtype=np.int64) * (shared + private)
    batch = FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))
    left = np.arange(0, 2 * n_pairs, 2)
    return batch, left, left + 1


def batch_of(*docs: list[int]) -> FingerprintBatch:
    arrays = [np.unique(np.asarray(d, dtype=np.uint64)) for d in docs]
    values = np.concatenate(arrays) if arrays else np.zeros(0, np.uint64)
    offsets = np.concatenate([[0], np.cumsum([a.size for a in arrays])]).astype(np.int64)
    return FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))


# --- the paper's probabilities --------------------------------------------------------------
def test_detection_probability_formula():
    for p in (0.5, 0.8, 0.9, 0.95, 1.0):
        q = p**14
        closed = 1 - (1 - q) ** 6 - 6 * q * (1 - q) ** 5
        assert detection_probability(p) == pytest.approx(closed, abs=1e-12)
    # often quoted as "≈ 0.90"; the formula evaluates to 0.879
    assert detection_probability(0.95) == pytest.approx(0.879, abs=0.001)
    assert detection_probability(0.9, min_super=1) == pytest.approx(1 - (1 - 0.9**14) ** 6)


@pytest.mark.parametrize("resemblance", [0.8, 0.9, 0.95])
def test_supershingle_rule_rate_and_megashingle_rule_agree(resemblance):
    n_pairs = 2000
    batch, left, right = known_pairs(n_pairs, resemblance, seed=int(resemblance * 1000))
    sup = paper(rule="super")
    mega = paper()
    sigs = sup.sketch(batch)
    by_super = sup.duplicate_pairs(sigs, left, right)
    sigs_mega = mega.sketch(batch)
    assert np.array_equal(sigs.values, sigs_mega.values)  # the rule does not change the sketch
    by_mega = mega.duplicate_pairs(sigs_mega, left, right)
    assert np.array_equal(by_super, by_mega)  # the same decision, pair by pair
    p = detection_probability(resemblance)
    assert abs(by_super.mean() - p) <= 3 * np.sqrt(p * (1 - p) / n_pairs)
    # and the keys find exactly those pairs
    keys = mega.keys(sigs_mega).keys.reshape(2 * n_pairs, 15)
    assert np.array_equal(np.any(keys[left] == keys[right], axis=1), by_mega)


def test_score_estimates_resemblance_from_the_minima():
    n_pairs, resemblance = 400, 0.5
    batch, left, right = known_pairs(n_pairs, resemblance, seed=11)
    method = paper()
    est = method.score_pairs(method.sketch(batch), left, right)
    sigma = np.sqrt(resemblance * (1 - resemblance) / 84)
    assert abs(est.mean() - resemblance) < 3 * sigma / np.sqrt(n_pairs)


# --- layout ---------------------------------------------------------------------------------
def test_layout_minima_then_supershingles_then_megashingles():
    method = paper()
    batch = batch_of(list(range(1, 300)), list(range(100, 400)))
    sigs = method.sketch(batch)
    assert method.width == 105
    assert sigs.matrix().shape == (2, 105)
    minhash = MinHash(MinHashConfig(num_perm=84, seed=1))
    minima = minhash.sketch(batch).matrix()
    row = sigs.matrix()[0]
    assert np.array_equal(row[:84], minima[0])  # the same permutation family as MinHash
    supers = [
        int(hash_words(row, 14 * g, 14 * (g + 1), np.uint64(TAG_SUPER + g))) for g in range(6)
    ]
    assert row[84:90].tolist() == supers
    pairs = [(i, j) for i in range(6) for j in range(i + 1, 6)]
    megas = [
        int(hash_words(np.array([supers[i], supers[j]], np.uint64), 0, 2, np.uint64(TAG_MEGA + p)))
        for p, (i, j) in enumerate(pairs)
    ]
    assert row[90:].tolist() == megas


def test_is_duplicate_matches_duplicate_pairs():
    batch, left, right = known_pairs(200, 0.95, seed=5)
    for method in (paper(), paper(rule="super", min_super=3), MegaShingle()):
        sigs = method.sketch(batch)
        many = method.duplicate_pairs(sigs, left, right)
        one = [method.is_duplicate(sigs[i], sigs[j]) for i, j in zip(left, right, strict=True)]
        assert many.tolist() == one
    assert method.is_duplicate(sigs[0], sigs[0])


@pytest.mark.filterwarnings("ignore::neardup.errors.WeakSignatureWarning")
def test_keys_by_rule():
    batch = batch_of(list(range(50)), list(range(50)), [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sigs = paper().sketch(batch)
    assert [w.category for w in caught] == [WeakSignatureWarning]
    assert np.all(sigs[2] == EMPTY)
    mega = paper().keys(sigs)
    assert mega.docs.tolist() == [0] * 15 + [1] * 15  # the empty document emits nothing
    assert mega.keys[:15].tolist() == sigs[0][90:].tolist()
    for min_super in (2, 4):
        method = paper(rule="super", min_super=min_super)
        same = method.keys(method.sketch(batch))
        assert np.array_equal(same.keys, mega.keys)
    one = paper(rule="super", min_super=1)
    keys = one.keys(one.sketch(batch))
    assert keys.keys[:6].tolist() == sigs[0][84:90].tolist()
    assert not paper().is_duplicate(sigs[2], sigs[2])
    assert paper().score(sigs[2], sigs[2]) == 0.0


# --- configuration --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"num_perm": 84, "group_size": 13}, "num_perm=84 must equal groups × group_size = 6 × 13"),
        ({"num_perm": 90, "groups": 6, "group_size": 14}, "num_perm=90"),
        ({"groups": 6, "min_super": 7, "rule": "super"}, "min_super=7"),
        ({"threshold": 0}, "threshold=0"),
        ({"measure": "cosine"}, "measure='cosine'"),
        ({"recall": 1.0}, "recall=1.0"),
        ({"threshold": 0.01}, "no shape of at most 84 functions"),
        ({"rule": "both"}, "rule='both'"),
        ({"rule": "super", "min_super": 0}, "min_super=0"),
        ({"min_super": 3}, "min_super=3 applies to rule='super' only"),
        ({"groups": 1, "num_perm": 14}, "groups=1"),
        ({"seed": 2**64}, "seed="),
    ],
)
def test_bad_config_is_named(params, bad):
    with pytest.raises(ConfigError, match=bad):
        MegaShingleConfig(**params)


def test_other_shapes_work():
    method = MegaShingle(MegaShingleConfig(num_perm=40, groups=4, group_size=10))
    sigs = method.sketch(batch_of(list(range(100))))
    assert method.width == 40 + 4 + 6
    assert sigs.matrix().shape == (1, 50)


def test_protocol_registry_and_config_checks():
    method = get_method("megashingle", rule="super")
    assert isinstance(method, Method)
    assert isinstance(method, MegaShingle)
    assert (method.name, method.code, method.estimate) == ("megashingle", 5, "resemblance")
    assert method.summary
    assert "\n" not in method.summary
    sigs = MegaShingle(MegaShingleConfig(seed=3)).sketch(batch_of([1, 2, 3]))
    with pytest.raises(SignatureError):
        method.keys(sigs)
    with pytest.raises(SignatureError, match=f"expected {method.width}"):
        method.is_duplicate(np.zeros(84, np.uint64), np.zeros(84, np.uint64))


SCRIPT = """
from neardup.methods.megashingle import MegaShingle
from neardup.fingerprints.shingles import fingerprint_batch
print(MegaShingle().sketch(fingerprint_batch([{text!r}]))[0].tobytes().hex())
"""
TEXT = "Two roads diverged in a yellow wood, and sorry I could not travel both. " * 4


def test_signature_is_the_same_in_another_process():
    from neardup.fingerprints.shingles import fingerprint_batch

    here = MegaShingle().sketch(fingerprint_batch([TEXT]))[0]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(text=TEXT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    assert out.stdout.strip() == here.tobytes().hex()


# --- shape tuned for recall at the threshold ------------------------------------------------
def brute_force_shape(s_min: float, min_super: int) -> tuple[int, int]:
    """Every shape within the budget, scored as documented (no shortcuts)."""
    grid = resemblance_grid(s_min)
    ranked = []
    for size in range(1, MAX_TUNED_PERM + 1):
        for groups in range(max(2, min_super), MAX_TUNED_PERM // size + 1):
            if detection_probability(s_min, groups, size, min_super) < 0.95:
                continue
            keys = key_count(groups, min_super)
            fp = float(np.trapezoid(detection_probability(grid, groups, size, min_super), grid))
            ranked.append((round(fp, 12), keys, groups * size, groups, size))
    within = [shape for shape in ranked if shape[1] <= MAX_TUNED_KEYS]
    best = min(within) if within else min(ranked, key=lambda x: (x[1], x[0], x[2]))
    return best[3], best[4]


@pytest.mark.parametrize("rule", [("mega", 2), ("super", 1), ("super", 3)])
@pytest.mark.parametrize("target", [0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
def test_tuned_shape_reaches_recall_with_fewest_false_candidates(target, rule):
    name, min_super = rule
    config = MegaShingleConfig(threshold=target, rule=name, min_super=min_super)
    assert (config.groups, config.group_size) == brute_force_shape(target, min_super)
    assert config.num_perm == config.groups * config.group_size <= MAX_TUNED_PERM
    if (target, min_super) != (0.5, 3):  # the one case where no shape within the cap reaches it
        assert key_count(config.groups, min_super) <= MAX_TUNED_KEYS
    p = detection_probability(target, config.groups, config.group_size, min_super)
    assert 0.95 <= p < 0.99


def test_tuned_shape_follows_the_measure_and_names():
    assert (MegaShingleConfig().groups, MegaShingleConfig().group_size) == (10, 4)
    contained = MegaShingleConfig(threshold=0.8, measure="containment")
    assert contained.target == pytest.approx(0.8 / 1.2)
    assert (contained.groups, contained.group_size) == recall_shape(0.8 / 1.2)
    # below t ≈ 0.45 no shape within the key cap reaches 0.95: the fewest keys that do
    low = MegaShingleConfig(threshold=0.3)
    assert key_count(low.groups, 2) > MAX_TUNED_KEYS
    assert detection_probability(0.3, low.groups, low.group_size) >= 0.95
    assert detection_probability(0.3, low.groups - 1, low.group_size) < 0.95


def test_the_papers_scheme_when_the_shape_is_given():
    for given in ({"groups": 6, "group_size": 14}, {"num_perm": 84}, {"groups": 6}):
        config = MegaShingleConfig(**given)
        assert (config.num_perm, config.groups, config.group_size) == (84, 6, 14)
    assert MegaShingleConfig(group_size=7).groups == 6
    assert MegaShingleConfig(num_perm=40, groups=4).group_size == 10
    # the paper's shape misses most pairs at 0.82, the tuned one almost none
    assert detection_probability(0.82) < 0.1
    tuned = MegaShingleConfig()
    assert detection_probability(0.82, tuned.groups, tuned.group_size) > 0.96
    resolved = MegaShingleConfig(num_perm=40, groups=10, group_size=4)
    assert MegaShingle(resolved).config_id == MegaShingle(tuned).config_id


@pytest.mark.parametrize("resemblance", [0.6, 0.75, 0.8, 0.9])
def test_tuned_keys_find_pairs_at_the_formula_rate(resemblance):
    n_pairs = 1000
    batch, left, right = known_pairs(n_pairs, resemblance, seed=int(resemblance * 1000) + 7)
    method = MegaShingle()  # t = 0.8: 10 groups of 4
    sigs = method.sketch(batch)
    keys = method.keys(sigs).keys.reshape(2 * n_pairs, method.n_mega)
    rate = np.any(keys[left] == keys[right], axis=1).mean()
    p = detection_probability(resemblance, 10, 4)
    assert abs(rate - p) <= 3 * np.sqrt(p * (1 - p) / n_pairs)
    assert np.array_equal(
        np.any(keys[left] == keys[right], axis=1), method.duplicate_pairs(sigs, left, right)
    )
