"""Sorting large arrays in place on every core: the same array as one sort."""

import numba
import numpy as np
import pytest

from neardup.util import sorting
from neardup.util.sorting import sort_in_place


@pytest.fixture
def small_parallel(monkeypatch):
    """Arrays of a few thousand values take the parallel path, on 2 threads or more."""
    monkeypatch.setattr(sorting, "PARALLEL_MIN_SIZE", 16)
    if numba.get_num_threads() < 2:
        pytest.skip("one thread: nothing to partition")


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64, endpoint=True),
        lambda rng: rng.integers(0, 3, 5000).astype(np.uint64),  # few distinct values
        lambda rng: np.sort(rng.integers(0, 1000, 5000).astype(np.uint64))[::-1].copy(),
        lambda rng: (rng.integers(0, 50, 5000).astype(np.uint64) << np.uint64(32)) | 7,
    ],
)
def test_parallel_sort_gives_the_sorted_array(small_parallel, make):
    values = make(np.random.default_rng(5))
    expected = np.sort(values)
    sort_in_place(values)
    assert np.array_equal(values, expected)


def test_all_equal_and_tiny_arrays(small_parallel):
    same = np.full(100, 9, dtype=np.uint64)
    sort_in_place(same)
    assert same.tolist() == [9] * 100
    pair = np.array([3, 1], dtype=np.uint64)
    sort_in_place(pair)
    assert pair.tolist() == [1, 3]


def test_partition_puts_values_below_the_pivot_first():
    values = np.array([5, 1, 9, 3, 7, 2, 8], dtype=np.uint64)
    cut = sorting._partition(values, np.uint64(5))
    assert cut == 3
    assert sorted(values[:cut].tolist()) == [1, 2, 3]
    assert sorted(values[cut:].tolist()) == [5, 7, 8, 9]
