import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.fingerprints.measures import (
    containment,
    dice,
    hamming,
    overlap,
    resemblance,
    shared_percent,
)


def arr(*values):
    return np.array(sorted(values), dtype=np.uint64)


def test_hand_computed_measures():
    a, b = arr(1, 2, 3, 4), arr(3, 4, 5, 6, 7, 8)
    assert resemblance(a, b) == pytest.approx(2 / 8)
    assert containment(a, b) == pytest.approx(2 / 4)
    assert containment(b, a) == pytest.approx(2 / 6)
    assert dice(a, b) == pytest.approx(4 / 10)
    assert shared_percent(a, b) == pytest.approx(50.0)
    o = overlap(a, b)
    assert (o.a, o.b, o.shared, o.union) == (4, 6, 2, 8)


def test_small_text_quoted_in_large_one_is_fully_contained_but_not_resembling():
    small, large = arr(1, 2, 3), arr(*range(1, 101))
    assert containment(small, large) == 1.0
    assert resemblance(small, large) == pytest.approx(0.03)


def test_empty_sets_measure_zero():
    empty = arr()
    for f in (resemblance, containment, dice, shared_percent):
        assert f(empty, empty) == 0.0
        assert f(empty, arr(1)) == 0.0


def test_as_dict_has_every_key():
    keys = set(overlap(arr(1), arr(1)).as_dict())
    assert {
        "resemblance",
        "containment_a_in_b",
        "containment_b_in_a",
        "dice",
        "shingles_a",
        "shingles_b",
        "shared",
    } <= keys


sets = st.sets(st.integers(0, 2**64 - 1), max_size=40).map(lambda s: arr(*s))


@given(sets, sets)
def test_measure_invariants(a, b):
    r, d = resemblance(a, b), dice(a, b)
    assert r == resemblance(b, a)
    assert 0.0 <= r <= d <= 1.0
    assert containment(a, b) >= r
    if a.size:
        assert resemblance(a, a) == 1.0
        assert containment(a, a) == 1.0


def test_hamming():
    assert hamming(0, 2**64 - 1) == 64
    assert hamming(0b1011, 0b0001) == 2
