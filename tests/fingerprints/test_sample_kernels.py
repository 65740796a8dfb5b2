"""The compiled merge walks over sorted fingerprint sets."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.intersect_kernels import share_at_least, shared_counts


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 80), max_size=60), min_size=2, max_size=12),
    st.data(),
    st.sampled_from([0.0, 0.3, 0.5, 0.6, 0.7, 1.0]),
)
def test_share_at_least_is_the_larger_containment_reaching_the_bar(sets, data, least):
    """Stopping each walk early gives what counting everything gives: a shared value, and
    ``shared / smaller >= least`` (the same float test: 3 of 5 reaches 0.6)."""
    docs = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    values = np.concatenate(docs)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    index = st.integers(0, len(docs) - 1)
    pairs = data.draw(st.lists(st.tuples(index, index), min_size=1, max_size=30))
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    shared = shared_counts(values, offsets, left, right)
    smaller = np.minimum(np.diff(offsets)[left], np.diff(offsets)[right])
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (shared > 0) & (shared / smaller >= least)
    assert np.array_equal(share_at_least(values, offsets, left, right, least), expected)


def test_the_bar_is_met_exactly_at_its_boundary():
    a = np.arange(5, dtype=np.uint64)
    b = np.array([0, 1, 2, 10, 11, 12, 13], dtype=np.uint64)
    values, offsets = np.concatenate((a, b)), np.array([0, 5, 12])
    one, two = np.array([0]), np.array([1])
    assert share_at_least(values, offsets, one, two, 0.6).tolist() == [True]  # 3 / 5
    assert share_at_least(values, offsets, one, two, 0.61).tolist() == [False]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 5000), max_size=8), min_size=1, max_size=6),
    st.sets(st.integers(0, 5000), min_size=300, max_size=2000),
    st.sampled_from([0.0, 0.3, 0.6, 1.0]),
)
def test_a_short_set_beside_a_long_one_counts_as_sets_do(shorts, long, least):
    """Pairs far apart in size (the short side gallops through the long one) count what
    the sets share, and reach the bar as counting everything does, either way round."""
    docs = [np.array(sorted(s), dtype=np.uint64) for s in [*shorts, long]]
    values = np.concatenate(docs)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    last = len(docs) - 1
    left = np.array([d for d in range(last) for _ in (0, 1)], dtype=np.int64)
    right = np.full(left.size, last, dtype=np.int64)
    left[1::2], right[1::2] = right[1::2].copy(), left[1::2].copy()  # the long one first
    shared = shared_counts(values, offsets, left, right)
    expected = [len(shorts[min(a, b)] & long) for a, b in zip(left, right, strict=True)]
    assert shared.tolist() == expected
    smaller = np.minimum(np.diff(offsets)[left], np.diff(offsets)[right])
    with np.errstate(divide="ignore", invalid="ignore"):
        bar = (shared > 0) & (shared / smaller >= least)
    assert np.array_equal(share_at_least(values, offsets, left, right, least), bar)
