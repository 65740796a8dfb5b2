"""Documents of identical fingerprint sets: found exactly, and their pairs walked once with
the same answers as walking every pair."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textgen
from neardup.dedup import DedupConfig, copies, deduplicate
from neardup.dedup.candidates import prefix_candidates
from neardup.dedup.copies import (
    Copies,
    find_copies,
    per_distinct_pair,
    set_hashes,
    spread_pairs,
    standing_for,
)
from neardup.fingerprints.intersect_kernels import shared_counts
from neardup.util.arrays import pair_codes


def _sets(*sets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    values = np.array([v for s in sets for v in sorted(s)], dtype=np.uint64)
    offsets = np.r_[0, np.cumsum([len(s) for s in sets])].astype(np.int64)
    return values, offsets


def test_copies_name_the_first_document_of_their_set():
    values, offsets = _sets([1, 2, 3], [4, 5], [1, 2, 3], [1, 2], [4, 5], [1, 2, 3], [])
    found = find_copies(values, offsets, set_hashes(values, offsets))
    assert found is not None
    assert found.first.tolist() == [0, 1, 0, 3, 1, 0, 6]
    assert found.copied.tolist() == [True, True, True, False, True, True, False]


def test_no_copies_and_equal_hashes_of_unequal_sets():
    values, offsets = _sets([1, 2, 3], [1, 2, 4], [7])
    assert find_copies(values, offsets, set_hashes(values, offsets)) is None
    # a hash collision is told apart by the exact comparison
    colliding = np.zeros(3, dtype=np.uint64)
    assert find_copies(values, offsets, colliding) is None
    values, offsets = _sets([1, 2, 3], [1, 2, 4], [1, 2, 3])
    found = find_copies(values, offsets, np.zeros(3, dtype=np.uint64))
    assert found is not None
    assert found.first.tolist() == [0, 1, 0]


def test_hashes_tell_sets_apart_by_values_and_size():
    values, offsets = _sets([1, 2, 3], [1, 2], [2, 3], [1, 3], [1, 2, 3])
    hashes = set_hashes(values, offsets).tolist()
    assert hashes[0] == hashes[4]
    assert len(set(hashes[:4])) == 4


def test_hashes_of_many_small_sets_of_small_values_all_differ():
    """Sets of a few small values (a 32-bit hash's fingerprints are small) whose sums and
    sizes often agree: a hash of the plain values would give many of them one hash."""
    rng = np.random.default_rng(3)
    sets = {
        tuple(sorted(set(rng.integers(0, 64, rng.integers(0, 9)).tolist()))) for _ in range(5000)
    }
    values, offsets = _sets(*map(list, sets))
    assert len(set(set_hashes(values, offsets).tolist())) == len(sets)


def test_a_kernel_runs_once_per_distinct_pair_of_sets_with_the_same_answers():
    rng = np.random.default_rng(7)
    distinct = [sorted(set(rng.integers(0, 400, 60 + 10 * k).tolist())) for k in range(8)]
    layout = [0, 1, 2, 0, 3, 1, 4, 5, 0, 6, 7, 2]  # documents 3 and 8 copy 0, ...
    values, offsets = _sets(*(distinct[k] for k in layout))
    found = find_copies(values, offsets, set_hashes(values, offsets))
    n = len(layout)
    left, right = np.triu_indices(n, 1)
    left, right = left.astype(np.int64), right.astype(np.int64)
    walked: list[int] = []

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        walked.append(a.size)
        return shared_counts(values, offsets, a, b)

    expected = shared_counts(values, offsets, left, right)
    assert per_distinct_pair(kernel, left, right, found).tolist() == expected.tolist()
    pairs = zip(left.tolist(), right.tolist(), strict=True)
    distinct_pairs = {tuple(sorted((layout[a], layout[b]))) for a, b in pairs}
    assert walked == [len(distinct_pairs)] < [left.size]
    # reversed pairs are the same pairs of sets
    assert per_distinct_pair(kernel, right, left, found).tolist() == expected.tolist()
    # without copies: every pair walked
    walked.clear()
    assert per_distinct_pair(kernel, left, right, None).tolist() == expected.tolist()
    assert walked == [left.size]


@pytest.mark.parametrize("threshold", [0.6, 0.9])
def test_a_run_with_copies_gives_what_walking_every_pair_gives(threshold, monkeypatch):
    """Copies of texts (and of a shared footer) among edited ones: every measure of every
    pair, the clusters and the templates as when no copy is known."""
    footer = textgen.text(999, 40)
    bodies = [f"{textgen.text(seed, 30 + seed % 50)} {footer}" for seed in range(40)]
    texts = bodies + bodies[:15] + bodies[:5]
    texts += [textgen.edit(t, s, 4 + s % 12) for s, t in enumerate(bodies[:20])]
    items = [(str(i), t) for i, t in enumerate(texts)]
    config = DedupConfig(threshold=threshold, template_df=5)
    found: list[Copies | None] = []

    def spy(*args: np.ndarray) -> Copies | None:
        found.append(copies.find_copies(*args))
        return found[-1]

    monkeypatch.setattr("neardup.dedup.core.find_copies", spy)
    fast = deduplicate(items, config)
    assert found[0] is not None
    assert found[0].copied.sum() == 35
    monkeypatch.setattr("neardup.dedup.core.find_copies", lambda *_: None)
    slow = deduplicate(items, config)
    assert fast.candidates == slow.candidates > len(fast.pairs) > 0
    assert fast.template_shingles == slow.template_shingles > 0
    for name in ("left", "right", "score", "score_lr", "score_rl", "resemblance"):
        assert np.array_equal(getattr(fast.pairs, name), getattr(slow.pairs, name))
    assert np.array_equal(fast.keep_of, slow.keep_of)


def test_a_set_is_stood_for_by_its_first_document_and_earliest_copy():
    first = np.array([0, 1, 0, 3, 1, 0, 6, 0])
    assert standing_for(first).tolist() == [True, True, True, True, True, False, True, False]


def test_pairs_of_standing_documents_spread_to_every_document_of_their_sets():
    first = np.array([0, 1, 0, 3, 1, 0, 6])  # sets {0, 2, 5}, {1, 4}, {3}, {6}
    codes = pair_codes(np.array([0, 0, 3]), np.array([2, 3, 6]))  # 0~2: the set's own pairs
    pairs = {(int(c) >> 32, int(c) & 0xFFFFFFFF) for c in spread_pairs(codes, first)}
    assert pairs == {(0, 2), (0, 5), (2, 5), (0, 3), (2, 3), (3, 5), (3, 6)}
    assert spread_pairs(codes[:0], first).size == 0


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 30), max_size=12), min_size=1, max_size=8),
    st.lists(st.integers(0, 7), max_size=24),
    st.sampled_from([(0.5, 0.5, 1, 50), (0.6, 0.3, 2, 4), (0.8, 0.8, 3, 3)]),
)
def test_candidates_counting_each_set_once_are_those_counting_every_copy(bases, picks, rule):
    """Documents repeating a few sets in any order (sets of many copies, empty sets, keys in
    capped buckets): the same candidate pairs and capped buckets as when no copy is known."""
    mixed = [np.sort(np.array(sorted(s), np.uint64) * np.uint64(0x9E3779B97F4A7C15)) for s in bases]
    sets = [mixed[p % len(bases)] for p in picks] or [mixed[0]]
    values = np.concatenate(sets)
    offsets = np.r_[0, np.cumsum([s.size for s in sets])].astype(np.int64)
    score, least, hits, bucket = rule
    found = find_copies(values, offsets, set_hashes(values, offsets))
    first = None if found is None else found.first
    rules = {"prefix_score": score, "least": least, "hits": hits}
    every = prefix_candidates(offsets, values, bucket, **rules)
    once = prefix_candidates(offsets, values, bucket, **rules, first=first)
    assert once.left.tolist() == every.left.tolist()
    assert once.right.tolist() == every.right.tolist()
    assert once.capped_buckets == every.capped_buckets
