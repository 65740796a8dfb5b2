"""JSONL: ``.jsonl`` / ``.ndjson``, plain, ``.gz`` or ``.zst`` (extra ``zstd``); one JSON
object per line, blank lines skipped. Read in blocks on worker threads by Arrow where it
reads them exactly as :func:`neardup.io.jsonlines.jsonl_item` does (:mod:`neardup.io.blocks`);
copied into JSONL outputs as stored, ``_duplicate_of`` spliced into a removed record."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from neardup.errors import InputError
from neardup.io.formats.protocol import LineFormat
from neardup.io.jsonlines import jsonl_item, with_duplicate_of
from neardup.io.records import Item, ReadOptions
from neardup.io.writers import JsonlSink

if TYPE_CHECKING:
    from neardup.io.blocks import BatchSource, TextBatch

__all__ = ["FORMAT", "JsonlFormat"]


class JsonlFormat(LineFormat):
    """JSON Lines, in and out."""

    order: ClassVar[int] = 10
    name: ClassVar[str] = "jsonl"
    title: ClassVar[str] = "JSONL"
    described: ClassVar[str] = ".jsonl/.ndjson (plain, .gz, .zst)"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl", ".ndjson")
    compressions: ClassVar[tuple[str, ...]] = ("gz", "zst")
    spark_suffixes: ClassVar[tuple[str, ...]] = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
    spark_described: ClassVar[str] = ".jsonl / .ndjson (plain or .gz)"
    spark_source: ClassVar[str] = "text"
    spark_writer: ClassVar[str] = "json"
    takes_json_lines: ClassVar[bool] = True

    def parse_line(self, raw: bytes, source: str, lineno: int, opts: ReadOptions) -> Item:
        return jsonl_item(raw, source, lineno, opts)

    def parse_lines(
        self, block: bytes, count: int, first_line: int, index: int, source: str, opts: ReadOptions
    ) -> TextBatch:
        """Read by Arrow where it reads them exactly as :meth:`parse_line` would
        (:func:`neardup.io.blocks.parse_block`), else line by line."""
        from neardup.io.blocks import parse_block

        return parse_block(block, count, first_line, index, source, opts)

    def with_duplicate_of(self, line: bytes, keeper: str) -> bytes:
        return with_duplicate_of(line, keeper)

    def text_of_line(self, line: bytes, text_field: str) -> str:
        return orjson.loads(line)[text_field]

    def keeps_stored(self, output: str) -> bool:
        """Every output that takes lines of JSON gets the lines as stored."""
        from neardup.io.formats import named

        return named(output).takes_json_lines

    def batches(self, paths: Sequence[str | Path], **options: Any) -> BatchSource | None:
        try:
            import pyarrow.json  # noqa: F401
        except ImportError:
            return None
        from neardup.io.blocks import JsonlBatches

        return JsonlBatches(paths, **options)

    def sink(self, path: Path, sync: bool) -> JsonlSink:
        return JsonlSink(path, sync)

    def read_output(self, path: Path) -> Iterator[Mapping[str, Any]]:
        with open(path, "rb") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError as exc:
                        raise InputError(f"{path}:{number}: not valid JSON ({exc})") from None


FORMAT = JsonlFormat()
