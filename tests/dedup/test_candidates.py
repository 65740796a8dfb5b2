import itertools

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.candidates import _counted_pairs, candidate_pairs, entry_words
from neardup.errors import ConfigError
from neardup.util.arrays import split_pair_codes


def pairs_of(c):
    return set(zip(c.left.tolist(), c.right.tolist(), strict=True))


def test_documents_sharing_a_key_become_one_pair_each():
    docs = np.array([0, 1, 2, 0, 1, 3])
    keys = np.array([7, 7, 7, 9, 9, 5], dtype=np.uint64)
    c = candidate_pairs(docs, keys)
    assert pairs_of(c) == {(0, 1), (0, 2), (1, 2)}
    assert c.capped_buckets == 0


def test_a_document_repeating_a_key_is_not_paired_with_itself():
    c = candidate_pairs(np.array([4, 4, 2]), np.array([1, 1, 1], dtype=np.uint64))
    assert pairs_of(c) == {(2, 4)}


def test_oversized_buckets_pair_with_their_first_document_only():
    docs = np.arange(10)
    c = candidate_pairs(docs, np.zeros(10, dtype=np.uint64), max_bucket=4)
    assert pairs_of(c) == {(0, d) for d in range(1, 10)}
    assert c.capped_buckets == 1
    with pytest.raises(ConfigError):
        candidate_pairs(docs, np.zeros(10, dtype=np.uint64), max_bucket=1)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), max_size=120))
def test_equals_brute_force(entries):
    docs = np.array([d for d, _ in entries], dtype=np.int64)
    keys = np.array([k for _, k in entries], dtype=np.uint64)
    expected = set()
    for i, (a, ka) in enumerate(entries):
        for b, kb in entries[i + 1 :]:
            if ka == kb and a != b:
                expected.add((min(a, b), max(a, b)))
    assert pairs_of(candidate_pairs(docs, keys)) == expected


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 30), min_size=1, max_size=12), min_size=2, max_size=25),
    st.sampled_from([0.3, 0.5, 0.55, 0.8, 1.0]),
)
def test_prefix_filter_keeps_every_pair_reaching_the_score(sets, score):
    docs = np.concatenate([np.full(len(s), d) for d, s in enumerate(sets)])
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    found = pairs_of(candidate_pairs(docs, keys, max_bucket=1000, prefix_score=score))
    for a, b in itertools.combinations(range(len(sets)), 2):
        shared = len(sets[a] & sets[b])
        if shared >= score * min(len(sets[a]), len(sets[b])) and shared:
            assert (a, b) in found
    assert found <= pairs_of(candidate_pairs(docs, keys, max_bucket=1000))


def test_prefix_filter_drops_pairs_of_common_keys_only():
    # 0 and 1 share only the common key 9 (in every document): below 0.5 of either
    sets = [{1, 2, 3, 9}, {4, 5, 6, 9}, {7, 8, 9}, {1, 2, 3, 9}]
    docs = np.concatenate([np.full(len(s), d) for d, s in enumerate(sets)])
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    assert pairs_of(candidate_pairs(docs, keys, prefix_score=0.5)) == {(0, 3)}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 25), min_size=1, max_size=12), min_size=2, max_size=25),
    st.sampled_from([0.5, 0.65, 0.7, 0.9]),
    st.sampled_from([0.3, 0.5]),
    st.integers(2, 5),
    st.data(),
    st.booleans(),
    st.integers(1, 5),
    st.integers(2, 8),
)
def test_template_aware_prefix_keeps_every_pair_kept_on_content(
    sets, score, fallback, frequent, data, counted, hits, max_bucket
):
    """Whichever frequent keys are discounted as templates, every pair where one document
    holds ≥ fallback of its keys and ≥ score of its content (all keys if it has none) in
    the other is a candidate — with counted hits (``least`` = fallback) too, small buckets
    capped or not."""
    docs = np.concatenate([np.full(len(s), d) for d, s in enumerate(sets)])
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    held = {k: sum(k in s for s in sets) for k in set().union(*sets)}
    frequent_keys = sorted(k for k, n in held.items() if n >= frequent)
    template = set(data.draw(st.sets(st.sampled_from(frequent_keys))) if frequent_keys else ())
    least = fallback if counted else 0.0
    cap = max_bucket if counted else 1000
    found = candidate_pairs(docs, keys, cap, score, frequent, fallback, least, hits)
    plain_found = candidate_pairs(docs, keys, cap, score, frequent, fallback)
    assert pairs_of(found) <= pairs_of(plain_found) | pairs_of(candidate_pairs(docs, keys, cap))
    assert found.capped_buckets == plain_found.capped_buckets
    reached = pairs_of(plain_found)  # a capped bucket may lose pairs: those the prefix finds
    for a, b in itertools.permutations(range(len(sets)), 2):
        mine, other = sets[a], sets[b]
        plain = len(mine & other) / len(mine)
        content = mine - template
        on_content = len(content & other) / len(content) if content else plain
        pair = (min(a, b), max(a, b))
        if plain >= fallback and on_content >= score and mine & other and pair in reached:
            assert pair in pairs_of(found)


def test_counted_hits_drop_pairs_sharing_too_few_keys():
    """Document 0 shares 2 of its 12 keys with 1 (in its prefix: all its keys are held twice)
    and 10 with 2: both pairs are prefix candidates, only (0, 2) a counted one."""
    sets = [set(range(12)), {0, 1, *range(100, 110)}, {*range(2, 12), *range(300, 310)}]
    docs = np.concatenate([np.full(len(s), d) for d, s in enumerate(sets)])
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    assert pairs_of(candidate_pairs(docs, keys, 50, 0.5)) == {(0, 1), (0, 2)}
    assert pairs_of(candidate_pairs(docs, keys, 50, 0.5, least=0.5, hits=3)) == {(0, 2)}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 40), min_size=1, max_size=15), min_size=1, max_size=30),
    st.data(),
)
def test_counted_pairs_equal_a_brute_force_count(sets, data):
    """Runs sharing (among low entries) at least the smaller of their needs of keys flagged
    on either side are the counted pairs, as a count over every pair of entries finds them
    (the kernel: a sort, counter tables per part, survivors counted exactly)."""
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    starts = np.r_[0, np.cumsum([len(s) for s in sets])].astype(np.int64)
    flags = np.array(data.draw(st.lists(st.booleans(), min_size=keys.size, max_size=keys.size)))
    low = np.array(data.draw(st.lists(st.booleans(), min_size=keys.size, max_size=keys.size)))
    need = np.array(data.draw(st.lists(st.integers(1, 4), min_size=len(sets), max_size=len(sets))))
    need = need.astype(np.int32)
    run = np.repeat(np.arange(len(sets)), np.diff(starts))
    shared: dict[tuple[int, int], int] = {}
    for t, u in itertools.combinations(range(keys.size), 2):
        if keys[t] == keys[u] and run[t] != run[u] and low[t] and low[u] and flags[t] | flags[u]:
            pair = (min(run[t], run[u]), max(run[t], run[u]))
            shared[pair] = shared.get(pair, 0) + 1
    expected = {p for p, n in shared.items() if n >= min(need[p[0]], need[p[1]])}
    codes = _counted_pairs(entry_words(starts, keys, flags, low), need)
    assert set(zip(*(c.tolist() for c in split_pair_codes(codes)), strict=True)) == expected
    assert codes.size == len(expected)


def test_counted_pairs_split_into_parts_never_split_a_key():
    """With several parts (threads), every key's entries are in one part: the same pairs as
    one part finds (keys of 0…199 held by 60 runs each; a part bound falls inside keys)."""
    rng = np.random.default_rng(5)
    sets = [np.sort(rng.choice(200, 40, replace=False)).astype(np.uint64) for _ in range(300)]
    keys = np.concatenate(sets)
    starts = np.r_[0, np.cumsum([s.size for s in sets])].astype(np.int64)
    flags = rng.random(keys.size) < 0.5
    low = np.ones(keys.size, dtype=np.bool_)
    need = rng.integers(1, 5, len(sets)).astype(np.int32)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _counted_pairs(entry_words(starts, keys, flags, low), need)
    finally:
        numba.set_num_threads(threads)
    many = _counted_pairs(entry_words(starts, keys, flags, low), need)
    assert threads == 1 or np.array_equal(one, many)
    assert one.size > 0
