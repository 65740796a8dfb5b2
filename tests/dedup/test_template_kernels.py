"""The template kernels: exact holder counts through the filter and the partitions."""

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import template_kernels as kernels
from neardup.fingerprints.shingles import mark_han

MIX = np.uint64(0x9E3779B97F4A7C15)
NOT_COUNTED = np.empty(0, dtype=np.uint8)


def corpus(sets):
    docs = [np.unique(np.array(s, dtype=np.uint64) * MIX) for s in sets]
    values = np.concatenate(docs) if docs else np.empty(0, np.uint64)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    return docs, values, offsets


@contextmanager
def small_pieces():
    """Filters of a few words (many false positives), a partition per few keys, and scans in
    blocks of a few entries: every path of the count is taken on small inputs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "_MIN_FILTER_BITS", 7)
        patch.setattr(kernels, "_FILTER_BITS_PER_KEY", 1)
        patch.setattr(kernels, "_PART_ENTRIES", 2)
        patch.setattr(kernels, "_FIRST_BLOCK", 4)
        patch.setattr(kernels, "_SCAN_BLOCK", 16)
        yield


@settings(max_examples=80, deadline=None)
@given(
    sets=st.lists(st.lists(st.integers(0, 60), max_size=40), min_size=1, max_size=30),
    data=st.data(),
    least=st.integers(1, 6),
    odd_more=st.integers(0, 3),
    chunks=st.integers(1, 3),
)
def test_held_at_least_finds_each_wanted_fingerprint_held_by_its_bar(
    sets, data, least, odd_more, chunks
):
    """Wanted holders count for themselves, the other holders are scanned: together, the
    fingerprints of the wanted documents held by at least their bar of holders (a bar per
    key: odd keys need ``odd_more`` more), counted here by brute force."""
    docs, values, offsets = corpus(sets)
    n = len(docs)
    holders = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1)))), dtype=np.int64)
    wanted = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1)))), dtype=np.int64)
    is_holder = np.isin(np.arange(n), holders)
    mine = kernels.gather(values, offsets, wanted)
    own = np.repeat(is_holder[wanted], offsets[wanted + 1] - offsets[wanted]).astype(np.uint8)
    scan = holders[~np.isin(holders, wanted)]

    def bar(keys):
        return least + odd_more * (keys & np.uint64(1)).astype(np.int64)

    with small_pieces():
        found = kernels.held_at_least(values, offsets, mine, own, scan, NOT_COUNTED, 0, bar, chunks)
    expected = set()
    for v in np.unique(mine).tolist():
        count = sum(v in set(docs[h].tolist()) for h in holders)
        if count >= least + odd_more * (v & 1):
            expected.add(v)
    assert sorted(found.tolist()) == sorted(expected)


@settings(max_examples=40, deadline=None)
@given(
    sets=st.lists(st.lists(st.integers(0, 30), max_size=25), min_size=1, max_size=25),
    noise=st.lists(st.integers(0, 5), min_size=800, max_size=800),
)
def test_entries_counted_below_the_bar_are_not_looked_up(sets, noise):
    """With per-entry counts (never below the truth), the scan skips entries under
    ``entry_least``; the fingerprints that reach it are still found exactly."""
    docs, values, offsets = corpus(sets)
    everything = np.arange(len(docs), dtype=np.int64)
    distinct, inverse, held = np.unique(values, return_inverse=True, return_counts=True)
    over = np.minimum(held[inverse] + np.array(noise[: values.size]), 255).astype(np.uint8)
    with small_pieces():
        found = kernels.held_at_least(
            values, offsets, distinct, NOT_COUNTED, everything, over, 3,
            lambda keys: np.full(keys.size, 3), 2,
        )  # fmt: skip
    assert sorted(found.tolist()) == sorted(distinct[held >= 3].tolist())


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.integers(7, 16))
def test_the_key_filter_never_rejects_a_key(keys, bits):
    keys = np.array(keys, dtype=np.uint64)
    words = kernels.key_filter(keys, bits)
    shift = np.uint64(70 - bits)
    assert all(kernels._may_be_key(k, words, shift) for k in keys)


def test_the_key_filter_rejects_most_other_fingerprints():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, 50_000, dtype=np.int64).astype(np.uint64)
    others = rng.integers(0, 2**63, 50_000, dtype=np.int64).astype(np.uint64)
    bits = kernels.filter_bits(keys.size)
    words = kernels.key_filter(keys, bits)
    shift = np.uint64(70 - bits)
    passed = np.mean([kernels._may_be_key(v, words, shift) for v in others])
    assert passed < 0.08  # two bits a key in eight: ~5 %


def test_han_fingerprints_spread_over_the_words_of_a_filter():
    """Han fingerprints share the top bits of their image under the Han mark's multiplier;
    the filter's words (and the partitions, :func:`kernels._part`) must not."""
    rng = np.random.default_rng(3)
    hashes = rng.integers(0, 2**63, 20_000, dtype=np.int64).astype(np.uint64)
    han = mark_han(hashes, np.ones(hashes.size, dtype=np.bool_))
    words = np.unique((han * kernels._MIX2) >> np.uint64(64 - 16))
    parts = np.unique([kernels._part(v, 12) for v in han[:5000]])
    assert words.size > 10_000  # of 65 536: ~16 000 expected for random words
    assert parts.size > 2_500  # of 4 096: ~2 900 expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 6000), max_size=60), min_size=1, max_size=6),
    st.sets(st.integers(0, 6000), min_size=2000, max_size=3000),
    st.sets(st.integers(0, 6000), max_size=1500),
)
def test_shared_member_counts_are_those_of_the_sets(shorts, long, template):
    """|A ∩ B ∩ T| for pairs alike in size and far apart (the short side galloping)."""
    docs = [np.array(sorted(s), dtype=np.uint64) for s in [*shorts, long]]
    values = np.concatenate(docs)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    n = len(docs)
    left = np.array([a for a in range(n) for _ in range(n)], dtype=np.int64)
    right = np.array([b for _ in range(n) for b in range(n)], dtype=np.int64)
    sets = [*shorts, long]
    t = np.array(sorted(template), dtype=np.uint64)
    got = kernels.shared_member_counts(values, offsets, left, right, t)
    expected = [len(sets[a] & sets[b] & template) for a, b in zip(left, right, strict=True)]
    assert got.tolist() == expected
