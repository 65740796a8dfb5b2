"""The compiled merge walks over sorted fingerprint sets."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.sample import share_at_least, shared_counts


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
