"""What a dedup run is asked and what it answers: :class:`DedupConfig` (its settings and
defaults), :class:`Pairs` (verified pairs with their measures) and :class:`DedupResult`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.dedup.cluster import KeepPolicy
from neardup.dedup.defaults import (
    DEFAULT_MAX_BUCKET,
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_TEMPLATE_DF,
    DEFAULT_THRESHOLD,
    MEASURES,
    Measure,
)
from neardup.errors import ConfigError
from neardup.methods import get_method, method_classes
from neardup.methods.base import Method
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

DEFAULT_TEXT = TextConfig(CanonConfig(), ShingleConfig(unit="auto", size=3))


@dataclass(frozen=True, slots=True)
class DedupConfig:
    """Everything that decides which documents are near-duplicates and which are kept.

    The defaults were chosen on the shared benchmark, benches of mail, newsletters,
    syndicated and mixed-language text (tune split) and checked on held-out data (README):
    exact containment of 3-shingles (words, stop words kept; characters for Chinese, 2 of
    them within a clause) at t = 0.6, candidates from the prefix-filtered inverted index of
    fingerprints, shared templates discounted (``template_df``). A document is removed only
    into a kept one that holds at least ``guard`` (default: the threshold) of its content;
    with ``chain=True`` clusters are connected components of the verified pairs, removal
    staying lossless; with ``identity`` (the default) a document is not removed into a
    keeper that lacks its rare words (its names: :mod:`neardup.dedup.identity`).
    """

    text: TextConfig = field(default_factory=lambda: DEFAULT_TEXT)
    method: str = DEFAULT_METHOD
    params: tuple[tuple[str, Any], ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    measure: Measure = DEFAULT_MEASURE
    verify: bool = True
    keep: KeepPolicy = field(default_factory=lambda: KeepPolicy.parse("first"))
    guard: float | None = None  # members must reach this with the keeper (None: threshold)
    chain: bool = False  # clusters are connected components: A~B~C may join A and C
    max_bucket: int = DEFAULT_MAX_BUCKET
    template_df: int = DEFAULT_TEMPLATE_DF  # shingles of this many documents are template
    identity: bool = True  # no removal into a keeper lacking the rare words (names)
    batch_size: int = 1024  # small: every core stays busy to the last batch, little held ahead

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise ConfigError(f"threshold={self.threshold!r} must be in (0, 1]")
        if self.measure not in MEASURES:
            raise ConfigError(f"measure={self.measure!r} is not one of {', '.join(MEASURES)}")
        if self.guard is not None and not 0.0 < self.guard <= 1.0:
            raise ConfigError(f"guard={self.guard!r} must be in (0, 1]")
        if self.template_df != 0 and self.template_df < 2:
            raise ConfigError(f"template_df={self.template_df!r} must be 0 (off) or at least 2")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size={self.batch_size!r} must be positive")

    @property
    def least_keepable(self) -> float:
        """The least plain containment (in one direction) with which a verified pair can
        still be kept: the threshold or guard (a score is never above the plain one).
        Candidates and rescoring may drop pairs below it."""
        return min(self.threshold, self.removal_guard)

    @property
    def removal_guard(self) -> float:
        """What a removed document's score in its keeper must reach (the threshold unless a
        ``guard`` is set)."""
        return self.threshold if self.guard is None else self.guard

    def build_method(self) -> Method:
        """The signature method with its parameters, over this config's text config.

        A method tuned for a threshold (MinHash's LSH bands) is tuned for this run's
        threshold and measure unless its own ``threshold`` / ``measure`` parameter is given.
        """
        params = dict(self.params)
        _, config_type = method_classes(self.method)
        fields = {f.name for f in dataclasses.fields(config_type)}
        if "threshold" in fields:
            params.setdefault("threshold", self.threshold)
        if "measure" in fields:
            params.setdefault("measure", self.measure)
        return get_method(self.method, self.text, **params)


@dataclass(frozen=True, slots=True, eq=False)
class Pairs:
    """Verified pairs ``(left[i], right[i])`` (document indices) with their measures.

    ``score_lr`` is the run's measure of left in right on content shingles (templates
    discounted; the same both ways for resemblance), ``score`` the larger direction; the
    plain measures are kept beside them.
    """

    left: np.ndarray
    right: np.ndarray
    score: np.ndarray
    score_lr: np.ndarray  # how much of left's content is in right (the run's measure)
    score_rl: np.ndarray
    resemblance: np.ndarray
    containment_lr: np.ndarray  # how much of left is in right (all shingles)
    containment_rl: np.ndarray

    def __len__(self) -> int:
        return self.left.size

    def take(self, mask: np.ndarray) -> Pairs:
        return Pairs(*(getattr(self, f)[mask] for f in Pairs.__slots__))

    def joined(self, other: Pairs) -> Pairs:
        return Pairs(
            *(np.concatenate((getattr(self, f), getattr(other, f))) for f in Pairs.__slots__)
        )


@dataclass(eq=False)
class DedupResult:
    """The outcome of a dedup run, by document index (input order)."""

    ids: list[str]
    lengths: np.ndarray  # characters per text
    sizes: np.ndarray  # distinct shingles per text
    pairs: Pairs
    labels: np.ndarray  # cluster label per document (its smallest index)
    keepers: np.ndarray  # kept document per label (-1 where not a label)
    keep_of: np.ndarray  # per document: the document kept in its place (itself if kept)
    candidates: int
    capped_buckets: int
    template_shingles: int  # distinct shingles discounted as shared templates
    declined: int  # pairs ≥ threshold whose removal would have lost content
    weak: list[str]  # warnings of the method about weak signatures
    timings: dict[str, float]
    template: np.ndarray | None = None  # the template fingerprints discounted (sorted)
    rare_words: np.ndarray | None = None  # the identity check's rare words (sorted hashes)

    @property
    def removed(self) -> np.ndarray:
        """True for every document removed in favour of another that holds it."""
        return self.keep_of != np.arange(self.keep_of.size)

    @property
    def empty(self) -> np.ndarray:
        """Documents with no shingles (empty after canonicalization): never clustered."""
        return np.flatnonzero(self.sizes == 0)
