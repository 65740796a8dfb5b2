"""Documents into fingerprint sets for the Spark engine, in one pass, packed in binary values.

A record's line (or a DataFrame's text) crosses from the JVM into a Python worker once: it is
parsed there by the local reader (:meth:`neardup.io.formats.LineFormat.parse_lines`, Arrow's
JSON reader for JSONL) and fingerprinted at once, and only what later stages read leaves
the worker (:data:`DOCUMENT_SCHEMA`):

- a row per document (``kind`` 0): its number, id, length, set size and count of index keys,
  or the bad record a line holds (``bad``);
- rows of ``kind`` 1: the sets of the batch's documents (fingerprints, the method's keys,
  the identity check's words, the keep field's value), a slice of documents a row, each an
  Arrow IPC stream in ``sets`` — Spark moves it as one binary value, where sets as
  ``array<long>`` cost the JVM a conversion per element at every crossing.

:func:`unpacked` reads those streams back as record batches (``doc, length, size, fps[,
keys][, words][, value]``, each set sorted and distinct): the one task of a small corpus reads
them so (:func:`packed_stage`), and the stages that join sets by document get them as a row
per document. Nothing here imports pyspark.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from neardup.dedup.config import DedupConfig
from neardup.dedup.flow import fingerprint_texts
from neardup.engines.spark.batches import (
    column_ints,
    distinct_keys,
    keys_are_fingerprints,
    list_array,
)
from neardup.engines.spark.task_cores import on_task_cores
from neardup.fingerprints.word_kernels import word_sets_of
from neardup.io.blocks import TextBatch, utf8_spans
from neardup.io.records import Document
from neardup.text.script_kernels import char_counts

if TYPE_CHECKING:
    from neardup.io.formats import LineFormat
    from neardup.io.records import ReadOptions

Stage = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

DOCUMENT_SCHEMA = (
    "kind int, doc long, id string, bad string, length long, size long, keys long, sets binary"
)
DOCUMENT, SETS = 0, 1  # the kinds of row
TEXT_SCHEMA = "doc long, id string, text string"

_DOCUMENTS = pa.schema(
    [
        ("kind", pa.int32()),
        ("doc", pa.int64()),
        ("id", pa.string()),
        ("bad", pa.string()),
        ("length", pa.int64()),
        ("size", pa.int64()),
        ("keys", pa.int64()),
        ("sets", pa.binary()),
    ]
)


def text_stage(config: DedupConfig, value: bool = False) -> Stage:
    """``doc, text[, value]`` (a DataFrame's documents, numbered) → rows of
    :data:`DOCUMENT_SCHEMA` (ids left null: the DataFrame holds them)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        method = config.build_method()
        for batch in batches:
            texts = utf8_spans(batch.column("text"))  # the column's bytes: no Python strings
            docs = column_ints(batch, "doc")
            values = batch.column("value") if value else None
            yield _documents(config, method, docs, None, texts, None, values)

    return on_task_cores(run)


def line_stage(
    config: DedupConfig, source: LineFormat, paths: Sequence[str], opts: ReadOptions
) -> Stage:
    """``value, _input, _pos, _row`` (the numbered lines of the inputs ``paths``) → rows of
    :data:`DOCUMENT_SCHEMA`: each run of consecutive lines of one input parsed as the local
    reader parses a block of them (the same ids, texts and bad records), documents numbered
    by their line's ``_row``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        method = config.build_method()
        for batch in batches:
            for block, rows in _blocks(batch, source, paths, opts):
                docs = rows(block.lines)
                bad = (rows([b.line for b in block.bad]), [str(b) for b in block.bad])
                spans = block.utf8 if block.utf8 is not None else block.texts
                yield _documents(config, method, docs, block.ids, spans, bad, None)

    return on_task_cores(run)


def line_text_stage(source: LineFormat, paths: Sequence[str], opts: ReadOptions) -> Stage:
    """``value, _input, _pos, _row`` → ``doc, id, text`` of the documents those lines hold,
    each line parsed alone (a few lines far apart: the texts a few later stages read again)
    as :func:`line_stage` parses them."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            inputs = column_ints(batch, "_input").tolist()
            positions = column_ints(batch, "_pos").tolist()
            rows = column_ints(batch, "_row").tolist()
            out: dict[str, list[object]] = {"doc": [], "id": [], "text": []}
            for line, index, pos, row in zip(
                batch.column("value").to_pylist(), inputs, positions, rows, strict=True
            ):
                item = source.parse_line(line.encode(), paths[index], pos + 1, opts)
                if isinstance(item, Document):
                    out["doc"].append(row)
                    out["id"].append(item.id)
                    out["text"].append(item.text)
            yield pa.RecordBatch.from_pydict(out, schema=_TEXTS)

    return run


_TEXTS = pa.schema([("doc", pa.int64()), ("id", pa.string()), ("text", pa.string())])


def _blocks(
    batch: pa.RecordBatch, source: LineFormat, paths: Sequence[str], opts: ReadOptions
) -> Iterator[tuple[TextBatch, Callable[[Sequence[int]], np.ndarray]]]:
    """Each run of consecutive lines of one input in ``batch``, parsed, with what gives the
    ``_row`` of its line numbers."""
    inputs = column_ints(batch, "_input")
    positions = column_ints(batch, "_pos")
    numbers = column_ints(batch, "_row")
    data, starts, ends = utf8_spans(batch.column("value"))
    view = memoryview(data)
    breaks = (inputs[1:] != inputs[:-1]) | (positions[1:] != positions[:-1] + 1)
    cuts = np.r_[0, np.flatnonzero(breaks) + 1, inputs.size].tolist()
    for start, stop in itertools.pairwise(cuts):
        block = b"\n".join(view[starts[k] : ends[k]] for k in range(start, stop))
        first = int(positions[start]) + 1
        index = int(inputs[start])
        parsed = source.parse_lines(block, stop - start, first, index, paths[index], opts)
        run = numbers[start:stop]
        yield parsed, lambda lines, run=run, first=first: run[np.asarray(lines, np.int64) - first]


def _documents(
    config: DedupConfig,
    method: object,
    docs: np.ndarray,
    ids: list[str] | None,
    texts: tuple[np.ndarray, np.ndarray, np.ndarray] | list[str] | None,
    bad: tuple[np.ndarray, list[str]] | None,
    values: pa.Array | None,
) -> pa.RecordBatch:
    """The rows of :data:`DOCUMENT_SCHEMA` of a batch of documents (numbers ``docs``, texts
    as UTF-8 spans or strings) and of its bad records (their numbers and messages)."""
    with_keys = not keys_are_fingerprints(config)
    utf8 = texts if isinstance(texts, tuple) else None
    strings = texts if isinstance(texts, list) else None
    done = fingerprint_texts(
        utf8,
        config,
        method if with_keys else None,
        config.identity,
        strings,  # type: ignore[arg-type]
    )
    prints, n = done.prints, docs.size
    size = np.diff(prints.offsets).astype(np.int64)
    length = (
        char_counts(*utf8)
        if utf8 is not None
        else np.fromiter(map(len, strings or []), dtype=np.int64, count=n)
    )
    sets = {
        "doc": pa.array(docs),
        "length": pa.array(length),
        "size": pa.array(size),
        "fps": list_array(prints.values, prints.offsets),
    }
    keys = size
    if done.keys is not None:
        sets["keys"] = distinct_keys(done.keys.docs, done.keys.keys, n)
        keys = np.diff(np.asarray(sets["keys"].offsets, dtype=np.int64))
    if done.words is not None:
        sets["words"] = list_array(*word_sets_of(*done.words))
    if values is not None:
        sets["value"] = values
    bad_docs, messages = bad if bad is not None else (np.empty(0, np.int64), [])
    m = len(messages)
    packed = _packed(pa.RecordBatch.from_pydict(sets), n + m)
    c = len(packed) - n - m
    kind = np.r_[np.full(n + m, DOCUMENT, np.int32), np.full(c, SETS, np.int32)]
    nothing = np.zeros(m + c, np.int64)
    columns = [
        pa.array(kind),
        pa.array(np.r_[docs, bad_docs, np.full(c, -1)]),
        pa.array([*(ids if ids is not None else [None] * n), *[None] * (m + c)], pa.string()),
        pa.array([*[None] * n, *messages, *[None] * c], pa.string()),
        pa.array(np.r_[length, nothing]),
        pa.array(np.r_[size, nothing]),
        pa.array(np.r_[keys, nothing]),
        packed,
    ]
    return pa.RecordBatch.from_arrays(columns, schema=_DOCUMENTS)


PACKED_BYTES = 1 << 20
"""About the most bytes of sets a row of kind :data:`SETS` holds (at least one document's):
the JVM copies each binary value whole, several times, and its collector moves large
arrays that live long at a cost well above their copy."""


def _packed(sets: pa.RecordBatch, nulls: int) -> pa.Array:
    """A binary column: ``nulls`` nulls, then ``sets`` in slices of about
    :data:`PACKED_BYTES`, each an Arrow IPC stream, written into one buffer."""
    rows = sets.num_rows
    step = max(1, rows * PACKED_BYTES // max(sets.nbytes, 1))
    sink = pa.BufferOutputStream()
    ends = [0]
    for start in range(0, max(rows, 1), step):
        with pa.ipc.new_stream(sink, sets.schema) as writer:
            writer.write_batch(sets.slice(start, step))
        ends.append(sink.tell())
    count = nulls + len(ends) - 1
    offsets = np.r_[np.zeros(nulls, np.int64), ends].astype(np.int32)
    validity = np.arange(count) >= nulls
    return pa.Array.from_buffers(
        pa.binary(),
        count,
        [
            pa.py_buffer(np.packbits(validity, bitorder="little")),
            pa.py_buffer(offsets),
            sink.getvalue(),
        ],
        null_count=nulls,
    )


def unpacked(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The record batches packed in the ``sets`` of rows of kind :data:`SETS` (rows of other
    kinds, or only ``sets``, as they come)."""
    for batch in batches:
        blobs = batch.column("sets")
        for k in range(len(blobs)):
            blob = blobs[k]
            if blob.is_valid:
                yield from pa.ipc.open_stream(blob.as_buffer())


def packed_stage(stage: Stage) -> Stage:
    """``stage`` fed the record batches packed in the rows it is given (:func:`unpacked`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return stage(unpacked(batches))

    return run


def columns_stage(names: Sequence[str]) -> Stage:
    """Record batches → their columns ``names``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield batch.select(list(names))

    return run
