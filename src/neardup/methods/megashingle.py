"""Supershingles and megashingles over an 84-function MinHash (METHODS §6 items 4–6).

Sketch: the ``num_perm = groups × group_size`` (84 = 6 × 14) MinHash minima of
:mod:`neardup.methods.minhash` (same frozen permutation family and seed), cut into ``groups``
runs of ``group_size`` consecutive minima; each run hashes to a supershingle, and every pair
``i < j`` of supershingles hashes to a megashingle (6 → 15). Signature layout (105 values by
default)::

    [ minima 0 … num_perm-1 | supershingles 0 … groups-1 | megashingles (0,1), (0,2), …, (g-2,g-1) ]

The minima are kept so that ``score`` estimates resemblance (fraction of equal minima) for
verification. An empty document's signature is all ``0xFFFFFFFFFFFFFFFF``: it is a duplicate of
nothing and emits no keys.

Rules: ``"super"`` — duplicates when at least ``min_super`` supershingles are equal;
``"mega"`` — duplicates when at least one megashingle is equal, which is the same decision as
``"super"`` with ``min_super = 2`` (a megashingle is equal exactly when both its supershingles
are). For resemblance p one supershingle matches with probability ≈ p^14, so ≥ 2 of 6 match
with probability 1 − (1 − p^14)^6 − 6·p^14·(1 − p^14)^5 (≈ 0.90 at p = 0.95).

Keys: the megashingles whenever ``min_super ≥ 2`` (documents with ≥ 2 equal supershingles
share one, so no duplicate is missed; verify with :meth:`MegaShingle.is_duplicate`), the
supershingles when ``min_super = 1``.

The keys are NOT tuned to a run's threshold (unlike MinHash's bands): this is the paper's fixed
84 / 6 / 14 scheme, built for precision. A pair of resemblance p is a candidate with
probability :func:`detection_probability` — 0.88 at p = 0.95, 0.42 at 0.9, 0.12 at 0.85, 0.03
at 0.8 — so in a dedup run or a collection at threshold t < ~0.95 it misses most pairs near t
(copies of 200 words with 3 % of the words changed, resemblance ≈ 0.82: 4 of 200 found at
t = 0.8). For lower thresholds use ``minhash`` (keys tuned for recall at t) or ``full``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

import numpy as np

from neardup._kernels import threads_for
from neardup._kernels.minhash import (
    EMPTY,
    TAG_MEGA,
    TAG_SUPER,
    count_equal,
    equal_fraction,
    pair_hashes,
    run_hashes,
)
from neardup.config import TextConfig
from neardup.errors import ConfigError
from neardup.methods.base import Estimate, Keys, MethodBase, Signatures
from neardup.methods.minhash import (
    MAX_PERM,
    checked_pair,
    min_hashes,
    pair_indices,
    require_int,
    row_keys,
)
from neardup.shingles import FingerprintBatch

Rule = Literal["mega", "super"]
RULES: tuple[str, ...] = get_args(Rule)


def detection_probability(
    p: float | np.ndarray, groups: int = 6, group_size: int = 14, min_super: int = 2
) -> float | np.ndarray:
    """Probability that ≥ ``min_super`` of ``groups`` supershingles match at resemblance p."""
    q = np.asarray(p, dtype=np.float64) ** group_size
    total = np.zeros_like(q)
    coeff = 1.0
    for m in range(groups + 1):  # binomial tail over at most `groups` (a handful) terms
        if m >= min_super:
            total = total + coeff * q**m * (1.0 - q) ** (groups - m)
        coeff = coeff * (groups - m) / (m + 1)
    return float(total) if np.ndim(total) == 0 else total


@dataclass(frozen=True, slots=True)
class MegaShingleConfig:
    """Super/megashingle parameters; ``num_perm`` must equal ``groups × group_size``."""

    num_perm: int = 84
    groups: int = 6
    group_size: int = 14
    seed: int = 1
    rule: Rule = "mega"
    min_super: int = 2

    def __post_init__(self) -> None:
        require_int("num_perm", self.num_perm, 1, MAX_PERM)
        require_int("groups", self.groups, 2)
        require_int("group_size", self.group_size, 1)
        require_int("seed", self.seed, 0, 2**64 - 1)
        if self.rule not in RULES:
            raise ConfigError(f"rule={self.rule!r} is not one of {', '.join(RULES)}")
        require_int("min_super", self.min_super, 1, self.groups)
        if self.num_perm != self.groups * self.group_size:
            raise ConfigError(
                f"num_perm={self.num_perm} must equal groups × group_size = "
                f"{self.groups} × {self.group_size} = {self.groups * self.group_size}"
            )
        if self.rule == "mega" and self.min_super != 2:
            raise ConfigError(
                f"min_super={self.min_super} applies to rule='super' only; rule='mega' means "
                f"one shared megashingle (= 2 shared supershingles)"
            )


class MegaShingle(MethodBase):
    """Supershingles/megashingles: exact-key lookup of near-duplicates of high resemblance."""

    name: ClassVar[str] = "megashingle"
    code: ClassVar[int] = 5
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "6 supershingles / 15 megashingles of 84 min-hashes: one shared key ⇒ duplicate; "
        "very precise, fast exact lookup, for resemblance ≥ ~0.95"
    )
    config_type: ClassVar[type] = MegaShingleConfig

    def __init__(
        self, config: MegaShingleConfig | None = None, text: TextConfig | None = None
    ) -> None:
        super().__init__(config, text)
        g = self.config.groups
        self.n_mega = g * (g - 1) // 2
        self.width = self.config.num_perm + g + self.n_mega

    @property
    def _super_slice(self) -> slice:
        return slice(self.config.num_perm, self.config.num_perm + self.config.groups)

    @property
    def _mega_slice(self) -> slice:
        return slice(self.config.num_perm + self.config.groups, self.width)

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """Minima, supershingles and megashingles of every document (see the layout above)."""
        cfg = self.config
        minima = min_hashes(prints, cfg.num_perm, cfg.seed, "megashingle")
        with threads_for(minima.size):
            supers = run_hashes(minima, cfg.groups, cfg.group_size, TAG_SUPER)
            megas = pair_hashes(supers, TAG_MEGA)
        return Signatures.fixed(np.hstack([minima, supers, megas]), self._config_id)

    def keys(self, signatures: Signatures) -> Keys:
        """Megashingles (``min_super ≥ 2``) or supershingles (``min_super = 1``)."""
        matrix = self._own_matrix(signatures, self.width)
        part = self._super_slice if self.config.min_super == 1 else self._mega_slice
        return row_keys(matrix[:, part], matrix)

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Fraction of equal minima: estimated resemblance (0.0 if a document is empty)."""
        a, b = checked_pair(a, b, self.width)
        if a[0] == EMPTY or b[0] == EMPTY:
            return 0.0
        k = self.config.num_perm
        return float(np.count_nonzero(a[:k] == b[:k])) / k

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Estimated resemblance of every pair ``(left[i], right[i])``."""
        matrix = self._own_matrix(signatures, self.width)
        left, right = pair_indices(left, right, len(signatures))
        return equal_fraction(matrix, left, right, 0, self.config.num_perm)

    def is_duplicate(self, a: np.ndarray, b: np.ndarray) -> bool:
        """The configured rule applied exactly to two signatures."""
        a, b = checked_pair(a, b, self.width)
        if a[0] == EMPTY or b[0] == EMPTY:
            return False
        if self.config.rule == "mega":
            part = self._mega_slice
            return bool(np.any(a[part] == b[part]))
        part = self._super_slice
        return int(np.count_nonzero(a[part] == b[part])) >= self.config.min_super

    def duplicate_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """``is_duplicate`` of every pair ``(left[i], right[i])`` as a bool array."""
        matrix = self._own_matrix(signatures, self.width)
        left, right = pair_indices(left, right, len(signatures))
        if self.config.rule == "mega":
            part = self._mega_slice
            return count_equal(matrix, left, right, part.start, part.stop) >= 1
        part = self._super_slice
        return count_equal(matrix, left, right, part.start, part.stop) >= self.config.min_super


__all__ = ["RULES", "MegaShingle", "MegaShingleConfig", "detection_probability"]
