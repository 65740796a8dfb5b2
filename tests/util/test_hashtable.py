"""The kernels' open-addressing tables: lookups agree with NumPy's, and the home slots of
Han-marked fingerprints spread over the table as other values do."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.shingles import mark_han
from neardup.util.hashtable import absent, count_keys, home_slot, key_table, slot_of

SMALL = st.lists(st.integers(0, 40), max_size=80)  # repeats likely
# small fingerprints (a 32-bit hash's) and large ones
SCALED = st.sampled_from([1, 2**20, 2**58])


def _scaled(values: list[int] | set[int], scale: int) -> np.ndarray:
    ordered = sorted(values) if isinstance(values, set) else values
    return np.array(ordered, np.uint64) * np.uint64(scale)


@settings(max_examples=200, deadline=None)
@given(SMALL, SMALL, SCALED)
def test_absent_is_not_np_isin(values, others, scale):
    """Repeats on both sides."""
    v, o = _scaled(values, scale), _scaled(others, scale)
    assert np.array_equal(absent(v, o), ~np.isin(v, o))


@settings(max_examples=200, deadline=None)
@given(SMALL, st.sets(st.integers(0, 40), max_size=20), SCALED)
def test_count_keys_counts_each_key_among_the_values_and_adds_to_the_counts(values, keys, scale):
    v, k = _scaled(values, scale), _scaled(keys, scale)
    table, shift = key_table(k)
    counts = np.ones(k.size + 3, dtype=np.int32)  # longer than the keys: the rest untouched
    count_keys(v, table, k, shift, counts)
    count_keys(v[: len(values) // 2], table, k, shift, counts)
    half = v[: len(values) // 2]
    expected = [1 + int(np.sum(v == key)) + int(np.sum(half == key)) for key in k]
    assert counts.tolist() == [*expected, 1, 1, 1]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=60))
def test_every_key_is_found_at_its_last_index(keys):
    k = np.array(keys, dtype=np.uint64)
    table, shift = key_table(k)
    last = {int(key): i for i, key in enumerate(keys)}
    for key, i in last.items():
        assert table[slot_of(table, k, np.uint64(key), shift)] - 1 == i
    assert np.count_nonzero(table) == len(last)


def test_han_marked_fingerprints_spread_over_the_home_slots():
    """The Han mark sets the top bits of a fingerprint's product with its own multiplier: a
    table hashed with that multiplier would give them all a handful of home slots."""
    rng = np.random.default_rng(7)
    han = rng.integers(0, 2**63, 4096, dtype=np.int64).astype(np.uint64)
    mark_han(han, np.ones(han.size, dtype=np.bool_))
    shift = np.uint64(64 - 13)  # a table of 8,192 slots
    homes = {home_slot(v, shift) for v in han}
    assert len(homes) > 2500  # uniform: about 3,200 distinct of 8,192
