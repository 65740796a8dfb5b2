"""The dedup stages as functions of Arrow record batches, for Spark's ``mapInArrow``.

Each factory returns ``f(batches) -> batches`` that calls the stages of a run as the local
engine calls them (:mod:`neardup.dedup.flow`: fingerprints and keys, document prefixes,
buckets, pair measures, content scores, decisions): only the conversion between Arrow
columns and NumPy arrays, and the packing of rows for Spark's shuffles, live here, so the
two engines cannot drift apart. Nothing here imports pyspark, so the stages are tested without it.

Fingerprints and keys travel as signed ``int64`` (Spark has no unsigned type): the same 64
bits, viewed as ``uint64`` again before any kernel sees them.

Stages that need whole groups (a document's keys, a key's documents, a component's pairs)
get rows sorted by the group column within each partition; :func:`grouped` cuts the stream
of batches at group boundaries so that no group is split.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.flow import (
    MAX_COUNT,
    Decided,
    PrefixRule,
    bucket_pairs,
    content_scores,
    corpus_candidates,
    decide_documents,
    document_prefixes,
    entry_counts,
    identity_names,
    key_counts,
    listed_counts,
    mark_prefixes,
    mark_table,
    marked_entries,
    measure_pairs,
    reaches_template,
    run_identity_names,
    verify_corpus,
)
from neardup.engines.spark.task_cores import on_task_cores
from neardup.fingerprints.word_kernels import WORD
from neardup.util.arrays import (
    gather_segments,
    pair_codes,
    split_pair_codes,
    unique,
    unique_counts,
)
from neardup.util.hashtable import GOLDEN, count_keys, key_table

Stage = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

FINGERPRINT_SCHEMA = "doc long, length long, size long, fps array<long>"
KEYS_SCHEMA = ", keys array<long>"  # added for a method whose keys are not the fingerprints
WORDS_SCHEMA = ", words array<long>"  # added for the identity check
CHUNK_SCHEMA = "chunk long, data binary"
ENTRY_SCHEMA = "doc long, need long, key array<long>, count array<long>, in_prefix array<boolean>"
BUCKET_SCHEMA = "left long, right long, n long"
MEASURE_SCHEMA = (
    "left long, right long, shared long, resemblance double, c_lr double, c_rl double, "
    "s_lr double, s_rl double, rescore boolean, near_copy boolean"
)
CONTENT_SCHEMA = "left long, right long, s_lr double, s_rl double"
TEMPLATE_SCHEMA = "f long"
DECISION_SCHEMA = (
    "doc long, keep_of long, label long, keeper long, declined long, left long, right long, "
    "resemblance double, c_lr double, c_rl double, s_lr double, s_rl double"
)


# ── Arrow ⇄ NumPy ────────────────────────────────────────────────────────────────────────────


def sorted_sets(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``values`` with each document's segment (``offsets``) sorted as uint64 (Spark sorts
    longs signed)."""
    doc = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    return values[np.lexsort((values, doc))]


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


def column_ints(batch: pa.RecordBatch | pa.Table, name: str) -> np.ndarray:
    """The integer column ``name`` as int64."""
    return np.asarray(batch.column(name).to_numpy(zero_copy_only=False), dtype=np.int64)


def _values(lists: pa.ListArray) -> np.ndarray:
    """The values of a list<int64> array as its offsets index them (the whole child)."""
    return np.asarray(lists.values.to_numpy(zero_copy_only=False), dtype=np.int64)


def _floats(batch: pa.RecordBatch | pa.Table, name: str) -> np.ndarray:
    return np.asarray(batch.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)


def _batch(columns: dict[str, np.ndarray | pa.Array]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(columns)


def grouped(batches: Iterator[pa.RecordBatch], column: str) -> Iterator[pa.Table]:
    """Tables holding whole groups of ``column`` (rows arrive sorted by it, ascending).

    Only each new batch's column is read: a group spread over many batches (a verification
    group of millions of rows) costs no more than its rows."""
    pending: list[pa.RecordBatch] = []
    for batch in batches:
        keys = column_ints(batch, column)
        if keys.size == 0:
            continue
        # the rows before the batch's last group end their groups (and the pending one)
        cut = int(np.searchsorted(keys, keys[-1], side="left"))
        if cut:
            yield pa.Table.from_batches([*pending, batch.slice(0, cut)])
            pending = []
        pending.append(batch.slice(cut))
    if pending:
        yield pa.Table.from_batches(pending)


# ── stages ───────────────────────────────────────────────────────────────────────────────────


def keys_are_fingerprints(config: DedupConfig) -> bool:
    """Whether the method's index keys are the fingerprints themselves (the full index, as
    the local engine's ``full_index``): then no ``keys`` column, ``fps`` serves."""
    return config.method == "full"


def fingerprint_schema(config: DedupConfig) -> str:
    """The schema of a row per document of fingerprint sets for ``config``
    (:mod:`neardup.engines.spark.documents` packs them in binary values)."""
    keys = "" if keys_are_fingerprints(config) else KEYS_SCHEMA
    return FINGERPRINT_SCHEMA + keys + (WORDS_SCHEMA if config.identity else "")


def distinct_keys(docs: np.ndarray, keys: np.ndarray, n: int) -> pa.ListArray:
    """Each of ``n`` documents' distinct keys (``docs``, ``keys``: an entry each), sorted."""
    docs = np.asarray(docs, dtype=np.int64)
    values = np.asarray(keys, dtype=np.uint64)
    order = np.lexsort((values, docs))
    docs, values = docs[order], values[order]
    fresh = np.ones(docs.size, dtype=bool)
    fresh[1:] = (docs[1:] != docs[:-1]) | (values[1:] != values[:-1])
    docs, values = docs[fresh], values[fresh]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(docs, minlength=n), out=offsets[1:])
    return list_array(values, offsets)


def _chunks(table: np.ndarray, size: int) -> pa.RecordBatch:
    """``chunk, data``: the non-zero chunks of ``size`` bytes of a byte table."""
    pieces = table.reshape(-1, size)
    used = np.flatnonzero(pieces.any(axis=1))
    data = pa.array([pieces[c].tobytes() for c in used], pa.binary())  # binary when none
    return _batch({"chunk": used.astype(np.int64), "data": data})


_KEYS_AT_ONCE = 1 << 24  # keys counted at a time (a table pass each)


def count_table_stage(bits: int, chunk: int) -> Stage:
    """``keys`` (documents' distinct keys) → ``chunk, data``: the partition's two count
    tables of :func:`neardup.dedup.prefix.key_counts` (saturating, one after the other) in
    chunks of ``chunk`` bytes, to be summed across partitions by :func:`merge_stage`."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts, pending, held = None, [], 0
        for batch in [*batches, None]:
            if batch is not None:
                pending.append(flat_lists(batch.column("keys"))[0])
                held += pending[-1].size
            if held > _KEYS_AT_ONCE or (batch is None and (pending or counts is None)):
                more = key_counts(np.concatenate(pending or [np.empty(0, np.uint64)]), bits)
                if counts is not None:
                    more = np.minimum(counts + more.astype(np.uint16), MAX_COUNT).astype(np.uint8)
                counts, pending, held = more, [], 0
        yield _chunks(counts.ravel(), chunk)

    return on_task_cores(run)


def merge_stage(bitset: bool) -> Stage:
    """``chunk, data`` sorted by chunk → one row per chunk: the partitions' tables summed
    (saturating at ``MAX_COUNT``, as the 8-bit counters) or, for bit tables, or-ed."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(batches, "chunk"):
            chunk = column_ints(table, "chunk")
            starts = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
            data = table.column("data").to_pylist()
            merged = []
            for i, j in zip(starts, np.r_[starts[1:], chunk.size], strict=True):
                parts = np.stack([np.frombuffer(d, np.uint8) for d in data[i:j]])
                if bitset:
                    merged.append(np.bitwise_or.reduce(parts, axis=0).tobytes())
                else:
                    total = parts.sum(axis=0, dtype=np.int64)
                    merged.append(np.minimum(total, MAX_COUNT).astype(np.uint8).tobytes())
            yield _batch({"chunk": chunk[starts], "data": merged})

    return on_task_cores(run)


def mark_stage(counts: np.ndarray, bits: int, rule: PrefixRule, chunk: int) -> Stage:
    """``keys`` → ``chunk, data``: the partition's mark table (one bit a slot, little bit
    order, as :func:`neardup.dedup.prefix.pairing_entries`) of its documents' prefix
    entries (hit prefix for keys counted ≤ ``low`` when ``least`` > 0), in chunks of
    ``chunk`` bytes; ``counts``: the two count tables."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        marks = mark_table(bits)
        for batch in batches:
            keys, offsets = flat_lists(batch.column("keys"))
            flags, _ = document_prefixes(offsets, keys, entry_counts(keys, counts, bits), rule)
            mark_prefixes(keys, flags, bits, marks)
        yield _chunks(marks, chunk)

    return on_task_cores(run)


PAIRING_SCHEMA = ENTRY_SCHEMA + ", hot array<long>"


def pairing_stage(
    counts: np.ndarray, marks: np.ndarray, bits: int, rule: PrefixRule, template: int
) -> Stage:
    """``doc, keys`` → ``doc, need, key, count, in_prefix, hot``: each document's entries
    that can make a pair (:func:`neardup.dedup.prefix.pairing_entries`: counted more than
    once, mark set in the bit table ``marks`` of every document's prefix entries) as lists,
    with the document's need of counted hits (:func:`neardup.dedup.flow.document_prefixes`);
    and, the keys being the fingerprints, those the count tables count at ``template`` or
    more (``hot``: the others are held by fewer documents, never template shingles; empty for
    ``template`` 0). A row per document: Spark stores far fewer rows, and explodes them where
    it groups entries."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys, offsets = flat_lists(batch.column("keys"))
            count = entry_counts(keys, counts, bits)
            flags, need = document_prefixes(offsets, keys, count, rule)
            keep = marked_entries(keys, count, bits, marks)
            yield _pairing_batch(batch, keys, offsets, count, flags, need, keep, template)

    return on_task_cores(run)


CORPUS_SCHEMA = (
    "kind int, left long, right long, resemblance double, c_lr double, c_rl double, "
    "s_lr double, s_rl double, near_copy boolean, doc long, keep_of long, label long, "
    "keeper long, declined long"
)
PAIRS_AT_ONCE = 1 << 20  # pairs a batch of :func:`corpus_stage`


def corpus_stage(config: DedupConfig, rule: PrefixRule) -> Stage:
    """``doc, length, fps[, words][, value]`` of every document (one task: the whole
    corpus's fingerprint sets, the full index's keys; ``value`` the keep field's) →
    ``kind, left, right, …``: the corpus's candidate pairs found and verified as the local
    engine does (:func:`neardup.dedup.flow.corpus_candidates`: count tables, prefixes and
    buckets in one pass; :func:`neardup.dedup.flow.verify_corpus`: measures, template
    shingles and content scores), and its keepers decided as it decides them
    (:func:`neardup.dedup.flow.decide_documents` with the identity check's rare words of
    every document), over the documents in ``doc`` order.

    Kind 0: a verified pair (``left < right``, measures, scores, whether it joins near
    copies); kind 1: the counts (``left``: candidate pairs, ``right``: capped buckets,
    ``resemblance``: template shingles); kind 4: the rows of :data:`DECISION_SCHEMA`
    (``doc``, ``keep_of``, ``label``, ``keeper``, ``declined`` of each document in a pair
    at the threshold, ``left`` -1; the pairs the keeper rounds add, ``doc`` -1)."""
    from neardup.dedup.templates import near_copies

    lists = ("fps", "words") if config.identity else ("fps",)
    field = config.keep.kind == "field"

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        docs, sets, rows = _by_doc(batches, lists, ("length", "value") if field else ("length",))
        values, offsets = sets[0]
        found = corpus_candidates(None, (values, offsets), config, rule)
        pairs, template = verify_corpus(found, (values, offsets), None, None, config)
        template = unique(np.asarray(template, dtype=np.uint64))
        for at in range(0, len(pairs), PAIRS_AT_ONCE):
            part = pairs.take(np.arange(at, min(at + PAIRS_AT_ONCE, len(pairs))))
            c_lr, c_rl = part.containment_lr, part.containment_rl
            columns = {
                "left": docs[part.left],
                "right": docs[part.right],
                "resemblance": part.resemblance,
                "c_lr": c_lr,
                "c_rl": c_rl,
                "s_lr": part.score_lr,
                "s_rl": part.score_rl,
                "near_copy": near_copies(c_lr, c_rl),
            }
            yield _corpus_batch(0, columns, part.left.size)
        counts = {"left": [len(found)], "right": [found.capped_buckets]}
        yield _corpus_batch(1, counts | {"resemblance": [float(template.size)]}, 1)
        at = pairs.take(pairs.score >= config.threshold)
        names = None
        if config.identity:
            names = run_identity_names(sets[1], docs.size, pairs, at, config)
        lengths = np.asarray(rows["length"].to_numpy(zero_copy_only=False), dtype=np.int64)
        field_values = None
        if field:
            field_values = np.asarray(rows["value"].to_numpy(zero_copy_only=False))
        decided = decide_documents(
            docs.size,
            at,
            lengths,
            config,
            docs,
            field_values,
            sets=(values, offsets),
            template=template,
            names=names,
        )
        yield _decided_batch(decided, at.left.size, docs)

    return run


def _decided_batch(decided: Decided, given: int, docs: np.ndarray) -> pa.RecordBatch:
    """Kind 4 of :data:`CORPUS_SCHEMA`: the decisions of the documents in a pair (the
    ``given`` pairs first, then the keeper rounds' own) and those rounds' pairs, as
    :data:`DECISION_SCHEMA`'s rows (document numbers ``docs``); the declined pairs counted
    in the first row."""
    found = decided.pairs
    held = unique(np.r_[found.left, found.right].astype(np.int64))
    new = found.take(np.arange(found.left.size) >= given)
    m, k = held.size, new.left.size
    declined = np.zeros(m + k, np.int64)
    declined[:1] = decided.declined
    gone, none = np.full(m, -1, np.int64), np.full(m, np.nan)
    columns = {
        "doc": np.r_[docs[held], np.full(k, -1, np.int64)],
        "keep_of": np.r_[docs[decided.keep_of[held]], np.full(k, -1, np.int64)],
        "label": np.r_[docs[decided.labels[held]], np.full(k, -1, np.int64)],
        "keeper": np.r_[docs[decided.keepers[decided.labels[held]]], np.full(k, -1, np.int64)],
        "declined": declined,
        "left": np.r_[gone, docs[new.left]],
        "right": np.r_[gone, docs[new.right]],
        "resemblance": np.r_[none, new.resemblance],
        "c_lr": np.r_[none, new.containment_lr],
        "c_rl": np.r_[none, new.containment_rl],
        "s_lr": np.r_[none, new.score_lr],
        "s_rl": np.r_[none, new.score_rl],
    }
    return _corpus_batch(4, columns, m + k)


def _sets_of(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sets of ``docs`` (``values[offsets[d]:offsets[d+1]]``) as ``(values, offsets)``."""
    gather, bounds = gather_segments(offsets, docs)
    return gather(values), bounds


def _by_doc(
    batches: Iterator[pa.RecordBatch], columns: tuple[str, ...], scalars: tuple[str, ...] = ()
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], dict[str, pa.Array]]:
    """``(docs, sets, rows)`` of rows ``doc``, list columns ``columns`` and other columns
    ``scalars`` in any order, sorted by document: for each list column, ``(values as
    uint64, offsets)``, document ``docs[d]``'s list being ``values[offsets[d]:offsets[d+1]]``;
    each of ``scalars`` as one array in that order."""
    docs: list[np.ndarray] = []
    lists: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in columns]
    plain: dict[str, list[pa.Array]] = {name: [] for name in scalars}
    for batch in batches:
        docs.append(column_ints(batch, "doc"))
        for held, name in zip(lists, columns, strict=True):
            held.append(flat_lists(batch.column(name)))
        for name, parts in plain.items():
            parts.append(batch.column(name))
    doc = np.concatenate(docs) if docs else np.empty(0, np.int64)
    order = np.argsort(doc, kind="stable")
    in_order = bool((order == np.arange(order.size)).all())
    sets = []
    for held in lists:
        flat = np.concatenate([v for v, _ in held]) if held else np.empty(0, np.uint64)
        size = np.concatenate([np.diff(o) for _, o in held]) if held else np.empty(0, np.int64)
        offsets = np.r_[0, np.cumsum(size)]
        if not in_order:
            flat, offsets = _sets_of(flat, offsets, order)
        sets.append((flat, offsets))
    rows = {
        name: pa.chunked_array(parts, parts[0].type if parts else pa.int64())
        .combine_chunks()
        .take(pa.array(order))
        for name, parts in plain.items()
    }
    return doc[order], sets, rows


_CORPUS = pa.schema(
    [
        ("kind", pa.int32()),
        ("left", pa.int64()),
        ("right", pa.int64()),
        ("resemblance", pa.float64()),
        ("c_lr", pa.float64()),
        ("c_rl", pa.float64()),
        ("s_lr", pa.float64()),
        ("s_rl", pa.float64()),
        ("near_copy", pa.bool_()),
        ("doc", pa.int64()),
        ("keep_of", pa.int64()),
        ("label", pa.int64()),
        ("keeper", pa.int64()),
        ("declined", pa.int64()),
    ]
)


def _corpus_batch(kind: int, columns: dict[str, object], rows: int) -> pa.RecordBatch:
    """A batch of :data:`CORPUS_SCHEMA` of ``rows`` rows of ``kind``; absent columns null."""
    arrays = []
    for field in _CORPUS:
        if field.name == "kind":
            arrays.append(pa.array(np.full(rows, kind, dtype=np.int32)))
        elif isinstance(columns.get(field.name), pa.Array):
            arrays.append(columns[field.name])
        elif field.name in columns:
            arrays.append(pa.array(columns[field.name], field.type))
        else:
            arrays.append(pa.nulls(rows, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=_CORPUS)


PACKED_KEYS_SCHEMA = "part long, doc array<long>, key array<long>"
PACKED_ENTRY_SCHEMA = PACKED_KEYS_SCHEMA + ", in_prefix array<boolean>"
PACKED_NEED_SCHEMA = PACKED_ENTRY_SCHEMA + ", need array<long>"
PACKED_PAIRS_SCHEMA = (
    "part long, left array<long>, right array<long>, n array<long>, need array<long>"
)
PAIR_SCHEMA = "left long, right long"


def scatter_stage(
    labels: np.ndarray,
    columns: tuple[str, ...],
    most: int | None = None,
    repeated: tuple[str, ...] = (),
) -> Stage:
    """Rows of documents (``doc`` and list columns ``columns``, the first the keys; with
    ``most``, only the entries whose ``count`` list value is ≤ it) → a row per partition
    of keys (hashed) and batch: ``part`` and the entries' ``doc`` and ``columns`` as lists,
    and the document columns ``repeated`` (a value a document) as a list of a value an entry.

    So Spark shuffles a few large rows by ``part`` instead of a row per key entry (the
    cost of an exploded shuffle is per row); ``labels[p]``: the ``part`` value that Spark's
    hash partitioning sends to partition ``p``, so each partition gets one part."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values = [_flat(batch.column(c)) for c in columns]
            offsets = np.asarray(batch.column(columns[0]).offsets, dtype=np.int64)
            docs = np.repeat(column_ints(batch, "doc"), np.diff(offsets))
            values += [np.repeat(column_ints(batch, c), np.diff(offsets)) for c in repeated]
            keep = np.ones(docs.size, dtype=bool)
            if most is not None:
                keep = _flat(batch.column("count")) <= most
            keys = values[0].view(np.uint64)
            part = (((keys * GOLDEN) >> np.uint64(32)) % np.uint64(labels.size)).astype(np.int64)
            part[~keep] = labels.size  # left out: sorted last
            order = np.argsort(part, kind="stable")[: np.count_nonzero(keep)]
            if not order.size:
                continue
            part = part[order]
            starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
            bounds = pa.array(np.r_[starts, part.size].astype(np.int32))
            lists = {"doc": pa.ListArray.from_arrays(bounds, pa.array(docs[order]))}
            for name, v in zip(columns + repeated, values, strict=True):
                lists[name] = pa.ListArray.from_arrays(bounds, pa.array(v[order]))
            yield _batch({"part": labels[part[starts]].astype(np.int64), **lists})

    return on_task_cores(run)


def _flat(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a list column (as its offsets, from its first, index them)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = np.asarray(column.offsets, dtype=np.int64)
    return column.values.to_numpy(zero_copy_only=False)[offsets[0] : offsets[-1]]


def _partition_entries(batches: Iterator[pa.RecordBatch], *names: str) -> list[np.ndarray]:
    """The columns ``names`` of a whole partition's entries (a row each, or lists in rows
    packed by :func:`scatter_stage`), integers as ``int64``."""
    rows = [b for b in batches if b.num_rows]
    if not rows:
        return [np.empty(0, np.int64) for _ in names]
    table = pa.Table.from_batches(rows)
    out = []
    for name in names:
        column = table.column(name)
        values = _flat(column) if pa.types.is_list(column.type) else column.to_numpy()
        out.append(values if values.dtype == np.bool_ else values.astype(np.int64, copy=False))
    return out


SHARED_SCHEMA = "doc long, keys array<long>, counts array<long>"
SHARED_TYPE = "array<struct<keys:array<bigint>,counts:array<bigint>>>"


def key_count_stage() -> Stage:
    """``doc, key`` (every entry of the keys hashed to this partition, any order; packed by
    :func:`scatter_stage`) → ``doc, keys, counts``: for each document, its keys here held
    by more than one document and how many hold them (exact; a row per document and
    partition). The partition's entries are counted at once (a sort in NumPy): Spark
    sorts nothing, and a hot key's documents are never gathered into one group."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys, docs = _partition_entries(batches, "key", "doc")
        if not keys.size:
            return
        distinct, held = unique_counts(keys)
        count = held[np.searchsorted(distinct, keys)]
        shared = np.flatnonzero(count > 1)
        shared = shared[np.argsort(docs[shared], kind="stable")]
        docs = docs[shared]
        starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]]) if docs.size else docs
        offsets = np.r_[starts, docs.size]
        yield _batch(
            {
                "doc": docs[starts],
                "keys": list_array(keys[shared], offsets),
                "counts": list_array(count[shared], offsets),
            }
        )

    return on_task_cores(run)


def exact_pairing_stage(rule: PrefixRule, template: int) -> Stage:
    """``doc, keys, shared`` → :func:`pairing_stage`'s rows from exact counts: ``shared``
    lists the document's keys held by more than one document with how many hold them
    (structs of ``keys, counts`` lists of :func:`key_count_stage`, a struct per partition
    of keys; the others are held by it alone). The order and the prefixes are those of
    exact counts (the filter is exact for any order shared by every document); every key
    held twice or more can pair — the buckets skip the keys in no prefix, which pair
    nothing — and ``count`` is exact (not capped at ``MAX_COUNT``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys, offsets = flat_lists(batch.column("keys"))
            shared = batch.column("shared")
            parts = shared.values  # the structs (offsets of ``shared`` index them)
            listed, counts = parts.field("keys"), parts.field("counts")
            ends = np.asarray(listed.offsets, dtype=np.int64)
            if not np.array_equal(ends, np.asarray(counts.offsets, dtype=np.int64)):
                raise ValueError("a document's shared keys and their counts differ in length")
            bounds = ends[np.asarray(shared.offsets, dtype=np.int64)]
            count = listed_counts(
                offsets,
                keys,
                bounds - bounds[0],
                _values(listed)[bounds[0] : bounds[-1]].view(np.uint64),
                _values(counts)[bounds[0] : bounds[-1]],
            )
            capped = np.minimum(count, MAX_COUNT).astype(np.uint8)
            flags, need = document_prefixes(offsets, keys, capped, rule)
            keep = count > 1
            yield _pairing_batch(batch, keys, offsets, count, flags, need, keep, template)

    return on_task_cores(run)


def _pairing_batch(
    batch: pa.RecordBatch,
    keys: np.ndarray,
    offsets: np.ndarray,
    count: np.ndarray,
    flags: np.ndarray,
    need: np.ndarray,
    keep: np.ndarray,
    template: int,
) -> pa.RecordBatch:
    """``doc, need, key, count, in_prefix, hot`` of :func:`pairing_stage`: the ``keep``
    entries of each document, and its keys counted at ``template`` or more."""
    kept = np.r_[0, np.cumsum(keep)][offsets]
    hot = count >= template if template else np.zeros(keys.size, dtype=bool)
    held = np.r_[0, np.cumsum(hot)][offsets]
    return _batch(
        {
            "doc": batch.column("doc"),
            "need": need.astype(np.int64),
            "key": list_array(keys[keep], kept),
            "count": list_array(count[keep].astype(np.int64), kept),
            "in_prefix": pa.ListArray.from_arrays(
                pa.array(kept.astype(np.int32)), pa.array(flags[keep])
            ),
            "hot": list_array(keys[hot], held),
        }
    )


BUCKET_ROWS = 1 << 20  # entries paired at a time (whole buckets: a chunk ends with a key)


def bucket_stage(max_bucket: int, rows: int = BUCKET_ROWS) -> Stage:
    """``key, doc, in_prefix`` (every entry of the keys hashed to this partition, any
    order; a row each or packed by :func:`scatter_stage`) → ``left, right, n``: the
    candidate pairs of the partition's buckets, each once a chunk of about ``rows``
    entries, with how many of its buckets pair it (so Spark dedups and counts fewer rows
    than one per bucket and pair). The partition is sorted by key and document at once in
    NumPy: Spark sorts nothing, and the kernel runs on large chunks."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys, docs, flags = _partition_entries(batches, "key", "doc", "in_prefix")
        if not keys.size:
            return
        for left, right, n in _chunk_pairs(keys, docs, flags.astype(bool), max_bucket, rows):
            yield _batch({"left": left, "right": right, "n": n})

    return on_task_cores(run)


def counted_bucket_stage(max_bucket: int, labels: np.ndarray, rows: int = BUCKET_ROWS) -> Stage:
    """:func:`bucket_stage` over entries that also carry their document's ``need`` of
    counted hits (:func:`scatter_stage` with ``repeated=("need",)``) → the pairs of each
    chunk packed by pair (a row per partition of pairs and chunk, as :func:`scatter_stage`
    packs entries): ``part`` and the lists ``left, right, n`` and ``need``, the smaller of
    the two documents' needs. :func:`counted_pairs_stage` sums them where they meet."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys, docs, flags, needs = _partition_entries(batches, "key", "doc", "in_prefix", "need")
        if not keys.size:
            return
        known, first = np.unique(docs, return_index=True)
        need_of = needs[first]
        for left, right, n in _chunk_pairs(keys, docs, flags.astype(bool), max_bucket, rows):
            need = np.minimum(
                need_of[np.searchsorted(known, left)], need_of[np.searchsorted(known, right)]
            )
            yield from _packed_pairs(labels, left, right, n, need)

    return on_task_cores(run)


def _packed_pairs(
    labels: np.ndarray, left: np.ndarray, right: np.ndarray, n: np.ndarray, need: np.ndarray
) -> Iterator[pa.RecordBatch]:
    """``part`` (a label of :func:`scatter_stage`, by the pair) and the pairs' columns as
    lists, a row a part."""
    if not left.size:
        return
    mixed = (left.astype(np.uint64) * GOLDEN) ^ right.astype(np.uint64)
    part = (((mixed * GOLDEN) >> np.uint64(32)) % np.uint64(labels.size)).astype(np.int64)
    order = np.argsort(part, kind="stable")
    part = part[order]
    starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
    bounds = pa.array(np.r_[starts, part.size].astype(np.int32))
    columns = {"left": left, "right": right, "n": n, "need": need}
    lists = {k: pa.ListArray.from_arrays(bounds, pa.array(v[order])) for k, v in columns.items()}
    yield _batch({"part": labels[part[starts]].astype(np.int64), **lists})


def counted_pairs_stage() -> Stage:
    """Packed pairs of :func:`counted_bucket_stage` (every chunk's pairs hashed to this
    partition) → ``left, right``: the pairs whose buckets, summed over every chunk, reach
    their need (the counted hits of :mod:`neardup.dedup.candidates`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        left, right, n, need = _partition_entries(batches, "left", "right", "n", "need")
        if not left.size:
            return
        order = np.lexsort((right, left))
        left, right, n, need = left[order], right[order], n[order], need[order]
        starts = np.flatnonzero(np.r_[True, (left[1:] != left[:-1]) | (right[1:] != right[:-1])])
        shared = np.add.reduceat(n, starts)
        keep = starts[shared >= need[starts]]
        yield _batch({"left": left[keep], "right": right[keep]})

    return on_task_cores(run)


def _chunk_pairs(
    keys: np.ndarray, docs: np.ndarray, flags: np.ndarray, max_bucket: int, rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each chunk of about ``rows`` entries' (whole buckets) distinct pairs, with how many
    of its buckets pair them (:func:`_summed`): the entries sorted by key and document."""
    order = np.lexsort((docs, keys))
    keys, docs, flags = keys[order], docs[order], flags[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts, keys.size]  # the first key starting at or after each cut
    cuts = ends[np.searchsorted(starts, np.arange(0, keys.size, rows))]
    bounds = unique(np.r_[cuts, keys.size])
    for i, j in itertools.pairwise(bounds.tolist()):
        left, right, _ = bucket_pairs(keys[i:j], docs[i:j], max_bucket, flags[i:j])
        yield _summed(left, right)


def _summed(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair once, with how often it occurs. Document numbers below 2**32 (any input
    numbered by the engine under 4 G documents) are sorted as one word a pair, twice as
    fast as a two-key sort; others (any int64s) by the two-key sort."""
    if not left.size:
        return left, right, np.zeros(0, np.int64)
    if min(left.min(), right.min()) >= 0 and max(left.max(), right.max()) < 1 << 32:
        codes, counts = unique_counts(pair_codes(left, right))
        return *split_pair_codes(codes), counts
    order = np.lexsort((right, left))
    left, right = left[order], right[order]
    starts = np.flatnonzero(np.r_[True, (left[1:] != left[:-1]) | (right[1:] != right[:-1])])
    return left[starts], right[starts], np.diff(np.r_[starts, left.size]).astype(np.int64)


PairsOf = Callable[[pa.Table, np.ndarray, np.ndarray], pa.RecordBatch]
"""A chunk of a group's pairs (``left``, ``right`` and their columns), each pair's left and
right row in the group's sets → a batch of results."""
SetsStage = Callable[[dict[str, tuple[np.ndarray, np.ndarray]]], PairsOf]
"""A group's documents' set columns (each as ``(values as uint64, offsets)``) → what it
does with the group's pairs."""


def with_sets_stage(inner: SetsStage, sets: list[str], rows: int) -> Stage:
    """Rows of groups (sorted by ``part``): documents (``kind`` 0: ``left`` the document and
    its ``sets`` columns) and pairs (``kind`` 1: ``left``, ``right`` and their columns)
    → ``inner`` over chunks of ≤ ``rows`` pairs, given the group's sets once and each
    pair's two rows in them.

    So a document's sets travel once to each group that needs them, not once per pair, and
    are not copied per pair here either: the kernels index the group's sets. A pair row's
    sets are empty, so a set column's values are its documents' (:func:`_doc_sets`): the
    sets are copied once (into one array a column), never filtered out of the rows."""

    def batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
        kind = column_ints(table, "kind")
        docs = np.flatnonzero(kind == 0)
        pairs = table.filter(pa.array(kind == 1))
        ids = column_ints(table, "left")[docs]
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        of_pairs = inner({name: _doc_sets(table.column(name), docs) for name in sets})
        for start in range(0, pairs.num_rows, rows):
            chunk = pairs.slice(start, rows)
            left = order[np.searchsorted(ids, column_ints(chunk, "left"))]
            right = order[np.searchsorted(ids, column_ints(chunk, "right"))]
            yield of_pairs(chunk, left, right)

    def run(groups: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(groups, "part"):
            yield from batches(table)

    return on_task_cores(run)


def _doc_sets(column: pa.ChunkedArray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lists of rows ``docs`` of a list column whose other rows' lists are empty, as
    ``(values, offsets)``: the column's values are theirs already."""
    values, offsets = flat_lists(column)
    starts, ends = offsets[docs], offsets[docs + 1]
    if not np.array_equal(ends[:-1], starts[1:]) or (docs.size and ends[-1] != values.size):
        raise ValueError("a pair row carries a set: only document rows may")
    return values, np.r_[starts, values.size]


def measure_stage(config: DedupConfig) -> SetsStage:
    """``fps`` of a group's documents → for its pairs (``left, right``): exact shared count,
    resemblance, containments and the run's plain scores both ways
    (:func:`neardup.dedup.scoring.pair_measures`); whether the pair is rescored on content and
    whether it is a pair of near copies (template step)."""

    def of_sets(sets: dict[str, tuple[np.ndarray, np.ndarray]]) -> PairsOf:
        values, offsets = sets["fps"]

        def of_pairs(chunk: pa.Table, left: np.ndarray, right: np.ndarray) -> pa.RecordBatch:
            m = measure_pairs(values, offsets, left, right, config)
            return _batch(
                {
                    "left": column_ints(chunk, "left"),
                    "right": column_ints(chunk, "right"),
                    "shared": m.shared,
                    "resemblance": m.resemblance,
                    "c_lr": m.c_lr,
                    "c_rl": m.c_rl,
                    "s_lr": m.s_lr,
                    "s_rl": m.s_rl,
                    "rescore": m.rescore,
                    "near_copy": m.near_copy,
                }
            )

        return of_pairs

    return of_sets


def template_stage(config: DedupConfig) -> Stage:
    """``f, n`` (a fingerprint and how many groups hold it) → ``f`` of the template shingles
    (:func:`neardup.dedup.templates.reaches_template`: Han shingles need more holders)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            f = column_ints(batch, "f")
            keep = reaches_template(f.view(np.uint64), column_ints(batch, "n"), config.template_df)
            yield _batch({"f": f[keep]})

    return on_task_cores(run)


def _gather(values: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The values of ``rows`` of a ragged array, one after the other."""
    return gather_segments(offsets, rows)[0](values)


def content_stage(config: DedupConfig) -> SetsStage:
    """``fps`` and ``tmpl`` (template shingles) of a group's documents → for its pairs
    (``left, right, shared``): directional scores on content shingles
    (:func:`neardup.dedup.templates.content_counts`, :func:`directional_scores`). The
    template shingles of a chunk's documents serve its pairs (one lookup table a chunk)."""

    def of_sets(sets: dict[str, tuple[np.ndarray, np.ndarray]]) -> PairsOf:
        values, offsets = sets["fps"]

        def of_pairs(chunk: pa.Table, left: np.ndarray, right: np.ndarray) -> pa.RecordBatch:
            template = unique(_gather(*sets["tmpl"], unique(np.concatenate((left, right)))))
            shared = column_ints(chunk, "shared")
            s_lr, s_rl = content_scores(values, offsets, left, right, shared, template, config)
            return _batch(
                {
                    "left": column_ints(chunk, "left"),
                    "right": column_ints(chunk, "right"),
                    "s_lr": s_lr,
                    "s_rl": s_rl,
                }
            )

        return of_pairs

    return of_sets


def decision_stage(config: DedupConfig) -> Stage:
    """Rows of whole components (sorted by ``comp``): documents (``kind`` 0: ``a`` the
    document, ``length``, ``value`` of the keep field, ``fps`` and ``tmpl`` its fingerprints
    and template shingles) and pairs at the threshold (``kind`` 1: ``a``, ``b``, ``s_lr``,
    ``s_rl``) → ``doc, keep_of, label, keeper, declined`` per document (``left`` -1), and
    the pairs found by the keeper rounds (``doc`` -1: ``left, right`` and their measures).

    :func:`neardup.dedup.keepers.keeper_rounds` over the batch's components at once, the new
    pairs scored by :func:`neardup.dedup.scoring.score_pairs` with the documents' template
    shingles (decisions of one component depend on it alone, in the documents' order)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in grouped(batches, "comp"):
            yield _decide(table, config)

    return on_task_cores(run)


def _decide(table: pa.Table, config: DedupConfig) -> pa.RecordBatch:
    kind = column_ints(table, "kind")
    is_doc = kind == 0
    a, b = column_ints(table, "a"), column_ints(table, "b")
    order = np.argsort(a[is_doc], kind="stable")
    docs = a[is_doc][order]
    lengths = column_ints(table, "length")[is_doc][order]
    values = None
    if config.keep.kind == "field":
        column = table.column("value").to_numpy(zero_copy_only=False)
        values = np.asarray(column)[is_doc][order]
    m = docs.size
    left = np.searchsorted(docs, a[~is_doc])
    right = np.searchsorted(docs, b[~is_doc])
    s_lr, s_rl = _floats(table, "s_lr")[~is_doc], _floats(table, "s_rl")[~is_doc]
    measures = (_floats(table, f)[~is_doc] for f in ("resemblance", "c_lr", "c_rl"))
    pairs = Pairs(left, right, np.maximum(s_lr, s_rl), s_lr, s_rl, *measures)
    rows = np.flatnonzero(is_doc)[order]
    sets = flat_lists(table.column("fps").take(rows))
    template = unique(flat_lists(table.column("tmpl").take(rows))[0])
    names = None
    if config.identity:
        words, word_offsets = flat_lists(table.column("words").take(rows))
        rare, rare_offsets = flat_lists(table.column("rare").take(rows))
        rare = sorted_sets(rare, rare_offsets)
        names = identity_names(words, word_offsets, rare, rare_offsets, config)
    decided = decide_documents(
        m, pairs, lengths, config, docs, values, sets=sets, template=template, names=names
    )
    found, keep_of, labels, keepers = (
        decided.pairs,
        decided.keep_of,
        decided.labels,
        decided.keepers,
    )
    declined = np.zeros(m, dtype=np.int64)
    if m:
        declined[0] = decided.declined
    new = found.take(np.arange(found.left.size) >= left.size)
    k = new.left.size
    gone, none = np.full(m, -1, np.int64), np.full(m, np.nan)
    return _batch(
        {
            "doc": np.concatenate((docs, np.full(k, -1, np.int64))),
            "keep_of": np.concatenate((docs[keep_of], np.full(k, -1, np.int64))),
            "label": np.concatenate((docs[labels], np.full(k, -1, np.int64))),
            "keeper": np.concatenate((docs[keepers[labels]], np.full(k, -1, np.int64))),
            "declined": np.concatenate((declined, np.zeros(k, np.int64))),
            "left": np.concatenate((gone, docs[new.left])),
            "right": np.concatenate((gone, docs[new.right])),
            "resemblance": np.concatenate((none, new.resemblance)),
            "c_lr": np.concatenate((none, new.containment_lr)),
            "c_rl": np.concatenate((none, new.containment_rl)),
            "s_lr": np.concatenate((none, new.score_lr)),
            "s_rl": np.concatenate((none, new.score_rl)),
        }
    )


WORD_GROUP_SCHEMA = "w long, g long, n long"


def word_groups_stage(
    wanted: np.ndarray, nodes: np.ndarray, labels: np.ndarray, most: int
) -> Stage:
    """``doc, words`` → ``w, g, n``: for each of the ``wanted`` words (sorted uint64,
    unmarked: :data:`~neardup.fingerprints.word_kernels.WORD`) that
    the partition's documents use, up to ``most`` of the groups of near copies that hold
    it (``g``: ``labels[i]`` for the document ``nodes[i]``, sorted; a document in none is
    its own group), the first row of a word with how many of the partition's documents use
    it (``n``, 0 in its other rows). Summed over the partitions, ``n`` is the word's
    document count; ``most`` distinct groups in any partition are enough to tell that a
    word is held by ``most`` groups or more. So a word used by every document sends at
    most ``most`` rows a partition, not one a document."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found_w, found_g = [], []
        for batch in batches:
            values, offsets = flat_lists(batch.column("words"))
            values = values & WORD  # the words, without their marks
            docs = np.repeat(column_ints(batch, "doc"), np.diff(offsets))
            hit = members(values, wanted)
            docs, words = docs[hit], values[hit]
            groups = docs.copy()
            if nodes.size:
                at = np.minimum(np.searchsorted(nodes, docs), nodes.size - 1)
                inside = nodes[at] == docs
                groups[inside] = labels[at[inside]]
            found_g.append(groups)
            found_w.append(words.view(np.int64))
        w = np.concatenate(found_w or [np.empty(0, np.int64)])
        if not w.size:
            return
        g = np.concatenate(found_g).astype(np.int64)
        order = np.lexsort((g, w))
        w, g = w[order], g[order]
        new_word = np.r_[True, w[1:] != w[:-1]]
        new_pair = new_word | np.r_[True, g[1:] != g[:-1]]
        word_start = np.flatnonzero(new_word)
        documents = np.diff(np.r_[word_start, w.size])
        pairs = np.flatnonzero(new_pair)
        # the rank of each distinct (word, group) among its word's groups
        word_of_pair = np.cumsum(new_word)[pairs] - 1
        first_pair = np.searchsorted(pairs, word_start)
        rank = np.arange(pairs.size) - first_pair[word_of_pair]
        keep = pairs[rank < most]
        n = np.zeros(keep.size, dtype=np.int64)
        n[rank[rank < most] == 0] = documents
        yield _batch({"w": w[keep], "g": g[keep], "n": n})

    return on_task_cores(run)


def members(values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in the sorted array ``wanted``."""
    if not wanted.size:
        return np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(wanted, values), wanted.size - 1)
    return wanted[at] == values


def held_counts_stage(wanted: np.ndarray, skip: np.ndarray, chunk: int) -> Stage:
    """``doc, fps`` → ``chunk, data``: how many of the partition's documents (those in
    ``skip``, sorted, left out) hold each of the ``wanted`` fingerprints (sorted uint64), a
    32-bit count each, in ``wanted``'s order: the table's non-zero chunks of ``chunk``
    bytes, to be summed across partitions (:func:`summed_counts`) — a few rows a task,
    not a row a fingerprint."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts = np.zeros(_padded(wanted.size, chunk), dtype=_COUNT)
        table, shift = key_table(wanted)
        for batch in batches:
            values, offsets = flat_lists(batch.column("fps"))
            counted = ~members(column_ints(batch, "doc"), skip)
            held = values[np.repeat(counted, np.diff(offsets))]
            count_keys(held, table, wanted, shift, counts)
        yield _chunks(counts.view(np.uint8), chunk)

    return on_task_cores(run)


def summed_counts(chunks: pa.Table, size: int, chunk: int) -> np.ndarray:
    """The ``size`` counts of the tables :func:`held_counts_stage` wrote, summed."""
    counts = np.zeros(_padded(size, chunk), dtype=_COUNT)
    step = chunk // _COUNT.itemsize
    index = chunks.column("chunk").to_numpy()
    for c, data in zip(index, chunks.column("data").to_pylist(), strict=True):
        counts[c * step : (c + 1) * step] += np.frombuffer(data, _COUNT)
    return counts[:size]


_COUNT = np.dtype(np.int32)  # a holders' count in the tables


def _padded(size: int, chunk: int) -> int:
    """``size`` counts rounded up to whole chunks of ``chunk`` bytes."""
    step = chunk // _COUNT.itemsize
    return max(1, -(-size // step)) * step
