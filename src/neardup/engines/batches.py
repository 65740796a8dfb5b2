"""The dedup stages as functions of Arrow record batches, for Spark's ``mapInArrow``.

Each factory returns ``f(batches) -> batches`` that calls the local engine's own pure batch
functions (:mod:`neardup.shingles`, the method's ``sketch`` / ``keys``,
:mod:`neardup.dedup.candidates`, :mod:`neardup.dedup.templates`, :mod:`neardup.dedup.core`):
only the conversion between Arrow columns and NumPy arrays lives here, so the two engines
cannot drift apart. Nothing here imports pyspark, so the stages are tested without it.

Fingerprints and keys travel as signed ``int64`` (Spark has no unsigned type): the same 64
bits, viewed as ``uint64`` again before any kernel sees them.

Stages that need whole groups (a document's keys, a key's documents, a component's pairs)
get rows sorted by the group column within each partition; :func:`grouped` cuts the stream
of batches at group boundaries so that no group is split.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from neardup._kernels.sample import shared_counts
from neardup.arrays import unique
from neardup.dedup.candidates import bucket_pairs, prefix_flags
from neardup.dedup.cluster import preference_rank
from neardup.dedup.core import (
    DedupConfig,
    Pairs,
    declined_pairs,
    keep_decisions,
    needs_content_score,
    pair_measures,
    plain_scores,
)
from neardup.dedup.templates import content_counts, directional_scores, near_copies
from neardup.shingles import fingerprint_batch

Stage = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

FINGERPRINT_SCHEMA = "doc long, length long, size long, fps array<long>, keys array<long>"
PREFIX_SCHEMA = "doc long, key long, freq long, in_prefix boolean"
PAIR_SCHEMA = "left long, right long"
MEASURE_SCHEMA = (
    "left long, right long, shared long, resemblance double, c_lr double, c_rl double, "
    "s_lr double, s_rl double, rescore boolean, near_copy boolean"
)
CONTENT_SCHEMA = "left long, right long, s_lr double, s_rl double"
DECISION_SCHEMA = "doc long, keep_of long, label long, keeper long, declined long"


# ── Arrow ⇄ NumPy ────────────────────────────────────────────────────────────────────────────


def flat_lists(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list<int64> column as ``(values as uint64, offsets from 0)``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = np.asarray(column.offsets, dtype=np.int64)
    values = column.values.to_numpy(zero_copy_only=False)[offsets[0] : offsets[-1]]
    return np.ascontiguousarray(values).view(np.uint64), offsets - offsets[0]


def list_array(values: np.ndarray, offsets: np.ndarray) -> pa.ListArray:
    """``values`` (any 64-bit integers) cut at ``offsets`` as a list<int64> column."""
    return pa.ListArray.from_arrays(
        pa.array(np.asarray(offsets, dtype=np.int32)),
        pa.array(np.ascontiguousarray(values).view(np.int64)),
    )


def _ints(batch: pa.RecordBatch | pa.Table, name: str) -> np.ndarray:
    return np.asarray(batch.column(name).to_numpy(zero_copy_only=False), dtype=np.int64)


def _floats(batch: pa.RecordBatch | pa.Table, name: str) -> np.ndarray:
    return np.asarray(batch.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)


def _batch(columns: dict[str, np.ndarray | pa.Array]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(columns)


def _concat(
    left: tuple[np.ndarray, np.ndarray], right: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Two ragged arrays of k documents each as one of 2k (left's documents first)."""
    values = np.concatenate((left[0], right[0]))
    offsets = np.concatenate((left[1], right[1][1:] + left[1][-1]))
    return values, offsets


def grouped(batches: Iterator[pa.RecordBatch], column: str) -> Iterator[pa.Table]:
    """Tables holding whole groups of ``column`` (rows arrive sorted by it, ascending)."""
    pending: pa.Table | None = None
    for batch in batches:
        table = pa.Table.from_batches([batch])
        if pending is not None and pending.num_rows:
            table = pa.concat_tables([pending, table])
        keys = _ints(table, column)
        if keys.size == 0:
            continue
        cut = int(np.searchsorted(keys, keys[-1], side="left"))
        if cut:
            yield table.slice(0, cut)
        pending = table.slice(cut)
    if pending is not None and pending.num_rows:
        yield pending


# ── stages ───────────────────────────────────────────────────────────────────────────────────


def fingerprint_stage(config: DedupConfig) -> Stage:
    """``doc, text`` → ``doc, length, size, fps, keys``: canonicalize, shingle, fingerprint
    (sorted distinct), sketch and index keys (distinct per document) of every document."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        method = config.build_method()
        for batch in batches:
            texts = batch.column("text").to_pylist()
            prints = fingerprint_batch(texts, config.text)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                keys = method.keys(method.sketch(prints))
            docs = np.asarray(keys.docs, dtype=np.int64)
            values = np.asarray(keys.keys, dtype=np.uint64)
            order = np.lexsort((values, docs))
            docs, values = docs[order], values[order]
            fresh = np.ones(docs.size, dtype=bool)
            fresh[1:] = (docs[1:] != docs[:-1]) | (values[1:] != values[:-1])
            docs, values = docs[fresh], values[fresh]
            key_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
            np.cumsum(np.bincount(docs, minlength=len(texts)), out=key_offsets[1:])
            yield _batch(
                {
                    "doc": batch.column("doc"),
                    "length": np.array([len(t) for t in texts], dtype=np.int64),
                    "size": np.diff(prints.offsets).astype(np.int64),
                    "fps": list_array(prints.values, prints.offsets),
                    "keys": list_array(values, key_offsets),
                }
            )

    return run


def prefix_stage(score: float) -> Stage:
    """``doc, key, freq`` sorted by document → the same with ``in_prefix`` (the prefix
    filter of :func:`neardup.dedup.candidates.candidate_pairs` for ``score``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(batches, "doc"):
            docs, freq = _ints(table, "doc"), _ints(table, "freq")
            keys = _ints(table, "key").view(np.uint64)
            flags = prefix_flags(docs, keys, freq, score)
            yield _batch(
                {"doc": docs, "key": keys.view(np.int64), "freq": freq, "in_prefix": flags}
            )

    return run


def bucket_stage(max_bucket: int) -> Stage:
    """``key, doc, in_prefix`` sorted by key then document → candidate ``left, right``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(batches, "key"):
            keys, docs = _ints(table, "key"), _ints(table, "doc")
            flags = np.asarray(table.column("in_prefix").to_numpy(zero_copy_only=False))
            left, right, _ = bucket_pairs(keys, docs, max_bucket, flags)
            yield _batch({"left": left, "right": right})

    return run


def measure_stage(config: DedupConfig) -> Stage:
    """``left, right, fps_l, fps_r`` → exact shared count, resemblance, containments and
    the run's plain scores both ways (:func:`neardup.dedup.core.pair_measures`); whether the
    pair is rescored on content and whether it is a pair of near copies (template step)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            k = batch.num_rows
            values, offsets = _concat(
                flat_lists(batch.column("fps_l")), flat_lists(batch.column("fps_r"))
            )
            inside = np.arange(k, dtype=np.int64)
            shared = shared_counts(values, offsets, inside, inside + k)
            sizes = np.diff(offsets)
            resemblance, c_lr, c_rl = pair_measures(shared, sizes[:k], sizes[k:])
            s_lr, s_rl = plain_scores(config.measure, resemblance, c_lr, c_rl)
            yield _batch(
                {
                    "left": batch.column("left"),
                    "right": batch.column("right"),
                    "shared": shared,
                    "resemblance": resemblance,
                    "c_lr": c_lr,
                    "c_rl": c_rl,
                    "s_lr": s_lr,
                    "s_rl": s_rl,
                    "rescore": needs_content_score(config, c_lr, c_rl),
                    "near_copy": near_copies(c_lr, c_rl),
                }
            )

    return run


def content_stage(config: DedupConfig) -> Stage:
    """``left, right, shared, fps_l, fps_r, tmpl_l, tmpl_r`` (``tmpl``: the document's
    template shingles) → directional scores on content shingles
    (:func:`neardup.dedup.templates.content_counts`, :func:`directional_scores`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            k = batch.num_rows
            values, offsets = _concat(
                flat_lists(batch.column("fps_l")), flat_lists(batch.column("fps_r"))
            )
            template = unique(
                np.concatenate(
                    (flat_lists(batch.column("tmpl_l"))[0], flat_lists(batch.column("tmpl_r"))[0])
                )
            )
            inside = np.arange(k, dtype=np.int64)
            shared = _ints(batch, "shared")
            sizes = np.diff(offsets)
            content = content_counts(values, offsets, inside, inside + k, shared, template)
            s_lr, s_rl = directional_scores(shared, sizes[:k], sizes[k:], content, config.measure)
            yield _batch(
                {
                    "left": batch.column("left"),
                    "right": batch.column("right"),
                    "s_lr": s_lr,
                    "s_rl": s_rl,
                }
            )

    return run


def decision_stage(config: DedupConfig) -> Stage:
    """Rows of whole components (sorted by ``comp``): documents (``kind`` 0: ``a`` the
    document, ``length``, ``value`` of the keep field) and pairs at the threshold (``kind``
    1: ``a``, ``b``, ``s_lr``, ``s_rl``) → ``doc, keep_of, label, keeper, declined`` by
    :func:`neardup.dedup.core.keep_decisions` over the batch's components at once
    (decisions of one component depend on it alone, in the documents' relative order)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(batches, "comp"):
            kind = _ints(table, "kind")
            is_doc = kind == 0
            a, b = _ints(table, "a"), _ints(table, "b")
            order = np.argsort(a[is_doc], kind="stable")
            docs = a[is_doc][order]
            lengths = _ints(table, "length")[is_doc][order]
            values = None
            if config.keep.kind == "field":
                column = table.column("value").to_numpy(zero_copy_only=False)
                values = np.asarray(column)[is_doc][order]
            m = docs.size
            rank = preference_rank(config.keep, m, docs, lengths, values)
            left = np.searchsorted(docs, a[~is_doc])
            right = np.searchsorted(docs, b[~is_doc])
            s_lr, s_rl = _floats(table, "s_lr")[~is_doc], _floats(table, "s_rl")[~is_doc]
            score = np.maximum(s_lr, s_rl)
            pairs = Pairs(left, right, score, s_lr, s_rl, score, s_lr, s_rl)
            keep_of, labels, keepers = keep_decisions(m, pairs, rank, config)
            declined = np.zeros(m, dtype=np.int64)
            if m:
                declined[0] = declined_pairs(pairs, keep_of, config.removal_guard)
            yield _batch(
                {
                    "doc": docs,
                    "keep_of": docs[keep_of],
                    "label": docs[labels],
                    "keeper": docs[keepers[labels]],
                    "declined": declined,
                }
            )

    return run
