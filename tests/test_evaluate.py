import numpy as np
import pytest

from neardup.evaluate import cluster_pair_scores


def test_hand_computed_pair_scores():
    # truth: {a,b,c} {d,e} {f}; predicted: {a,b} {c,d} {e} {f}
    truth = np.array(["x", "x", "x", "y", "y", "z"])
    predicted = np.array([0, 0, 2, 2, 4, 5])
    s = cluster_pair_scores(predicted, truth)
    assert (s.true_positives, s.predicted, s.actual) == (1, 2, 4)
    assert s.precision == 0.5
    assert s.recall == 0.25
    assert s.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert s.type_i_percent == 50.0
    assert s.type_ii_percent == 75.0


def test_perfect_and_empty():
    labels = np.array([0, 0, 2])
    assert cluster_pair_scores(labels, labels).f1 == 1.0
    none = cluster_pair_scores(np.arange(3), np.arange(3))
    assert (none.precision, none.recall) == (1.0, 1.0)
    with pytest.raises(ValueError, match="same documents"):
        cluster_pair_scores(np.arange(3), np.arange(4))
