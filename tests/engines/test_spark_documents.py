"""Lines into packed fingerprint sets for the Spark engine, without Spark: the documents,
ids and bad records the local line parser finds, each set its text's own."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from neardup.dedup.config import DedupConfig
from neardup.dedup.flow import fingerprint_texts
from neardup.engines.spark.documents import (
    DOCUMENT,
    SETS,
    columns_stage,
    line_stage,
    line_text_stage,
    packed_stage,
    text_stage,
    unpacked,
)
from neardup.io.formats.jsonl import FORMAT
from neardup.io.jsonlines import jsonl_item
from neardup.io.records import BadRecord, Document, ReadOptions

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def _text(seed: int) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), 40))


# two inputs; input 0 starts with a BOM and holds a blank line, a bad record and a record
# without an id; the batch jumps within input 1 (lines 1–2, then 5–6), as a batch that
# crosses a split does
LINES = [
    (0, 0, "\ufeff" + json.dumps({"id": "a", "text": _text(1)})),
    (0, 1, ""),
    (0, 2, '{"id": "b", "text": 5}'),
    (0, 3, json.dumps({"text": _text(2)}) + "  "),
    (1, 0, json.dumps({"id": 7, "text": _text(3)})),
    (1, 1, json.dumps({"id": "c", "text": _text(1)})),
    (1, 4, json.dumps({"id": "d", "text": "café " + _text(4)})),
    (1, 5, "   "),
]
PATHS = ["one.jsonl", "two.jsonl"]
ROWS = [3, 4, 5, 6, 10, 11, 40, 41]  # the lines' numbers in input order, with gaps


def _batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "value": pa.array([line for _, _, line in LINES], pa.string()),
            "_input": pa.array([i for i, _, _ in LINES], pa.int32()),
            "_pos": pa.array([p for _, p, _ in LINES], pa.int64()),
            "_row": pa.array(ROWS, pa.int64()),
        }
    )


def _expected(opts: ReadOptions) -> tuple[dict[int, Document], dict[int, BadRecord]]:
    """Each line read alone by the line parser (blank ones skipped), by its row."""
    docs, bad = {}, {}
    for (index, pos, line), row in zip(LINES, ROWS, strict=True):
        raw = line.encode()
        if pos == 0:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        if not raw.strip():
            continue
        item = jsonl_item(raw, PATHS[index], pos + 1, opts)
        (docs if isinstance(item, Document) else bad)[row] = item
    return docs, bad


@pytest.mark.parametrize("method", ["full", "minhash"])
def test_lines_become_the_line_parser_s_documents_and_their_own_sets(method):
    config = DedupConfig(method=method)
    opts = ReadOptions("id", "text", 1 << 20, True)
    out = pa.Table.from_batches(list(line_stage(config, FORMAT, PATHS, opts)(iter([_batch()]))))
    docs, bad = _expected(opts)
    assert (len(docs), len(bad)) == (5, 1)
    rows = out.filter(pa.compute.equal(out.column("kind"), DOCUMENT)).to_pylist()
    found = {r["doc"]: r for r in rows if r["bad"] is None}
    assert {d: r["id"] for d, r in found.items()} == {d: doc.id for d, doc in docs.items()}
    assert {r["doc"]: r["bad"] for r in rows if r["bad"]} == {d: str(b) for d, b in bad.items()}
    assert {d: r["length"] for d, r in found.items()} == {d: len(x.text) for d, x in docs.items()}
    # the packed sets: each document's fingerprints, keys and words, its text's own
    packed = out.filter(pa.compute.equal(out.column("kind"), SETS))
    sets = pa.Table.from_batches(list(unpacked(iter(packed.to_batches()))))
    assert sorted(sets.column("doc").to_pylist()) == sorted(docs)
    method_of = config.build_method() if method != "full" else None
    for k, doc in enumerate(sets.column("doc").to_pylist()):
        alone = fingerprint_texts(None, config, method_of, config.identity, [docs[doc].text])
        fps = np.asarray(sets.column("fps")[k].as_py(), dtype=np.int64).view(np.uint64)
        assert fps.tolist() == alone.prints.values.tolist()
        assert found[doc]["size"] == fps.size
        if method_of is not None:
            keys = sorted(set(np.asarray(alone.keys.keys, dtype=np.uint64).tolist()))
            got = np.asarray(sets.column("keys")[k].as_py(), dtype=np.int64).view(np.uint64)
            assert got.tolist() == keys
            assert found[doc]["keys"] == len(keys)
        words = np.asarray(sets.column("words")[k].as_py(), dtype=np.int64).view(np.uint64)
        assert words.size
        assert np.all(np.diff(words) > 0)  # sorted and distinct


def test_the_texts_read_again_are_the_line_parser_s():
    opts = ReadOptions("id", "text", 1 << 20, True)
    out = pa.Table.from_batches(list(line_text_stage(FORMAT, PATHS, opts)(iter([_batch()]))))
    docs, _ = _expected(opts)
    got = {r["doc"]: (r["id"], r["text"]) for r in out.to_pylist()}
    assert got == {d: (doc.id, doc.text) for d, doc in docs.items()}


def test_a_dataframe_s_texts_packed_and_read_back_a_row_a_document():
    """The texts of a DataFrame (numbered, with the keep field's values): a row a document
    with its counts, the sets packed once a batch and unpacked as they were made."""
    config = DedupConfig()
    texts = [_text(s) for s in range(5)]
    batch = pa.RecordBatch.from_pydict(
        {
            "doc": pa.array([9, 2, 30, 4, 5], pa.int64()),
            "text": pa.array(texts),
            "value": pa.array([1.5, 2.5, None, 0.5, 3.0]),
        }
    )
    out = pa.Table.from_batches(list(text_stage(config, value=True)(iter([batch, batch]))))
    kinds = out.column("kind").to_pylist()
    assert kinds == [DOCUMENT] * 5 + [SETS] + [DOCUMENT] * 5 + [SETS]
    alone = fingerprint_texts(None, config, None, config.identity, texts)
    sizes = np.diff(alone.prints.offsets).tolist()
    assert out.column("size").to_pylist()[:5] == sizes
    assert out.column("keys").to_pylist()[:5] == sizes  # the full index: its fingerprints
    stage = packed_stage(columns_stage(["doc", "fps", "value"]))
    back = pa.Table.from_batches(list(stage(iter(out.to_batches()))))
    assert back.column("doc").to_pylist() == [9, 2, 30, 4, 5] * 2
    assert back.column("value").to_pylist() == [1.5, 2.5, None, 0.5, 3.0] * 2
    fps = np.asarray(back.column("fps").combine_chunks().values, np.int64).view(np.uint64)
    assert fps.tolist() == alone.prints.values.tolist() * 2


def test_sets_larger_than_a_row_holds_are_packed_in_slices_read_back_whole(monkeypatch):
    """A batch whose sets exceed PACKED_BYTES goes out in several rows of kind SETS, each
    about that size: unpacked, they are the batch's sets, in order."""
    from neardup.engines.spark import documents

    config = DedupConfig()
    texts = [_text(s) for s in range(40)]
    batch = pa.RecordBatch.from_pydict({"doc": pa.array(range(40), pa.int64()), "text": texts})
    whole = pa.Table.from_batches(list(text_stage(config)(iter([batch]))))
    assert whole.column("kind").to_pylist().count(SETS) == 1
    monkeypatch.setattr(documents, "PACKED_BYTES", 2_000)
    out = pa.Table.from_batches(list(text_stage(config)(iter([batch]))))
    kinds = out.column("kind").to_pylist()
    assert kinds[:40] == [DOCUMENT] * 40
    assert kinds.count(SETS) >= 10
    blobs = [b.as_py() for b in out.column("sets") if b.is_valid]
    assert max(map(len, blobs)) < 4 * 2_000
    sets = pa.Table.from_batches(list(unpacked(iter(out.to_batches()))))
    alone = pa.Table.from_batches(list(unpacked(iter(whole.to_batches()))))
    assert sets.equals(alone)
