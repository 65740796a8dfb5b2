"""A directory: every ``.txt`` / ``.html`` / ``.htm`` file below it, in sorted order; the id
is the relative POSIX path, HTML goes through :func:`neardup.text.clean.strip_html`, and the
record is ``{"id", "path"}``. An input only."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from neardup.errors import InputError
from neardup.io.files import InputFile, read_error
from neardup.io.formats.protocol import Format
from neardup.io.records import BadRecord, Document, Item, ReadOptions, Skipped, mib
from neardup.io.text_input import decode_text

__all__ = ["FORMAT", "TextDirFormat"]

_SUFFIXES = (".txt", ".html", ".htm")
_HTML_SUFFIXES = (".html", ".htm")


class TextDirFormat(Format):
    """A directory of text and HTML files, a document each."""

    order: ClassVar[int] = 0
    name: ClassVar[str] = "dir"
    title: ClassVar[str] = "a directory"
    described: ClassVar[str] = "a directory of .txt/.html files"

    def recognize(self, path: Path) -> InputFile | None:
        return InputFile(path, self.name) if path.is_dir() else None

    def read(self, inp: InputFile, opts: ReadOptions) -> Iterator[Item]:
        """Every text file below the directory, sorted; HTML stripped to plain text."""
        skipped: list[str] = []
        odd: list[str] = []
        for path, rel in _dir_files(inp.path, skipped, odd):
            yield _file_item(path, rel, opts)
        if skipped:
            yield Skipped(str(inp.path), tuple(skipped), f"not {'/'.join(_SUFFIXES)}")
        if odd:
            why = "not regular files (a FIFO, socket or device would block or never end)"
            yield Skipped(str(inp.path), tuple(odd), why)

    def count(self, inp: InputFile) -> int | None:
        """The number of text files."""
        return sum(1 for _ in _dir_files(inp.path))

    def place(self, inp: InputFile, line: int, doc_id: str) -> str:
        return str(inp.path / doc_id)


def _dir_files(
    root: Path, skipped: list[str] | None = None, odd: list[str] | None = None
) -> Iterator[tuple[Path, str]]:
    """(path, relative POSIX path) of the text files below ``root``, each directory sorted;
    the relative paths of the files of other extensions are appended to ``skipped``, those of
    text files that are not regular files (a FIFO: reading it would wait) to ``odd``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(filenames):
            path = base / name
            rel = path.relative_to(root).as_posix()
            if not name.lower().endswith(_SUFFIXES):
                if skipped is not None:
                    skipped.append(rel)
            elif path.is_file():  # a regular file, or a link to one
                yield path, rel
            elif odd is not None:
                odd.append(rel)


def _file_item(path: Path, rel: str, opts: ReadOptions) -> Item:
    source = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(opts.max_text_bytes + 1)
    except OSError as exc:
        return BadRecord(source, 0, read_error(exc))
    if len(data) > opts.max_text_bytes:
        why = f"file over the limit of {mib(opts.max_text_bytes)} (raise it with --max-text-bytes)"
        return BadRecord(source, 0, why)
    try:
        text = decode_text(data, source)
    except InputError as exc:
        return BadRecord(source, 0, str(exc).removeprefix(f"{source}: "))
    if path.suffix.lower() in _HTML_SUFFIXES:
        from neardup.text.clean import strip_html

        text = strip_html(text)
    return Document(rel, text, {"id": rel, "path": source}, source, 0)


FORMAT = TextDirFormat()
