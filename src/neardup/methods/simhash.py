"""SimHash (Charikar; Manku et al., "Detecting near-duplicates for web crawling"), METHODS §6.8.

Sketch: every feature of a document (one of its shingle fingerprints) votes on 64 bits —
+weight where its bit is 1, −weight where it is 0 — and the sign of each sum is one bit of the
document's 64-bit fingerprint (a tie gives 0). Each feature's bits are its fingerprint passed
through a fixed 64-bit bijection (SplitMix64), so 32-bit fingerprints (CRC-32) vote on all 64
bits too. Weights (``weighting``):

- ``"count"`` (default): how often the shingle occurs in the document;
- ``"tfidf"``: count × smooth IDF from an :class:`~neardup.idf.IdfModel` of the collection
  (the sources recommend it: shingles common in the collection weigh less);
- ``"binary"``: 1 per distinct shingle.

Near-duplicates differ in few bits: Hamming distance ≤ ``max_distance`` (k, default 3 of 64).

Features: the default text config gives word 4-shingles; classic token SimHash uses single
words. We recommend words — ``TextConfig(shingle=ShingleConfig(size=1))`` — with ``"count"``
weights: one changed word changes one feature instead of four. On the shared neardup-bench
(en/ru), lightly edited copies (1–5 % of words changed) fell within k = 3 for 49 % / 35 % of
pairs with word 1-shingles and count weights, 27 % / 31 % with tf-idf, and 1 % with the
default 4-shingles (median distances 4, 5 and 12 bits; unrelated texts ~30). The distance
of a copy is random — each bit flips with probability θ/π, θ the angle between the weight
vectors — so SimHash at k = 3 finds light edits of long documents, not of short ones.

Lookup (pigeonhole, Manku et al.): the 64 bits are cut into ``blocks`` ≥ k + 1 contiguous
blocks, as even as possible (64 / 5 → 13, 13, 13, 13, 12; block 0 holds the lowest bits). Two
fingerprints within distance k differ in at most k blocks, so they agree exactly on at least
``blocks − k`` of them. There is one table per choice of ``blocks − k`` blocks, C(blocks, k)
tables in all, keyed by the bits of the chosen blocks: equal keys = candidate pair, and every
pair within k shares a key. With ``blocks = k + 1`` (default: 4 tables of 16 bits for k = 3)
each table keys on one block; more blocks mean more tables but wider keys, so fewer chance
candidates (k = 3, 6 blocks: 20 tables keyed on 32 bits). This is the "permuted tables" layout
of Manku et al.: table t holds every fingerprint with its chosen blocks moved to the front,
and a query probes that prefix; here the key–value store does the probing.

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
import warnings
from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

import numpy as np

from neardup._kernels.simhash import mix64_array, simhash_batch
from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.methods.base import Estimate, IdfMethodBase, Keys, Signatures
from neardup.shingles import FingerprintBatch

Weighting = Literal["count", "tfidf", "binary"]
WEIGHTINGS: tuple[str, ...] = get_args(Weighting)
BITS = 64
SHORT_FEATURES = 40  # fewer distinct features than this ⇒ "short text" warning (~500 chars)
MAX_TABLES = 256  # C(blocks, k) tables; more would make every document cost too many keys
_SALT_STEP = 0x9E3779B97F4A7C15
TFIDF_SCALE = 1024  # tf-idf weights are rounded to 1/1024 so the bit sums are exact integers


@dataclass(frozen=True, slots=True)
class SimHashConfig:
    """SimHash parameters: weighting, the duplicate distance k, and the number of key blocks."""

    weighting: Weighting = "count"
    max_distance: int = 3
    blocks: int = 4

    def __post_init__(self) -> None:
        if self.weighting not in WEIGHTINGS:
            raise ConfigError(f"weighting={self.weighting!r} is not one of {', '.join(WEIGHTINGS)}")
        if not _is_int(self.max_distance) or not 0 <= self.max_distance < BITS:
            raise ConfigError(f"max_distance={self.max_distance!r} must be an integer in [0, 63]")
        if not _is_int(self.blocks) or not 1 <= self.blocks <= BITS:
            raise ConfigError(f"blocks={self.blocks!r} must be an integer in [1, 64]")
        if self.blocks < self.max_distance + 1:
            raise ConfigError(
                f"blocks={self.blocks} must be at least max_distance + 1 = "
                f"{self.max_distance + 1}, or pairs within the distance can share no block"
            )
        tables = math.comb(self.blocks, self.max_distance)
        if tables > MAX_TABLES:
            raise ConfigError(
                f"blocks={self.blocks} with max_distance={self.max_distance} needs {tables} "
                f"tables (C(blocks, k)); at most {MAX_TABLES}: use fewer blocks"
            )


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


class SimHash(IdfMethodBase):
    """64-bit SimHash with pigeonhole block keys (see the module docstring).

    ``idf`` is needed for ``weighting="tfidf"``: pass a fitted :class:`IdfModel`, or call
    :meth:`fit`. It may be replaced as the collection grows; it is not part of ``config_id``.
    """

    name: ClassVar[str] = "simhash"
    code: ClassVar[int] = 6
    estimate: ClassVar[Estimate] = "hamming"
    summary: ClassVar[str] = (
        "64-bit Charikar fingerprint, near-duplicates within a few bits (Hamming); "
        "tiny signatures, for long documents with light edits"
    )
    config_type: ClassVar[type] = SimHashConfig

    @property
    def needs_idf(self) -> bool:
        """Whether sketching needs collection statistics (an IDF model): tf-idf weights."""
        return self.config.weighting == "tfidf"

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

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """One 64-bit fingerprint per document (warns once per batch about short texts)."""
        weights = self.weights(prints)
        values = np.ascontiguousarray(prints.values, dtype=np.uint64)
        offsets = np.ascontiguousarray(prints.offsets, dtype=np.int64)
        fps = simhash_batch(values, offsets, weights)
        _warn_short(prints.sizes())
        return Signatures.fixed(fps[:, None], self.config_id)

    def keys(self, signatures: Signatures) -> Keys:
        """One key per table; documents with fingerprint 0 (no features) get none."""
        fps = self._own_matrix(signatures, 1)[:, 0]
        keys = block_keys(fps, self.config.blocks, self.config.max_distance)
        docs = np.broadcast_to(np.arange(fps.size, dtype=np.int64)[:, None], keys.shape)
        keep = fps != 0
        return Keys(docs[keep].ravel(), keys[keep].ravel())

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Hamming distance of two fingerprints (lower = more similar; ≤ k ⇒ duplicates)."""
        a64 = np.asarray(a, dtype=np.uint64).reshape(-1)
        b64 = np.asarray(b, dtype=np.uint64).reshape(-1)
        if a64.size != 1 or b64.size != 1:
            raise SignatureError(f"SimHash signatures are one value: {a64.size}, {b64.size}")
        return float(np.bitwise_count(a64[0] ^ b64[0]))

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Hamming distances of the pairs ``(left[i], right[i])`` (``float64``)."""
        fps = self._own_matrix(signatures, 1)[:, 0]
        diff = fps[np.asarray(left, dtype=np.int64)] ^ fps[np.asarray(right, dtype=np.int64)]
        return np.bitwise_count(diff).astype(np.float64)


def _warn_short(sizes: np.ndarray) -> None:
    """One WeakSignatureWarning for the batch if any document has few features."""
    short = int(np.count_nonzero(sizes < SHORT_FEATURES))
    if short:
        warnings.warn(
            f"{short} of {sizes.size} documents have fewer than {SHORT_FEATURES} distinct "
            f"shingles (roughly under 500 characters): SimHash is weak on short texts; "
            f"prefer MinHash or the full comparison for them",
            WeakSignatureWarning,
            stacklevel=3,
        )


__all__ = ["SHORT_FEATURES", "WEIGHTINGS", "SimHash", "SimHashConfig", "block_keys", "block_layout"]
