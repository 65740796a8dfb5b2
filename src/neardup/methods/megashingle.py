"""Supershingles and megashingles over MinHash minima (docs/methods.md: super- and megashingles).

Sketch: the ``num_perm = groups × group_size`` (the paper: 84 = 6 × 14) MinHash minima of
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

Shape (``groups`` × ``group_size``), unless given: tuned for RECALL at the run's threshold, as
MinHash's bands are — every candidate is verified exactly afterwards, so keys serve recall
only. A pair exactly at the target resemblance s₀ (the threshold, or t / (2 − t) for
containment: :func:`~neardup.methods.minhash.target_resemblance`) must satisfy the rule with
probability ≥ ``recall`` (0.95, :func:`detection_probability`); of the shapes within the
paper's sketch budget (``num_perm`` ≤ 84 functions) and at most 45 keys per document that
achieve it, the one with the fewest false candidates (least ∫₀^s₀ P(s) ds; ties: fewest keys,
then fewest functions) is taken (:func:`recall_shape`; below t ≈ 0.45 no shape within 45 keys
reaches it and the fewest keys are taken). Rule "mega", t = 0.5, 0.6, 0.7, 0.8, 0.9, 0.95 →
8 × 1, 6 × 1, 8 × 2, 10 × 4, 9 × 8, 7 × 12 (groups × size; 28, 15, 28, 45, 36, 21 keys);
containment 0.8 → 9 × 2. The key cap: the candidates step costs in proportion to the keys, and
on the shared English corpus at t = 0.8 the 13 × 5 shape (78 keys) found 11 % fewer
candidates than 10 × 4 but took twice as long to find them (README). A dedup run or a
collection uses this unless ``num_perm``, ``groups`` or ``group_size`` is given.

The paper's fixed 84 / 6 / 14 scheme (``groups=6, group_size=14``) is built for precision: a
pair of resemblance p is a candidate with probability 0.88 at p = 0.95, 0.42 at 0.9, 0.12 at
0.85, 0.03 at 0.8 — copies of 200 words with 3 % of the words changed (resemblance ≈ 0.82)
are found 4 times in 200 at t = 0.8, ≥ 95 % with the tuned shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal, get_args

import numpy as np

from neardup.errors import ConfigError
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.base import Estimate, Keys, MethodBase, Signatures
from neardup.methods.minhash import (
    DEFAULT_RECALL,
    MAX_PERM,
    Measure,
    check_recall_target,
    checked_pair,
    min_hashes,
    pair_indices,
    require_int,
    resemblance_grid,
    row_keys,
    target_resemblance,
)
from neardup.methods.minhash_kernels import (
    EMPTY,
    TAG_MEGA,
    TAG_SUPER,
    count_equal,
    equal_fraction,
    pair_hashes,
    run_hashes,
)
from neardup.text.text_config import TextConfig
from neardup.util.kernels import threads_for

Rule = Literal["mega", "super"]
RULES: tuple[str, ...] = get_args(Rule)
PAPER_GROUPS, PAPER_GROUP_SIZE = 6, 14  # the paper's 84 = 6 × 14
MAX_TUNED_PERM = 84  # tuned shapes stay within the paper's sketch budget
MAX_TUNED_KEYS = 45  # and emit at most C(10, 2) keys per document (README: costs)


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


def key_count(groups: int, min_super: int) -> int:
    """Keys per document: the supershingles (``min_super = 1``) or the megashingles."""
    return groups if min_super == 1 else groups * (groups - 1) // 2


@lru_cache(maxsize=256)
def recall_shape(
    s_min: float,
    recall: float = DEFAULT_RECALL,
    min_super: int = 2,
    max_perm: int = MAX_TUNED_PERM,
    max_keys: int = MAX_TUNED_KEYS,
) -> tuple[int, int] | None:
    """``(groups, group_size)`` with groups × group_size ≤ ``max_perm`` for which a pair of
    resemblance ``s_min`` has ≥ ``min_super`` equal supershingles with probability ≥
    ``recall``: of those with at most ``max_keys`` keys (:func:`key_count`), the one with the
    fewest false candidates (least ∫₀^s_min P(s) ds; ties: fewest keys, then functions); if
    none is within ``max_keys`` (low targets), the fewest keys. None if no shape reaches it.

    For each size the fewest groups reaching ``recall`` is the best (more groups only add keys
    and raise P below s_min), so one shape per size is scored.
    """
    grid = resemblance_grid(s_min)
    shapes = []  # (fp, keys, functions, groups, size)
    for size in range(1, max_perm + 1):
        low = max(2, min_super)
        groups = next(
            (
                g
                for g in range(low, max_perm // size + 1)
                if detection_probability(s_min, g, size, min_super) >= recall
            ),
            None,
        )
        if groups is not None:
            fp = float(np.trapezoid(detection_probability(grid, groups, size, min_super), grid))
            shapes.append(
                (round(fp, 12), key_count(groups, min_super), groups * size, groups, size)
            )
    if not shapes:
        return None
    within = [shape for shape in shapes if shape[1] <= max_keys]
    best = min(within) if within else min(shapes, key=lambda x: (x[1], x[0], x[2]))
    return best[3], best[4]


@dataclass(frozen=True, slots=True)
class MegaShingleConfig:
    """Super/megashingle parameters; ``num_perm`` = ``groups × group_size``.

    Shape left out (none of ``num_perm``, ``groups``, ``group_size`` given): tuned for recall
    at ``threshold`` in ``measure`` (:func:`recall_shape`). Any of them given: the paper's
    6 × 14 fills the others (``num_perm`` alone: 6 groups). The result is stored, so
    ``config_id`` records it.
    """

    num_perm: int | None = None
    groups: int | None = None
    group_size: int | None = None
    seed: int = 1
    rule: Rule = "mega"
    min_super: int = 2
    threshold: float = 0.8
    measure: Measure = "resemblance"
    recall: float = DEFAULT_RECALL

    def __post_init__(self) -> None:
        for name in ("num_perm", "groups", "group_size"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 2 if name == "groups" else 1, MAX_PERM)
        require_int("seed", self.seed, 0, 2**64 - 1)
        if self.rule not in RULES:
            raise ConfigError(f"rule={self.rule!r} is not one of {', '.join(RULES)}")
        require_int("min_super", self.min_super, 1)
        if self.rule == "mega" and self.min_super != 2:
            raise ConfigError(
                f"min_super={self.min_super} applies to rule='super' only; rule='mega' means "
                f"one shared megashingle (= 2 shared supershingles)"
            )
        check_recall_target(self.threshold, self.measure, self.recall)
        for name in ("threshold", "recall"):  # 1 and 1.0: one config id
            object.__setattr__(self, name, float(getattr(self, name)))
        groups, size = self._shape()
        num_perm = groups * size if self.num_perm is None else self.num_perm
        if num_perm != groups * size:
            raise ConfigError(
                f"num_perm={num_perm} must equal groups × group_size = "
                f"{groups} × {size} = {groups * size}"
            )
        require_int("num_perm", num_perm, 1, MAX_PERM)  # groups × group_size
        require_int("min_super", self.min_super, 1, groups)
        for name, value in (("num_perm", num_perm), ("groups", groups), ("group_size", size)):
            object.__setattr__(self, name, value)

    @property
    def target(self) -> float:
        """The resemblance a tuned shape is tuned for (see ``target_resemblance``)."""
        return target_resemblance(self.threshold, self.measure)

    def _shape(self) -> tuple[int, int]:
        n, g, size = self.num_perm, self.groups, self.group_size
        if n is None and g is None and size is None:
            found = recall_shape(self.target, self.recall, self.min_super)
            if found is None:
                raise ConfigError(
                    f"no shape of at most {MAX_TUNED_PERM} functions finds a pair of "
                    f"resemblance {self.target:.3g} with probability {self.recall:g}: use a "
                    f"lower recall, or give groups/group_size"
                )
            return found
        if g is None and size is None:  # num_perm alone
            g = PAPER_GROUPS
        if g is None:
            g = n // size if n is not None else PAPER_GROUPS
        if size is None:
            size = n // g if n is not None else PAPER_GROUP_SIZE
        return g, max(size, 1)


class MegaShingle(MethodBase):
    """Supershingles/megashingles: exact-key lookup, shape tuned for recall at the threshold
    (the default in dedup and collections) or the paper's 6 × 14 when given."""

    name: ClassVar[str] = "megashingle"
    code: ClassVar[int] = 5
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "supershingles / megashingles of min-hashes: one shared key ⇒ duplicate; shape "
        "tuned for recall at the threshold, or the paper's 6 × 14 (groups=6, group_size=14)"
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


__all__ = [
    "RULES",
    "MegaShingle",
    "MegaShingleConfig",
    "detection_probability",
    "key_count",
    "recall_shape",
]
