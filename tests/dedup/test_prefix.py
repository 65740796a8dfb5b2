"""The prefix filter's estimated counts and flags (neardup.dedup.prefix)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.prefix import (
    MAX_COUNT,
    _count,
    entry_counts,
    entry_prefix_flags,
    hit_flags,
    key_counts,
    listed_counts,
    pairing_entries,
    prefix_size,
    slots,
    table_bits,
    tables_serve,
)

keys_lists = st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 40), max_size=400)


@settings(max_examples=60, deadline=None)
@given(keys_lists, st.integers(16, 18))
def test_counts_never_fall_below_the_true_count(values, bits):
    keys = np.array(values, dtype=np.uint64)
    counts = key_counts(keys, bits)
    distinct, true = np.unique(keys, return_counts=True)
    estimated = np.array([_count(counts, k, bits) for k in distinct])
    assert np.all(estimated >= np.minimum(true, MAX_COUNT))


def test_counts_are_exact_for_few_keys_and_saturate():
    keys = np.array([5] * 300 + [7, 7, 9], dtype=np.uint64)
    counts = key_counts(keys, 16)
    assert [_count(counts, np.uint64(k), 16) for k in (5, 7, 9, 11)] == [MAX_COUNT, 2, 1, 0]
    assert table_bits(10) == 16
    assert table_bits(45_000_000) == 27


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 60), min_size=1, max_size=15), min_size=1, max_size=20),
    st.sampled_from([0.3, 0.5, 0.65, 1.0]),
)
def test_each_document_flags_its_prefix_rarest_first(sets, score):
    keys = np.concatenate([np.array(sorted(s), dtype=np.uint64) for s in sets])
    starts = np.cumsum([0] + [len(s) for s in sets]).astype(np.int64)
    count = entry_counts(keys, key_counts(keys, 16), 16)
    flags = entry_prefix_flags(starts, keys, count, score, MAX_COUNT + 1, score)
    for d, s in enumerate(sets):
        mine = flags[starts[d] : starts[d + 1]]
        assert mine.sum() == prefix_size(len(s), score)
        held = {k: sum(k in t for t in sets) for k in s}  # few keys: counts are exact
        order = sorted(s, key=lambda k: (held[k], k))
        assert set(keys[starts[d] : starts[d + 1]][mine].tolist()) == set(order[: mine.sum()])
    keep = pairing_entries(keys, flags, count, 16)
    for t, k in enumerate(keys.tolist()):
        in_prefix = any(flags[u] for u in np.flatnonzero(keys == k))
        if sum(k in s for s in sets) > 1 and in_prefix:
            assert keep[t]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 40), min_size=1, max_size=30), min_size=1, max_size=40),
    st.integers(1, 8),
    st.sampled_from([0.5, 0.65, 0.8]),
    st.integers(2, 30) | st.sampled_from([MAX_COUNT, MAX_COUNT + 1]),
)
def test_counts_by_group_by_give_the_tables_flags(docs, bits, score, frequent):
    """The Spark engine's way — slot counts by group-bys, capped at MAX_COUNT, the smaller
    of a key's two — flags exactly the entries the count tables flag, with collisions and
    saturation (tiny tables, many copies of a key)."""
    keys = np.array([k * 0x9E3779B9 for d in docs for k in sorted(d)] * 3, dtype=np.uint64)
    starts = np.concatenate(([0], np.cumsum([len(d) for d in docs] * 3))).astype(np.int64)
    s0, s1, mark = slots(keys, bits)
    by_slot = [np.minimum(np.bincount(s, minlength=1 << bits), MAX_COUNT) for s in (s0, s1)]
    count = np.minimum(by_slot[0][s0], by_slot[1][s1]).astype(np.int64)
    tables = key_counts(keys, bits)
    assert count.tolist() == entry_counts(keys, tables, bits).tolist()
    assert count.tolist() == [_count(tables, k, bits) for k in keys]
    got = entry_prefix_flags(starts, keys, count, score, frequent, score / 2)
    marked = np.zeros(1 << bits, dtype=bool)
    marked[mark[got]] = True
    pairing = pairing_entries(keys, got, count.astype(np.uint8), bits)
    assert (marked[mark] & (count > 1)).tolist() == pairing.tolist()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 300), min_size=1, max_size=40), min_size=1, max_size=12),
    st.sampled_from([0.3, 0.5, 0.7]),
    st.integers(1, 6),
    st.integers(2, 200),
    st.sampled_from([0.0, 0.6, 0.8]),
    st.integers(2, 300),
)
def test_hit_prefix_and_need(counts, least, hits, cap, score, frequent):
    """The hit prefix is the m − ⌈s·m⌉ + k first keys by (count, key), k = min(hits, ⌈s·m⌉),
    for s = ``score`` where those keys are all counted below ``frequent`` (and ``score`` is
    above ``least``), else for s = ``least``; the need is k less its keys counted above the
    cap, at least 1."""
    count = np.concatenate([np.minimum(c, MAX_COUNT) for c in counts]).astype(np.uint8)
    keys = np.arange(count.size, dtype=np.uint64)[::-1].copy()  # ties broken by the key
    starts = np.cumsum([0] + [len(c) for c in counts]).astype(np.int64)
    flags, need = hit_flags(starts, keys, count, least, hits, cap, score, frequent)

    def hit_prefix(order, s):
        overlap = max(int(np.ceil(s * len(order) - 1e-9)), 1)
        k = min(hits, overlap)
        return set(order[: len(order) - overlap + k]), k

    for d in range(len(counts)):
        lo, hi = starts[d], starts[d + 1]
        order = sorted(range(lo, hi), key=lambda t: (count[t], keys[t]))
        first, k = hit_prefix(order, least)
        if score > least:
            on_score, k_score = hit_prefix(order, score)
            if all(count[t] < frequent for t in on_score):
                first, k = on_score, k_score
        assert {t for t in range(lo, hi) if flags[t]} == first
        assert need[d] == max(k - sum(count[t] > cap for t in first), 1)


def test_han_fingerprints_spread_over_the_slots_of_the_count_and_mark_tables():
    """Han fingerprints share the top bits of their image under the Han mark's multiplier;
    the count and mark tables' slots must not (at 1M documents Han keys crowded one table
    into 1 in 4,096 of its slots and saturated it: 3.6× the candidate pairs)."""
    from neardup.dedup import prefix
    from neardup.fingerprints.shingles import is_han, mark_han

    rng = np.random.default_rng(3)
    hashes = rng.integers(0, 2**63, 20_000, dtype=np.int64).astype(np.uint64)
    han = mark_han(hashes, np.ones(hashes.size, dtype=np.bool_))
    assert is_han(han).all()
    for mix in (prefix._MIX_COUNT, prefix._MIX_COUNT2, prefix._MIX_MARK):
        slots = np.unique((han * mix) >> np.uint64(64 - 16))
        assert slots.size > 10_000  # of 65 536: ~16 000 expected for random slots


def test_tables_serve_up_to_sixteen_entries_a_slot_of_the_largest_tables():
    assert all(map(tables_serve, [1, 10**9, 16 << 27]))
    assert not any(map(tables_serve, [(16 << 27) + 1, 16 * 10**9]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(0, 2**64 - 1) | st.integers(0, 30), max_size=12), max_size=8))
def test_listed_counts_fill_the_listed_keys_and_one_for_the_others(sets):
    """Keys held by several documents get their exact count, in any listed order."""
    docs = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    keys = np.concatenate([np.empty(0, np.uint64), *docs])
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    held = {k: sum(k in s for s in sets) for s in sets for k in s}
    listed = [[k for k in reversed(sorted(s)) if held[k] > 1] for s in sets]
    listed_keys = np.array([k for ks in listed for k in ks], dtype=np.uint64)
    listed_offsets = np.r_[0, np.cumsum([len(ks) for ks in listed])].astype(np.int64)
    counts = np.array([held[k] for k in listed_keys.tolist()], dtype=np.int64)
    got = listed_counts(offsets, keys, listed_offsets, listed_keys, counts)
    assert got.tolist() == [held[k] for k in keys.tolist()]
