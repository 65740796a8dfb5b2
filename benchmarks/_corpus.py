"""Shared helpers of the benchmark scripts: where ../shared is, reading a corpus slice, timing."""

from __future__ import annotations

import gzip
import json
import os
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path

SHARED = Path(os.environ.get("NEARDUP_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = SHARED / "data" / "corpus"


def load_texts(name: str = "en-gutenberg-100k.jsonl.gz", limit: int | None = None) -> list[str]:
    """The first ``limit`` texts of a shared corpus file."""
    path = CORPUS / name
    if not path.exists():
        raise SystemExit(f"benchmark data not found: {path} (set NEARDUP_SHARED)")
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            texts.append(json.loads(line)["text"])
            if limit is not None and len(texts) >= limit:
                break
    return texts


def megabytes(texts: list[str]) -> float:
    """UTF-8 size of the texts in MB (10^6 bytes)."""
    return sum(len(t.encode()) for t in texts) / 1e6


def median_seconds(func: Callable[[], object], repeat: int = 3) -> float:
    """Median wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
