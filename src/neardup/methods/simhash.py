"""SimHash (Charikar; Manku et al., "Detecting near-duplicates for web crawling"); docs/methods.md.

Sketch: every feature of a document (one of its shingle fingerprints) votes on 64 bits —
+weight where its bit is 1, −weight where it is 0 — and the sign of each sum is one bit of the
document's 64-bit fingerprint (a tie gives 0). Each feature's bits are its fingerprint passed
through a fixed 64-bit bijection (SplitMix64), so 32-bit fingerprints (CRC-32) vote on all 64
bits too. Weights (``weighting``):

- ``"count"`` (default): how often the shingle occurs in the document;
- ``"tfidf"``: count × smooth IDF from an :class:`~neardup.methods.idf.IdfModel` of the collection
  (the sources recommend it: shingles common in the collection weigh less);
- ``"binary"``: 1 per distinct shingle.

Near-duplicates differ in few bits: in the paper's view, Hamming distance ≤ k (3 of 64).

Features: the default text config gives word 4-shingles; classic token SimHash uses single
words. We recommend words — ``TextConfig(shingle=ShingleConfig(size=1))`` — with ``"count"``
weights: one changed word changes one feature instead of four. On the shared neardup-bench
(en/ru), lightly edited copies (1–5 % of words changed) fell within k = 3 for 49 % / 35 % of
pairs with word 1-shingles and count weights, 27 % / 31 % with tf-idf, and 1 % with the
default 4-shingles (median distances 4, 5 and 12 bits; unrelated texts ~30). The distance
of a copy is random — each bit flips with probability θ/π, θ the angle between the weight
vectors — so SimHash at k = 3 finds light edits of long documents, not of short ones.

Keys — two schemes; a dedup run or a collection uses the first unless ``max_distance`` or
``blocks`` is given.

**Bit bands, tuned for recall (default).** A document gets ``fingerprints`` (L) independent
64-bit fingerprints — fingerprint j votes with the bits of ``mix64(feature ^ salt_j)``, salt 0
= 0, so fingerprint 0 is the classic one and stays the method's estimate (``score``: its
Hamming distance; ``--no-verify`` / ``evaluate --estimates`` keep that view). Their 64·L bits
are cut into b bands of r consecutive bits (bit-sampling LSH); equal band ⇒ candidate. Each bit
of two documents differs with probability θ/π, θ the angle of their weight vectors (Charikar),
independently across bits and fingerprints; for two sets of equal size with resemblance s,
cos θ = 2s / (1 + s), so a bit agrees with probability :func:`bit_agreement` (s = 0.8: 0.85,
about 10 of 64 bits differ) and a pair is a candidate with probability 1 − (1 − q^r)^b. Unless
given, (b, r) come from :func:`~neardup.methods.minhash.recall_banding` — the helper MinHash
uses: P ≥ ``recall`` (0.95) for a pair exactly at the target resemblance (the threshold, or
t / (2 − t) for containment: :func:`~neardup.methods.minhash.target_resemblance`), with the
fewest false candidates. L, unless given, is the fewest of 8, 16, … 64 that keeps unrelated
texts (θ = π/2, a bit agrees with probability ½) below ``UNRELATED_BUDGET`` = 1e-3
candidates (:func:`tuned_bit_bands`): sketching costs 64·L votes per feature, linear in the
corpus, chance candidates cost verification, quadratic in it. t = 0.8 → 16 fingerprints, 48
bands of 17 bits; containment 0.8 → 56, 184 × 18; t = 0.9 → 8, 23 × 19. Below resemblance
~0.65 even 64 fingerprints cannot reach 0.95 within the budget; the budget wins there (the
best recall within it, :meth:`SimHash.candidate_probability` says how much) — use MinHash.
The formula is for Gaussian hyperplanes; our ±1 votes are checked against it on random
texts (tests: within 0.015 per bit). Bits carry less than MinHash values, so the curve is
flatter and the sketch dearer — costs in the README.

**Pigeonhole tables (Manku et al.; the paper's scheme: ``max_distance=3``, ``blocks=4``).**
Only fingerprint 0. Its 64 bits are cut into ``blocks`` ≥ k + 1 contiguous
blocks, as even as possible (64 / 5 → 13, 13, 13, 13, 12; block 0 holds the lowest bits). Two
fingerprints within distance k differ in at most k blocks, so they agree exactly on at least
``blocks − k`` of them. There is one table per choice of ``blocks − k`` blocks, C(blocks, k)
tables in all, keyed by the bits of the chosen blocks: equal keys = candidate pair, and every
pair within k shares a key. With ``blocks = k + 1`` (the default once k is given: 4 tables of
16 bits for k = 3) each table keys on one block; more blocks mean more tables but wider keys,
so fewer chance candidates (k = 3, 6 blocks: 20 tables keyed on 32 bits). This is the
"permuted tables" layout of Manku et al.: table t holds every fingerprint with its chosen
blocks moved to the front, and a query probes that prefix; here the key–value store does the
probing. It promises only pairs within k bits: at resemblance 0.8 (≈ 10 bits apart) it
finds 58 of 200 copies with 3 % of their words changed, the bit bands ≥ 95 %.

Short texts: SimHash is weak below ~500 characters — few features cast the 64 votes, so one
edit moves many bits. A document with fewer than :data:`SHORT_FEATURES` distinct features
still gets a fingerprint, but the batch raises one
:class:`~neardup.errors.WeakSignatureWarning` naming how many documents are short. We count
features, not characters, because votes are what make a fingerprint stable: on the shared
corpora 40 word features ≈ 560 characters of English or 540 of Russian (4-shingles: ≈ 460 /
510), but only ~100 characters of segmented Chinese. A document with no features gets the
fingerprint 0, which emits no keys (otherwise all empty texts would be "duplicates").
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal, get_args

import numpy as np

from neardup.errors import ConfigError, SignatureError, warn_weak
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.base import Estimate, IdfMethodBase, Keys, Signatures
from neardup.methods.minhash import (
    DEFAULT_RECALL,
    Measure,
    candidate_probability,
    check_recall_target,
    recall_banding,
    require_int,
    target_resemblance,
)
from neardup.methods.simhash_kernels import mix64_array, simhash_batch

Weighting = Literal["count", "tfidf", "binary"]
WEIGHTINGS: tuple[str, ...] = get_args(Weighting)
BITS = 64
SHORT_FEATURES = 40  # fewer distinct features than this ⇒ "short text" warning (~500 chars)
MAX_TABLES = 256  # C(blocks, k) tables; more would make every document cost too many keys
_SALT_STEP = 0x9E3779B97F4A7C15
_BAND_STEP = 0xD1B54A32D192ED03  # per-band salts of the bit bands
TFIDF_SCALE = 1024  # tf-idf weights are rounded to 1/1024 so the bit sums are exact integers


FINGERPRINT_STEP = 8  # tuned: 8, 16, … fingerprints (512 bits each step)
MAX_FINGERPRINTS = 64
UNRELATED_BUDGET = 1e-3  # tuned: P(candidate) of unrelated texts (θ = π/2), if reachable
PAPER_DISTANCE = 3  # the pigeonhole default once the scheme is chosen


@dataclass(frozen=True, slots=True)
class SimHashConfig:
    """SimHash parameters: weighting, then the keys — bit bands tuned for recall at
    ``threshold`` in ``measure`` (default; ``fingerprints``/``bands``/``rows`` fix them), or the
    paper's pigeonhole tables when ``max_distance`` (k) or ``blocks`` is given.

    Left-out key parameters are derived (and stored, so ``config_id`` records them) at
    construction: bit bands → ``fingerprints`` and (b, r) by :func:`tuned_bit_bands`
    (``fingerprints`` given: its 64·L bits banded by
    :func:`~neardup.methods.minhash.recall_banding`, 8 if only b or r is given; one of b, r
    given → the other fills the bits); pigeonhole → k = 3, ``blocks`` = k + 1, one
    fingerprint.
    """

    weighting: Weighting = "count"
    max_distance: int | None = None
    blocks: int | None = None
    fingerprints: int | None = None
    bands: int | None = None
    rows: int | None = None
    threshold: float = 0.8
    measure: Measure = "resemblance"
    recall: float = DEFAULT_RECALL

    def __post_init__(self) -> None:
        if self.weighting not in WEIGHTINGS:
            raise ConfigError(f"weighting={self.weighting!r} is not one of {', '.join(WEIGHTINGS)}")
        check_recall_target(self.threshold, self.measure, self.recall)
        for name in ("threshold", "recall"):  # 1 and 1.0: one config id
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.fingerprints is not None:
            require_int("fingerprints", self.fingerprints, 1, MAX_FINGERPRINTS)
        if self.pigeonhole:
            self._pigeonhole()
        else:
            self._bit_bands()

    @property
    def pigeonhole(self) -> bool:
        """Whether the keys are the paper's pigeonhole tables (else bit bands)."""
        return self.max_distance is not None or self.blocks is not None

    @property
    def target(self) -> float:
        """The resemblance the bit bands are tuned for (see ``target_resemblance``)."""
        return target_resemblance(self.threshold, self.measure)

    def _pigeonhole(self) -> None:
        if self.bands is not None or self.rows is not None or self.fingerprints not in (None, 1):
            raise ConfigError(
                "max_distance/blocks choose the pigeonhole tables of one fingerprint; "
                "bands/rows/fingerprints choose bit bands: give one scheme's parameters"
            )
        k = PAPER_DISTANCE if self.max_distance is None else self.max_distance
        if not _is_int(k) or not 0 <= k < BITS:
            raise ConfigError(f"max_distance={k!r} must be an integer in [0, 63]")
        blocks = k + 1 if self.blocks is None else self.blocks
        if not _is_int(blocks) or not 1 <= blocks <= BITS:
            raise ConfigError(f"blocks={blocks!r} must be an integer in [1, 64]")
        if blocks < k + 1:
            raise ConfigError(
                f"blocks={blocks} must be at least max_distance + 1 = "
                f"{k + 1}, or pairs within the distance can share no block"
            )
        tables = math.comb(blocks, k)
        if tables > MAX_TABLES:
            raise ConfigError(
                f"blocks={blocks} with max_distance={k} needs {tables} "
                f"tables (C(blocks, k)); at most {MAX_TABLES}: use fewer blocks"
            )
        for name, value in (("max_distance", k), ("blocks", blocks), ("fingerprints", 1)):
            object.__setattr__(self, name, value)

    def _bit_bands(self) -> None:
        if self.fingerprints is None and self.bands is None and self.rows is None:
            fps, bands, rows = tuned_bit_bands(self.target, self.recall)
        else:
            fps = FINGERPRINT_STEP if self.fingerprints is None else self.fingerprints
            bands, rows = self._given_bands(fps)
        for name, value in (("fingerprints", fps), ("bands", bands), ("rows", rows)):
            object.__setattr__(self, name, value)

    def _given_bands(self, fps: int) -> tuple[int, int]:
        """(b, r) over the 64·``fps`` bits: as given, one filled from the other, or tuned."""
        bits = BITS * fps
        for name in ("bands", "rows"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 1, bits)
        bands, rows = self.bands, self.rows
        if bands is None and rows is None:
            found = recall_banding(bits, self.target, self.recall, bit_agreement)
            if found is None:
                raise ConfigError(
                    f"fingerprints={fps} ({bits} bits) cannot find a pair of resemblance "
                    f"{self.target:.3g} with probability {self.recall:g}: use more "
                    f"fingerprints, a lower recall, or give bands/rows"
                )
            bands, rows = found
        elif bands is None:
            bands = bits // rows
        elif rows is None:
            rows = bits // bands
        if bands * rows > bits:
            raise ConfigError(
                f"bands={bands} × rows={rows} = {bands * rows} exceeds the {bits} bits of "
                f"fingerprints={fps}"
            )
        return bands, rows


@lru_cache(maxsize=256)
def tuned_bit_bands(s_min: float, recall: float = DEFAULT_RECALL) -> tuple[int, int, int]:
    """``(fingerprints, bands, rows)``: the fewest fingerprints (8, 16, … 64) whose recall
    bands (:func:`~neardup.methods.minhash.recall_banding`) make unrelated texts (a bit
    agrees with probability ½) candidates with probability ≤ ``UNRELATED_BUDGET``.

    More fingerprints cost sketching time linear in the corpus, chance candidates cost
    verification quadratic in it. Where even 64 fingerprints cannot (resemblance below
    ~0.65), the budget wins: the 64-fingerprint bands with the highest P(s_min) among those
    within it — recall at s_min is then below ``recall`` (:meth:`SimHash.candidate_probability`
    says how much), rather than nearly every pair of the corpus becoming a candidate.
    """
    for fps in range(FINGERPRINT_STEP, MAX_FINGERPRINTS + 1, FINGERPRINT_STEP):
        found = recall_banding(BITS * fps, s_min, recall, bit_agreement)
        if found is not None and candidate_probability(0.5, *found) <= UNRELATED_BUDGET:
            return (fps, *found)
    bits = BITS * MAX_FINGERPRINTS
    q = float(bit_agreement(s_min))
    best = (-1.0, 0, 0)
    for rows in range(1, BITS + 1):
        # the most bands of this width within the budget: 1 − (1 − 2^-r)^b ≤ budget
        bands = min(bits // rows, int(math.log1p(-UNRELATED_BUDGET) / math.log1p(-(0.5**rows))))
        if bands >= 1:
            best = max(best, (float(candidate_probability(q, bands, rows)), bands, rows))
    return MAX_FINGERPRINTS, best[1], best[2]


def bit_agreement(s: float | np.ndarray) -> np.ndarray:
    """Probability that one SimHash bit of two documents agrees, at resemblance ``s``:
    1 − θ/π with cos θ = 2s / (1 + s) (two sets of equal size, binary weights)."""
    s = np.asarray(s, dtype=np.float64)
    return 1.0 - np.arccos(np.clip(2.0 * s / (1.0 + s), -1.0, 1.0)) / np.pi


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def block_layout(blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, widths)`` of the blocks: 64 bits as even as possible, wider blocks first."""
    base, extra = divmod(BITS, blocks)
    widths = np.full(blocks, base, dtype=np.uint64)
    widths[:extra] += np.uint64(1)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.uint64)
    return starts, widths


def block_tables(blocks: int, max_distance: int) -> np.ndarray:
    """Bit masks of the C(blocks, k) tables: each covers ``blocks − k`` of the blocks."""
    starts, widths = block_layout(blocks)
    block_masks = [
        ((1 << int(w)) - 1) << int(s) if w < BITS else 2**64 - 1
        for s, w in zip(starts, widths, strict=True)
    ]
    chosen = itertools.combinations(range(blocks), blocks - max_distance)
    return np.array(
        [functools.reduce(operator.or_, (block_masks[b] for b in c)) for c in chosen],
        dtype=np.uint64,
    )


def block_keys(
    fingerprints: np.ndarray, blocks: int, max_distance: int | None = None
) -> np.ndarray:
    """An ``(n, tables)`` matrix: key t = hash of (t, the fingerprint's bits under table t).

    ``max_distance`` defaults to ``blocks − 1`` (one table per block). The key is the
    SplitMix64 bijection of the masked bits XOR a per-table salt, so within a table equal keys
    mean equal bits, and keys of different tables collide only by 2**-64 chance.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    masks = block_tables(blocks, blocks - 1 if max_distance is None else max_distance)
    salts = mix64_array(np.arange(1, masks.size + 1, dtype=np.uint64) * np.uint64(_SALT_STEP))
    packed = np.ascontiguousarray((fps[:, None] & masks[None, :]) ^ salts[None, :])
    return mix64_array(packed.ravel()).reshape(packed.shape)


def fingerprint_salts(count: int) -> np.ndarray:
    """The salts of ``count`` fingerprints: 0 (the classic fingerprint), then fixed 64-bit
    words (SplitMix64 of j · golden ratio). Stored signatures depend on them."""
    salts = mix64_array(np.arange(count, dtype=np.uint64) * np.uint64(_SALT_STEP))
    salts[0] = 0
    return salts


def bit_band_keys(fingerprints: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """An ``(n, bands)`` matrix: key j = hash of (j, bits j·r … j·r + r − 1 of the row).

    Bit i of a row is bit i mod 64 of its fingerprint i // 64. The key is SplitMix64 of the
    band's bits (as an integer) XOR a per-band salt, so within a band equal keys mean equal
    bits, and different bands' keys collide only by chance.
    """
    fps = np.ascontiguousarray(fingerprints, dtype=np.uint64)
    n = fps.shape[0]
    little = fps.astype("<u8", copy=False).view(np.uint8).reshape(n, 8 * fps.shape[1])
    bits = np.unpackbits(little, axis=1, bitorder="little")
    used = bits[:, : bands * rows].reshape(n, bands, rows).astype(np.uint64)
    packed = (used << np.arange(rows, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    salts = mix64_array(np.arange(1, bands + 1, dtype=np.uint64) * np.uint64(_BAND_STEP))
    keyed = np.ascontiguousarray(packed ^ salts[None, :])
    return mix64_array(keyed.ravel()).reshape(n, bands)


def pigeonhole_probability(q: float | np.ndarray, blocks: int, max_distance: int) -> np.ndarray:
    """Probability that ≥ ``blocks − k`` of the blocks agree when each bit agrees with
    probability ``q``: the pigeonhole tables' candidate probability (block i agrees with
    probability q^width_i, independently)."""
    q = np.asarray(q, dtype=np.float64)
    _, widths = block_layout(blocks)
    dist = [np.ones_like(q)] + [np.zeros_like(q) for _ in range(blocks)]  # P(j blocks agree)
    for w in widths.tolist():
        agree = q ** int(w)
        dist = [dist[0] * (1 - agree)] + [
            dist[j] * (1 - agree) + dist[j - 1] * agree for j in range(1, blocks + 1)
        ]
    return sum(dist[blocks - max_distance :])


class SimHash(IdfMethodBase):
    """64-bit SimHash fingerprints with bit-band keys tuned for recall at the threshold, or the
    paper's pigeonhole block keys (see the module docstring).

    ``idf`` is needed for ``weighting="tfidf"``: pass a fitted :class:`IdfModel`, or call
    :meth:`fit`. It may be replaced as the collection grows; it is not part of ``config_id``.
    """

    name: ClassVar[str] = "simhash"
    code: ClassVar[int] = 6
    estimate: ClassVar[Estimate] = "hamming"
    summary: ClassVar[str] = (
        "64-bit Charikar fingerprints (Hamming estimate); bit-band keys tuned for recall at "
        "the threshold, or the paper's pigeonhole tables (max_distance=3) for light edits"
    )
    config_type: ClassVar[type] = SimHashConfig

    @property
    def needs_idf(self) -> bool:
        """Whether sketching needs collection statistics (an IDF model): tf-idf weights."""
        return self.config.weighting == "tfidf"

    @property
    def weighs_counts(self) -> bool:
        """Counts and tf-idf weigh shingles by how often they occur; binary does not."""
        return self.config.weighting != "binary"

    def weights(self, prints: FingerprintBatch) -> np.ndarray:
        """Integer weight of every feature of the batch, per ``weighting``."""
        counts = np.asarray(prints.counts, dtype=np.int64)
        if self.config.weighting == "binary":
            return np.ones(counts.size, dtype=np.int64)
        if self.config.weighting == "count":
            return counts
        if self.idf is None:
            raise ConfigError(
                "SimHash weighting='tfidf' needs an IdfModel of the collection: pass "
                "SimHash(config, text, idf=model) or call .fit(batches) before sketching"
            )
        tfidf = counts * self.idf.idf(prints.values)
        return np.rint(tfidf * TFIDF_SCALE).astype(np.int64)

    @property
    def width(self) -> int:
        """Fingerprints per signature."""
        return int(self.config.fingerprints)

    def candidate_probability(self, s: float | np.ndarray) -> float | np.ndarray:
        """Probability that two documents of resemblance ``s`` share a key (per
        :func:`bit_agreement`)."""
        cfg = self.config
        q = bit_agreement(s)
        if cfg.pigeonhole:
            result = pigeonhole_probability(q, cfg.blocks, cfg.max_distance)
            return float(result) if np.ndim(result) == 0 else result
        return candidate_probability(q, cfg.bands, cfg.rows)

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """``fingerprints`` 64-bit fingerprints per document, the classic one first (warns
        once per batch about short texts)."""
        weights = self.weights(prints)
        values = np.ascontiguousarray(prints.values, dtype=np.uint64)
        offsets = np.ascontiguousarray(prints.offsets, dtype=np.int64)
        fps = simhash_batch(values, offsets, weights, fingerprint_salts(self.width))
        _warn_short(prints.sizes())
        return Signatures.fixed(fps, self.config_id)

    def keys(self, signatures: Signatures) -> Keys:
        """One key per table or band; documents with fingerprint 0 (no features) get none."""
        cfg = self.config
        fps = self._own_matrix(signatures, self.width)
        if cfg.pigeonhole:
            keys = block_keys(fps[:, 0], cfg.blocks, cfg.max_distance)
        else:
            keys = bit_band_keys(fps, cfg.bands, cfg.rows)
        docs = np.broadcast_to(np.arange(fps.shape[0], dtype=np.int64)[:, None], keys.shape)
        keep = fps[:, 0] != 0
        return Keys(docs[keep].ravel(), keys[keep].ravel())

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Hamming distance of the classic (first) fingerprints (lower = more similar)."""
        a64 = np.asarray(a, dtype=np.uint64).reshape(-1)
        b64 = np.asarray(b, dtype=np.uint64).reshape(-1)
        if a64.size != self.width or b64.size != self.width:
            raise SignatureError(
                f"SimHash signatures have {a64.size} and {b64.size} values, expected {self.width}"
            )
        return float(np.bitwise_count(a64[0] ^ b64[0]))

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Hamming distances of the pairs ``(left[i], right[i])`` (``float64``)."""
        fps = self._own_matrix(signatures, self.width)[:, 0]
        diff = fps[np.asarray(left, dtype=np.int64)] ^ fps[np.asarray(right, dtype=np.int64)]
        return np.bitwise_count(diff).astype(np.float64)


def _warn_short(sizes: np.ndarray) -> None:
    """One WeakSignatureWarning for the batch if any document has few features."""
    short = int(np.count_nonzero(sizes < SHORT_FEATURES))
    if short:
        warn_weak(
            f"{short} of {sizes.size} documents have fewer than {SHORT_FEATURES} distinct "
            f"shingles (roughly under 500 characters): SimHash is weak on short texts; "
            f"prefer MinHash or the full comparison for them"
        )


__all__ = [
    "SHORT_FEATURES",
    "WEIGHTINGS",
    "SimHash",
    "SimHashConfig",
    "bit_agreement",
    "bit_band_keys",
    "block_keys",
    "block_layout",
    "fingerprint_salts",
    "pigeonhole_probability",
    "tuned_bit_bands",
]
