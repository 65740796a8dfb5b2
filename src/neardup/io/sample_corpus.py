"""The bundled sample corpus: a dozen short texts in English, Russian and Chinese, written for
neardup, with rewrites, an HTML page and quotations of each other (see data/README.md)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

_SAMPLE = resources.files("neardup") / "data" / "sample.jsonl"


def sample_documents() -> list[dict[str, str]]:
    """The sample's records: ``{"id", "lang", "text"}``."""
    return [json.loads(line) for line in _SAMPLE.read_text(encoding="utf-8").splitlines()]


@contextlib.contextmanager
def sample_path() -> Iterator[Path]:
    """The sample as a JSONL file on disk (for the commands that read files)."""
    with resources.as_file(_SAMPLE) as path:
        yield path
