"""Similarity of two shingle sets (docs/methods.md) given as sorted arrays of distinct fingerprints.

Conventions for empty sets: two empty texts share nothing we could measure, so every measure
is 0.0 rather than undefined; a text is never "contained" in another by virtue of being empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Overlap:
    """Sizes of two shingle sets and of their intersection; every measure derives from these."""

    a: int
    b: int
    shared: int

    @property
    def union(self) -> int:
        return self.a + self.b - self.shared

    @property
    def resemblance(self) -> float:
        """Jaccard |A∩B| / |A∪B|: symmetric, 1.0 for identical sets."""
        return self.shared / self.union if self.union else 0.0

    @property
    def containment_a_in_b(self) -> float:
        """|A∩B| / |A|: how much of A is found in B (a quotation A inside B scores 1.0)."""
        return self.shared / self.a if self.a else 0.0

    @property
    def containment_b_in_a(self) -> float:
        """|A∩B| / |B|."""
        return self.shared / self.b if self.b else 0.0

    @property
    def dice(self) -> float:
        """2·|A∩B| / (|A| + |B|), the form of the Node.js write-up."""
        total = self.a + self.b
        return 2 * self.shared / total if total else 0.0

    @property
    def shared_percent(self) -> float:
        """Percent of A's shingles found in B, the PHP example's figure (100 × containment)."""
        return 100.0 * self.containment_a_in_b

    def as_dict(self) -> dict[str, float | int]:
        """Every measure, keyed by name (the CLI's JSON keys)."""
        return {
            "resemblance": self.resemblance,
            "containment_a_in_b": self.containment_a_in_b,
            "containment_b_in_a": self.containment_b_in_a,
            "dice": self.dice,
            "shared_percent": self.shared_percent,
            "shingles_a": self.a,
            "shingles_b": self.b,
            "shared": self.shared,
        }


def overlap(a: np.ndarray, b: np.ndarray) -> Overlap:
    """Sizes of A, B and A∩B for sorted arrays of distinct fingerprints."""
    shared = np.intersect1d(a, b, assume_unique=True).size
    return Overlap(int(a.size), int(b.size), int(shared))


def resemblance(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard resemblance of two fingerprint sets."""
    return overlap(a, b).resemblance


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Containment of A in B: |A∩B| / |A|."""
    return overlap(a, b).containment_a_in_b


def dice(a: np.ndarray, b: np.ndarray) -> float:
    """Dice coefficient of two fingerprint sets."""
    return overlap(a, b).dice


def shared_percent(a: np.ndarray, b: np.ndarray) -> float:
    """Percent of A's shingles that B shares."""
    return overlap(a, b).shared_percent


def hamming(a: int, b: int) -> int:
    """Number of differing bits of two 64-bit fingerprints (SimHash distance)."""
    return (int(a) ^ int(b)).bit_count()
