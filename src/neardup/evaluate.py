"""Judge near-duplicate detection against expert labels (METHODS §8).

Pair-level counts from two clusterings: a pair of documents is a predicted duplicate when
both fall in one predicted cluster, a true duplicate when both fall in one labelled cluster.
Type I errors are false duplicates among those found (the harmful kind: an original is
lost), type II errors are true duplicates missed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class PairScores:
    """Pair counts and the measures derived from them."""

    true_positives: int
    predicted: int
    actual: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.actual if self.actual else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def type_i_percent(self) -> float:
        """False duplicates among the duplicates found, in percent."""
        return 100.0 * (1.0 - self.precision)

    @property
    def type_ii_percent(self) -> float:
        """True duplicates missed, in percent."""
        return 100.0 * (1.0 - self.recall)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "found": self.predicted,
            "true_positives": self.true_positives,
            "duplicates": self.actual,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "type_i_percent": self.type_i_percent,
            "type_ii_percent": self.type_ii_percent,
        }


def _pairs_within(labels: np.ndarray) -> int:
    _, sizes = np.unique(labels, return_counts=True)
    return int((sizes * (sizes - 1) // 2).sum())


def cluster_pair_scores(predicted: np.ndarray, truth: np.ndarray) -> PairScores:
    """Pair precision / recall of a predicted clustering against a labelled one.

    Both are label arrays over the same documents (any hashable label type for ``truth``).
    """
    predicted = np.asarray(predicted)
    _, truth_codes = np.unique(np.asarray(truth), return_inverse=True)
    if predicted.shape != truth_codes.shape:
        raise ValueError("predicted and truth labels must cover the same documents")
    _, pred_codes = np.unique(predicted, return_inverse=True)
    joint = pred_codes.astype(np.int64) * (truth_codes.max(initial=0) + 1) + truth_codes
    return PairScores(_pairs_within(joint), _pairs_within(pred_codes), _pairs_within(truth_codes))
