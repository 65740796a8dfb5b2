"""JSONL inputs read in blocks whose parsing runs on worker threads.

The calling thread only cuts each file into blocks of whole lines (no step per line). A
worker parses a block with Arrow's JSON reader (C++, without the GIL) straight into one
UTF-8 buffer of texts, which the kernels fingerprint without a Python string being made of
them. A block Arrow cannot take exactly as the line-by-line reader would (a bad record, a
blank line, a float or missing id, a ``\\u`` surrogate or NUL escape, ``NaN``, a text over the size
limit) is read line by line instead (:func:`neardup.io.jsonlines.jsonl_item`), so both ways
give the same documents and the same errors. Duplicate ids and bad records are settled in
input order on the calling thread (:meth:`JsonlBatches.settle`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from neardup.errors import DamagedInputError
from neardup.io.files import (
    BOM,
    bad_record_error,
    byte_chunks,
    read_error,
    read_errors,
)
from neardup.io.formats import batch_source, classify
from neardup.io.hugeline import text_in_place
from neardup.io.jsonl_kernels import json_non_finite, suspect_words
from neardup.io.jsonlines import jsonl_item
from neardup.io.readers import duplicate_record
from neardup.io.records import (
    DEFAULT_MAX_TEXT_BYTES,
    BadRecord,
    Document,
    Item,
    ReadOptions,
    Skipped,
    line_limit,
    overlong,
)
from neardup.text.script_kernels import char_counts
from neardup.util.heap import release_free_memory
from neardup.util.kernels import threads_for

BLOCK_BYTES_MAX = 16 * 2**20  # a block stops growing here even with fewer lines than asked


@dataclass(frozen=True, slots=True, eq=False)
class TextBatch:
    """Documents read together: ids, and the texts as strings or as UTF-8 spans of one
    buffer (``text[starts[d]:ends[d]]``); the input (index) and lines they came from, the
    bad records among those lines, and whether this ends its input."""

    ids: list[str]
    texts: list[str] | None = None
    utf8: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    input: int = 0
    lines: list[int] = field(default_factory=list)
    bad: list[BadRecord] = field(default_factory=list)
    ends_input: bool = False

    def char_lengths(self) -> np.ndarray:
        """Characters of each text (what ``len`` of the string gives)."""
        if self.utf8 is not None:
            with threads_for(0):  # on the calling thread
                return char_counts(*self.utf8)
        return np.fromiter(map(len, self.texts or []), dtype=np.int64, count=len(self.ids))

    def take(self, keep: np.ndarray) -> TextBatch:
        """The documents where ``keep`` (a mask) is true."""
        picked = np.flatnonzero(keep).tolist()
        texts = None if self.texts is None else [self.texts[i] for i in picked]
        utf8 = None
        if self.utf8 is not None:
            text, starts, ends = self.utf8
            utf8 = (text, starts[keep], ends[keep])
        return replace(
            self,
            ids=[self.ids[i] for i in picked],
            texts=texts,
            utf8=utf8,
            lines=[self.lines[i] for i in picked],
        )


@runtime_checkable
class BatchSource(Protocol):
    """Documents as reading jobs that can run on worker threads, and the in-order check of
    each job's batch (e.g. :class:`JsonlBatches`)."""

    def jobs(self) -> Iterator[Callable[[], TextBatch]]: ...

    def settle(self, batch: TextBatch) -> np.ndarray | None: ...


def pairs_batch(pairs: Sequence[tuple[str, str]]) -> TextBatch:
    """A batch of ``(id, text)`` pairs given in memory."""
    return TextBatch([doc_id for doc_id, _ in pairs], [text for _, text in pairs])


class JsonlBatches:
    """Every document of JSONL inputs, as jobs that read a block each (run on workers) and
    :meth:`settle`, which checks their ids and bad records in input order.

    Use :func:`readable_in_blocks` first: other kinds of input go through
    :func:`neardup.io.readers.read_documents`. The callbacks are those of ``read_documents``;
    ``on_documents`` gets each settled batch's input index and lines.
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        *,
        id_field: str = "id",
        text_field: str = "text",
        skip_bad: bool = False,
        on_bad: Callable[[BadRecord], None] | None = None,
        max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
        on_skip: Callable[[Skipped], None] | None = None,
        on_input: Callable[[int], None] | None = None,
        on_documents: Callable[[int, list[int]], None] | None = None,
        lines_per_block: int = 2048,
    ) -> None:
        self._inputs = [classify(Path(p)) for p in paths]
        self._opts = ReadOptions(id_field, text_field, max_text_bytes, len(self._inputs) > 1)
        self._id_types = ["string", "int64"]  # ids as Arrow reads them; the last that did first
        self._skip_bad = skip_bad
        self._on_bad = on_bad
        self._on_skip = on_skip
        self._on_input = on_input
        self._on_documents = on_documents
        self._lines_per_block = lines_per_block
        self._seen: dict[str, int] = {}  # id -> line * len(inputs) + input index
        self._current = -1
        self._records = 0

    def jobs(self) -> Iterator[Callable[[], TextBatch]]:
        """One job per block of every input, in order, and one closing each input."""
        for index, inp in enumerate(self._inputs):
            source, line = str(inp.path), 1
            try:
                limit = line_limit(self._opts.max_text_bytes)
                with byte_chunks(inp) as chunks:
                    for block, count in _line_blocks(chunks, self._lines_per_block, limit):
                        if block is None:  # one line over the limit, not read
                            why = overlong(self._opts.max_text_bytes)
                            bad = BadRecord(source, line, why)
                            yield partial(TextBatch, [], input=index, bad=[bad])
                        elif isinstance(block, bytearray):  # one line over BLOCK_BYTES_MAX
                            long_job = _LongLineJob(
                                block, line, index, source, self._opts, self._id_types
                            )
                            del block
                            yield long_job
                        else:
                            job = _BlockJob(
                                block, count, line, index, source, self._opts, self._id_types
                            )
                            del block  # held by the job alone, which lets it go once parsed
                            yield job
                        line += count
            except DamagedInputError:
                raise
            except read_errors(inp) as exc:
                bad = BadRecord(source, line if line > 1 else 0, read_error(exc))
                yield partial(TextBatch, [], input=index, bad=[bad])
            yield partial(TextBatch, [], input=index, ends_input=True)

    def settle(self, batch: TextBatch) -> np.ndarray | None:
        """Check a batch's ids against those seen before and report its bad records, in line
        order (raising the first as InputError unless bad records are skipped); returns the
        mask of the documents to keep (None: all)."""
        if batch.input != self._current:
            self._current, self._records = batch.input, 0
            if self._on_input is not None:
                self._on_input(batch.input)
        self._records += len(batch.ids) + len(batch.bad)
        if batch.ends_input and not self._records and self._on_skip is not None:
            self._on_skip(Skipped(str(self._inputs[batch.input].path)))
        keep = self._check(batch)
        if self._on_documents is not None:
            lines = batch.lines if keep is None else np.asarray(batch.lines)[keep].tolist()
            self._on_documents(batch.input, lines)
        return keep

    def _check(self, batch: TextBatch) -> np.ndarray | None:
        width = len(self._inputs)
        source = str(self._inputs[batch.input].path)
        problems: list[tuple[int, int, BadRecord]] = [(b.line, -1, b) for b in batch.bad]
        places = [line * width + batch.input for line in batch.lines]
        before = len(self._seen)
        if self._seen.keys().isdisjoint(batch.ids):  # the usual case: one C-level update
            self._seen.update(zip(batch.ids, places, strict=True))
            if len(self._seen) - before == len(batch.ids) and not problems:
                return None
            for doc_id in batch.ids:  # a duplicate within, or bad records: all in line order
                self._seen.pop(doc_id, None)
        for position, (doc_id, line) in enumerate(zip(batch.ids, batch.lines, strict=True)):
            here = places[position]
            first = self._seen.setdefault(doc_id, here)
            if first != here:
                bad = duplicate_record(self._inputs, source, line, doc_id, first)
                problems.append((line, position, bad))
        if not problems:
            return None
        problems.sort(key=lambda p: p[0])
        keep = np.ones(len(batch.ids), dtype=np.bool_)
        for _, position, bad in problems:
            if not self._skip_bad:
                raise bad_record_error(self._inputs[batch.input], str(bad))
            if self._on_bad is not None:
                self._on_bad(bad)
            if position >= 0:
                keep[position] = False
        return keep


def readable_in_blocks(paths: Sequence[str | Path]) -> bool:
    """Whether the inputs are read in blocks on worker threads (all of one format that reads
    so: JSONL files, plain or compressed, when Arrow can parse them)."""
    return batch_source(paths) is not None


class _BlockJob:
    """:func:`parse_block` of one block, run once: the block is let go as soon as it is
    parsed, not held (by the job, its worker or the reader) while the documents parsed from
    it are fingerprinted; for a huge line that is a second copy of its text."""

    __slots__ = ("_args",)

    def __init__(self, *args: Any) -> None:
        self._args: tuple[Any, ...] | None = args

    def __call__(self) -> TextBatch:
        args, self._args = self._args, None
        if args is None:
            raise RuntimeError("a block is parsed once")
        return parse_block(*args)


class _LongLineJob:
    """One line over ``BLOCK_BYTES_MAX``: its text read into the line's own buffer
    (:func:`~neardup.io.hugeline.text_in_place`: the line is all that is held of it), or
    parsed as any block where that cannot be shown to give the same."""

    __slots__ = ("_args",)

    def __init__(
        self,
        line: bytearray,
        lineno: int,
        index: int,
        source: str,
        opts: ReadOptions,
        id_types: list[str],
    ) -> None:
        self._args: tuple[bytearray, int, int, str, ReadOptions, list[str]] | None = (
            line, lineno, index, source, opts, id_types,
        )  # fmt: skip

    def __call__(self) -> TextBatch:
        args, self._args = self._args, None
        if args is None:
            raise RuntimeError("a block is parsed once")
        line, lineno, index, source, opts, id_types = args
        del args
        found = text_in_place(line, lineno, source, opts)
        if found is None:
            return parse_block(line, 1, lineno, index, source, opts, id_types)
        if isinstance(found, BadRecord):
            return TextBatch([], input=index, bad=[found])
        doc_id, start, end = found
        utf8 = (_read_only(np.frombuffer(line, dtype=np.uint8)), np.array([start]), np.array([end]))
        return TextBatch([doc_id], utf8=utf8, input=index, lines=[lineno])


def parse_block(
    block: bytes | bytearray,
    count: int,
    first_line: int,
    index: int,
    source: str,
    opts: ReadOptions,
    id_types: list[str] | None = None,
) -> TextBatch:
    """The documents and bad records of a block of ``count`` whole JSONL lines starting at
    line ``first_line``: parsed by Arrow when it reads every line exactly as the
    line-by-line reader would, else line by line. ``id_types``: the Arrow types to read ids
    as, in the order to try them (reordered when a later one reads the block)."""
    id_types = ["string", "int64"] if id_types is None else id_types
    fast = _parse_arrow(block, first_line, count, index, source, opts, id_types)
    if fast is not None:
        return fast
    return lines_one_by_one(jsonl_item, block, count, first_line, index, source, opts)


def lines_one_by_one(
    parse_line: Callable[[bytes, str, int, ReadOptions], Item],
    block: bytes | bytearray,
    count: int,
    first_line: int,
    index: int,
    source: str,
    opts: ReadOptions,
) -> TextBatch:
    """The documents and bad records of a block of ``count`` whole lines, each line read by
    ``parse_line`` (blank lines skipped)."""
    docs: list[Document] = []
    bad: list[BadRecord] = []
    for k, raw in enumerate(block.split(b"\n")[:count]):
        if raw and not raw.isspace():
            item = parse_line(bytes(raw), source, first_line + k, opts)
            (docs if isinstance(item, Document) else bad).append(item)  # type: ignore[arg-type]
    return TextBatch(
        [d.id for d in docs],
        [d.text for d in docs],
        input=index,
        lines=[d.line for d in docs],
        bad=bad,
    )


def _parse_arrow(
    block: bytes | bytearray,
    first_line: int,
    count: int,
    index: int,
    source: str,
    opts: ReadOptions,
    id_types: list[str],
) -> TextBatch | None:
    """The block's documents through Arrow, or None where it might differ from the
    line-by-line reader (then nothing of it is used)."""
    import pyarrow as pa
    import pyarrow.json as pj

    # a \\u escape of a lone surrogate: Arrow refuses the block (the line reader, the record)
    if _takes_what_lines_refuse(block) or (first_line > 1 and block.startswith(BOM)):
        return None
    table = None
    # a block of one huge line: parsed with the C heap, which gives back the parser's freed
    # memory (Arrow's own allocator keeps it, as much again as the text, for the whole run)
    pool = pa.system_memory_pool() if len(block) > BLOCK_BYTES_MAX else None
    for id_type in list(id_types):  # ids as strings, or all integers
        schema = pa.schema([(opts.id_field, id_type), (opts.text_field, pa.string())])
        try:
            table = pj.read_json(
                pa.BufferReader(block),  # read in place: no copy of the block
                read_options=pj.ReadOptions(use_threads=False, block_size=len(block) + 1),
                parse_options=pj.ParseOptions(
                    explicit_schema=schema, unexpected_field_behavior="ignore"
                ),
                memory_pool=pool,
            )
        except (pa.ArrowException, UnicodeDecodeError):
            continue
        if id_type != id_types[0]:  # the next blocks likely have such ids too: try it first
            id_types[:] = [id_type, *(t for t in id_types if t != id_type)]  # one store
        break
    if table is None or table.num_rows != count:  # a bad or a blank line
        return None
    try:
        table.validate(full=True)  # Arrow's JSON reader takes invalid UTF-8 as it is
    except pa.ArrowInvalid:
        return None
    texts = table.column(opts.text_field)
    if texts.null_count:
        return None
    text, starts, ends = utf8_spans(texts)
    if count and int((ends - starts).max()) > opts.max_text_bytes:
        return None
    lines = list(range(first_line, first_line + count))
    ids = table.column(opts.id_field).to_pylist()
    if id_type != "string":  # integers, named as the line reader names them
        ids = [None if doc_id is None else str(doc_id) for doc_id in ids]
    for k, doc_id in enumerate(ids):
        if not doc_id:  # missing, null or "": the line, as the line-by-line reader names it
            ids[k] = f"{source}:{lines[k]}" if opts.several else str(lines[k])
    return TextBatch(ids, utf8=(text, starts, ends), input=index, lines=lines)


def _takes_what_lines_refuse(block: bytes | bytearray) -> bool:
    """Whether Arrow may take a record of ``block`` that the line reader refuses: a NUL
    (``\\u0000``: Arrow takes it, the line reader refuses the record), or a non-finite
    number (:func:`json_non_finite`, scanned only when the words occur at all where a value
    may start: :func:`_may_be_literal`). One fast pass finds both kinds of bytes."""
    raw = np.frombuffer(block, dtype=np.uint8)
    words, nul = suspect_words(raw)
    return bool(nul or (words and _may_be_literal(block) and json_non_finite(raw)))


_NON_FINITE_WORDS = (b"NaN", b"Infinity")
_VALUE_BEFORE = (b":", b"[", b",", b"-", b"\n")  # what a JSON value may follow, spaces aside
_WORDS_LOOKED_AT = 1000  # occurrences looked at one by one; past them, the exact scan


def _may_be_literal(block: bytes) -> bool:
    """Whether an occurrence of ``NaN`` or ``Infinity`` in ``block`` follows what a JSON
    value may follow (``: [ , -``, a line's start; spaces aside): elsewhere it is in a
    string (``"e_signaling_NaN.cpp"``, ``"to Infinity"``) or not JSON (Arrow refuses the
    block), and needs no scan."""
    seen = 0
    for word in _NON_FINITE_WORDS:
        at = block.find(word)
        while at >= 0:
            seen += 1
            if seen > _WORDS_LOOKED_AT:
                return True
            before = block[max(at - 64, 0) : at].rstrip(b" \t\r")
            if not before or before.endswith(_VALUE_BEFORE):
                return True
            at = block.find(word, at + 1)
    return False


def utf8_spans(texts: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An Arrow string column (``string`` or ``large_string``, chunked or not, no nulls) as
    ``(buffer, starts, ends)``: text d is ``buffer[starts[d]:ends[d]]``, the column's own
    bytes (no copy when it is one chunk)."""
    import pyarrow as pa

    if isinstance(texts, pa.ChunkedArray):  # one chunk as it is: combining copies it
        texts = texts.chunk(0) if texts.num_chunks == 1 else texts.combine_chunks()
    width = np.dtype(np.int64 if pa.types.is_large_string(texts.type) else np.int32)
    _, offsets, data = texts.buffers()
    bounds = np.frombuffer(
        offsets, dtype=width, count=len(texts) + 1, offset=width.itemsize * texts.offset
    ).astype(np.int64)
    text = np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(0, np.uint8)
    return _read_only(text), bounds[:-1], bounds[1:]


def _read_only(text: np.ndarray) -> np.ndarray:
    """``text`` marked read-only, as the texts joined from strings are
    (:func:`~neardup.text.canon.split_texts`): the kernels then see one array type, and
    numba loads one compiled specialization of each, not one per kind of input."""
    text.flags.writeable = False
    return text


def _line_blocks(
    chunks: Iterator[bytes], lines: int, limit: int | None = None
) -> Iterator[tuple[bytes | bytearray | None, int]]:
    """Blocks of whole lines (each with its b"\\n", but maybe the file's last) of about
    ``lines`` lines, and how many lines each holds: the line-by-line reader's lines exactly,
    also when reading fails (the whole lines read before are delivered, then it raises). A
    line longer than ``limit`` bytes is a block of its own given as None, never held whole;
    a line over ``BLOCK_BYTES_MAX`` is a block of its own, a bytearray grown as it is read
    (never held twice, as its pieces and their join)."""
    done: list[bytes | memoryview] = []  # whole lines not delivered yet
    tail: list[bytes | memoryview] = []  # the start of a line whose end is not read yet
    long: bytearray | None = None  # the same, once over BLOCK_BYTES_MAX
    size = count = held = 0  # bytes and lines in done; bytes of the line begun
    over = False  # the line being read is over the limit (its pieces are dropped)
    try:
        for chunk in chunks:
            view, at = memoryview(chunk), 0
            while at < len(chunk):
                if (held or over) and limit is not None:  # a line begun in earlier chunks
                    newline = chunk.find(b"\n", at)
                    length = (newline if newline >= 0 else len(chunk)) - at
                    if over or held + length > limit:
                        tail, long, held, over = [], None, 0, newline < 0
                        if newline < 0:
                            break
                        if done:
                            yield _joined(done), count
                            size, count = 0, 0
                        yield None, 1
                        at = newline + 1
                        continue
                if long is not None:  # the rest of a long line, then the line alone
                    newline = chunk.find(b"\n", at)
                    stop = newline + 1 if newline >= 0 else len(chunk)
                    long += view[at:stop]
                    held += stop - at
                    if newline < 0:
                        break
                    if done:
                        yield _joined(done), count
                        size, count = 0, 0
                    block, long, held = long, None, 0
                    yield block, 1
                    del block
                    at = newline + 1
                    continue
                if tail:  # a line begun: long if it ends past BLOCK_BYTES_MAX
                    newline = chunk.find(b"\n", at)
                    if held + (newline + 1 if newline >= 0 else len(chunk)) - at > BLOCK_BYTES_MAX:
                        long, tail = bytearray().join(tail), []
                        continue
                end, found = line_ends(chunk, at, lines - count)
                if not found:
                    tail.append(view[at:])
                    held += len(chunk) - at
                    if held > BLOCK_BYTES_MAX:  # its pieces joined once, then grown
                        long, tail = bytearray().join(tail), []
                    break
                done += (*tail, view[at:end])  # no copy but the block's join
                count += found
                size += held + end - at
                tail, held = [], 0
                at = end
                if count >= lines or size >= BLOCK_BYTES_MAX:
                    yield _joined(done), count
                    size, count = 0, 0
    except Exception:  # a read error: the whole lines before it first (never on close)
        if done:
            yield _joined(done), count
        raise
    if long is not None:
        if done:
            yield _joined(done), count
        yield long, 1
    elif done or tail:
        count += 1 if tail else 0
        done += tail
        tail = []
        yield _joined(done), count
    if over:
        yield None, 1


def line_ends(chunk: bytes, start: int, wanted: int) -> tuple[int, int]:
    """``(end, found)``: the lines ended in ``chunk[start:]`` up to ``wanted`` (≥ 1) of them,
    and where the last of those ends (after its line feed; ``start`` if none). The bytes'
    own count and search: a chunk holding fewer lines than wanted (nearly every one) is
    counted in one pass, with no array made of it."""
    found = chunk.count(b"\n", start)
    if found > wanted:
        end = start - 1
        for _ in range(wanted):
            end = chunk.find(b"\n", end + 1)
        return end + 1, wanted
    if not found:
        return start, 0
    return chunk.rfind(b"\n") + 1, found


def _joined(pieces: list[bytes | memoryview]) -> bytes:
    """The pieces joined, the list emptied: no piece stays held while the block is parsed
    (a huge line's pieces, given back to the system, are not a second copy of it)."""
    block = b"".join(pieces)
    pieces.clear()
    if len(block) > BLOCK_BYTES_MAX:
        release_free_memory()
    return block
