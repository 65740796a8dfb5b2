"""Deduplicate a corpus (METHODS §7): fingerprints → signatures → keys → candidates → verified
pairs → clusters → which document of each cluster to keep.

Every stage is a pure function of batches or of flat arrays, so each maps onto Spark: sketch
and keys per partition, candidates as a group-by on keys, verification per candidate pair,
clusters as connected components. On one machine the shingle fingerprints are spilled to a
temporary file (memory-mapped for verification), so memory holds only offsets, keys and pairs.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, Literal, get_args

import numba
import numpy as np

from neardup._kernels.sample import shared_counts
from neardup.arrays import pair_codes, unique
from neardup.config import CanonConfig, ShingleConfig, TextConfig
from neardup.dedup.candidates import (
    DEFAULT_MAX_BUCKET,
    Candidates,
    candidate_pairs,
    prefix_candidates,
)
from neardup.dedup.cluster import (
    KeepPolicy,
    connected_components,
    keepers_by_rank,
    lossless_keepers,
    pairs_to_keepers,
    preference_rank,
    star_labels,
)
from neardup.dedup.templates import (
    DEFAULT_TEMPLATE_DF,
    MIN_PLAIN,
    NEAR_COPY,
    content_counts,
    directional_scores,
    group_representatives,
    template_shingles,
)
from neardup.errors import ConfigError, weak_notes
from neardup.io.blocks import BatchSource, TextBatch, pairs_batch
from neardup.methods import get_method, method_classes
from neardup.methods.base import Keys, Method, Signatures
from neardup.shingles import FingerprintBatch, fingerprint_batch, fingerprint_utf8
from neardup.workers import ordered_map

Measure = Literal["resemblance", "containment"]
MEASURES: tuple[str, ...] = get_args(Measure)
DEFAULT_METHOD = "full"
DEFAULT_THRESHOLD = 0.6
DEFAULT_MEASURE: Measure = "containment"
# rounds of verifying the pairs that reach a group's final keeper (one is almost always enough)
KEEPER_ROUNDS = 6
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
    staying lossless.
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
        still be kept: the threshold or guard, or ``MIN_PLAIN`` where the template discount
        may raise a score. Candidates and rescoring may drop pairs below it."""
        lowest = min(self.threshold, self.removal_guard)
        return min(lowest, MIN_PLAIN) if self.template_df else lowest

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

    @property
    def removed(self) -> np.ndarray:
        """True for every document removed in favour of another that holds it."""
        return self.keep_of != np.arange(self.keep_of.size)

    @property
    def empty(self) -> np.ndarray:
        """Documents with no shingles (empty after canonicalization): never clustered."""
        return np.flatnonzero(self.sizes == 0)


# --------------------------------------------------------------------------------------------


class _Spill:
    """Fingerprints of every document, appended to a temporary file, then memory-mapped.

    Shingle multiplicities are kept only for a method that weighs shingles by them
    (``keep_counts``); the others see a count of 1 (they use the sets only), and the run
    holds no 4 bytes per shingle for them.
    """

    def __init__(self, directory: Path, keep_counts: bool = True) -> None:
        self.path = directory / "fingerprints.u64"
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
        self._offsets = [np.zeros(1, dtype=np.int64)]
        self._counts: list[np.ndarray] | None = [] if keep_counts else None
        self._total = 0
        self._finished: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, batch: FingerprintBatch) -> None:
        batch.values.tofile(self._file)
        self._offsets.append(batch.offsets[1:] + self._total)
        if self._counts is not None:
            self._counts.append(batch.counts)
        self._total += int(batch.values.size)

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, offsets)``: the values memory-mapped read-only (built once)."""
        values, offsets, _ = self._done()
        return values, offsets

    def _done(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._finished is None:
            self._file.close()
            values = (
                np.memmap(self.path, dtype=np.uint64, mode="r")
                if self._total
                else np.empty(0, dtype=np.uint64)
            )
            if self._counts is None:  # not kept: every shingle once, without the memory
                counts = np.broadcast_to(np.uint32(1), (self._total,))
            else:
                counts = np.concatenate(self._counts) if self._counts else np.empty(0, np.uint32)
            self._finished = (values, np.concatenate(self._offsets), counts)
            release_free_memory()  # what reading and fingerprinting freed
        return self._finished

    def batches(self, size: int) -> Iterator[FingerprintBatch]:
        """The stored fingerprints again, in batches (for methods sketched after fitting)."""
        values, offsets, counts = self._done()
        for start in range(0, offsets.size - 1, size):
            stop = min(start + size, offsets.size - 1)
            lo, hi = offsets[start], offsets[stop]
            yield FingerprintBatch(
                np.asarray(values[lo:hi]), offsets[start : stop + 1] - lo, counts[lo:hi]
            )


def release_free_memory() -> None:
    """Give the C heap's freed memory back to the system (glibc; elsewhere nothing): after
    reading, the many freed batch arrays otherwise stay counted in the peak memory."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass(eq=False)
class Scored:
    """Every candidate pair with its measures, before any threshold: a threshold sweep (or a
    run at one threshold) is then only a filter and a clustering."""

    ids: list[str]
    lengths: np.ndarray
    sizes: np.ndarray
    pairs: Pairs  # all candidate pairs, scored
    capped_buckets: int
    template_shingles: int
    weak: list[str]
    timings: dict[str, float]
    # scores further pairs as the candidates were scored (the fingerprints stay on disk until
    # close()): decide() asks it for the pairs that reach a group's final keeper
    verify: Callable[[np.ndarray, np.ndarray], Pairs] | None = None
    workspace: tempfile.TemporaryDirectory[str] | None = None
    candidates: int | None = None  # candidate pairs found (``pairs`` may hold only some)

    @property
    def candidate_count(self) -> int:
        """Candidate pairs found, scored or dropped as unable to be kept."""
        return len(self.pairs) if self.candidates is None else self.candidates

    def close(self) -> None:
        """Release the fingerprints kept for :attr:`verify`."""
        self.verify = None
        if self.workspace is not None:
            self.workspace.cleanup()
            self.workspace = None

    def __enter__(self) -> Scored:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def deduplicate(
    texts: Iterable[tuple[str, str]] | BatchSource,
    config: DedupConfig | None = None,
    *,
    field_values: Callable[[], np.ndarray] | None = None,
    progress: Callable[[int], None] | None = None,
    workdir: str | Path | None = None,
    stage: Callable[[str], None] | None = None,
) -> DedupResult:
    """Near-duplicate pairs and clusters of ``(id, text)`` items, streamed in batches.

    ``field_values`` gives, after the texts were read, one value per document for a
    ``field:NAME`` keep policy; ``progress`` is called with each batch's size, ``stage``
    with the name of each stage as it starts (for a progress display).
    """
    config = config or DedupConfig()
    with score_candidates(
        texts, config, progress=progress, workdir=workdir, stage=stage, keep_all=False
    ) as scored:
        if stage is not None:
            stage("clustering")
        values = field_values() if config.keep.kind == "field" and field_values else None
        return decide(scored, config, values)


def score_candidates(
    texts: Iterable[tuple[str, str]] | BatchSource,
    config: DedupConfig,
    *,
    progress: Callable[[int], None] | None = None,
    workdir: str | Path | None = None,
    stage: Callable[[str], None] | None = None,
    keep_all: bool = True,
) -> Scored:
    """Fingerprints, signatures, keys, candidate pairs and their scores (no threshold yet).

    The fingerprints stay in a temporary directory for :attr:`Scored.verify` until
    :meth:`Scored.close` (or the end of a ``with`` block). ``keep_all=False``: verified
    exactly, only the candidates that can be kept at this config's threshold are scored
    and kept (:func:`keepable`; a run at one threshold needs no others).
    """
    method = config.build_method()
    stage = stage or (lambda _: None)
    timings: dict[str, float] = {}
    workspace = tempfile.TemporaryDirectory(dir=workdir, prefix="neardup-")
    try:
        clock = time.perf_counter()
        stage("reading and fingerprinting")
        spill = _Spill(Path(workspace.name), keep_counts=method.weighs_counts)
        ids: list[str] = []
        lengths: list[np.ndarray] = [np.empty(0, dtype=np.int64)]
        jobs: Iterator[Callable[[], TextBatch]]
        settle = None
        if isinstance(texts, BatchSource):
            jobs, settle = texts.jobs(), texts.settle
        else:
            jobs = (partial(pairs_batch, chunk) for chunk in _chunks(texts, config.batch_size))
        needs_idf = hasattr(method, "fit") and getattr(method, "needs_idf", False)
        full_index = config.method == "full" and config.verify  # keys = the fingerprints
        # keys made on the workers, beside the fingerprints, when nothing else is needed
        early = _KeyParts() if config.verify and not full_index and not needs_idf else None
        batches = ordered_map(  # batches read and fingerprinted on every core, in order
            partial(
                _read_and_fingerprint,
                config=config.text,
                method=method if early is not None else None,
            ),
            jobs,
            workers=numba.get_num_threads(),
        )
        with contextlib.closing(batches):
            for batch, chars, prints, keys, weak in batches:
                if settle is not None and (keep := settle(batch)) is not None:
                    batch, chars, prints = batch.take(keep), chars[keep], prints.take(keep)
                    keys = None if keys is None else _keys_of(keys, keep)
                if early is not None and keys is not None:
                    early.add(keys, len(ids), weak)
                ids.extend(batch.ids)
                lengths.append(chars)
                spill.add(prints)
                if progress is not None and batch.ids:
                    progress(len(batch.ids))
        timings["fingerprints"] = time.perf_counter() - clock

        clock = time.perf_counter()
        stage("sketching")
        if needs_idf:
            method.fit(spill.batches(config.batch_size))  # type: ignore[attr-defined]
        if full_index:  # no copy of the fingerprints as keys
            signatures, keys, weak = None, None, []
        elif early is not None:
            signatures, keys, weak = None, early.arrays(), early.weak()
        else:
            signatures, keys, weak = _sketch_all(method, spill, config)
        values, offsets = spill.finish()
        timings["sketch"] = time.perf_counter() - clock

        clock = time.perf_counter()
        stage("finding candidate pairs")
        if keys is None:  # the full index: keys = fingerprints, laid out by document
            candidates = prefix_candidates(offsets, values, config.max_bucket, *_prefix(config))
        else:
            candidates = candidate_pairs(*keys, config.max_bucket, *_prefix(config))
        timings["candidates"] = time.perf_counter() - clock

        clock = time.perf_counter()
        stage(f"verifying {len(candidates):,} candidate pairs")
        found = len(candidates)
        if not keep_all and signatures is None:
            candidates = keepable(candidates, values, offsets, config)
        pairs, template = score_pairs(candidates, values, offsets, method, signatures, config)
        timings["verify"] = time.perf_counter() - clock
    except BaseException:
        workspace.cleanup()
        raise

    def verify(left: np.ndarray, right: np.ndarray) -> Pairs:
        more = Candidates(left, right, 0)
        return score_pairs(more, values, offsets, method, signatures, config, template)[0]

    return Scored(
        ids,
        np.concatenate(lengths),
        np.diff(offsets),
        pairs,
        candidates.capped_buckets,
        int(template.size),
        weak,
        timings,
        verify,
        workspace,
        found,
    )


_CHUNK_PAIRS = 1 << 22  # candidate pairs counted at a time (a few arrays of 32 MiB)


def keepable(
    candidates: Candidates, values: np.ndarray, offsets: np.ndarray, config: DedupConfig
) -> Candidates:
    """The candidates whose plain containment reaches ``least_keepable`` in one direction
    (the others are below the threshold in any measure, with or without templates, and
    group no near copies: :func:`needs_content_score`), counted in chunks so that the
    measures of all candidates are never in memory at once."""
    left, right, least = candidates.left, candidates.right, config.least_keepable
    kept_left, kept_right = [], []
    for start in range(0, left.size, _CHUNK_PAIRS):
        lo, hi = left[start : start + _CHUNK_PAIRS], right[start : start + _CHUNK_PAIRS]
        shared = shared_counts(values, offsets, lo, hi)
        smaller = np.minimum(offsets[lo + 1] - offsets[lo], offsets[hi + 1] - offsets[hi])
        with np.errstate(divide="ignore", invalid="ignore"):  # the larger containment
            keep = (shared > 0) & (shared / smaller >= least)
        kept_left.append(lo[keep])
        kept_right.append(hi[keep])
    empty = np.empty(0, dtype=np.int64)
    return Candidates(
        np.concatenate(kept_left) if kept_left else empty,
        np.concatenate(kept_right) if kept_right else empty,
        candidates.capped_buckets,
        candidates.counts,
    )


def decide(
    scored: Scored, config: DedupConfig, field_values: np.ndarray | None = None
) -> DedupResult:
    """Pairs reaching the threshold, lossless keepers, clusters, what is removed.

    A document is removed only into a keeper holding it at ≥ the guard (the threshold unless
    set) in the run's measure; clusters are the keepers' stars, or with ``chain`` the
    connected components of the pairs (several documents of a component may then be kept).
    """
    clock = time.perf_counter()
    pairs = scored.pairs.take(scored.pairs.score >= config.threshold)
    n = len(scored.ids)
    rank = preference_rank(config.keep, n, np.arange(n), scored.lengths, field_values)
    guard = config.removal_guard
    pairs, keep_of = keeper_rounds(n, pairs, rank, config, scored.verify)
    labels, keepers = cluster_labels(n, pairs, keep_of, rank, config.chain)
    timings = scored.timings | {"clusters": time.perf_counter() - clock}
    return DedupResult(
        ids=scored.ids,
        lengths=scored.lengths,
        sizes=scored.sizes,
        pairs=pairs,
        labels=labels,
        keepers=keepers,
        keep_of=keep_of,
        candidates=scored.candidate_count,
        capped_buckets=scored.capped_buckets,
        template_shingles=scored.template_shingles,
        declined=declined_pairs(pairs, keep_of, guard),
        weak=scored.weak,
        timings=timings,
    )


def keep_decisions(
    n: int, pairs: Pairs, rank: np.ndarray, config: DedupConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(keep_of, labels, keepers)`` of ``n`` documents from the pairs reaching the
    threshold and each document's preference ``rank``.

    Decisions in one connected component of the pairs depend on that component only (its
    documents' relative ranks and its pairs), so the same function over any union of whole
    components, indexed in the same relative order, gives the same answer: the Spark engine
    applies it to batches of components.
    """
    keep_of = keeper_rounds(n, pairs, rank, config, None)[1]
    labels, keepers = cluster_labels(n, pairs, keep_of, rank, config.chain)
    return keep_of, labels, keepers


def keeper_rounds(
    n: int,
    pairs: Pairs,
    rank: np.ndarray,
    config: DedupConfig,
    verify: Callable[[np.ndarray, np.ndarray], Pairs] | None,
) -> tuple[Pairs, np.ndarray]:
    """``(pairs, keep_of)``: lossless keepers, then up to ``KEEPER_ROUNDS`` rounds that
    verify each document against the keepers of its neighbours (``verify``: exact scores of
    new pairs; None: no rounds) and decide again with the pairs reaching the threshold,
    until nothing is new. Both engines (the Spark engine per component)."""
    guard = config.removal_guard
    keep_of = lossless_keepers(
        n, pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, rank, guard
    )
    checked = np.empty(0, dtype=np.uint64)  # pairs verified in a round (kept or not)
    for _ in range(KEEPER_ROUNDS if verify is not None else 0):
        left, right = pairs_to_keepers(
            pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, keep_of, guard
        )
        code = pair_codes(left, right)
        fresh = ~np.isin(code, checked, kind="sort")
        if not fresh.any():
            break
        left, right, checked = left[fresh], right[fresh], np.concatenate((checked, code[fresh]))
        more = verify(left, right)
        pairs = pairs.joined(more.take(more.score >= config.threshold))
        keep_of = lossless_keepers(
            n, pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, rank, guard
        )
    return pairs, keep_of


def cluster_labels(
    n: int, pairs: Pairs, keep_of: np.ndarray, rank: np.ndarray, chain: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, keepers)`` from the final keepers: the keepers' stars, or with ``chain``
    the connected components of the pairs, kept documents first by rank (both engines)."""
    if chain:
        labels = connected_components(n, pairs.left, pairs.right)
        kept_rank = np.where(keep_of == np.arange(n), rank, n + rank)  # kept documents first
        return labels, keepers_by_rank(labels, kept_rank)
    labels = star_labels(keep_of)
    keepers = np.full(n, -1, dtype=np.int64)
    keepers[labels] = keep_of[labels]
    return labels, keepers


def declined_pairs(pairs: Pairs, keep_of: np.ndarray, guard: float) -> int:
    """Pairs where one document is held by the other at ≥ ``guard`` yet stays kept, and not
    as the other's keeper: removing it there would have lost content held nowhere it goes."""
    kept = keep_of == np.arange(keep_of.size)
    left_declined = (
        (pairs.score_lr >= guard) & kept[pairs.left] & (keep_of[pairs.right] != pairs.left)
    )
    right_declined = (
        (pairs.score_rl >= guard) & kept[pairs.right] & (keep_of[pairs.left] != pairs.right)
    )
    return int(np.count_nonzero(left_declined | right_declined))


def _prefix(config: DedupConfig) -> tuple[float, int, float, float]:
    """The prefix filter of the full index (keys = shingles): ``(score, frequent,
    fallback, positional)`` of :func:`candidate_pairs`, so that no pair that can still be
    kept is lost; other methods' keys are not shingles (0: no filter).

    Kept pairs hold ≥ the threshold of one side's content (≥ the guard: never less); with
    templates they also hold ≥ ``least_keepable`` plainly, and the pairs that group near
    copies for the template count (``NEAR_COPY`` both ways) must be found too. Every one of
    them holds ≥ ``least_keepable`` plainly (``least``: counted hits).
    """
    if config.method != "full" or not config.verify:
        return 0.0, 0, 0.0, 0.0
    least = config.least_keepable
    if not config.template_df:
        return least, 0, least, least
    score = min(config.threshold, config.removal_guard, NEAR_COPY)
    return score, config.template_df, min(least, score), min(least, score)


def _chunks(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _read_and_fingerprint(
    job: Callable[[], TextBatch], config: TextConfig, method: Method | None = None
) -> tuple[TextBatch, np.ndarray, FingerprintBatch, Keys | None, list[str]]:
    """Run a reading job (on a worker thread): its batch, the characters of each text, its
    fingerprints, and with ``method`` its keys and weak-signature notes."""
    batch = job()
    if batch.utf8 is not None:
        prints = fingerprint_utf8(*batch.utf8, config)
    else:
        prints = fingerprint_batch(batch.texts or [], config)
    keys = None
    with weak_notes() as weak:
        if method is not None:
            keys = method.batch_keys(prints)
    return batch, batch.char_lengths(), prints, keys, weak


def _keys_of(keys: Keys, keep: np.ndarray) -> Keys:
    """A batch's keys of the documents where ``keep`` (a mask), numbered among those."""
    number = np.cumsum(keep) - 1
    held = keep[keys.docs]
    return Keys(number[keys.docs[held]], keys.keys[held])


class _KeyParts:
    """Keys of consecutive batches (document numbers made global), and their weak notes."""

    def __init__(self) -> None:
        self.docs: list[np.ndarray] = []
        self.keys: list[np.ndarray] = []
        self.notes: dict[str, None] = {}

    def add(self, keys: Keys, base: int, notes: list[str]) -> None:
        """The keys of a batch whose first document is number ``base``."""
        top = base + (int(keys.docs.max()) + 1 if keys.docs.size else 0)
        doc_type = np.int32 if top < 2**31 else np.int64  # half the memory when they fit
        self.docs.append((keys.docs + base).astype(doc_type))
        self.keys.append(keys.keys)
        self.notes.update(dict.fromkeys(notes))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(docs, keys)`` of every batch."""
        if not self.docs:
            return np.empty(0, np.int32), np.empty(0, np.uint64)
        return np.concatenate(self.docs), np.concatenate(self.keys)

    def weak(self) -> list[str]:
        return list(self.notes)


def _sketch_all(
    method: Method, spill: _Spill, config: DedupConfig
) -> tuple[Signatures | None, tuple[np.ndarray, np.ndarray], list[str]]:
    """Keys of every document (and signatures, when pairs are not verified exactly)."""
    parts = _KeyParts()
    kept_sigs, sig_offsets = [], [np.zeros(1, np.int64)]
    base = 0
    for batch in spill.batches(config.batch_size):
        with weak_notes() as notes:
            if config.verify:  # exact scores: the keys are all that is needed
                keys = method.batch_keys(batch)
            else:
                sigs = method.sketch(batch)
                keys = method.keys(sigs)
        parts.add(keys, base, notes)
        if not config.verify:
            kept_sigs.append(sigs.values)
            sig_offsets.append(sigs.offsets[1:] + sig_offsets[-1][-1])
        base += len(batch)
    signatures = None
    if not config.verify:
        flat = np.concatenate(kept_sigs) if kept_sigs else np.empty(0, np.uint64)
        signatures = Signatures(flat, np.concatenate(sig_offsets), method.config_id)
    return signatures, parts.arrays(), parts.weak()


def score_pairs(
    candidates: Candidates,
    values: np.ndarray,
    offsets: np.ndarray,
    method: Method,
    signatures: Signatures | None,
    config: DedupConfig,
    template: np.ndarray | None = None,
) -> tuple[Pairs, np.ndarray]:
    """Measures of every candidate pair, and the template shingles discounted.

    Exact (content shingles, :mod:`neardup.dedup.templates`), or the method's own estimate
    as the score when ``signatures`` are given (``--no-verify``: no discount). ``template``
    given: those shingles are discounted (found earlier for a larger set of pairs).
    """
    left, right = candidates.left, candidates.right
    shared = shared_counts(values, offsets, left, right)
    size_l = offsets[left + 1] - offsets[left]
    size_r = offsets[right + 1] - offsets[right]
    resemblance, c_lr, c_rl = pair_measures(shared, size_l, size_r)
    known = template
    template = np.empty(0, dtype=np.uint64) if known is None else known
    if signatures is not None:
        s_lr, s_rl = _estimates(method, signatures, left, right, config)
    else:  # plain scores; with templates, rescored on content where it can matter
        s_lr, s_rl = plain_scores(config.measure, resemblance, c_lr, c_rl)
        if config.template_df and left.size:
            near = np.flatnonzero(needs_content_score(config, c_lr, c_rl))
            if known is None:
                holders = group_representatives(offsets.size - 1, left, right, c_lr, c_rl)
                template = _template_of(
                    values, offsets, left[near], right[near], holders, config, candidates.counts
                )
            content = content_counts(
                values, offsets, left[near], right[near], shared[near], template
            )
            s_lr[near], s_rl[near] = directional_scores(
                shared[near], size_l[near], size_r[near], content, config.measure
            )
    pairs = Pairs(left, right, np.maximum(s_lr, s_rl), s_lr, s_rl, resemblance, c_lr, c_rl)
    return pairs, template


def pair_measures(
    shared: np.ndarray, size_l: np.ndarray, size_r: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(resemblance, containment of left in right, of right in left)`` of pairs from their
    shared and own shingle counts (0.0 where a side is empty)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        resemblance = np.nan_to_num(shared / (size_l + size_r - shared))
        c_lr = np.nan_to_num(shared / size_l)
        c_rl = np.nan_to_num(shared / size_r)
    return resemblance, c_lr, c_rl


def plain_scores(
    measure: str, resemblance: np.ndarray, c_lr: np.ndarray, c_rl: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The run's measure both ways on all shingles (new arrays, rescored later in place)."""
    if measure == "resemblance":
        return resemblance.copy(), resemblance.copy()
    return c_lr.copy(), c_rl.copy()


def needs_content_score(config: DedupConfig, c_lr: np.ndarray, c_rl: np.ndarray) -> np.ndarray:
    """Pairs rescored on content shingles: only those sharing ``least_keepable`` of one side
    plainly can be kept; the others keep their plain scores, below the threshold either way."""
    return np.maximum(c_lr, c_rl) >= config.least_keepable


def _template_of(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    holders: np.ndarray,
    config: DedupConfig,
    counts: np.ndarray | None = None,
) -> np.ndarray:
    """The template shingles (held by ``template_df`` of ``holders``) among the pairs'
    documents (``counts``: the candidate stage's estimate per entry, if it made one)."""
    if not left.size:
        return np.empty(0, dtype=np.uint64)
    wanted = unique(np.concatenate((left, right)))
    return template_shingles(values, offsets, holders, config.template_df, wanted, counts)


def _estimates(
    method: Method, sigs: Signatures, left: np.ndarray, right: np.ndarray, config: DedupConfig
) -> tuple[np.ndarray, np.ndarray]:
    """The method's own estimate as a similarity in [0, 1], both ways (``--no-verify``)."""
    if config.measure == "containment":
        contained = getattr(method, "containment_pairs", None)
        if contained is None:
            raise ConfigError(
                f"method {method.name!r} cannot estimate containment; verify exactly "
                "(drop --no-verify) or use --measure resemblance"
            )
        return contained(sigs, left, right), contained(sigs, right, left)
    raw = method.score_pairs(sigs, left, right)
    score = 1.0 - raw / 64.0 if method.estimate == "hamming" else raw
    return score, score
