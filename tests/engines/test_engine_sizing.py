"""How many verification groups the Spark engine makes (neardup.engines.spark.sizing: pure math)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.engines.spark.sizing import (
    COPIES,
    WORKER_MEMORY,
    group_sets,
    verification_groups,
    worker_memory,
)


def test_worker_memory_is_the_pyspark_memory_shared_by_the_cores():
    assert worker_memory(None, None) == WORKER_MEMORY
    assert worker_memory("3g", None) == 3 << 30
    assert worker_memory("4096", "2") == 2 << 30  # MiB without a unit
    assert worker_memory("512m", "1") == 512 << 20
    with pytest.raises(ValueError, match="not a memory size"):
        worker_memory("lots", None)


def test_group_sets_counts_a_document_once_per_group_holding_it():
    # a document with one draw is in one group of four; with many draws, in almost all
    assert group_sets(np.array([1]), np.array([10]), 4) == pytest.approx(2.5)
    assert group_sets(np.array([200]), np.array([1]), 4) == pytest.approx(1.0)


def test_prose_fits_one_group_a_core_and_copies_need_more():
    """100 k English texts (38 k candidates, most documents in one pair) fit two groups on
    two cores; 1 M heavily copied texts (36 M candidates, many draws each) need more."""
    prose = verification_groups(
        np.array([1, 2]), np.array([60_000, 8_000]), 3_500, 2 << 30, 2, 38_000
    )
    assert prose == 2
    copies = verification_groups(
        np.array([1, 40, 200]), np.array([300_000, 400_000, 200_000]), 1_300, 2 << 30, 2, 36_000_000
    )
    assert copies > 2
    assert (
        COPIES
        * 1_300
        * group_sets(np.array([1, 40, 200]), np.array([300_000, 400_000, 200_000]), copies)
        <= 2 << 30
    )


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 500), st.integers(1, 10**6)), min_size=1, max_size=6),
    st.integers(100, 20_000),
    st.integers(1 << 20, 8 << 30),
    st.integers(1, 64),
    st.integers(1, 10**8),
)
def test_the_fewest_groups_that_fit(hist, set_bytes, memory, slots, candidates):
    draws = np.array([d for d, _ in hist])
    docs = np.array([n for _, n in hist])
    groups = verification_groups(draws, docs, set_bytes, memory, slots, candidates)

    def fits(g: int) -> bool:
        return COPIES * set_bytes * group_sets(draws, docs, g) <= memory

    assert 1 <= groups <= max(candidates, 1)
    assert groups >= min(slots, candidates)
    assert fits(groups) or groups == candidates
    if groups > min(slots, candidates):
        assert not fits(groups - 1)
