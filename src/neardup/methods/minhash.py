"""MinHash signatures with LSH banding (docs/methods.md: MinHash with LSH bands).

Sketch: k fixed hash functions are applied to a document's 64-bit shingle fingerprints and the
minimum of each is kept; the fraction of equal coordinates of two signatures estimates their
resemblance (Jaccard), with standard deviation sqrt(J(1-J)/k).

Permutation family — fixed forever, stored signatures depend on it: multiply-shift
``h_i(x) = ((a_i·x + b_i) mod 2**64) >> 32`` (Dietzfelbinger), 32-bit minima stored as uint64.
The constants come from ``np.random.Generator(np.random.PCG64(seed)).bit_generator``: its first
2k raw 64-bit outputs, interleaved ``a_0, b_0, a_1, b_1, …``, with ``a_i |= 1``. Raw PCG64
output is stable across numpy versions, and the interleaving makes the first k functions of a
larger family equal to the k-function family of the same seed.

A document without shingles gets a signature of all ``0xFFFFFFFFFFFFFFFF``: it matches nothing,
emits no keys and scores 0.0 against everything (one WeakSignatureWarning per batch says how
many there were).

Keys (LSH): the k values are cut into b bands of r rows (b·r ≤ k; leftover values only count
in ``score``); band j's key is a 64-bit hash of its r values tagged with j, so equal keys mean
the same band with the same values. Two documents of resemblance s share a key with
probability P(s) = 1 − (1 − s^r)^b.

Choice of (b, r), unless given (:func:`recall_bands`): tuned for RECALL, since every candidate
is verified exactly afterwards — a false candidate costs a little time, a missed one costs the
answer. A pair exactly at the target resemblance s₀ must be a candidate with probability
≥ ``recall`` (0.95); of the (b, r) that achieve it, the one with the fewest false candidates
(least ∫₀^s₀ P(s) ds) is taken. s₀ is the threshold for ``measure="resemblance"``; for
``"containment"`` it is t / (2 − t), the resemblance of two documents of EQUAL size whose
containment is t — documents of different sizes have a lower resemblance at the same
containment (|B| = m·|A|: t / (1 + m − t)), so for a short text quoted in a long one use
``full`` or ``modm``, whose keys do not depend on the threshold.

With k = 128: s₀ = 0.5, 0.6, 0.7, 0.8, 0.9 → 23×3, 22×4, 17×5, 13×7, 10×12 (resemblance;
P(s₀) ≈ 0.95–0.96); containment 0.5–0.9 (s₀ = 0.33–0.82) → 26×2, 37×3, 18×3, 22×5, 14×8.
The cost: the curve sits left of the threshold, so pairs somewhat below it become candidates
too (t = 0.8: a pair of resemblance 0.6 is a candidate with probability 0.31, was 0.01; at 0.4,
0.02, was 0.0001); unrelated pairs (s ≈ 0) stay negligible. On the shared English corpus (100k
texts, word 5-shingles, t = 0.8 resemblance) that is 2.1× the candidates of the former bands
(5,230 vs 2,487) for 13 % more verified pairs (2,449 vs 2,169) and ~10 % more CPU time; at
containment 0.8, 3.7× the candidates for 3.3× the pairs (8,103 vs 2,480: the former bands
ignored the measure). Each extra candidate costs one exact merge of two fingerprint sets.
More permutations sharpen the curve (k = 256: 21×9 at 0.8, P(0.6) = 0.19; on that corpus 14 %
fewer candidates) but double the sketching, which costs more than verifying the candidates
saved: k = 128 stays the default.

The former criterion — minimize ``fp_weight·FP + fn_weight·FN`` with FP = ∫₀^s₀ P(s) ds and
FN = ∫_s₀^1 1 − P(s) ds (:func:`optimal_bands`; its curve crosses 1/2 near s₀, so a pair at
the threshold is found only about half of the time) — is used when ``fp_weight`` or
``fn_weight`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal, get_args

import numpy as np

from neardup.errors import ConfigError, SignatureError, warn_weak
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.base import Estimate, Keys, MethodBase, Signatures
from neardup.methods.minhash_kernels import (
    EMPTY,
    TAG_BAND,
    equal_fraction,
    minhash_matrix,
    run_hashes,
)
from neardup.util.kernels import threads_for

Measure = Literal["resemblance", "containment"]
MEASURES: tuple[str, ...] = get_args(Measure)
DEFAULT_RECALL = 0.95
_GRID_POINTS = 1001  # per side of the threshold; part of the frozen choice of (b, r)
_CHUNK = 4096  # (b, r) candidates evaluated at once, bounding memory for large k


# ---------------------------------------------------------------------------------------------
# Validation helpers shared with the megashingle method.
# ---------------------------------------------------------------------------------------------
# the most permutations a signature may have: 512 KiB per document, far beyond any useful
# setting (a huge num_perm overflowed the band arithmetic with a traceback)
MAX_PERM = 1 << 16


def require_int(name: str, value: object, low: int, high: int | None = None) -> None:
    """ConfigError unless ``value`` is an int in ``[low, high]``."""
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and value >= low and (high is None or value <= high):
        return
    bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
    raise ConfigError(f"{name}={value!r} must be an integer {bound}")


def require_fraction(name: str, value: object, *, open_low: bool = True) -> None:
    """ConfigError unless ``value`` is a real number in (0, 1] (or [0, 1])."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and (0.0 < value <= 1.0 if open_low else 0.0 <= value <= 1.0):
        return
    interval = "(0, 1]" if open_low else "[0, 1]"
    raise ConfigError(f"{name}={value!r} must be a number in {interval}")


# ---------------------------------------------------------------------------------------------
# Permutations and minima, shared with the megashingle method.
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=32)
def permutation_family(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The frozen multiply-shift constants ``(a, b)`` (uint64[num_perm] each, ``a`` odd)."""
    raw = np.random.Generator(np.random.PCG64(seed)).bit_generator.random_raw(2 * num_perm)
    raw = np.asarray(raw, dtype=np.uint64)
    a = np.ascontiguousarray(raw[0::2] | np.uint64(1))
    b = np.ascontiguousarray(raw[1::2])
    a.flags.writeable = b.flags.writeable = False
    return a, b


def min_hashes(prints: FingerprintBatch, num_perm: int, seed: int, method: str) -> np.ndarray:
    """``(n_docs, num_perm)`` minima of a batch; warns once if some documents are empty."""
    a, b = permutation_family(num_perm, seed)
    values = np.ascontiguousarray(prints.values, dtype=np.uint64)
    offsets = np.ascontiguousarray(prints.offsets, dtype=np.int64)
    with threads_for(values.size * num_perm):  # one short document: no parallel region
        matrix = minhash_matrix(values, offsets, a, b)
    empty = int(np.count_nonzero(np.diff(offsets) == 0))
    if empty:
        warn_weak(
            f"{empty} of {len(offsets) - 1} documents have no shingles: their {method} "
            f"signatures are all 0xFFFFFFFFFFFFFFFF and match nothing"
        )
    return matrix


def checked_pair(a: np.ndarray, b: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Two signatures as uint64 arrays of ``width`` values (SignatureError otherwise)."""
    a = np.asarray(a, dtype=np.uint64).ravel()
    b = np.asarray(b, dtype=np.uint64).ravel()
    if a.size != width or b.size != width:
        raise SignatureError(f"signatures have {a.size} and {b.size} values, expected {width}")
    return a, b


def pair_indices(left: np.ndarray, right: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``left``/``right`` as int64 arrays of valid document indices."""
    left = np.ascontiguousarray(left, dtype=np.int64)
    right = np.ascontiguousarray(right, dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError("left and right must be 1-d arrays of the same length")
    if left.size and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= n):
        raise IndexError(f"pair indices must lie in [0, {n})")
    return left, right


def row_keys(key_matrix: np.ndarray, minima: np.ndarray) -> Keys:
    """Keys of every non-empty document: each row of ``key_matrix`` belongs to one document."""
    keep = np.flatnonzero(minima[:, 0] != EMPTY) if minima.size else np.zeros(0, np.int64)
    per_doc = key_matrix.shape[1]
    docs = np.repeat(keep.astype(np.int64), per_doc)
    return Keys(docs, np.ascontiguousarray(key_matrix[keep]).ravel())


# ---------------------------------------------------------------------------------------------
# LSH band selection.
# ---------------------------------------------------------------------------------------------
def candidate_probability(s: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """Probability that two documents of resemblance ``s`` share a band: 1 − (1 − s^r)^b."""
    result = 1.0 - (1.0 - np.asarray(s, dtype=np.float64) ** rows) ** bands
    return float(result) if np.ndim(result) == 0 else result


def resemblance_grid(s_min: float) -> np.ndarray:
    """The fixed grid on [0, s_min] over which false candidates are integrated (part of the
    frozen choice of keys; shared with the megashingle method)."""
    return np.linspace(0.0, s_min, _GRID_POINTS)


def same(s: np.ndarray) -> np.ndarray:
    """MinHash's agreement: one signature value agrees with probability s (the resemblance)."""
    return s


def _integral(
    bands: np.ndarray,
    rows: np.ndarray,
    lo: float,
    hi: float,
    miss: bool,
    agreement: Callable[[np.ndarray], np.ndarray] = same,
) -> np.ndarray:
    """Trapezoid integral over resemblance [lo, hi] of P(s) (or 1 − P(s) if ``miss``) per
    (b, r), one unit (signature value, bit) agreeing with probability ``agreement(s)``."""
    q = agreement(np.linspace(lo, hi, _GRID_POINTS))
    p = 1.0 - (1.0 - q[None, :] ** rows[:, None]) ** bands[:, None]
    y = 1.0 - p if miss else p
    return (y[:, 1:] + y[:, :-1]).sum(axis=1) * ((hi - lo) / (_GRID_POINTS - 1) / 2.0)


@lru_cache(maxsize=64)
def optimal_bands(
    num_perm: int, threshold: float, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """``(bands, rows)`` with b·r ≤ num_perm minimizing fp_weight·FP + fn_weight·FN.

    Every (b, r) is scored at once on a fixed grid; ties go to the fewest bands.
    """
    bands = np.repeat(np.arange(1, num_perm + 1), num_perm // np.arange(1, num_perm + 1))
    rows = np.concatenate([np.arange(1, num_perm // b + 1) for b in range(1, num_perm + 1)])
    best, best_err = 0, np.inf
    for lo in range(0, bands.size, _CHUNK):
        b, r = bands[lo : lo + _CHUNK], rows[lo : lo + _CHUNK]
        err = fp_weight * _integral(b, r, 0.0, threshold, miss=False)
        err = err + fn_weight * _integral(b, r, threshold, 1.0, miss=True)
        i = int(np.argmin(err))
        if err[i] < best_err:
            best, best_err = lo + i, float(err[i])
    return int(bands[best]), int(rows[best])


def target_resemblance(threshold: float, measure: str) -> float:
    """The resemblance a pair at ``threshold`` has in the worst case LSH keys can serve: the
    threshold itself for resemblance, t / (2 − t) for containment (documents of equal size)."""
    return threshold if measure == "resemblance" else threshold / (2.0 - threshold)


def _fewest_bands(rows: int, q: float, recall: float, max_bands: int) -> int | None:
    """The fewest bands of ``rows`` units, each agreeing with probability ``q``, for which
    P ≥ recall, or None if over ``max_bands``."""
    q_band = q**rows  # one band agrees
    if q_band >= 1.0:
        return 1
    if q_band <= 0.0:
        return None
    needed = math.log(1.0 - recall) / math.log1p(-q_band)  # inf when q_band underflows
    if not needed <= max_bands:
        return None
    bands = max(1, math.ceil(needed))
    while bands <= max_bands and candidate_probability(q, bands, rows) < recall:
        bands += 1  # rounding of the logarithms
    return bands if bands <= max_bands else None


@lru_cache(maxsize=256)
def check_recall_target(threshold: float, measure: str, recall: float) -> None:
    """The run's threshold and measure, and the recall its LSH keys are tuned for, checked
    (every recall-tuned method's config)."""
    require_fraction("threshold", threshold)
    if measure not in MEASURES:
        raise ConfigError(f"measure={measure!r} is not one of {', '.join(MEASURES)}")
    require_fraction("recall", recall)
    if recall >= 1.0:
        raise ConfigError(f"recall={recall!r} must be below 1")


def recall_banding(
    units: int,
    s_min: float,
    recall: float = DEFAULT_RECALL,
    agreement: Callable[[np.ndarray], np.ndarray] = same,
) -> tuple[int, int] | None:
    """``(bands, rows)`` with b·r ≤ ``units`` for which a pair of resemblance ``s_min`` shares a
    band with probability ≥ ``recall``, with the fewest false candidates (least
    ∫₀^s_min P(s) ds; ties: fewest bands), or None if none reaches it.

    One unit of a band (a MinHash value, a SimHash bit) agrees with probability
    ``agreement(s)`` at resemblance s, independently of the others; the module function given
    is part of the cache key. Shared by MinHash (values) and SimHash (bits).
    """
    q = float(agreement(np.float64(s_min)))
    found = [
        (b, r)
        for r in range(1, units + 1)
        if (b := _fewest_bands(r, q, recall, units // r)) is not None
    ]
    if not found:
        return None
    bands = np.array([b for b, _ in found])
    rows = np.array([r for _, r in found])
    fp = _integral(bands, rows, 0.0, s_min, miss=False, agreement=agreement)
    best = min(range(len(found)), key=lambda i: (round(float(fp[i]), 12), int(bands[i])))
    return found[best]


def recall_bands(num_perm: int, s_min: float, recall: float = DEFAULT_RECALL) -> tuple[int, int]:
    """MinHash's :func:`recall_banding` over ``num_perm`` values; ConfigError if no (b, r)
    reaches ``recall`` at ``s_min``."""
    found = recall_banding(num_perm, s_min, recall)
    if found is None:
        needed = math.ceil(math.log(1.0 - recall) / math.log1p(-s_min)) if s_min < 1 else 1
        raise ConfigError(
            f"num_perm={num_perm} cannot find a pair of resemblance {s_min:.3g} with "
            f"probability {recall:g}: use num_perm ≥ {needed}, a lower recall, or give "
            f"bands/rows"
        )
    return found


# ---------------------------------------------------------------------------------------------
# The method.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MinHashConfig:
    """MinHash parameters. ``bands``/``rows`` left out are derived (and stored) at construction:
    one given → the other is ``num_perm // given``; neither → :func:`recall_bands` for the
    threshold in ``measure`` (:func:`optimal_bands` if ``fp_weight`` or ``fn_weight`` is given).
    """

    num_perm: int = 128
    seed: int = 1
    threshold: float = 0.8
    bands: int | None = None
    rows: int | None = None
    fp_weight: float | None = None
    fn_weight: float | None = None
    measure: Measure = "resemblance"
    recall: float = DEFAULT_RECALL

    def __post_init__(self) -> None:
        require_int("num_perm", self.num_perm, 1, MAX_PERM)
        require_int("seed", self.seed, 0, 2**64 - 1)
        check_recall_target(self.threshold, self.measure, self.recall)
        for name in ("fp_weight", "fn_weight"):
            if getattr(self, name) is not None:
                require_fraction(name, getattr(self, name), open_low=False)
        if self.fp_weight == 0 and self.fn_weight == 0:
            raise ConfigError("fp_weight and fn_weight cannot both be 0")
        for name in ("threshold", "recall", "fp_weight", "fn_weight"):  # 1 and 1.0: one id
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("bands", "rows"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 1, self.num_perm)
        bands, rows = self._banding()
        if bands * rows > self.num_perm:
            raise ConfigError(
                f"bands={bands} × rows={rows} = {bands * rows} exceeds num_perm={self.num_perm}"
            )
        object.__setattr__(self, "bands", bands)
        object.__setattr__(self, "rows", rows)

    @property
    def target(self) -> float:
        """The resemblance the bands are tuned for (see :func:`target_resemblance`)."""
        return target_resemblance(self.threshold, self.measure)

    def _banding(self) -> tuple[int, int]:
        if self.bands is not None and self.rows is not None:
            return self.bands, self.rows
        if self.bands is not None:
            return self.bands, self.num_perm // self.bands
        if self.rows is not None:
            return self.num_perm // self.rows, self.rows
        if self.fp_weight is None and self.fn_weight is None:
            return recall_bands(self.num_perm, self.target, self.recall)
        fp = 0.5 if self.fp_weight is None else self.fp_weight
        fn = 0.5 if self.fn_weight is None else self.fn_weight
        return optimal_bands(self.num_perm, self.target, fp, fn)


class MinHash(MethodBase):
    """MinHash sketch (k minima), resemblance score, LSH band keys."""

    name: ClassVar[str] = "minhash"
    code: ClassVar[int] = 4
    estimate: ClassVar[Estimate] = "resemblance"
    summary: ClassVar[str] = (
        "estimated resemblance from k min-hashes; LSH bands find pairs above a tunable "
        "threshold — the general-purpose choice for large corpora"
    )
    config_type: ClassVar[type] = MinHashConfig

    @property
    def bands(self) -> int:
        """Number of LSH bands b."""
        return int(self.config.bands)

    @property
    def rows(self) -> int:
        """Rows (signature values) per band r."""
        return int(self.config.rows)

    def candidate_probability(self, s: float | np.ndarray) -> float | np.ndarray:
        """Probability that documents of resemblance ``s`` share a band key."""
        return candidate_probability(s, self.bands, self.rows)

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """``num_perm`` minima per document."""
        cfg = self.config
        return Signatures.fixed(
            min_hashes(prints, cfg.num_perm, cfg.seed, "MinHash"), self._config_id
        )

    def keys(self, signatures: Signatures) -> Keys:
        """One key per band per non-empty document."""
        matrix = self._own_matrix(signatures, self.config.num_perm)
        with threads_for(matrix.size):
            bands = run_hashes(matrix, self.bands, self.rows, TAG_BAND)
        return row_keys(bands, matrix)

    def batch_keys(self, prints: FingerprintBatch) -> Keys:
        """The band keys from only the ``bands × rows`` minima they use (the first functions
        of the family are the same for every ``num_perm``): the same keys as
        ``keys(sketch(prints))`` for less work (13 × 7 = 91 of 128 at resemblance 0.8)."""
        cfg = self.config
        used = min_hashes(prints, self.bands * self.rows, cfg.seed, "MinHash")
        with threads_for(used.size):
            bands = run_hashes(used, self.bands, self.rows, TAG_BAND)
        return row_keys(bands, used)

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Fraction of equal values: estimated resemblance (0.0 if a document is empty)."""
        a, b = checked_pair(a, b, self.config.num_perm)
        if a[0] == EMPTY or b[0] == EMPTY:
            return 0.0
        return float(np.count_nonzero(a == b)) / a.size

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Estimated resemblance of every pair ``(left[i], right[i])``."""
        matrix = self._own_matrix(signatures, self.config.num_perm)
        left, right = pair_indices(left, right, len(signatures))
        return equal_fraction(matrix, left, right, 0, matrix.shape[1])


__all__ = [
    "MEASURES",
    "MinHash",
    "MinHashConfig",
    "candidate_probability",
    "optimal_bands",
    "permutation_family",
    "recall_banding",
    "recall_bands",
    "resemblance_grid",
    "same",
    "target_resemblance",
]
