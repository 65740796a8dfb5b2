import csv
import gzip
import itertools
import json
import os
import pickle
import re
import sys
import tempfile
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError, DamagedInputError, InputError, MissingDependencyError
from neardup.io.readers import (
    BadRecord,
    Document,
    count_lines,
    read_documents,
)
from neardup.io.writers import RecordWriter

RECORDS = [
    {"id": "a", "text": "Первый текст", "lang": "ru", "n": 1},
    {"id": 7, "text": "second text", "tags": ["x", "y"]},
    {"id": "c", "text": "   ", "meta": {"k": None}},
]


def jsonl_bytes(records):
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def write_bytes(path: Path, data: bytes) -> Path:
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def write_csv(path: Path, rows, header=("id", "text", "lang")) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_all(paths, **kw):
    return list(read_documents(paths, **kw))


def collect_bad(paths, **kw):
    bad: list[BadRecord] = []
    docs = read_all(paths, skip_bad=True, on_bad=bad.append, **kw)
    return docs, bad


# --------------------------------------------------------------------------------------------
# JSONL


@pytest.mark.parametrize(
    "name", ["d.jsonl", "d.jsonl.gz", "d.jsonl.zst", "d.NDJSON", "d.ndjson.gz"]
)
def test_jsonl_every_compression(tmp_path, name):
    data = jsonl_bytes(RECORDS[:1]) + b"\n  \n" + jsonl_bytes(RECORDS[1:])
    docs = read_all([write_bytes(tmp_path / name, data)])
    assert [d.id for d in docs] == ["a", "7", "c"]
    assert [d.line for d in docs] == [1, 4, 5]  # blank lines skipped, still counted
    assert [d.record for d in docs] == RECORDS  # every field kept
    assert docs[0].text == "Первый текст"
    assert docs[2].text == "   "  # whitespace-only texts are not bad records
    assert {d.source for d in docs} == {str(tmp_path / name)}
    assert docs[1].where == f"{tmp_path / name}:4"


def test_zst_with_several_frames(tmp_path):
    comp = zstandard.ZstdCompressor()
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(
        comp.compress(jsonl_bytes(RECORDS[:1])) + comp.compress(jsonl_bytes(RECORDS[1:]))
    )
    assert [d.id for d in read_all([path])] == ["a", "7", "c"]


def test_concatenated_gzip_members_and_zero_padding(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    data = gzip.compress(jsonl_bytes(RECORDS[:2])) + gzip.compress(jsonl_bytes(RECORDS[2:]))
    path.write_bytes(data + b"\x00" * 100)
    assert [d.id for d in read_all([path])] == ["a", "7", "c"]
    path.write_bytes(data + b"garbage")
    docs: list[Document] = []
    with pytest.raises(DamagedInputError, match=r"d\.jsonl\.gz: corrupt gzip data"):
        docs.extend(read_documents([path], skip_bad=True))
    assert [d.id for d in docs] == ["a", "7", "c"]


def test_bom_crlf_and_custom_fields(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"key": "k1", "body": "x"}\r\n{"key": 2.5, "body": "y"}\r\n')
    docs = read_all([path], id_field="key", text_field="body")
    assert [(d.id, d.text) for d in docs] == [("k1", "x"), ("2.5", "y")]


def test_missing_id_is_line_number_or_path_and_line(tmp_path):
    a = write_bytes(tmp_path / "a.jsonl", b'{"text": "x"}\n\n{"id": null, "text": "y"}\n')
    b = write_bytes(tmp_path / "b.jsonl", b'{"id": "", "text": "z"}\n')
    assert [d.id for d in read_all([a])] == ["1", "3"]
    assert [d.id for d in read_documents(str(a))] == ["1", "3"]  # one path alone
    assert [d.id for d in read_all([a, b])] == [f"{a}:1", f"{a}:3", f"{b}:1"]


BAD_LINES = [
    (b'{"id": 1, "text": "x" "y"}', r"not valid JSON \(Expecting ',' delimiter at column 23\)"),
    (b'["a"]', "not a JSON object but an array"),
    (b'{"id": 1}', "no field 'text'"),
    (b'{"id": 1, "text": 5}', "field 'text' is a number, not a string"),
    (b'{"id": 1, "text": null}', "field 'text' is null, not a string"),
    (b'{"id": [1], "text": "x"}', "id field 'id' is an array"),
    (b'{"id": 1, "text": "ok \xff\xfe"}', r"invalid UTF-8 at byte 22 \(invalid start byte\)"),
    (b'{"id": 1, "text": "\\ud800"}', "field 'text' has an unpaired surrogate"),
]


@pytest.mark.parametrize(("line", "reason"), BAD_LINES)
def test_bad_jsonl_line_raises_with_file_and_line(tmp_path, line, reason):
    path = write_bytes(tmp_path / "data.jsonl", b'{"id": 0, "text": "fine"}\n\n' + line + b"\n")
    with pytest.raises(
        InputError, match=rf"^{re.escape(str(tmp_path / 'data.jsonl'))}:3: {reason}"
    ):
        read_all([path])


@pytest.mark.parametrize(("line", "reason"), BAD_LINES)
def test_bad_jsonl_line_skipped_and_reported(tmp_path, line, reason):
    good = b'{"id": "g", "text": "fine"}\n'
    path = write_bytes(tmp_path / "data.jsonl", good + line + b"\n" + good.replace(b'"g"', b'"h"'))
    docs, bad = collect_bad([path])
    assert [d.id for d in docs] == ["g", "h"]
    assert [(b.source, b.line) for b in bad] == [(str(path), 2)]
    assert str(bad[0]).startswith(f"{path}:2: ")


def test_skip_bad_without_callback_just_skips(tmp_path):
    path = write_bytes(tmp_path / "d.jsonl", b'{"text": "a"}\nnope\n{"text": "b"}\n')
    assert [d.text for d in read_all([path], skip_bad=True)] == ["a", "b"]


def test_text_over_max_text_bytes_is_bad(tmp_path):
    path = write_bytes(tmp_path / "d.jsonl", jsonl_bytes([{"text": "é" * 600}, {"text": "x" * 10}]))
    docs, bad = collect_bad([path], max_text_bytes=1000)
    assert [d.line for d in docs] == [2]
    assert "larger than the limit" in bad[0].reason
    with pytest.raises(ConfigError):
        read_documents([path], max_text_bytes=0)


def test_huge_line_is_fine(tmp_path):
    text = "слово " * 2_000_000  # ~22 MB on one line
    path = write_bytes(tmp_path / "d.jsonl.gz", jsonl_bytes([{"id": 1, "text": text}]))
    assert read_all([path])[0].text == text


def test_truncated_gzip_stops_the_reading_after_what_came_before(tmp_path):
    data = gzip.compress(jsonl_bytes({"id": i, "text": f"t{i}" * 50} for i in range(2000)))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    docs: list[Document] = []
    with pytest.raises(DamagedInputError, match=r"cut\.jsonl\.gz: truncated"):
        docs.extend(read_documents([path], skip_bad=True))
    assert 0 < len(docs) < 2000
    assert [d.line for d in docs] == list(range(1, len(docs) + 1))


def test_missing_file_is_bad_record(tmp_path):
    good = write_bytes(tmp_path / "good.jsonl", b'{"text": "x"}\n')
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(InputError, match=r"missing\.jsonl: no such file"):
        read_all([missing, good])
    docs, bad = collect_bad([missing, good])
    assert [d.source for d in docs] == [str(good)]
    assert str(bad[0]) == f"{missing}: no such file"


# --------------------------------------------------------------------------------------------
# duplicates, kinds


def test_duplicate_ids_across_files(tmp_path):
    a = write_bytes(
        tmp_path / "a.jsonl", jsonl_bytes([{"id": 1, "text": "x"}, {"id": 2, "text": "y"}])
    )
    b = write_csv(tmp_path / "b.csv", [["3", "z", "en"], ["2", "w", "en"]])
    with pytest.raises(
        InputError,
        match=rf"^{re.escape(str(b))}:3: duplicate id '2' \(first at {re.escape(str(a))}:2\)",
    ):
        read_all([a, b])
    docs, bad = collect_bad([a, b])
    assert [d.id for d in docs] == ["1", "2", "3"]
    assert [(x.source, x.line) for x in bad] == [(str(b), 3)]


def test_duplicate_id_within_one_file(tmp_path):
    a = write_bytes(tmp_path / "a.jsonl", b'{"id": 1, "text": "x"}\n{"id": "1", "text": "y"}\n')
    with pytest.raises(InputError, match=r"a\.jsonl:2: duplicate id '1' \(first at .*a\.jsonl:1\)"):
        read_all([a])


def test_unknown_extension_raises_at_call_time(tmp_path):
    for name in ["x.txt", "x.json", "x.parquet.gz", "noext"]:
        with pytest.raises(InputError, match="supported: a directory"):
            read_documents([tmp_path / name])  # no iteration needed


def test_missing_optional_dependency(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(MissingDependencyError, match=r"neardup\[zstd\]"):
        read_documents([tmp_path / "x.jsonl.zst"])
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingDependencyError, match=r"neardup\[parquet\]"):
        read_documents([tmp_path / "x.parquet"])


def test_document_pickles():
    doc = Document("i", "t", {"id": "i", "text": "t"}, "f.jsonl", 3)
    assert pickle.loads(pickle.dumps(doc)) == doc


# --------------------------------------------------------------------------------------------
# CSV


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".csv.zst"])
def test_csv(tmp_path, suffix):
    long_text = "x" * 300_000  # over the csv module's default field limit
    plain = write_csv(tmp_path / "plain.csv", [["a", "one\ntwo", "en"], ["", long_text, "ru"], []])
    path = write_bytes(tmp_path / f"d{suffix}", plain.read_bytes())
    docs = read_all([path])
    assert [d.id for d in docs] == ["a", "4"]  # missing id -> line where the row starts
    assert [d.line for d in docs] == [2, 4]
    assert docs[0].record == {"id": "a", "text": "one\ntwo", "lang": "en"}
    assert docs[1].text == long_text


def test_csv_with_bom_and_crlf(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b'\xef\xbb\xbfid,text\r\n1,"a\r\nb"\r\n2,c\r\n')
    docs = read_all([path])
    assert [(d.id, d.text, d.line) for d in docs] == [("1", "a\r\nb", 2), ("2", "c", 4)]


def test_csv_bad_rows(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"id,text\n1,ok\n2,too,many\n3,bad \xff utf8\n4\n5,fine\n")
    with pytest.raises(InputError, match=r"d\.csv:3: 3 fields, the header has 2"):
        read_all([path])
    docs, bad = collect_bad([path])
    assert [d.id for d in docs] == ["1", "5"]
    assert [(b.line, b.reason) for b in bad] == [
        (3, "3 fields, the header has 2"),
        (4, "invalid UTF-8"),
        (5, "1 fields, the header has 2"),
    ]


def test_csv_without_text_column(tmp_path):
    path = write_csv(tmp_path / "d.csv", [["1", "x"]], header=("id", "body"))
    with pytest.raises(
        InputError, match=r"d\.csv:1: CSV header has no column 'text' \(columns: id, body\)"
    ):
        read_all([path])
    assert [d.text for d in read_all([path], text_field="body")] == ["x"]
    empty = tmp_path / "e.csv"
    empty.write_bytes(b"")
    assert collect_bad([empty])[1][0].reason == "empty CSV file (no header row)"


# --------------------------------------------------------------------------------------------
# Parquet


def test_parquet_read(tmp_path):
    path = tmp_path / "d.parquet"
    table = pa.table({"id": [10, 11, None], "text": ["a", None, "c"], "lang": ["en", "ru", "zh"]})
    pq.write_table(table, path, row_group_size=2)
    with pytest.raises(InputError, match=r"d\.parquet:2: field 'text' is null"):
        read_all([path])
    docs, bad = collect_bad([path])
    assert [(d.id, d.line, d.text) for d in docs] == [("10", 1, "a"), ("3", 3, "c")]
    assert docs[0].record == {"id": 10, "text": "a", "lang": "en"}
    assert len(bad) == 1


def test_parquet_problems(tmp_path):
    pq.write_table(pa.table({"body": ["a"]}), tmp_path / "nt.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    _, bad = collect_bad([tmp_path / "nt.parquet", tmp_path / "junk.parquet"])
    assert bad[0].reason == "no column 'text' (columns: body)"
    assert bad[1].line == 0
    assert bad[1].reason.startswith("cannot read")


def test_parquet_round_trip(tmp_path):
    records = [
        {"id": f"d{i}", "text": f"текст {i}", "n": i, "score": i / 3, "ok": i % 2 == 0}
        for i in range(25_001)
    ]
    path = tmp_path / "out.parquet"
    with RecordWriter(path, "parquet") as writer:
        for r in records:
            writer.write(r)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 25_001
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [
        10_000,
        10_000,
        5001,
    ]
    docs = read_all([path])
    assert [d.record for d in docs] == records
    assert count_lines(path) == 25_001


def test_parquet_writer_union_of_keys_and_mixed_types(tmp_path):
    records = [{"id": str(i), "text": "t", "a": i} for i in range(10_000)]
    records += [
        {"id": "x", "text": "t", "b": {"k": 1}, "mixed": 1},  # new keys after the first group
        {"id": "y", "text": "t", "a": 1.5, "mixed": {"k": [1]}},  # int -> float, int vs object
        {"id": "z", "text": "t", "mixed": "plain"},
    ]
    path = tmp_path / "out.parquet"
    with RecordWriter(path, "parquet") as writer:
        for r in records:
            writer.write(r)
    table = pq.read_table(path)
    assert table.column_names == ["id", "text", "a", "b", "mixed"]
    assert table.schema.field("a").type == pa.float64()
    assert table.schema.field("mixed").type == pa.string()
    rows = table.to_pylist()
    assert rows[0] == {"id": "0", "text": "t", "a": 0.0, "b": None, "mixed": None}
    assert rows[-3:] == [
        {"id": "x", "text": "t", "a": None, "b": {"k": 1}, "mixed": "1"},
        {"id": "y", "text": "t", "a": 1.5, "b": None, "mixed": '{"k": [1]}'},
        {"id": "z", "text": "t", "a": None, "b": None, "mixed": "plain"},
    ]
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]  # part files removed


def test_parquet_writer_empty(tmp_path):
    with RecordWriter(tmp_path / "e.parquet", "parquet"):
        pass
    assert pq.read_table(tmp_path / "e.parquet").num_rows == 0


# --------------------------------------------------------------------------------------------
# directories


def test_directory(tmp_path):
    root = tmp_path / "docs"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "b.txt").write_text("plain <b>kept as is</b>", encoding="utf-8")
    (root / "a.HTML").write_text(
        "<html><body><nav>Menu Home</nav><p>Hello &amp; bye</p><script>x=1</script></body></html>",
        encoding="utf-8",
    )
    (root / "sub" / "deeper" / "c.htm").write_text("<p>deep</p>", encoding="utf-8")
    (root / "sub" / "d.txt").write_bytes("\ufeffРусский".encode())
    (root / "notes.md").write_text("ignored", encoding="utf-8")
    docs = read_all([root])
    assert [d.id for d in docs] == ["a.HTML", "b.txt", "sub/d.txt", "sub/deeper/c.htm"]
    assert docs[0].text == "Hello & bye"
    assert docs[1].text == "plain <b>kept as is</b>"  # .txt is not stripped here
    assert docs[2].text == "Русский"
    assert docs[3].record == {"id": "sub/deeper/c.htm", "path": str(root / "sub/deeper/c.htm")}
    assert docs[3].source == str(root / "sub/deeper/c.htm")
    assert count_lines(root) == 4


def test_directory_bad_files(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"good")
    (tmp_path / "b.txt").write_bytes(b"ok\nok\n\xff")
    (tmp_path / "c.txt").write_bytes(b"bin\x00ary")
    (tmp_path / "d.txt").write_bytes(b"x" * 100)
    with pytest.raises(InputError, match=r"b\.txt: invalid UTF-8 at byte 6 \(line 3\)"):
        read_all([tmp_path])
    docs, bad = collect_bad([tmp_path], max_text_bytes=50)
    assert [d.id for d in docs] == ["a.txt"]
    assert [Path(b.source).name for b in bad] == ["b.txt", "c.txt", "d.txt"]
    assert "binary" in bad[1].reason
    assert "over the limit" in bad[2].reason


def test_directory_duplicate_with_other_input(tmp_path):
    root = tmp_path / "dir"
    root.mkdir()
    (root / "x.txt").write_text("x", encoding="utf-8")
    other = write_bytes(tmp_path / "o.jsonl", b'{"id": "x.txt", "text": "y"}\n')
    with pytest.raises(
        InputError,
        match=rf"o\.jsonl:1: duplicate id 'x.txt' \(first at {re.escape(str(root / 'x.txt'))}\)",
    ):
        read_all([root, other])


# --------------------------------------------------------------------------------------------
# streaming, counting


@pytest.mark.parametrize("name", ["fifo.jsonl", "fifo.csv"])
def test_streams_without_reading_everything(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    consumed = threading.Event()
    if name.endswith(".csv"):
        head, line = b"id,text\n", lambda i: f"{i},text {i}\n".encode()
    else:
        head, line = b"", lambda i: f'{{"id": {i}, "text": "text {i}"}}\n'.encode()

    starved: list[bool] = []  # the feeder gave up waiting: the reader wanted the rest first

    def feed():
        with open(path, "wb", buffering=0) as fh:
            fh.write(head + b"".join(line(i) for i in range(3)))
            # the rest comes only once the reader has had its three (a deadlock guard only)
            starved.append(not consumed.wait(120))
            fh.write(b"".join(line(i) for i in range(3, 100_000)))

    thread = threading.Thread(target=feed)
    thread.start()
    docs = read_documents([path])
    first = list(itertools.islice(docs, 3))
    consumed.set()
    assert [d.id for d in first] == ["0", "1", "2"]
    assert sum(1 for _ in docs) == 100_000 - 3
    thread.join()
    assert starved == [False]


def test_parses_lazily(tmp_path):
    # 100k lines of which all but the first three are broken: taking three must not see them
    good = jsonl_bytes({"id": i, "text": "w " * 50} for i in range(3))
    path = write_bytes(tmp_path / "big.jsonl.gz", good + b"{broken\n" * 100_000)
    docs = read_documents([path])
    assert [d.id for d in itertools.islice(docs, 3)] == ["0", "1", "2"]
    with pytest.raises(InputError, match=r"big\.jsonl\.gz:4: not valid JSON"):
        next(docs)


def test_count_lines(tmp_path):
    records = jsonl_bytes({"id": i, "text": "t"} for i in range(1000))
    assert count_lines(write_bytes(tmp_path / "a.jsonl", records)) == 1000
    assert count_lines(write_bytes(tmp_path / "a.jsonl.gz", records)) is None
    assert count_lines(write_csv(tmp_path / "a.csv", [["1", "x", "en"]] * 5)) == 5
    assert count_lines(tmp_path / "missing.jsonl") is None


def test_count_lines_estimates_big_files(tmp_path, monkeypatch):
    import neardup.io.readers as corpus

    monkeypatch.setattr(corpus, "_COUNT_EXACT_BYTES", 10_000)
    path = write_bytes(
        tmp_path / "a.jsonl", jsonl_bytes({"id": i, "text": "t"} for i in range(100_000))
    )
    assert count_lines(path) == pytest.approx(100_000, rel=0.1)


# --------------------------------------------------------------------------------------------
# writing


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz", "out.jsonl.zst"])
def test_jsonl_writer_round_trip(tmp_path, name):
    path = tmp_path / "sub" / name
    with RecordWriter(path) as writer:
        for r in RECORDS:
            writer.write(r)
    assert writer.count == 3
    assert [d.record for d in read_all([path])] == RECORDS
    assert sorted(os.listdir(path.parent)) == [name]
    umask = os.umask(0o22)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    if name == "out.jsonl":
        assert "Первый" in path.read_text(encoding="utf-8")  # ensure_ascii=False


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_writer_leaves_no_file_on_error(tmp_path, fmt):
    def crash():
        with RecordWriter(tmp_path / f"out.{fmt}", fmt) as writer:
            for i in range(25_000):
                writer.write({"id": i, "text": "t"})
            raise RuntimeError("crash")

    with pytest.raises(RuntimeError, match="crash"):
        crash()
    assert os.listdir(tmp_path) == []


def test_writer_replaces_old_file_only_on_success(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text("old\n", encoding="utf-8")
    writer = RecordWriter(path)
    writer.write({"a": 1})
    assert path.read_text(encoding="utf-8") == "old\n"
    writer.abort()
    assert path.read_text(encoding="utf-8") == "old\n"
    with RecordWriter(path) as writer:
        writer.write({"a": 1})
    assert path.read_text(encoding="utf-8") == '{"a":1}\n'
    with pytest.raises(ValueError, match="closed"):
        writer.write({"a": 2})
    with pytest.raises(ConfigError):
        RecordWriter(path, "csv")  # type: ignore[arg-type]


def test_writer_encodes_parquet_values(tmp_path):
    import datetime
    from decimal import Decimal

    path = tmp_path / "out.jsonl"
    with RecordWriter(path) as writer:
        writer.write({"t": datetime.date(2024, 1, 2), "d": Decimal("1.5"), "b": b"\x00\xff"})
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "t": "2024-01-02",
        "d": "1.5",
        "b": "AP8=",
    }


texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))  # a NUL is a bad record
text_ids = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1)
ids = st.one_of(text_ids, st.integers(min_value=-(2**62), max_value=2**62))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ids, texts), unique_by=lambda t: str(t[0]), max_size=20))
def test_jsonl_write_read_round_trip(pairs):
    records = [{"id": i, "text": t, "extra": [t, {"k": i}]} for i, t in pairs]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        with RecordWriter(path) as writer:
            for r in records:
                writer.write(r)
        docs = read_all([path])
    assert [(d.id, d.text, d.record) for d in docs] == [
        (str(i), t, r) for (i, t), r in zip(pairs, records, strict=True)
    ]


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.tuples(text_ids, texts),
        unique_by=lambda t: t[0],
        max_size=20,
    )
)
def test_parquet_write_read_round_trip(pairs):
    records = [{"id": i, "text": t} for i, t in pairs]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.parquet"
        with RecordWriter(path, "parquet") as writer:
            for r in records:
                writer.write(r)
        docs = read_all([path])
    assert [d.record for d in docs] == records
