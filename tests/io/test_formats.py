"""A new format is one module: a TSV format defined here, registered, and run end to end —
read, deduplicated, its kept and removed records copied out in TSV as stored — with no other
source file knowing it; and the registry's answers for the built-in formats."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import neardup
from neardup.errors import InputError
from neardup.io.files import InputFile
from neardup.io.formats import (
    LineFormat,
    classify,
    format_of,
    formats,
    named,
    register,
    spark_format_of,
    unregister,
)
from neardup.io.readers import count_lines, read_documents
from neardup.io.records import BadRecord, Item, ReadOptions, record_document
from textgen import near_copies, text


class TsvSink:
    """Records as tab-separated values, the file written whole at the end."""

    def __init__(self, path: Path) -> None:
        self.path, self.lines = path, []

    def write(self, record: dict[str, Any]) -> None:
        self.lines.append("\t".join(str(v) for v in record.values()).encode())

    def write_lines(self, lines: Sequence[bytes | memoryview]) -> None:
        self.lines += [bytes(line) for line in lines]

    def finish(self) -> None:
        self.path.write_bytes(b"".join(line + b"\n" for line in self.lines))

    def discard(self) -> None:
        self.lines = []


class TsvFormat(LineFormat):
    """``id<TAB>text`` a line, maybe followed by a tab and a note the record does not keep;
    in and out."""

    name: ClassVar[str] = "tsv"
    title: ClassVar[str] = "TSV"
    described: ClassVar[str] = ".tsv"
    suffixes: ClassVar[tuple[str, ...]] = (".tsv",)
    compressions: ClassVar[tuple[str, ...]] = ("gz",)

    def parse_line(self, raw: bytes, source: str, lineno: int, opts: ReadOptions) -> Item:
        doc_id, tab, rest = raw.decode("utf-8").partition("\t")
        if not tab:
            return BadRecord(source, lineno, "no tab between the id and the text")
        body = rest.split("\t")[0]
        return record_document({opts.id_field: doc_id, opts.text_field: body}, source, lineno, opts)

    def with_duplicate_of(self, line: bytes, keeper: str) -> bytes:
        return line + b"\t" + keeper.encode()

    def sink(self, path: Path, sync: bool) -> TsvSink:
        return TsvSink(path)

    def read_output(self, path: Path) -> Iterator[Mapping[str, Any]]:
        for line in path.read_text().splitlines():
            doc_id, body, *rest = line.split("\t")
            keeper = [f for f in rest if not f.startswith("#")]  # not a note
            yield {"id": doc_id, "text": body} | ({"_duplicate_of": keeper[0]} if keeper else {})


@pytest.fixture
def tsv() -> Iterator[TsvFormat]:
    fmt = register(TsvFormat())
    yield fmt
    unregister(fmt.name)


def _corpus() -> list[tuple[str, str]]:
    originals, copies = near_copies(4, seed=7)
    docs = [(f"o{i}", body) for i, body in enumerate(originals)]
    docs += [(f"c{i}", body) for i, body in enumerate(copies)]
    return [*docs, ("alone", text(99, 200))]


def test_a_format_defined_in_one_module_runs_dedup_end_to_end(tsv, tmp_path):
    docs = _corpus()
    lines = [f"{doc_id}\t{body}\t#{k}" for k, (doc_id, body) in enumerate(docs)]
    data = tmp_path / "corpus.tsv"
    data.write_text("\n".join([*lines[:3], "a line without a tab", *lines[3:]]) + "\n")
    out = tmp_path / "out"

    summary = neardup.deduplicate_files([data], out, skip_bad=True, format="tsv")

    assert (summary["documents"], summary["removed"], summary["bad_records"]) == (9, 4, 1)
    assert summary["bad_examples"] == [f"{data}:4: no tab between the id and the text"]
    kept = (out / "kept.tsv").read_text().splitlines()
    removed = (out / "removed.tsv").read_text().splitlines()
    assert kept == [line for line in lines if line[0] != "c"]  # as stored, notes and all
    assert removed == [f"{lines[4 + i]}\to{i}" for i in range(4)]  # + the keeper
    pairs = (out / "pairs.tsv").read_text().splitlines()
    assert sorted(p.split("\t")[:2] for p in pairs) == [[f"o{i}", f"c{i}"] for i in range(4)]
    run = json.loads((out / "summary.json").read_text())
    assert run["parameters"]["format"] == "tsv"
    # the run reads back through the format (neardup explain, compare --run)
    from neardup.engines.local.runread import open_run

    found, kept_for = open_run(out).documents(["o1", "c1"])
    assert (found["c1"].text, found["c1"].duplicate_of, kept_for["o1"]) == (docs[5][1], "o1", 1)


def test_records_of_another_format_are_written_in_the_new_one(tsv, tmp_path):
    # JSONL in, TSV out: the records read again and written field by field
    data = tmp_path / "corpus.jsonl"
    docs = _corpus()
    data.write_text(
        "".join(json.dumps({"id": d, "text": b, "n": k}) + "\n" for k, (d, b) in enumerate(docs))
    )
    neardup.deduplicate_files([data], tmp_path / "out", format="tsv")
    removed = (tmp_path / "out" / "removed.tsv").read_text().splitlines()
    assert removed == [f"c{i}\t{docs[4 + i][1]}\t{4 + i}\to{i}" for i in range(4)]


def test_the_new_format_is_known_everywhere_a_format_is_asked(tsv, tmp_path):
    data = tmp_path / "a.TSV.gz"
    import gzip

    data.write_bytes(gzip.compress(b"x\tone two three\n\ny\tfour five\n"))
    assert classify(data) == InputFile(data, "tsv", "gz")
    assert format_of(data) is tsv
    got = [(d.id, d.text, d.line) for d in read_documents([data])]
    assert got == [("x", "one two three", 1), ("y", "four five", 3)]
    plain = tmp_path / "b.tsv"
    plain.write_text("x\tone\ny\ttwo\n")
    assert count_lines(plain) == 2  # a format of one record per line: its lines counted
    with pytest.raises(InputError, match=r"supported: .*\.parquet, \.tsv\)"):
        classify(tmp_path / "c.xml")
    with pytest.raises(InputError, match="the Spark engine reads"):
        spark_format_of(("c.tsv",))  # no spark_suffixes: the Spark engine refuses it


def test_the_registry_knows_the_built_in_formats_in_their_order():
    assert [f.name for f in formats()] == ["dir", "jsonl", "csv", "parquet"]
    assert named("jsonl").sink is not None
    with pytest.raises(neardup.ConfigError, match="no format 'xml'"):
        named("xml")
    with contextlib.suppress(ValueError):
        unregister("nothing")  # taking out an unknown format is no error
    assert spark_format_of(("a.ndjson.gz", "b.jsonl")).name == "jsonl"
    assert spark_format_of(("part/x.parquet/",)).name == "parquet"
