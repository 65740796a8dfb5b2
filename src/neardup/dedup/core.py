"""Deduplicate a corpus on one machine: the stages of :mod:`neardup.dedup.flow`, in their
order, over the whole corpus — fingerprints → signatures → keys → candidates → verified pairs
→ clusters → which document of each cluster to keep.

The texts are read and fingerprinted in batches on every core; the shingle fingerprints
(and the identity check's words) are spilled to a temporary file, memory-mapped for the
later stages, so memory holds only offsets, keys and pairs.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path

import numba
import numpy as np

from neardup.dedup.config import DedupConfig, DedupResult, Pairs
from neardup.dedup.copies import Copies, find_copies, set_hashes
from neardup.dedup.flow import (
    Candidates,
    Names,
    corpus_candidates,
    decide_documents,
    fingerprint_texts,
    prefix_rule,
    run_identity_names,
    verify_corpus,
)
from neardup.errors import weak_notes
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.io.blocks import BatchSource, TextBatch, pairs_batch
from neardup.methods.base import Keys, Method, Signatures
from neardup.text.cleaning import markup_processes
from neardup.util.arrays import kept_segments, release_mapped_pages, unique
from neardup.util.heap import release_free_memory
from neardup.util.workers import ordered_map

Sets = tuple[np.ndarray, np.ndarray]  # values and offsets of per-document sorted sets

# --------------------------------------------------------------------------------------------


class _Spill:
    """Fingerprints of every document, appended to a temporary file, then memory-mapped.

    Shingle multiplicities are kept only for a method that weighs shingles by them
    (``keep_counts``); the others see a count of 1 (they use the sets only), and the run
    holds no 4 bytes per shingle for them.
    """

    def __init__(
        self,
        directory: Path,
        keep_counts: bool = True,
        name: str = "fingerprints",
        hashes: bool = False,
    ) -> None:
        self.path = directory / f"{name}.u64"
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
        self._offsets = [np.zeros(1, dtype=np.int64)]
        # with ``hashes``, each set's hash, taken while the batch is in memory (copies)
        self._hashes: list[np.ndarray] | None = [] if hashes else None
        self._counts: list[np.ndarray] | None = [] if keep_counts else None
        self._total = 0
        self._finished: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, batch: FingerprintBatch) -> None:
        self.add_sets(batch.values, batch.offsets)
        if self._counts is not None:
            self._counts.append(batch.counts)

    def add_sets(self, values: np.ndarray, offsets: np.ndarray) -> None:
        """Append a batch's sets (``values[offsets[d]:offsets[d + 1]]``), without counts."""
        values.tofile(self._file)
        if self._hashes is not None:
            self._hashes.append(set_hashes(values, offsets))
        self._offsets.append(offsets[1:] + self._total)
        self._total += int(values.size)

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

    def copies(self) -> Copies | None:
        """The documents whose sets are identical (None: none, or hashes not taken)."""
        if self._hashes is None:
            return None
        values, offsets, _ = self._done()
        hashes = np.concatenate(self._hashes) if self._hashes else np.empty(0, np.uint64)
        self._hashes = None
        return find_copies(values, offsets, hashes)

    def batches(self, size: int) -> Iterator[FingerprintBatch]:
        """The stored fingerprints again, in batches (for methods sketched after fitting)."""
        values, offsets, counts = self._done()
        for start in range(0, offsets.size - 1, size):
            stop = min(start + size, offsets.size - 1)
            lo, hi = offsets[start], offsets[stop]
            yield FingerprintBatch(
                np.asarray(values[lo:hi]), offsets[start : stop + 1] - lo, counts[lo:hi]
            )


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
    template: np.ndarray | None = None  # the template fingerprints discounted (sorted)
    # every document's word hashes (``values, offsets``) while open: the identity check
    words: tuple[np.ndarray, np.ndarray] | None = None
    mapped: tuple[np.ndarray, ...] = ()  # the memory-mapped spills (fingerprints, words)

    @property
    def candidate_count(self) -> int:
        """Candidate pairs found, scored or dropped as unable to be kept."""
        return len(self.pairs) if self.candidates is None else self.candidates

    def release_pages(self) -> None:
        """Drop the pages of the memory-mapped spills from the resident set (they stay in
        the page cache and map again when read): a stage that read them all through would
        otherwise keep them counted in the peak beside the next stage's arrays."""
        for values in self.mapped:
            release_mapped_pages(values)

    def close(self) -> None:
        """Release the fingerprints kept for :attr:`verify`."""
        self.release_pages()  # mapped while an array still views them
        self.mapped = ()
        self.verify = None
        self.words = None
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
    fingerprinted: Callable[[int], object] | None = None,
) -> DedupResult:
    """Near-duplicate pairs and clusters of ``(id, text)`` items, streamed in batches.

    ``field_values`` gives, after the texts were read, one value per document for a
    ``field:NAME`` keep policy; ``progress`` is called with each batch's size, ``stage``
    with the name of each stage as it starts (for a progress display); ``fingerprinted``
    with the number of documents once every text is fingerprinted (e.g. to start work for
    later on a core the pairing leaves free).
    """
    config = config or DedupConfig()
    with score_candidates(
        texts,
        config,
        progress=progress,
        workdir=workdir,
        stage=stage,
        keep_all=False,
        fingerprinted=fingerprinted,
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
    fingerprinted: Callable[[int], object] | None = None,
) -> Scored:
    """Fingerprints, signatures, keys, candidate pairs and their scores (no threshold yet).
    ``fingerprinted`` is called with the number of documents once every text is
    fingerprinted.

    The fingerprints stay in a temporary directory for :attr:`Scored.verify` until
    :meth:`Scored.close` (or the end of a ``with`` block). ``keep_all=False``: verified
    exactly, only the candidates that can be kept at this config's threshold are scored
    and kept (:func:`~neardup.dedup.scoring.keepable`; a run at one threshold needs no
    others).
    """
    method = config.build_method()
    stage = stage or (lambda _: None)
    timings: dict[str, float] = {}
    workspace = tempfile.TemporaryDirectory(dir=workdir, prefix="neardup-")
    try:
        clock = time.perf_counter()
        stage("reading and fingerprinting")
        spill = _Spill(Path(workspace.name), keep_counts=method.weighs_counts, hashes=config.verify)
        word_spill = _Spill(Path(workspace.name), False, "words") if config.identity else None
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
                config=config,
                method=method if early is not None else None,
                words=word_spill is not None,
            ),
            jobs,
            workers=numba.get_num_threads(),
        )
        # pages cleaned of markup on worker processes: the parsers' Python would hold the
        # interpreter lock that the fingerprinting threads share
        with markup_processes(numba.get_num_threads()), contextlib.closing(batches):
            for batch, chars, prints, keys, weak, words in batches:
                if settle is not None and (keep := settle(batch)) is not None:
                    batch, chars, prints = batch.take(keep), chars[keep], prints.take(keep)
                    keys = None if keys is None else _keys_of(keys, keep)
                    words = None if words is None else _sets_of(*words, keep)
                if early is not None and keys is not None:
                    early.add(keys, len(ids), weak)
                ids.extend(batch.ids)
                lengths.append(chars)
                spill.add(prints)
                if word_spill is not None and words is not None:
                    word_spill.add_sets(*words)
                if progress is not None and batch.ids:
                    progress(len(batch.ids))
        timings["fingerprints"] = time.perf_counter() - clock
        if fingerprinted is not None:
            fingerprinted(len(ids))

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
        # keys None: the full index, whose keys are the fingerprints, laid out by document
        copies = spill.copies()  # counted once by the candidates, walked once by verification
        candidates = corpus_candidates(keys, (values, offsets), config, prefix_rule(config), copies)
        timings["candidates"] = time.perf_counter() - clock

        clock = time.perf_counter()
        stage(f"verifying {len(candidates):,} candidate pairs")
        found = len(candidates)
        pairs, template = verify_corpus(
            candidates, (values, offsets), method, signatures, config, keep_all, None, copies
        )
        timings["verify"] = time.perf_counter() - clock
    except BaseException:
        workspace.cleanup()
        raise

    def verify(left: np.ndarray, right: np.ndarray) -> Pairs:
        more = Candidates(left, right, 0)
        return verify_corpus(more, (values, offsets), method, signatures, config, True, template)[0]

    words = None if word_spill is None else word_spill.finish()
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
        template,
        words,
        (values,) if words is None else (values, words[0]),
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
    scored.release_pages()  # what verification read
    names = _names(scored, pairs, config) if config.identity and scored.words is not None else None
    verify = None if scored.verify is None else partial(_verify_apart, scored)
    decided = decide_documents(
        n, pairs, scored.lengths, config, field_values=field_values, names=names, verify=verify
    )
    scored.release_pages()
    timings = scored.timings | {"clusters": time.perf_counter() - clock}
    return DedupResult(
        ids=scored.ids,
        lengths=scored.lengths,
        sizes=scored.sizes,
        pairs=decided.pairs,
        labels=decided.labels,
        keepers=decided.keepers,
        keep_of=decided.keep_of,
        candidates=scored.candidate_count,
        capped_buckets=scored.capped_buckets,
        template_shingles=scored.template_shingles,
        declined=decided.declined,
        weak=scored.weak,
        timings=timings,
        template=scored.template,
        rare_words=None if names is None else unique(names.rare),
    )


def _verify_apart(scored: Scored, left: np.ndarray, right: np.ndarray) -> Pairs:
    """:attr:`Scored.verify`, the mapped spills' pages read before (the identity check's
    words) and by it (fingerprints) dropped from the resident set: each pass reads pages
    of most of its spill, which would otherwise all stay counted in the peak together."""
    assert scored.verify is not None
    scored.release_pages()
    try:
        return scored.verify(left, right)
    finally:
        scored.release_pages()


def _names(scored: Scored, pairs: Pairs, config: DedupConfig) -> Names:
    """The identity check's words of the run's documents, rare words counted over all and
    their groups of near copies (among the verified pairs, as the template step's)."""
    assert scored.words is not None
    return run_identity_names(scored.words, len(scored.ids), scored.pairs, pairs, config)


def _chunks(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _read_and_fingerprint(
    job: Callable[[], TextBatch],
    config: DedupConfig,
    method: Method | None = None,
    words: bool = False,
) -> tuple[TextBatch, np.ndarray, FingerprintBatch, Keys | None, list[str], Sets | None]:
    """Run a reading job (on a worker thread): its batch, the characters of each text, its
    fingerprints, with ``method`` its keys and weak-signature notes, with ``words`` each
    text's word hashes (the identity check)."""
    batch = job()
    done = fingerprint_texts(batch.utf8, config, method, words, batch.texts)
    return batch, batch.char_lengths(), done.prints, done.keys, done.weak, done.words


def _sets_of(values: np.ndarray, offsets: np.ndarray, keep: np.ndarray) -> Sets:
    """The sets (``values[offsets[d]:offsets[d + 1]]``) of the documents where ``keep``."""
    mask, kept = kept_segments(offsets, keep)
    return values[mask], kept


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
