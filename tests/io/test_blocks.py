"""io.blocks: JSONL read in blocks (Arrow where exact, else line by line) gives exactly what
the line-by-line reader gives — documents, lines, bad records, errors, empty inputs."""

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.errors import DamagedInputError, InputError
from neardup.io import blocks, files, hugeline
from neardup.io.blocks import JsonlBatches, TextBatch, readable_in_blocks
from neardup.io.readers import read_documents


def _via_blocks(paths, lines_per_block=3, **kwargs):
    """Documents (id, text, input, line), bad records, skipped inputs and the batches."""
    docs, bad, skipped, batches = [], [], [], []
    reader = JsonlBatches(
        paths,
        on_bad=bad.append,
        on_skip=skipped.append,
        lines_per_block=lines_per_block,
        **kwargs,
    )
    for job in reader.jobs():
        batch = job()
        batches.append(batch)
        keep = reader.settle(batch)
        if keep is not None:
            batch = batch.take(keep)
        inputs = [batch.input] * len(batch.ids)
        docs += zip(batch.ids, _texts(batch), inputs, batch.lines, strict=True)
    return docs, [str(b) for b in bad], [str(s) for s in skipped], batches


def _texts(batch: TextBatch) -> list[str]:
    if batch.utf8 is None:
        return batch.texts or []
    text, starts, ends = batch.utf8
    return [text[s:e].tobytes().decode() for s, e in zip(starts, ends, strict=True)]


def _via_lines(paths, **kwargs):
    bad, skipped, docs = [], [], []
    index = []
    for doc in read_documents(
        paths, on_bad=bad.append, on_skip=skipped.append, on_input=index.append, **kwargs
    ):
        docs.append((doc.id, doc.text, index[-1], doc.line))
    return docs, [str(b) for b in bad], [str(s) for s in skipped]


_GOOD = st.fixed_dictionaries(
    {
        "id": st.one_of(st.text(max_size=3), st.integers(-5, 10**12)),
        "text": st.text(alphabet='ab é中\n"\\\x00', max_size=12),
    },
    optional={"meta": st.one_of(st.integers(), st.lists(st.integers(), max_size=2))},
)
_ODD_LINES = st.sampled_from(
    [
        "",
        "   ",
        "not json",
        "[1, 2]",
        '{"id": "n", "text": null}',
        '{"id": "m"}',
        '{"id": 1.5, "text": "float id"}',
        '{"id": true, "text": "bool id"}',
        '{"id": "s", "text": "lone \\ud800 surrogate"}',
        '{"id": "p", "text": "pair \\ud83d\\ude00"}',
        '{"id": "nan", "text": "x", "v": NaN}',
        '{"id": "dup", "text": "x", "text": "y"}',
        '{"id": "big", "text": "' + "w" * 40 + '"}',
        '{"text": "no id at all"}',
        '{"id": "", "text": "empty id"}',
        '{"id": "r", "text": "crlf"}\r',
        '\ufeff{"id": "bom", "text": "a bom"}',
        '{"id": 123456789012345678901234567890, "text": "huge id"}',
        b'{"id": "u8", "text": "caf\xe9"}',
        b'{"id": "caf\xe9", "text": "bad id"}',
    ]
)
_LINE = st.one_of(
    _GOOD.map(json.dumps), _GOOD.map(lambda r: json.dumps(r, ensure_ascii=False)), _ODD_LINES
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(_LINE, max_size=9), min_size=1, max_size=3),
    st.integers(1, 4),
    st.booleans(),
)
def test_blocks_read_what_the_line_reader_reads(tmp_path_factory, files, per_block, newline_end):
    folder = tmp_path_factory.mktemp("jsonl")
    paths = []
    for k, lines in enumerate(files):
        path = folder / f"in{k}.jsonl"
        raw = [line if isinstance(line, bytes) else line.encode() for line in lines]
        path.write_bytes(b"\n".join(raw) + (b"\n" if newline_end else b""))
        paths.append(str(path))
    options = {"skip_bad": True, "max_text_bytes": 30}
    docs, bad, skipped, _ = _via_blocks(paths, per_block, **options)
    assert (docs, bad, skipped) == _via_lines(paths, **options)
    # without skipping: the same first error, or the same documents
    outcomes = []
    for read in (_via_lines, _via_blocks):
        try:
            outcomes.append(read(paths, max_text_bytes=30)[:3])
        except InputError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_clean_blocks_are_parsed_by_arrow_and_odd_ones_line_by_line(tmp_path):
    path = tmp_path / "a.jsonl"
    good = [json.dumps({"id": f"d{i}", "text": f"text {i} é"}) for i in range(6)]
    path.write_text("\n".join([*good, "", *good[:0], '{"id": "x", "text": 5}']) + "\n")
    _, bad, _, batches = _via_blocks([str(path)], lines_per_block=3, skip_bad=True)
    filled = [b for b in batches if b.ids or b.bad]
    assert [b.utf8 is not None for b in filled] == [True, True, False]
    assert bad == [f"{path}:8: field 'text' is a number, not a string"]


def test_a_truncated_gzip_stops_after_the_same_lines_as_the_line_reader(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    lines = [json.dumps({"id": str(i), "text": f"document number {i} " * 40}) for i in range(400)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    path.write_bytes(whole[: len(whole) * 2 // 3])
    reader = JsonlBatches([str(path)], skip_bad=True, lines_per_block=50)
    seen: list[list[str]] = [[], []]

    def via_blocks() -> None:
        for job in reader.jobs():
            reader.settle(batch := job())
            seen[0].extend(batch.ids)

    def via_lines() -> None:
        for doc in read_documents([str(path)], skip_bad=True):
            seen[1].append(doc.id)

    for read in (via_blocks, via_lines):
        with pytest.raises(DamagedInputError, match=r"cut\.jsonl\.gz: truncated"):
            read()
    assert seen[0] == seen[1]
    assert len(seen[0]) > 100


def test_duplicates_across_inputs_and_empty_inputs(tmp_path):
    a, b, empty = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "e.jsonl"
    a.write_text('{"id": "x", "text": "one"}\n{"id": "y", "text": "two"}\n')
    b.write_text('{"id": "y", "text": "again"}\n{"text": "no id"}\n')
    empty.write_text("\n\n")
    paths = [str(a), str(empty), str(b)]
    docs, bad, skipped, _ = _via_blocks(paths, skip_bad=True)
    assert (docs, bad, skipped) == _via_lines(paths, skip_bad=True)
    assert bad == [f"{b}:1: duplicate id 'y' (first at {a}:2)"]
    assert skipped == [f"{empty}: no records (an empty input)"]
    assert [d[0] for d in docs] == ["x", "y", f"{b}:2"]


def test_only_jsonl_inputs_are_read_in_blocks(tmp_path):
    (tmp_path / "a.jsonl").write_text("")
    (tmp_path / "b.csv").write_text("")
    assert readable_in_blocks([tmp_path / "a.jsonl"])
    assert not readable_in_blocks([tmp_path / "a.jsonl", tmp_path / "b.csv"])
    assert not readable_in_blocks([tmp_path])


def test_documents_dropped_when_settled_drop_their_keys_too(tmp_path):
    """A duplicate id skipped after its block was fingerprinted and keyed on a worker: the
    run equals one over the file without that record (its keys gone, the others renumbered)."""
    from neardup.dedup import DedupConfig, deduplicate

    texts = [
        f"the tale number {i % 5} of the old mill by the river, told again" * 4 for i in range(30)
    ]
    records = [{"id": f"d{i}", "text": text} for i, text in enumerate(texts)]
    with_dups = [*records[:5], {"id": "d3", "text": "a second d3 " * 20}, *records[5:]]
    path = tmp_path / "dups.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in with_dups))
    config = DedupConfig(method="minhash", threshold=0.8, measure="resemblance", batch_size=4)
    got = deduplicate(JsonlBatches([path], skip_bad=True, lines_per_block=4), config)
    want = deduplicate([(r["id"], r["text"]) for r in records], config)
    assert got.ids == want.ids
    assert len(got.pairs) > 0
    assert got.labels.tolist() == want.labels.tolist()
    assert sorted(zip(got.pairs.left.tolist(), got.pairs.right.tolist(), strict=True)) == sorted(
        zip(want.pairs.left.tolist(), want.pairs.right.tolist(), strict=True)
    )


@pytest.mark.parametrize("kind", ["string", "large_string"])
def test_utf8_spans_are_the_texts_of_an_arrow_column(kind):
    import pyarrow as pa

    from neardup.io.blocks import utf8_spans

    texts = ["héllo", "", "中文 text", "last one"]
    column = pa.array(["skipped", *texts], type=kind).slice(1)  # an offset into the buffers
    chunked = pa.chunked_array([column[:2], column[2:]])
    for array in (column, chunked):
        buf, starts, ends = utf8_spans(array)
        got = [buf[s:e].tobytes().decode() for s, e in zip(starts, ends, strict=True)]
        assert got == texts


def test_texts_reach_the_kernels_as_one_array_type(tmp_path):
    """Texts parsed by Arrow, read in place from a long line, or joined from strings are all
    read-only arrays: numba then loads one compiled specialization of each kernel, not one
    per way the texts arrived."""
    from neardup.io.blocks import BLOCK_BYTES_MAX
    from neardup.text.canon import split_texts

    path = tmp_path / "in.jsonl"
    records = [{"id": "a", "text": "small one"}, {"id": "big", "text": "w " * BLOCK_BYTES_MAX}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    _, _, _, batches = _via_blocks([str(path)], lines_per_block=10)
    arrays = [b.utf8[0] for b in batches if b.utf8 is not None]
    assert len(arrays) == 2  # the small block by Arrow, the long line in place
    arrays.append(split_texts(["from", "strings"])[0])
    assert [a.flags.writeable for a in arrays] == [False, False, False]


_PIECES = [b"NaN", b"Infinity", b"Infinit", b"aN", b"Na", b"I", b'"', b"\\", b"\n", b":", b"x",
           b"\xe4\xb8\xad", b" ", b"\\u0000", b"u000", b"0", b"\\u00"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_the_fast_word_test_finds_every_block_the_exact_scan_refuses(parts):
    """suspect_words is the substring test, whole, to the last bytes of a block (a word or
    a NUL escape cut off its end would let a NaN literal or a NUL through to Arrow)."""
    import numpy as np

    from neardup.io.jsonl_kernels import json_non_finite, suspect_words

    block = b"".join(parts)
    raw = np.frombuffer(block, dtype=np.uint8)
    words, nul = suspect_words(raw)
    assert words == (b"NaN" in block or b"Infinity" in block)
    assert nul == (b"\\u0000" in block)
    assert words or not json_non_finite(raw)


def test_a_one_chunk_column_is_used_in_place():
    import numpy as np
    import pyarrow as pa

    from neardup.io.blocks import utf8_spans

    column = pa.chunked_array([pa.array(["one", "two words", ""])])
    text, starts, ends = utf8_spans(column)
    data = np.frombuffer(column.chunk(0).buffers()[2], dtype=np.uint8)
    assert np.shares_memory(text, data)
    assert [text[s:e].tobytes().decode() for s, e in zip(starts, ends, strict=True)] == [
        "one",
        "two words",
        "",
    ]


def test_a_line_over_a_block_ends_its_block_and_reads_as_the_line_reader(tmp_path):
    from neardup.io.blocks import BLOCK_BYTES_MAX

    path = tmp_path / "big.jsonl"
    records = [
        {"id": "a", "text": "small one"},
        {"id": "big", "text": "word " * (BLOCK_BYTES_MAX // 5 + 1000)},
        *({"id": f"s{i}", "text": f"small {i}"} for i in range(60000)),  # ~2 MiB: more chunks
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    docs, bad, _, batches = _via_blocks([str(path)], lines_per_block=10**6)
    assert [d[:2] for d in docs] == [(r["id"], r["text"]) for r in records]
    assert not bad
    blocks = [b.ids for b in batches if b.ids]
    assert blocks[:2] == [["a"], ["big"]]  # the long line is a block of its own
    big = next(b for b in batches if b.ids == ["big"])
    assert big.utf8 is not None
    assert _in_place(big)  # its text read into the line's own buffer
    job = next(iter(JsonlBatches([str(path)], lines_per_block=10**6).jobs()))
    job()
    with pytest.raises(RuntimeError, match="once"):  # the block was let go
        job()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_LINE, min_size=1, max_size=9), st.integers(1, 5), st.integers(1, 7))
@pytest.mark.filterwarnings("ignore:line buffering")  # a 1-byte buffer: Python's own warning
def test_long_lines_read_in_place_read_what_the_line_reader_reads(
    tmp_path_factory, lines, piece, chunk
):
    # every line over 16 bytes read as a long line: its text checked and unescaped into the
    # line's own buffer a few bytes at a time, or the line parsed whole where that differs
    path = tmp_path_factory.mktemp("jsonl") / "in.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    options = {"skip_bad": True, "max_text_bytes": 30}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "IO_BUFFER", chunk)  # lines across chunks
        patch.setattr(blocks, "BLOCK_BYTES_MAX", 16)
        patch.setattr(hugeline, "PIECE", piece)
        docs, bad, skipped, _ = _via_blocks([str(path)], 4, **options)
    assert (docs, bad, skipped) == _via_lines([str(path)], **options)


RAISE = "(raise it with --max-text-bytes)"


@pytest.mark.parametrize("piece", [1, 3, 2**20])
def test_a_long_line_text_is_unescaped_into_the_line_itself(tmp_path, piece):
    text = 'café "quoted" \\ back\nslash \t 😀 日本語 ' * 3
    records = [
        {"id": "e", "text": text, "meta": {"k": [1, "v"]}},
        {"id": 7, "text": "plain words only " * 4},
        {"id": "big", "text": "w" * 300},  # over --max-text-bytes
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "IO_BUFFER", 7)
        patch.setattr(blocks, "BLOCK_BYTES_MAX", 16)
        patch.setattr(hugeline, "PIECE", piece)
        docs, bad, _, batches = _via_blocks([str(path)], skip_bad=True, max_text_bytes=200)
    assert [d[:2] for d in docs] == [("e", text), ("7", "plain words only " * 4)]
    assert bad == [
        f"{path}:3: text larger than the limit of 200 bytes (raise it with --max-text-bytes)"
    ]
    held = [b for b in batches if b.ids]
    assert all(_in_place(b) for b in held)


def _in_place(batch: TextBatch) -> bool:
    """Whether the batch's texts are in a line's own buffer (a bytearray)."""
    return batch.utf8 is not None and isinstance(
        getattr(batch.utf8[0].base, "obj", None), bytearray
    )


@given(
    data=st.lists(st.sampled_from([b"\n", b"a", b"\xc3\xa9", b"{}\n", b"\n\n"])).map(b"".join),
    start=st.integers(0, 60),
    wanted=st.integers(1, 40),
)
def test_line_ends_finds_the_wanted_lines_as_a_scan_byte_by_byte(data, start, wanted):
    """The line count equals a plain scan: lines ended up to ``wanted``, and where."""
    start = min(start, len(data))
    end, found = start, 0
    for i in range(start, len(data)):
        if data[i] == 0x0A and found < wanted:
            end, found = i + 1, found + 1
    assert blocks.line_ends(data, start, wanted) == (end, found)


_BEFORE_VALUE = st.sampled_from([b":", b",", b"[", b"-", b" ", b"\n", b"\t", b": ", b",\n "])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_BEFORE_VALUE, st.sampled_from([b"NaN", b"Infinity"])), max_size=9))
def test_a_word_where_a_value_may_start_is_scanned(parts):
    """Outside strings, a word after ``: , [ -``, spaces or a line's start is a literal the
    exact scan refuses: the pre-test never skips it."""
    import numpy as np

    from neardup.io.blocks import _may_be_literal
    from neardup.io.jsonl_kernels import json_non_finite

    block = b"".join(b + w for b, w in parts)
    found = json_non_finite(np.frombuffer(block, dtype=np.uint8))
    assert found == bool(parts)
    assert _may_be_literal(block) == found


@pytest.mark.parametrize(
    ("line", "literal"),
    [
        (b'{"id": "a", "text": "e_signaling_NaN.cpp and to Infinity"}\n', False),
        (b'{"id": "a", "v": NaN}\n', True),
        (b'{"id": "a", "v": [1,-Infinity]}\n', True),
        (b'{"id": "a", "v":\n NaN}', True),
        (b"NaN\n", True),
    ],
)
def test_words_in_strings_need_no_scan(line, literal):
    from neardup.io.blocks import _may_be_literal

    assert _may_be_literal(line) is literal
