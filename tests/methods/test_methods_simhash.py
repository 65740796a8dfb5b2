"""SimHash: the compiled sketch, pigeonhole block keys (complete vs brute force), real texts."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.fingerprints.measures import hamming
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.methods import get_method
from neardup.methods.base import Method, Signatures, deserialize, serialize
from neardup.methods.idf import IdfModel
from neardup.methods.minhash import candidate_probability, target_resemblance
from neardup.methods.simhash import (
    SHORT_FEATURES,
    SimHash,
    SimHashConfig,
    bit_agreement,
    bit_band_keys,
    block_keys,
    block_layout,
    pigeonhole_probability,
)
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig
from textgen import edit, text

WORDS = TextConfig(shingle=ShingleConfig(size=1))
PAPER = SimHashConfig(max_distance=3)  # the paper's scheme: one fingerprint, 4 tables

ORIGINAL = (
    "The river town of Elmsford wakes slowly in winter. Fishermen drag their boats onto the "
    "frozen shingle before dawn, and the baker on Mill Street lights his ovens while the "
    "church bell is still silent. By eight o'clock the market square fills with farmers "
    "selling potatoes, cabbages, smoked eels and jars of dark heather honey. Children skate "
    "on the flooded meadow behind the old tannery, where the ice is thick and safe until "
    "March. In the evenings the tavern by the bridge is crowded with ferrymen who argue "
    "about the weather, the price of timber and the new railway that the council has "
    "promised for twenty years. Visitors rarely stay long, but those who do remember the "
    "smell of woodsmoke, the cry of the gulls over the estuary and the lanterns swinging "
    "above the quay when the tide comes in after dark. In spring the floods return, the "
    "ferry stops for a week, and the whole town helps the millers carry sacks of flour up "
    "to the dry lofts while the schoolmaster records the height of the water on the "
    "chapel wall, a habit his grandfather began long before anyone could read the marks. "
    "Summer belongs to the orchards: cherries first, then plums, then the small sour apples "
    "that the cider press on Quarry Lane turns into something strong enough to warm a "
    "ferryman through November. The regatta in August draws rowing crews from three "
    "counties, and for one afternoon the quiet estuary is loud with drums and cheering."
)
EDITED = (
    "The river town of Elmsford wakes slowly in the winter. Fishermen drag their boats onto "
    "the frozen shingle before dawn, and the baker on MILL STREET lights his ovens while "
    "the church bell is still silent! By eight o'clock the market square fills with farmers "
    "selling potatoes, cabbages, smoked eels and jars of dark heather honey. Children skate "
    "on the flooded meadow behind the old tannery, where the ice is thick and safe until "
    "March.  In the evenings the tavern by the bridge is crowded with ferrymen who argue "
    "about the weather, the price of timber and the new railway that the council has "
    "promised for twenty\nyears. Visitors rarely stay long, but those who do remember the "
    "smell of woodsmoke, the cry of the gulls over the estuary and the lanterns swinging "
    "above the quay when the tide comes in after dark. In spring the floods return, the "
    "ferry stops for a week, and the whole town helps the millers carry sacks of flour up "
    "to the dry lofts while the schoolmaster records the height of the water on the "
    "chapel wall — a habit his grandfather began long before anyone could read the marks. "
    "Summer belongs to the orchards: cherries first, then plums, then the small sour apples "
    "that the cider press on Quarry Lane turns into something strong enough to warm a "
    "ferryman through November. The regatta in August draws rowing crews from three "
    "counties, and for one afternoon the quiet estuary is loud with drums and cheering."
)
UNRELATED = (
    "A compiler translates source code into machine instructions in several passes. The "
    "parser builds a syntax tree, the type checker walks it to reject ill-formed programs, "
    "and an intermediate representation is produced for optimization. Common passes remove "
    "dead code, fold constants, inline small functions and allocate registers with graph "
    "colouring. The back end then selects instructions for the target processor, schedules "
    "them to hide memory latency and emits an object file that the linker combines with "
    "libraries into an executable. Modern compilers also generate debugging information so "
    "that a developer can step through the original source while the optimized program runs, "
    "and they report warnings about suspicious constructs long before the code is shipped."
)
OTHERS = [
    "Bees visit thousands of flowers every day, carrying pollen between plants and turning "
    "nectar into honey that feeds the colony through the long winter months.",
    "The railway reached the northern valleys late in the century, and with it came timber "
    "merchants, surveyors and a steady stream of travellers looking for work.",
    "Registers are the fastest storage a processor has; a good allocator keeps the values a "
    "loop uses most in registers and spills the rest to memory.",
    "On market days the square is crowded with stalls selling cheese, bread, fish and fruit, "
    "and the tavern keepers do more business than in the whole week before.",
]
SHORT = "Fishermen drag their boats onto the frozen shingle before dawn in the quiet river town."


def make_batch(docs: list[list[int]], counts: list[list[int]] | None = None) -> FingerprintBatch:
    """A batch from per-document sorted distinct features (and optional counts)."""
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    values = np.array([f for d in docs for f in d], dtype=np.uint64)
    flat = [c for cs in counts for c in cs] if counts else [1] * values.size
    return FingerprintBatch(values, offsets, np.array(flat, dtype=np.uint32))


def reference_simhash(features: np.ndarray, weights: np.ndarray) -> int:
    """Plain Python SimHash with the same SplitMix64 feature bits (ties give 0)."""
    mask = 2**64 - 1
    sums = [0] * 64
    for f, w in zip(features.tolist(), weights.tolist(), strict=True):
        z = (f + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        for b in range(64):
            sums[b] += w if (z >> b) & 1 else -w
    return sum(1 << b for b in range(64) if sums[b] > 0)


def quiet_sketch(method: SimHash, batch: FingerprintBatch) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSignatureWarning)
        return np.ascontiguousarray(method.sketch(batch).matrix()[:, 0])


# -- config -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_distance": 3, "blocks": 3}, "at least max_distance"),
        ({"weighting": "idf"}, "weighting"),
        ({"blocks": 0, "max_distance": 0}, "blocks"),
        ({"blocks": 65}, "blocks"),
        ({"max_distance": -1}, "max_distance"),
        ({"max_distance": True}, "max_distance"),
        ({"max_distance": 3, "bands": 4}, "give one scheme"),
        ({"blocks": 4, "fingerprints": 2}, "give one scheme"),
        ({"fingerprints": 0}, "fingerprints=0"),
        ({"fingerprints": 65}, "fingerprints=65"),
        ({"fingerprints": 2, "bands": 20, "rows": 7}, "exceeds the 128 bits"),
        ({"threshold": 0}, "threshold=0"),
        ({"recall": 1.0}, "recall=1.0"),
        ({"measure": "cosine"}, "measure='cosine'"),
    ],
)
def test_config_validation(params, message):
    with pytest.raises(ConfigError, match=message):
        SimHashConfig(**params)


def test_registry_builds_simhash():
    method = get_method("simhash", max_distance=2, blocks=3)
    assert isinstance(method, SimHash)
    assert isinstance(method, Method)
    assert (method.name, method.code, method.estimate) == ("simhash", 6, "hamming")
    assert method.config_id != get_method("simhash").config_id


@pytest.mark.parametrize(
    ("blocks", "widths"),
    [(1, [64]), (4, [16] * 4), (5, [13, 13, 13, 13, 12]), (6, [11] * 4 + [10] * 2)],
)
def test_block_layout(blocks, widths):
    starts, got = block_layout(blocks)
    assert got.tolist() == widths
    assert starts.tolist() == np.concatenate([[0], np.cumsum(widths)[:-1]]).tolist()


# -- sketch -------------------------------------------------------------------------------


def test_kernel_matches_reference_for_every_weighting():
    rng = np.random.default_rng(3)
    docs = [np.unique(rng.integers(0, 2**64, size, dtype=np.uint64)) for size in (1, 2, 5, 60)]
    counts = [rng.integers(1, 4, d.size) for d in docs]
    batch = make_batch([d.tolist() for d in docs], [c.tolist() for c in counts])
    model = IdfModel.fit([batch, make_batch([docs[3][:30].tolist()])])
    for weighting in ("count", "binary", "tfidf"):
        method = SimHash(SimHashConfig(weighting=weighting), idf=model)
        got = quiet_sketch(method, batch)
        weights = method.weights(batch)
        for d in range(len(docs)):
            lo, hi = batch.offsets[d], batch.offsets[d + 1]
            assert int(got[d]) == reference_simhash(batch.values[lo:hi], weights[lo:hi])


def test_ties_give_zero_bits_and_empty_document_gives_zero():
    batch = make_batch([[5, 5 + 2**40], []])  # two features, equal weight: ties where bits differ
    fps = quiet_sketch(SimHash(), batch)
    single = quiet_sketch(SimHash(), make_batch([[5], [5 + 2**40]]))
    assert int(fps[0]) == int(single[0]) & int(single[1])
    assert int(fps[1]) == 0


def test_bits_are_balanced_even_for_32_bit_fingerprints():
    """Features pass through a 64-bit mix, so CRC-32 fingerprints still set the high bits."""
    rng = np.random.default_rng(9)
    docs = [np.unique(rng.integers(0, 2**32, 50, dtype=np.uint64)).tolist() for _ in range(2000)]
    fps = quiet_sketch(SimHash(PAPER), make_batch(docs))
    ones = np.unpackbits(fps.view(np.uint8)).reshape(-1, 64).mean(axis=0)
    assert ones.min() > 0.4
    assert ones.max() < 0.6
    crc = TextConfig(shingle=ShingleConfig(size=1, hash="crc32"))
    prints = fingerprint_batch([ORIGINAL], crc)
    assert int(prints.values.max()) < 2**32
    assert int(quiet_sketch(SimHash(text=crc), prints)[0]) >> 32 != 0


def test_empty_batch():
    method = SimHash()
    empty = make_batch([])
    sigs = method.sketch(empty)
    assert len(sigs) == 0
    assert method.keys(sigs).keys.size == 0
    assert method.score_pairs(sigs, np.empty(0, np.int64), np.empty(0, np.int64)).size == 0


def test_tfidf_without_model_is_a_config_error():
    method = SimHash(SimHashConfig(weighting="tfidf"))
    with pytest.raises(ConfigError, match="IdfModel"):
        method.sketch(make_batch([[1, 2, 3]]))


def test_fit_sets_the_model():
    batch = make_batch([[1, 2, 3], [2, 3]])
    method = SimHash(SimHashConfig(weighting="tfidf")).fit([batch])
    assert method.idf == IdfModel.fit([batch])
    assert quiet_sketch(method, batch).shape == (2,)


def test_short_warning_once_per_batch_with_count():
    long_doc = list(range(SHORT_FEATURES))
    batch = make_batch([[1, 2], long_doc, [3], []])
    with pytest.warns(WeakSignatureWarning, match="3 of 4 documents") as record:
        SimHash().sketch(batch)
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakSignatureWarning)
        SimHash().sketch(make_batch([long_doc]))


# -- keys, scores -------------------------------------------------------------------------


def candidate_pairs(docs: np.ndarray, keys: np.ndarray) -> set[tuple[int, int]]:
    """Every pair of documents sharing a key."""
    order = np.argsort(keys, kind="stable")
    keys, docs = keys[order], docs[order]
    bounds = np.flatnonzero(np.diff(keys)) + 1
    pairs: set[tuple[int, int]] = set()
    for group in np.split(docs, bounds):
        if group.size > 1:
            group = np.unique(group)
            i, j = np.triu_indices(group.size, 1)
            pairs.update(zip(group[i].tolist(), group[j].tolist(), strict=True))
    return pairs


def planted_fingerprints(rng: np.random.Generator, k: int, n: int = 2000) -> np.ndarray:
    """n/2 random fingerprints and n/2 copies of some of them with 0..k+2 bits flipped."""
    base = rng.integers(1, 2**64, n // 2, dtype=np.uint64)
    parents = rng.integers(0, base.size, n - base.size)
    copies = base[parents].copy()
    for i in range(copies.size):
        flips = rng.choice(64, rng.integers(0, k + 3), replace=False)
        for bit in flips:
            copies[i] ^= np.uint64(1) << np.uint64(bit)
    return np.concatenate([base, copies])


def extra_candidates(k: int, blocks: int) -> int:
    """Check that keys find every planted pair within k; return the chance candidates."""
    rng = np.random.default_rng(1000 + 10 * k + blocks)
    fps = planted_fingerprints(rng, k)
    method = SimHash(SimHashConfig(max_distance=k, blocks=blocks))
    keys = method.keys(Signatures.fixed(fps[:, None], method.config_id))
    assert keys.keys.size == fps.size * math.comb(blocks, k)
    found = candidate_pairs(keys.docs, keys.keys)

    dist = np.bitwise_count(fps[:, None] ^ fps[None, :])
    i, j = np.nonzero(np.triu(dist <= k, 1))
    within = set(zip(i.tolist(), j.tolist(), strict=True))
    assert len(within) > 200  # the planted copies
    assert within <= found, f"missed {len(within - found)} pairs within distance {k}"
    extra = len(found - within)
    print(f"k={k} blocks={blocks}: {len(within)} pairs within k, {extra} extra candidates")
    return extra


@pytest.mark.parametrize(("k", "blocks"), [(3, 4), (3, 6), (2, 3), (5, 6), (0, 1)])
def test_block_keys_find_every_pair_within_k(k, blocks):
    extra_candidates(k, blocks)


def test_more_blocks_mean_fewer_chance_candidates():
    """Manku's point: with blocks > k + 1 the tables key on more bits."""
    assert extra_candidates(3, 6) < extra_candidates(3, 4)


def test_too_many_tables_is_a_config_error():
    with pytest.raises(ConfigError, match="tables"):
        SimHashConfig(max_distance=8, blocks=32)


def test_block_keys_are_distinct_per_block():
    fps = np.array([0x0001_0001_0001_0001, 0x0002_0001_0001_0001], dtype=np.uint64)
    keys = block_keys(fps, 4)
    assert len(set(keys[0].tolist())) == 4  # equal bits in different blocks, different keys
    assert (keys[0] == keys[1]).tolist() == [True, True, True, False]


def test_signatures_of_another_config_are_refused():
    method = SimHash(PAPER)
    foreign = Signatures.fixed(
        np.array([[1], [2]], dtype=np.uint64), SimHash(PAPER, text=WORDS).config_id
    )
    with pytest.raises(SignatureError, match="config"):
        method.keys(foreign)
    with pytest.raises(SignatureError, match="config"):
        method.score_pairs(foreign, np.array([0]), np.array([1]))
    with pytest.raises(ConfigError, match="SimHashConfig"):
        SimHash(SimHashConfig)  # the class, not an instance


def test_documents_without_features_emit_no_keys():
    method = SimHash(PAPER)
    sigs = Signatures.fixed(np.array([[0], [7], [0]], dtype=np.uint64), method.config_id)
    keys = method.keys(sigs)
    assert keys.docs.tolist() == [1] * 4
    tuned = SimHash()
    rows = np.zeros((3, tuned.width), dtype=np.uint64)
    rows[1] = 7
    keys = tuned.keys(Signatures.fixed(rows, tuned.config_id))
    assert keys.docs.tolist() == [1] * tuned.config.bands


def test_scores_are_hamming_distances():
    rng = np.random.default_rng(5)
    fps = rng.integers(0, 2**64, 50, dtype=np.uint64)
    method = SimHash(PAPER)
    sigs = Signatures.fixed(fps[:, None], method.config_id)
    left, right = rng.integers(0, 50, 200), rng.integers(0, 50, 200)
    got = method.score_pairs(sigs, left, right)
    want = [hamming(int(fps[a]), int(fps[b])) for a, b in zip(left, right, strict=True)]
    assert got.dtype == np.float64
    assert got.tolist() == want
    assert method.score(sigs[left[0]], sigs[right[0]]) == want[0]
    code, config_id, values = deserialize(serialize(method.code, method.config_id, sigs[3]))
    assert (code, config_id, values.tolist()) == (6, method.config_id, [int(fps[3])])


# -- real texts ---------------------------------------------------------------------------


def fitted(weighting: str, text_config: TextConfig) -> SimHash:
    method = SimHash(SimHashConfig(weighting=weighting), text_config)
    if weighting == "tfidf":
        method.fit([fingerprint_batch([ORIGINAL, UNRELATED, *OTHERS], text_config)])
    return method


@pytest.mark.parametrize(
    "text_config",
    [WORDS, TextConfig(CanonConfig(stopwords=True))],
    ids=["words", "4-shingles"],
)
@pytest.mark.parametrize("weighting", ["count", "tfidf", "binary"])
def test_lightly_edited_copy_is_close_and_unrelated_far(text_config, weighting):
    """Punctuation, a stop word, case and line breaks: canonicalization (with stop words
    removed) absorbs them."""
    assert min(len(ORIGINAL), len(EDITED)) >= 600
    method = fitted(weighting, text_config)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakSignatureWarning)
        sigs = method.sketch(fingerprint_batch([ORIGINAL, EDITED, UNRELATED], text_config))
    near, far1, far2 = method.score_pairs(sigs, np.array([0, 0, 1]), np.array([1, 2, 2]))
    assert near <= 3
    assert min(far1, far2) > 10
    keys = method.keys(sigs)
    assert set(keys.keys[keys.docs == 0].tolist()) & set(keys.keys[keys.docs == 1].tolist())


def one_word_substitutions(n: int, seed: int) -> list[str]:
    """n copies of ORIGINAL, each with one word (at a random place) replaced."""
    rng = np.random.default_rng(seed)
    words = ORIGINAL.split(" ")
    fresh = ["lantern", "granite", "violet", "harbour", "thistle", "copper", "saffron", "juniper"]
    copies = []
    for t in range(n):
        edited = list(words)
        edited[rng.integers(len(edited))] = fresh[t % len(fresh)]
        copies.append(" ".join(edited))
    return copies


@pytest.mark.parametrize(("weighting", "max_median"), [("count", 3), ("tfidf", 4), ("binary", 3)])
def test_one_substituted_word_usually_stays_within_k(weighting, max_median):
    """A changed feature moves each bit with probability θ/π (θ: angle of the weight vectors).

    For ~140 word features one substitution gives θ ≈ 0.12, about 2.5 of 64 bits, so most
    copies stay within k = 3 — but not all: the distance is random. TF-IDF puts more weight
    on the rare words that edits hit (here with IDF from a 6-text collection), so it spreads
    more. None comes near an unrelated text (~30 bits).
    """
    copies = one_word_substitutions(60, seed=11)
    method = fitted(weighting, WORDS)
    sigs = method.sketch(fingerprint_batch([ORIGINAL, UNRELATED, *copies], WORDS))
    dist = method.score_pairs(sigs, np.zeros(61, dtype=np.int64), np.arange(1, 62))
    unrelated, near = dist[0], dist[1:]
    assert np.median(near) <= max_median
    assert near.max() < 10 < unrelated
    print(f"{weighting}: {np.mean(near <= 3):.0%} of one-word edits within 3 bits")


def test_short_text_warns():
    assert len(SHORT) <= 100
    with pytest.warns(WeakSignatureWarning, match="1 of 1 documents"):
        SimHash(text=WORDS).sketch(fingerprint_batch([SHORT], WORDS))


# -- bit bands tuned for recall -----------------------------------------------------------


def test_the_papers_tables_when_distance_or_blocks_is_given_else_bit_bands():
    paper = SimHashConfig(max_distance=3)
    assert (paper.blocks, paper.fingerprints, paper.bands, paper.rows) == (4, 1, None, None)
    assert SimHashConfig(blocks=6).max_distance == 3
    assert SimHashConfig(max_distance=2).blocks == 3
    tuned = SimHashConfig()
    assert (tuned.max_distance, tuned.blocks, tuned.fingerprints) == (None, None, 16)
    assert (tuned.bands, tuned.rows) == (48, 17)
    assert (SimHashConfig(fingerprints=8).bands, SimHashConfig(fingerprints=8).rows) == (34, 15)
    assert SimHashConfig(fingerprints=4, bands=16).rows == 16
    assert SimHashConfig(fingerprints=2, rows=16).bands == 8
    # the resolved config builds the same method again (a stored config id stays valid)
    again = SimHashConfig(fingerprints=16, bands=48, rows=17)
    assert SimHash(again).config_id == SimHash(tuned).config_id
    assert SimHash(SimHashConfig(max_distance=3, blocks=4, fingerprints=1)).config_id == (
        SimHash(paper).config_id
    )


@pytest.mark.parametrize("measure", ["resemblance", "containment"])
@pytest.mark.parametrize("threshold", [0.5, 0.65, 0.8, 0.9, 0.95])
def test_tuned_bands_find_a_pair_at_the_threshold_with_probability_095(threshold, measure):
    method = SimHash(SimHashConfig(threshold=threshold, measure=measure))
    cfg = method.config
    target = target_resemblance(threshold, measure)
    assert cfg.bands * cfg.rows <= 64 * cfg.fingerprints
    unrelated = candidate_probability(0.5, cfg.bands, cfg.rows)
    assert unrelated <= 1e-3  # never (nearly) every pair of a corpus a candidate
    p = method.candidate_probability(target)
    if target >= 0.65:  # resemblance ≥ 0.65, containment ≥ 0.8: the promise holds
        assert 0.95 <= p < 0.99
        assert method.candidate_probability(target + 0.05) > p
        if cfg.fingerprints > 8:  # the fewest fingerprints within the budget
            fewer = SimHashConfig(
                threshold=threshold, measure=measure, fingerprints=cfg.fingerprints - 8
            )
            assert candidate_probability(0.5, fewer.bands, fewer.rows) > 1e-3
        return
    # below, the budget wins: the best recall of 64 fingerprints within it
    assert cfg.fingerprints == 64
    assert p < 0.95
    q = float(bit_agreement(target))
    for rows in range(1, 40):
        for bands in range(1, 4096 // rows + 1):
            if candidate_probability(0.5, bands, rows) > 1e-3:
                break
            assert candidate_probability(q, bands, rows) <= p + 1e-12


def test_the_papers_tables_miss_most_pairs_at_08():
    assert SimHash(PAPER).candidate_probability(0.82) < 0.35  # ≈ 10 bits apart, k = 3
    assert SimHash().candidate_probability(0.82) > 0.96


def test_the_first_fingerprint_is_the_papers_and_gives_the_estimate():
    texts = [text(40 + i, 200) for i in range(6)] + [edit(text(40, 200), 1, 6)]
    batch = fingerprint_batch(texts, TextConfig())
    tuned, paper = SimHash(), SimHash(PAPER)
    many, one = tuned.sketch(batch).matrix(), paper.sketch(batch).matrix()
    assert many.shape == (7, 16)
    assert np.array_equal(many[:, 0], one[:, 0])
    assert len({int(v) for v in many[0]}) == 16  # independent fingerprints
    left, right = np.array([0, 0, 1]), np.array([6, 1, 2])
    sigs = tuned.sketch(batch)
    assert tuned.score_pairs(sigs, left, right).tolist() == (
        paper.score_pairs(paper.sketch(batch), left, right).tolist()
    )
    assert tuned.score(sigs[0], sigs[6]) == hamming(int(many[0, 0]), int(many[6, 0]))
    with pytest.raises(SignatureError, match="expected 16"):
        tuned.score(sigs[0][:1], sigs[6][:1])


def test_bit_band_keys_are_equal_exactly_when_the_band_bits_are():
    rng = np.random.default_rng(17)
    # few set bits so that many bands coincide by chance
    fps = rng.integers(0, 2**64, (300, 2), dtype=np.uint64) & rng.integers(
        0, 2**64, (300, 2), dtype=np.uint64
    )
    fps &= rng.integers(0, 2**64, (300, 2), dtype=np.uint64)
    bands, rows = 25, 5
    keys = bit_band_keys(fps, bands, rows)
    bits = [int(a) | (int(b) << 64) for a, b in fps]
    mask = (1 << rows) - 1
    want = np.array([[(x >> (j * rows)) & mask for j in range(bands)] for x in bits])
    same_bits = want[:, None, :] == want[None, :, :]
    same_keys = keys[:, None, :] == keys[None, :, :]
    assert np.array_equal(same_bits, same_keys)
    assert same_bits.sum() > 300 * bands * 2  # the check saw many equal bands
    assert np.unique(keys).size == np.unique(want + (np.arange(bands) << rows)).size


@pytest.mark.parametrize("q", [0.8, 0.9, 0.95])
def test_pigeonhole_probability_matches_simulation(q):
    rng = np.random.default_rng(int(q * 100))
    n = 4000
    a = rng.integers(0, 2**64, n, dtype=np.uint64)
    flips = np.packbits(rng.random((n, 64)) > q, axis=1, bitorder="little")
    b = a ^ flips.view(np.uint64).ravel()
    keys = block_keys(np.concatenate([a, b]), 4, 3)
    rate = np.any(keys[:n] == keys[n:], axis=1).mean()
    p = float(pigeonhole_probability(q, 4, 3))
    assert abs(rate - p) <= 3 * math.sqrt(p * (1 - p) / n) + 1e-9


def resemblance_of(batch: FingerprintBatch, i: int, j: int) -> float:
    a = batch.values[batch.offsets[i] : batch.offsets[i + 1]]
    b = batch.values[batch.offsets[j] : batch.offsets[j + 1]]
    shared = np.intersect1d(a, b).size
    return shared / (a.size + b.size - shared)


@pytest.mark.parametrize("changes", [6, 16, 30, 200])
def test_bit_disagreement_and_candidate_rate_follow_the_formula(changes):
    """Random texts of 200 words, copies with ``changes`` words replaced (200: unrelated),
    dedup's word 3-shingles: each bit of the 16 fingerprints differs with probability
    1 − :func:`bit_agreement` of the pair's resemblance (within 0.015), and the pairs share a
    band key as often as the formula says (3σ + 0.02 for the model)."""
    from neardup.dedup.config import DEFAULT_TEXT

    n = 150
    originals = [text(5000 + changes * 1000 + i, 200) for i in range(n)]
    if changes == 200:
        copies = [text(9000 + i, 200) for i in range(n)]
    else:
        copies = [edit(body, 7000 + i, changes) for i, body in enumerate(originals)]
    batch = fingerprint_batch(originals + copies, DEFAULT_TEXT)
    method = SimHash()
    sigs = method.sketch(batch)
    fps = sigs.matrix()
    res = np.array([resemblance_of(batch, i, n + i) for i in range(n)])
    differ = np.bitwise_count(fps[:n] ^ fps[n:]).sum() / (n * 64 * fps.shape[1])
    expected = float(np.mean(1 - bit_agreement(res)))
    print(f"{changes} changes: resemblance {res.mean():.3f}, bits differ {differ:.4f} "
          f"(formula {expected:.4f})")  # fmt: skip
    assert abs(differ - expected) <= 0.015
    keys = bit_band_keys(fps, method.config.bands, method.config.rows)
    rate = np.any(keys[:n] == keys[n:], axis=1).mean()
    p = float(np.mean(method.candidate_probability(res)))
    print(f"candidates {rate:.3f} (formula {p:.3f})")
    assert abs(rate - p) <= 3 * math.sqrt(max(p * (1 - p), 0.01) / n) + 0.02
