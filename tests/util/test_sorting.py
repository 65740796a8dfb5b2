"""The parallel sort gives NumPy's sorted array, whatever the values and the threads."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neardup.util import sorting
from neardup.util.sorting import parallel_sort

few_values = st.sampled_from([0, 1, 7, 2**63, 2**64 - 1])
values = st.one_of(
    arrays(np.uint64, st.integers(0, 3000), elements=st.integers(0, 2**64 - 1)),
    arrays(np.uint64, st.integers(0, 3000), elements=few_values),  # long runs of one value
)


@settings(max_examples=200, deadline=None)
@given(array=values, threads=st.integers(1, 5))
def test_parallel_sort_equals_numpy_sort(array, threads):
    want = np.sort(array)
    with pytest.MonkeyPatch.context() as patch:  # arrays of any size cut and sorted on threads
        patch.setattr(sorting, "PARALLEL_SORT_MIN", 0)
        parallel_sort(array, threads)
    assert np.array_equal(array, want)


def test_a_large_array_is_sorted_in_parts(monkeypatch):
    """Above the size that is cut, the parts meet: each below the next."""
    seen: list[int] = []
    cut = sorting._partition
    monkeypatch.setattr(sorting, "_partition", lambda v, p: seen.append(cut(v, p)) or seen[-1])
    array = np.random.default_rng(7).integers(0, 2**64, sorting.PARALLEL_SORT_MIN, np.uint64)
    want = np.sort(array)
    parallel_sort(array, 2)
    assert np.array_equal(array, want)
    assert len(seen) == 1
    assert 0.4 < seen[0] / array.size < 0.6  # about half each side
