"""The bundled sample corpus: a dozen short texts in English, Russian and Chinese, written for
neardup, with rewrites, an HTML page and quotations of each other (see data/README.md)."""

from __future__ import annotations

import json
from importlib import resources


def sample_documents() -> list[dict[str, str]]:
    """The sample's records: ``{"id", "lang", "text"}``."""
    path = resources.files("neardup") / "data" / "sample.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
